use super::stop_cut;

#[test]
fn a_stop_while_turns_are_out_is_a_stop_whatever_duration_says() {
    let term = || Some("stopped by SIGTERM".to_string());
    // 8 s into a 3 s scenario with turns still out (the external run waits for them).
    assert_eq!(stop_cut(term(), 2, 8_000, 3_000), term());
    // Every turn back, the run waiting out `duration`: a stop before it is a stop.
    assert_eq!(stop_cut(term(), 0, 2_000, 3_000), term());
    // Every turn back and `duration` passed: the run had finished.
    assert_eq!(stop_cut(term(), 0, 8_000, 3_000), None);
    assert_eq!(stop_cut(None, 2, 8_000, 3_000), None);
}
