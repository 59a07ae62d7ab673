//! "Did you mean": the closest of some known names to a misspelt one, by edit distance.

/// The candidate nearest to `word` by edit distance (optimal string alignment: a swap of two
/// neighbouring letters counts as one edit, so `dpe` suggests `dep`), if it is near enough to be a
/// plausible typo: at most a third of the longer name's length, at least 1 and at most 4. Ties go to the first candidate. An exact match is not a suggestion.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == word {
            continue;
        }
        let d = strsim::osa_distance(word, c);
        let limit = (word.chars().count().max(c.chars().count()) / 3).clamp(1, 4);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn near_names_are_suggested_far_ones_are_not() {
        let names = ["requests_total", "breaker_state", "throttled_total"];
        assert_eq!(closest("request_total", names), Some("requests_total"));
        assert_eq!(closest("breaker_stat", names), Some("breaker_state"));
        assert_eq!(closest("latency", names), None);
        assert_eq!(closest("outcom", ["dep", "outcome"]), Some("outcome"));
        assert_eq!(closest("de", ["dep", "outcome"]), Some("dep"));
        assert_eq!(
            closest("dpe", ["dep", "outcome"]),
            Some("dep"),
            "a swap is one edit"
        );
        assert_eq!(
            closest("requests_total", names),
            None,
            "exact is no suggestion"
        );
        assert_eq!(closest("x", Vec::<&str>::new()), None);
    }
}
