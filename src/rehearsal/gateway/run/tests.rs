use super::cut;

#[test]
fn a_stop_while_turns_are_out_is_a_stop_whatever_duration_says() {
    // 8 s into a 3 s scenario with turns still out (the external run waits for them).
    assert!(cut(2, 8_000, 3_000));
    // Every turn back, the run waiting out `duration`: a stop before it is a stop.
    assert!(cut(0, 2_000, 3_000));
    // Every turn back and `duration` passed: the run had finished.
    assert!(!cut(0, 8_000, 3_000));
}
