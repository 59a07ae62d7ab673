//! The append-only JSONL file every writer of a run directory shares (`events.jsonl`,
//! `upstream.jsonl`): one `write_all` per line on an append-mode file, so a killed run leaves every
//! completed line readable. Below the run and the mock upstream, which both write through it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::util::sync::Locked;

/// The block size no line may straddle (see [`JsonlFile`]).
const BLOCK: u64 = 4096;

/// The longest line expected before any is seen: a line that ends closer than this to a block
/// boundary is padded up to it.
const FIRST_GUESS: usize = 512;

/// An append-only JSONL file shared by every writer of one run directory.
///
/// ## Why lines are padded
/// One `write` per line is not enough against `kill -9`: Linux copies a write into the page
/// cache one page (or folio) at a time and stops between two of them when a fatal signal is
/// pending, so a line that straddles a 4 KiB boundary of the file can be cut there (the `crash`
/// test caught one). So no line is let straddle one: a line that ends closer to the next
/// boundary than the longest line seen so far gets trailing blanks up to it (valid JSON: every
/// line still parses, no extra lines). A line longer than every earlier one can still land
/// across a boundary; the guess grows with each, so that happens only a few times per file.
#[derive(Debug)]
pub struct JsonlFile {
    path: PathBuf,
    file: Mutex<Appender>,
    lines: AtomicU64,
    errors: AtomicU64,
}

/// The file and where its end is.
#[derive(Debug)]
struct Appender {
    file: File,
    len: u64,
    longest: usize,
}

impl Appender {
    /// `line` (ending in `\n`) with the blanks that make it end on a block boundary when the
    /// next line might not fit before it.
    fn padded(&mut self, mut line: Vec<u8>) -> Vec<u8> {
        self.longest = self.longest.max(line.len());
        let end = self.len + line.len() as u64;
        let room = (BLOCK - end % BLOCK) % BLOCK;
        if room > 0 && room < self.longest as u64 {
            let nl = line.pop();
            line.resize(line.len() + room as usize, b' ');
            line.extend(nl);
        }
        line
    }
}

impl JsonlFile {
    /// Opens (creating or appending to) `path`.
    pub(crate) fn open(path: &Path) -> std::io::Result<Arc<Self>> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let len = file.metadata()?.len();
        Ok(Arc::new(Self {
            path: path.to_path_buf(),
            file: Mutex::new(Appender {
                file,
                len,
                longest: FIRST_GUESS,
            }),
            lines: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }))
    }

    /// Appends one value as one line. Failures are counted (see [`JsonlFile::errors`]), never
    /// raised: the engine's hot path must not fail because a log line could not be written.
    pub(crate) fn append<T: Serialize>(&self, value: &T) {
        let mut line = match serde_json::to_vec(value) {
            Ok(l) => l,
            Err(_) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                return;
            }
        };
        line.push(b'\n');
        let mut f = self.file.locked();
        let line = f.padded(line);
        match f.file.write_all(&line) {
            Ok(()) => {
                f.len += line.len() as u64;
                self.lines.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                // Where the end is now is unknown: ask the file.
                f.len = f.file.metadata().map_or(f.len, |m| m.len());
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Lines written so far.
    #[allow(
        dead_code,
        reason = "no caller in the crate or its tests (found when the internals went pub(crate))"
    )]
    pub(crate) fn lines(&self) -> u64 {
        self.lines.load(Ordering::Relaxed)
    }

    /// Lines that could not be written.
    pub(crate) fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `crash` test: a line straddling a 4 KiB boundary was cut there by `kill -9`.
    /// Once a line length has been seen, no line of at most that length straddles a boundary,
    /// and every line (padding included) still parses.
    #[test]
    fn lines_never_straddle_a_block_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let file = JsonlFile::open(&path).unwrap();
        let mut ends = Vec::new();
        for i in 0..2000usize {
            let pad = "x".repeat(i * 37 % 300);
            file.append(&serde_json::json!({ "i": i, "pad": pad }));
            ends.push(std::fs::metadata(&path).unwrap().len());
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2000);
        let mut start = 0u64;
        for (line, end) in text.lines().zip(&ends) {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
            let (first, last) = (start / BLOCK, (end - 1) / BLOCK);
            assert!(
                first == last || *end - start > FIRST_GUESS as u64,
                "a {} byte line straddles the boundary at {}",
                end - start,
                last * BLOCK
            );
            start = *end;
        }
        assert!(
            ends.last().unwrap() < &(2000 * 230),
            "padding stays small: {ends:?}"
        );
    }
}
