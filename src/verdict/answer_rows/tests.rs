use super::*;
use crate::verdict::ExpectStatus;
use crate::verdict::answers::{Served, AnswerCheck};
use crate::wire::usage::Usage;

const USAGE: Usage = Usage {
    prompt_tokens: 20,
    completion_tokens: 8,
    total_tokens: 28,
};

fn answer(reported: &str, served: &str, usage: Option<Usage>, recorded: bool) -> AnswerCheck {
    AnswerCheck {
        content_tokens: 8,
        served_shape: true,
        reported_model: Some(reported.into()),
        usage,
        recorded,
        served: recorded.then(|| Served {
            request: 0,
            model: Some(served.into()),
            tokens: Some(8),
            usage: Some(USAGE),
            cut: None,
        }),
    }
}

fn seen(answers: &[AnswerCheck]) -> Vec<AnswerSeen<'_>> {
    answers
        .iter()
        .enumerate()
        .map(|(line, a)| AnswerSeen {
            line,
            outcome: Some(TurnEnd::Answered),
            answer: Some(a),
        })
        .collect()
}

fn served_model() -> ExpectTurn {
    ExpectTurn {
        reported_model: Some("served".into()),
        ..Default::default()
    }
}

#[test]
fn an_honest_gateway_passes_and_a_misreport_fails_naming_the_turn_and_both_models() {
    let honest = [
        answer("gpt-4o", "gpt-4o", Some(USAGE), true),
        answer("gpt-4o-mini", "gpt-4o-mini", Some(USAGE), true),
    ];
    let e = ExpectTurn {
        usage: Some("served".into()),
        ..served_model()
    };
    let got = evaluate(std::slice::from_ref(&e), &seen(&honest), false);
    assert_eq!(got.len(), 2);
    for r in &got {
        assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
        assert_eq!(r.witness.get("turns_compared"), 2);
    }
    let lying = [
        answer("gpt-4o", "gpt-4o", Some(USAGE), true),
        answer("gpt-4o", "gpt-4o-mini", Some(USAGE), true),
    ];
    let got = evaluate(&[served_model()], &seen(&lying), false);
    assert_eq!(got[0].status, ExpectStatus::Fail);
    assert!(
        got[0].observed.contains("turn 1: gpt-4o, served gpt-4o-mini"),
        "{}",
        got[0].observed
    );
    assert_eq!(got[0].witness.get("turns_differ"), 1);
    // Even a stopped run fails on a difference already seen.
    assert_eq!(
        evaluate(&[served_model()], &seen(&lying), true)[0].status,
        ExpectStatus::Fail
    );
}

#[test]
fn unknown_usage_is_not_judged_and_nothing_judged_is_no_pass() {
    let mut a = answer("gpt-4o", "gpt-4o", None, true);
    if let Some(s) = a.served.as_mut() {
        s.usage = None;
    }
    let usage = ExpectTurn {
        usage: Some("served".into()),
        ..Default::default()
    };
    let got = evaluate(&[usage], &seen(&[a]), false);
    assert_eq!(got[0].status, ExpectStatus::Fail, "{}", got[0].detail);
    assert!(got[0].observed.contains("1 unknown"), "{}", got[0].observed);
    assert_eq!(got[0].witness.get("turns_unknown"), 1);
    assert_eq!(got[0].witness.get("turns_compared"), 0);
}

#[test]
fn answers_with_no_record_fail_the_row() {
    let answers = [
        answer("gpt-4o", "gpt-4o", Some(USAGE), true),
        answer("gpt-4o", "", None, false),
    ];
    let got = evaluate(&[served_model()], &seen(&answers), false);
    assert_eq!(got[0].status, ExpectStatus::Fail);
    assert!(got[0].observed.contains("turns 1: the turn marker stripped?"), "{}", got[0].observed);
    assert_eq!(got[0].witness.get("turns_unrecorded"), 1);
}

#[test]
fn the_keys_are_checked() {
    let bad = ExpectTurn {
        reported_model: Some("gpt-4o".into()),
        ..Default::default()
    };
    assert_eq!(check(&bad).unwrap_err().0, "reported_model");
    let bad = ExpectTurn {
        outcome: Some("http_error".into()),
        ..served_model()
    };
    assert_eq!(check(&bad).unwrap_err().0, "outcome");
    assert!(check(&served_model()).is_ok());
    let truncated = ExpectTurn {
        outcome: Some("truncated".into()),
        ..served_model()
    };
    assert!(check(&truncated).is_ok());
    assert!(toml::from_str::<ExpectTurn>("reported_model = \"served\"\nusage = \"served\"").is_ok());
}
