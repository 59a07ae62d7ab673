//! Counted nouns for messages and reports: `1 fault`, `3 faults`, `0 probes`.

/// `n` and the noun, singular for exactly one (`plural(1, "fault", "faults")` → `1 fault`).
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// [`plural`] for nouns that take an `s` (`count(2, "request")` → `2 requests`).
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singular_only_for_one() {
        assert_eq!(count(0, "fault"), "0 faults");
        assert_eq!(count(1, "fault"), "1 fault");
        assert_eq!(count(2, "fault"), "2 faults");
        assert_eq!(plural(1, "policy run", "policy runs"), "1 policy run");
        assert_eq!(plural(3, "policy run", "policy runs"), "3 policy runs");
    }
}
