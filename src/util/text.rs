//! Text for messages and reports: counted nouns (`1 fault`, `3 faults`, `0 probes`) and an
//! error with its causes on one line.

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

/// An error and its causes on one line, `outer: cause: root` (what anyhow's `{:#}` prints), for
/// an error that ends as report text rather than at the CLI edge.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading the log")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_chain_names_every_cause_once() {
        let e = Outer(std::io::Error::other("disk gone"));
        assert_eq!(chain(&e), "reading the log: disk gone");
        assert_eq!(chain(&std::io::Error::other("alone")), "alone");
    }

    #[test]
    fn singular_only_for_one() {
        assert_eq!(count(0, "fault"), "0 faults");
        assert_eq!(count(1, "fault"), "1 fault");
        assert_eq!(count(2, "fault"), "2 faults");
        assert_eq!(plural(1, "policy run", "policy runs"), "1 policy run");
        assert_eq!(plural(3, "policy run", "policy runs"), "3 policy runs");
    }
}
