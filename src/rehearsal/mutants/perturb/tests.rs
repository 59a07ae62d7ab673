//! Tests of the perturbations' helpers (counts moved past what was observed).

use super::*;

#[test]
fn counts_move_just_past_the_observed_value() {
    assert_eq!(
        past(3, (Some(3), None, None)),
        vec![("equals 4".to_string(), (Some(4), None, None))]
    );
    assert_eq!(
        past(0, (None, None, Some(2))),
        vec![("at_least 1".to_string(), (None, Some(1), None))]
    );
    assert_eq!(
        past(5, (None, Some(1), Some(9))),
        vec![
            ("at_least 6".to_string(), (None, Some(6), None)),
            ("at_most 4".to_string(), (None, None, Some(4))),
        ]
    );
    assert_eq!(count("2 of 5 turns"), Some(2));
    assert_eq!(count("4 (first at 1.200s)"), Some(4));
    assert_eq!(count("none"), None);
}
