use super::*;
use crate::upstream::UpstreamRecord;
use crate::util::speed::Speed;
use crate::verdict::turns::{Names, rows};

const USAGE: Usage = Usage {
    prompt_tokens: 20,
    completion_tokens: 8,
    total_tokens: 28,
};

/// A model request of turn 3 at `t` naming `model`, faulted by `fault`, its answer 8 tokens
/// with `USAGE`.
fn rec(t: u64, model: &str, fault: Option<&str>) -> UpstreamRecord {
    let mut r = UpstreamRecord::llm_for_test(t, 0, "dep".into(), Some(model), Some("fp"), fault);
    r.turn = Some(3);
    r.tokens = Some(8);
    r.usage = Some(USAGE);
    r
}

fn turn_row(records: &[UpstreamRecord]) -> TurnRow {
    let part = rows(records, &Names::default(), Speed::ONE);
    part.rows.into_iter().next().expect("one turn")
}

fn got(text: &str, model: &str, usage: Option<Usage>, row: Option<&TurnRow>) -> AnswerCheck {
    AnswerCheck {
        content_tokens: content_tokens(text),
        served_shape: served_shape(text),
        reported_model: Some(model.into()),
        usage,
        recorded: row.is_some(),
        served: row.and_then(served_of),
    }
}

const WHOLE: &str = "t1 t2 t3 t4 t5 t6 t7 t8";

#[test]
fn the_served_request_is_the_answering_one_or_a_cut_last_one() {
    // 503 on gpt-4o, then gpt-4o-mini answered: the fallback was served.
    let row = turn_row(&[rec(0, "gpt-4o", Some("status")), rec(5, "gpt-4o-mini", None)]);
    let s = served_of(&row).unwrap();
    assert_eq!((s.request, s.model.as_deref()), (1, Some("gpt-4o-mini")));
    assert_eq!((s.tokens, s.usage, s.cut), (Some(8), Some(USAGE), None));
    // Its only request cut mid-stream: that one was served, without its usage.
    let row = turn_row(&[rec(0, "gpt-4o", Some("reset_mid_stream"))]);
    let s = served_of(&row).unwrap();
    assert_eq!(s.cut.as_deref(), Some("reset_mid_stream"));
    assert_eq!(s.usage, None);
    // Refused only: nothing was served.
    assert_eq!(served_of(&turn_row(&[rec(0, "gpt-4o", Some("status"))])), None);
    // A whole answer the gateway stopped reading before its end (`whole: false`): not an
    // answer of the turn, but what it was served — so a 200 on part of it is truncated.
    let mut left = rec(0, "gpt-4o", None);
    left.done_ms = Some(40);
    left.whole = Some(false);
    let row = turn_row(&[left]);
    assert_eq!(row.answered_by, None);
    let s = served_of(&row).unwrap();
    assert_eq!((s.request, s.tokens, s.cut), (0, Some(8), None));
    assert!(got("t1 t2 t3", "gpt-4o", None, Some(&row)).truncated());
}

#[test]
fn an_honest_answer_is_never_truncated_and_a_cut_one_always_is() {
    let row = turn_row(&[rec(0, "gpt-4o", None)]);
    let honest = got(WHOLE, "gpt-4o", Some(USAGE), Some(&row));
    assert!(!honest.truncated());
    assert_eq!(outcome(TurnEnd::Answered, Some(&honest)), TurnEnd::Answered);
    for cut in ["t1 t2 t3", "", "t1 t2 t", "t1 t2 t3 t4 t5 t6 t7"] {
        let c = got(cut, "gpt-4o", None, Some(&row));
        assert!(c.truncated(), "{cut:?}");
        assert_eq!(outcome(TurnEnd::Answered, Some(&c)), TurnEnd::Truncated);
        // An error the client saw stays that error.
        assert_eq!(outcome(TurnEnd::HttpError, Some(&c)), TurnEnd::HttpError);
    }
    // A gateway that passes on a cut upstream stream as a 200: truncated too.
    let cut_row = turn_row(&[rec(0, "gpt-4o", Some("stall_stream"))]);
    assert!(got("t1 t2", "gpt-4o", None, Some(&cut_row)).truncated());
    // And a stream an error event or a malformed chunk broke inside its 200.
    for broke in ["error_event", "malformed_chunk"] {
        let row = turn_row(&[rec(0, "gpt-4o", Some(broke))]);
        assert!(got("t1 t2", "gpt-4o", None, Some(&row)).truncated(), "{broke}");
    }
}

#[test]
fn without_a_record_or_of_another_shape_truncation_is_not_judged() {
    let row = turn_row(&[rec(0, "gpt-4o", None)]);
    let unrecorded = got("t1", "gpt-4o", None, None);
    assert!(!unrecorded.truncated());
    assert_eq!(unrecorded.model(), Compared::Unrecorded);
    assert_eq!(unrecorded.usage(), Compared::Unrecorded);
    let own_words = got("answered by m1", "gpt-4o", None, Some(&row));
    assert!(!own_words.served_shape && !own_words.truncated());
    assert!(!served_shape("t2 t3") && !served_shape("t1 t3") && served_shape("t1 t2 t"));
}

#[test]
fn the_model_and_usage_compare_with_what_was_served() {
    let row = turn_row(&[rec(0, "gpt-4o", Some("status")), rec(5, "gpt-4o-mini", None)]);
    let honest = got(WHOLE, "gpt-4o-mini", Some(USAGE), Some(&row));
    assert_eq!(honest.model(), Compared::Same);
    assert_eq!(honest.usage(), Compared::Same);
    let lies = got(WHOLE, "gpt-4o", Some(Usage { total_tokens: 9, ..USAGE }), Some(&row));
    assert_eq!(
        lies.model(),
        Compared::Differs {
            got: "gpt-4o".into(),
            served: "gpt-4o-mini".into()
        }
    );
    assert_eq!(
        lies.usage(),
        Compared::Differs {
            got: "20+8=9".into(),
            served: "20+8=28".into()
        }
    );
    // A provider prefix is no difference; another provider's is.
    let p = |a: &str, b: &str| same_model(a, b);
    assert!(p("mockai/m1", "m1") && p("m1", "mockai/m1") && p("m1", "m1"));
    assert!(!p("a/m1", "b/m1") && !p("gpt-4o", "gpt-4o-mini") && !p("xm1", "m1"));
    // The upstream sent no usage: unknown, whatever the gateway says.
    let mut no_usage = rec(0, "gpt-4o", None);
    no_usage.usage = None;
    let row = turn_row(&[no_usage]);
    let own = got(WHOLE, "gpt-4o", Some(USAGE), Some(&row));
    assert!(matches!(own.usage(), Compared::Unknown(_)));
}
