//! Reading a run's scrapes back: `scrapes.prom.gz` (one gzip member per scrape, as
//! `rehearsal::arm::sinks::PromFile` writes it) or a plain `scrapes.prom` (runs before the compression, and
//! the fixtures). Members are decoded one at a time: a member cut by a kill (truncated, or its
//! CRC wrong) ends the reading there and is reported as torn, so every completed scrape before it
//! reads back whole and no half scrape is ever returned.

use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// The file name the run writes its scrapes to.
pub const SCRAPES_FILE: &str = "scrapes.prom.gz";
/// The file name of the uncompressed scrapes of runs written before the compression.
const LEGACY_SCRAPES_FILE: &str = "scrapes.prom";

/// A run's scrapes as text, and whether the reading stopped at a torn member.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScrapesText {
    /// The concatenated text of every whole member (`# scrape t_ms=N` lines and the scrapes).
    pub text: String,
    /// Whole gzip members read (0 for a plain file).
    pub members: usize,
    /// Set when the last member was cut short or damaged (a killed run): what it says.
    pub torn: Option<String>,
}

/// The scrapes file of a run directory: `scrapes.prom.gz`, else a legacy `scrapes.prom`.
pub fn scrapes_path(run_dir: &Path) -> PathBuf {
    let gz = run_dir.join(SCRAPES_FILE);
    let plain = run_dir.join(LEGACY_SCRAPES_FILE);
    if !gz.exists() && plain.exists() {
        plain
    } else {
        gz
    }
}

/// Reads a scrapes file: gzip members when its name ends in `.gz`, plain text otherwise.
pub fn read_scrapes(path: &Path) -> io::Result<ScrapesText> {
    let file = std::fs::File::open(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        decode_members(BufReader::new(file))
    } else {
        let mut text = String::new();
        BufReader::new(file).read_to_string(&mut text)?;
        Ok(ScrapesText {
            text,
            members: 0,
            torn: None,
        })
    }
}

/// Decodes gzip members one by one until the end of the input or the first member that does
/// not decode whole.
pub fn decode_members<R: BufRead>(mut reader: R) -> io::Result<ScrapesText> {
    let mut out = ScrapesText::default();
    let mut member = Vec::new();
    loop {
        if reader.fill_buf()?.is_empty() {
            return Ok(out);
        }
        member.clear();
        let res = flate2::bufread::GzDecoder::new(&mut reader).read_to_end(&mut member);
        let text = match res {
            Ok(_) => String::from_utf8(member.clone())
                .map_err(|e| format!("member {} is not UTF-8: {e}", out.members + 1)),
            Err(e) => Err(format!("member {} is cut short: {e}", out.members + 1)),
        };
        match text {
            Ok(t) => {
                out.text.push_str(&t);
                out.members += 1;
            }
            Err(why) => {
                out.torn = Some(why);
                return Ok(out);
            }
        }
    }
}

/// One gzip member holding `text` (what the writer appends per scrape). The fastest level: it
/// runs on the scraper's task during the run (a weekly scrape of ~12.5 KB: 0.9 ms against 1.5 ms
/// at the default level in the dev build, for 5.4× against 6.3×; BENCHMARKS.md).
pub fn encode_member(text: &[u8]) -> io::Result<Vec<u8>> {
    use std::io::Write as _;
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(text.len() / 4 + 64),
        flate2::Compression::fast(),
    );
    enc.write_all(text)?;
    enc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_read_back_one_by_one_and_a_cut_one_is_torn_not_half_read() {
        let mut bytes = Vec::new();
        for (i, t) in ["# scrape t_ms=0\na 1\n", "# scrape t_ms=250\na 2\n"]
            .iter()
            .enumerate()
        {
            let m = encode_member(t.as_bytes()).unwrap();
            bytes.extend_from_slice(&m);
            let back = decode_members(&bytes[..]).unwrap();
            assert_eq!(back.members, i + 1);
            assert_eq!(back.torn, None);
        }
        let whole = decode_members(&bytes[..]).unwrap();
        assert_eq!(whole.text, "# scrape t_ms=0\na 1\n# scrape t_ms=250\na 2\n");
        let third = encode_member(b"# scrape t_ms=500\na 3\n").unwrap();
        // Every cut of the third member: the first two read back whole, the third never in part.
        for cut in 1..third.len() {
            let mut torn = bytes.clone();
            torn.extend_from_slice(&third[..cut]);
            let back = decode_members(&torn[..]).unwrap();
            assert_eq!(back.text, whole.text, "cut at {cut}");
            assert_eq!(back.members, 2);
            assert!(back.torn.is_some(), "cut at {cut}");
        }
        // Garbage after whole members is torn, not an error.
        let mut junk = bytes.clone();
        junk.extend_from_slice(b"not gzip");
        let back = decode_members(&junk[..]).unwrap();
        assert_eq!((back.members, back.torn.is_some()), (2, true));
    }

    #[test]
    fn plain_and_gz_files_and_the_run_dir_lookup() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(scrapes_path(dir.path()), dir.path().join(SCRAPES_FILE));
        std::fs::write(dir.path().join(LEGACY_SCRAPES_FILE), "# scrape t_ms=0\na 1\n").unwrap();
        let p = scrapes_path(dir.path());
        assert_eq!(p, dir.path().join(LEGACY_SCRAPES_FILE));
        assert_eq!(read_scrapes(&p).unwrap().text, "# scrape t_ms=0\na 1\n");
        std::fs::write(
            dir.path().join(SCRAPES_FILE),
            encode_member(b"# scrape t_ms=0\na 2\n").unwrap(),
        )
        .unwrap();
        let p = scrapes_path(dir.path());
        assert_eq!(p, dir.path().join(SCRAPES_FILE));
        assert_eq!(read_scrapes(&p).unwrap().text, "# scrape t_ms=0\na 2\n");
    }
}
