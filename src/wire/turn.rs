//! The turn marker: what ties each upstream request to the turn (the traffic line) a system under
//! test sent it for (docs/report.md "Turns").
//!
//! A marker is `rehearse-turn-N-CCCC`: `N` the turn's number (its traffic line, in decimal) and
//! `CCCC` four lower-case hex digits checking `N`, so a marker a gateway cut short or changed
//! (`rehearse-turn-1` of `rehearse-turn-17-3f9a`) is no marker rather than another turn's. It is
//! ASCII letters, digits and `-` only: Python's JSON escapes non-ASCII and Go's `<>&`, so nothing
//! else survives every gateway unchanged.
//!
//! The harness places it in the user message of every turn it sends to a gateway (the mock
//! upstream finds it in the request body, `upstream::turn`); the embedded engine and the fleet
//! hosts, whose transport is ours, send it as the [`HEADER`] of every attempt of a request.

/// The header our own transport carries the marker in.
pub(crate) const HEADER: &str = "x-rehearse-turn";

/// What every marker starts with.
pub(crate) const PREFIX: &[u8] = b"rehearse-turn-";

/// Most digits of a turn number (`u64::MAX` has 20).
const MAX_DIGITS: usize = 20;

/// The check of turn `n`: 16 bits of FNV-1a over its decimal digits.
fn check(n: u64) -> u16 {
    let mut digits = itoa::Buffer::new();
    let h = digits
        .format(n)
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    (h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48)) as u16
}

/// The marker of turn `n`.
pub fn marker(n: u64) -> String {
    format!("rehearse-turn-{n}-{:04x}", check(n))
}

/// The turn a marker names, when `at` starts with a whole, well-formed marker (what follows it,
/// if anything, is not a letter, digit or `-`): `rehearse-turn-17-3f9a.` is turn 17,
/// `rehearse-turn-17-3f9ab` and `rehearse-turn-17-0000` are none.
pub(crate) fn parse(at: &[u8]) -> Option<u64> {
    let rest = at.strip_prefix(PREFIX)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > MAX_DIGITS {
        return None;
    }
    let (num, rest) = rest.split_at(digits);
    let n: u64 = std::str::from_utf8(num).ok()?.parse().ok()?;
    let rest = rest.strip_prefix(b"-")?;
    let hex = rest.get(..4)?;
    if !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let got = u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
    let after = rest.get(4).copied();
    if after.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return None;
    }
    (got == check(n)).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_back_as_its_turn_and_only_ascii_letters_digits_and_dashes() {
        for n in [0, 1, 17, 2999, 1 << 40, u64::MAX] {
            let m = marker(n);
            assert!(m.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'), "{m}");
            assert_eq!(parse(m.as_bytes()), Some(n), "{m}");
            // Followed by the end of a JSON string, a space or a full stop: still the turn.
            for tail in ["\"", " ", ".", "\\n"] {
                assert_eq!(parse(format!("{m}{tail}").as_bytes()), Some(n));
            }
        }
    }

    #[test]
    fn a_marker_cut_short_changed_or_run_on_is_no_marker() {
        let m = marker(17);
        for bad in [
            &m[..m.len() - 1],           // a hex digit lost
            "rehearse-turn-1",           // cut inside the number
            "rehearse-turn-17",          // no check
            "rehearse-turn--3f9a",       // no number
            &m.replace("17", "18"),      // another number, the old check
            &format!("{m}0"),            // runs on
            &format!("{m}-x"),           // runs on
            &m.to_uppercase(),           // not as written
        ] {
            assert_eq!(parse(bad.as_bytes()), None, "{bad}");
        }
        let long = format!("rehearse-turn-{}-0000", "9".repeat(30));
        assert_eq!(parse(long.as_bytes()), None);
    }
}
