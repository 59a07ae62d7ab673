//! Fault names and the anchors that name them, checked before a run: `[[fault]] name`s are
//! unique, and every expectation's `since = { fault = … }` (the ground-truth kinds, a
//! transition's `at`, a turn window) and `[[expect.alert]]`'s `fault` names a fault of the
//! scenario (by name, with the nearest when misspelt, or by an index in range) whose
//! applications the upstream's record holds; a `since` is refused where nothing in its table
//! counts from it (`after_first`, a transition's `after` or no `at`). Each error names the
//! field, which `validate` locates at its `file:line:col`.

use super::field::FieldError;
use super::format::ScenarioFile;
use crate::upstream::faults::RouteSel;
use crate::util::suggest::closest;
use crate::verdict::anchor::{FaultRef, Since};

/// What a table says besides its `since` that leaves the `since` meaningless, if anything.
type Conflict = Option<&'static str>;

const AFTER_FIRST: &str =
    "`since` and `after_first` both say where the times count from: give one";
const TRANSITION_AFTER: &str = "`since` moves `at`; `after` counts from the previous expected \
     transition: give `at` with `since`";
const TRANSITION_ANY: &str =
    "`since` moves `at`, and this transition has none (it is expected at any time): give `at`";

/// Every `since` of the scenario's expectations, with the field path of its table and what in
/// the table contradicts it.
fn anchors(file: &ScenarioFile) -> Vec<(String, &Since, Conflict)> {
    let e = &file.expect;
    let at = |table: &str, i: usize| format!("expect.{table}[{i}].since");
    let mut out: Vec<(String, &Since, Conflict)> = Vec::new();
    for (i, x) in e.attempts.iter().enumerate() {
        out.extend(x.since.as_ref().map(|s| (at("attempts", i), s, None)));
    }
    for (i, x) in e.first_request.iter().enumerate() {
        let conflict = x.after_first.then_some(AFTER_FIRST);
        out.extend(x.since.as_ref().map(|s| (at("first_request", i), s, conflict)));
    }
    for (i, x) in e.no_request.iter().enumerate() {
        out.extend(x.since.as_ref().map(|s| (at("no_request", i), s, None)));
    }
    for (i, x) in e.recovered.iter().enumerate() {
        out.extend(x.since.as_ref().map(|s| (at("recovered", i), s, None)));
    }
    for (i, x) in e.transition.iter().enumerate() {
        let conflict = match (x.at, x.after) {
            (_, Some(_)) => Some(TRANSITION_AFTER),
            (None, None) => Some(TRANSITION_ANY),
            (Some(_), None) => None,
        };
        out.extend(x.since.as_ref().map(|s| (at("transition", i), s, conflict)));
    }
    for (i, x) in e.turn.iter().enumerate() {
        out.extend(x.since.as_ref().map(|s| (at("turn", i), s, None)));
    }
    for (i, x) in e.cooldown.iter().enumerate() {
        out.extend(x.since.as_ref().map(|s| (at("cooldown", i), s, None)));
    }
    for (i, x) in e.per_turn.iter().enumerate() {
        out.extend(x.since.as_ref().map(|s| (at("per_turn", i), s, None)));
    }
    out
}

/// Every fault an expectation names besides `since`: `[[expect.alert]]`'s `fault` (its
/// `fires_within` counts from that fault's start, `resolves_within` from its end), with its
/// field path.
fn named(file: &ScenarioFile) -> Vec<(String, &FaultRef)> {
    let e = &file.expect;
    e.alert
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.fault.as_ref().map(|f| (format!("expect.alert[{i}]"), f)))
        .collect()
}

/// Unique fault names, and every anchor naming a fault the run records applications of.
pub(crate) fn check(file: &ScenarioFile) -> Result<(), FieldError> {
    let faults = &file.fault;
    for (i, f) in faults.iter().enumerate() {
        let Some(name) = &f.name else { continue };
        if let Some(j) = faults[..i]
            .iter()
            .position(|g| g.name.as_deref() == Some(name))
        {
            return Err(FieldError::new(
                format!("fault[{i}].name"),
                format!("`{name}` is already the name of fault[{j}]: a fault's name is unique within its scenario"),
            ));
        }
    }
    let mut named_faults: Vec<(String, &FaultRef)> = Vec::new();
    for (field, since, conflict) in anchors(file) {
        if let Some(why) = conflict {
            return Err(FieldError::new(field, why.into()));
        }
        named_faults.push((field, &since.fault));
    }
    named_faults.extend(named(file));
    for (field, fault) in named_faults {
        check_one(file, &field, fault)?;
    }
    Ok(())
}

/// One fault an expectation names (at `field`, a table whose `fault` key names it): a fault of
/// the scenario whose applications the upstream's record holds.
fn check_one(file: &ScenarioFile, field: &str, fault: &FaultRef) -> Result<(), FieldError> {
    let faults = &file.fault;
    let names: Vec<&str> = faults.iter().filter_map(|f| f.name.as_deref()).collect();
    let Some(i) = fault.index_in(faults) else {
        let msg = match fault {
            FaultRef::Index(i) => format!(
                "fault[{i}] does not exist: the scenario has {} [[fault]] table(s){}",
                faults.len(),
                if faults.is_empty() {
                    String::new()
                } else {
                    format!(", fault[0]..fault[{}]", faults.len() - 1)
                }
            ),
            FaultRef::Name(n) => {
                let hint = closest(n, names.iter().copied())
                    .map(|c| format!("did you mean `{c}`? "))
                    .unwrap_or_default();
                let known = if names.is_empty() {
                    "no [[fault]] has a `name`".to_string()
                } else {
                    format!("named faults: {}", names.join(", "))
                };
                format!("no [[fault]] is named `{n}`: {hint}({known})")
            }
        };
        return Err(FieldError::new(format!("{field}.fault"), msg));
    };
    if faults[i].route == RouteSel::Coordinator {
        return Err(FieldError::new(
            format!("{field}.fault"),
            format!(
                "fault[{i}] acts on the fleet's Redis, not on upstream requests: the \
                 upstream's record has no application of it to anchor at"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "name = \"x\"\nduration = \"10s\"\ntraffic = \"t.jsonl\"\n\
        [[fault]]\nname = \"outage\"\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\nfrom = \"2s\"\n";

    fn err(extra: &str) -> String {
        let text = format!("{HEAD}{extra}");
        let file = ScenarioFile::parse(&text, "s.toml").unwrap();
        let e = check(&file).unwrap_err();
        let located = crate::scenario::ScenarioError::invalid("s.toml", &e.field, e.message)
            .located(&text);
        located.to_string()
    }

    #[test]
    fn a_duplicate_fault_name_is_located_at_the_second() {
        let e = err("[[fault]]\nname = \"outage\"\nroute = \"llm\"\nkind = \"reset\"\n");
        assert!(e.starts_with("s.toml:11:8: fault[1].name: "), "{e}");
        assert!(e.contains("already the name of fault[0]"), "{e}");
    }

    #[test]
    fn an_unknown_name_is_located_with_the_nearest() {
        let e = err(
            "[[expect.first_request]]\nmodel = \"m\"\nat_most = \"1s\"\nsince = { fault = \"outge\" }\n",
        );
        assert!(
            e.starts_with("s.toml:13:19: expect.first_request[0].since.fault: "),
            "{e}"
        );
        assert!(e.contains("did you mean `outage`?"), "{e}");
        assert!(e.contains("named faults: outage"), "{e}");
    }

    #[test]
    fn an_index_out_of_range_and_since_with_after_first_are_refused() {
        let e = err(
            "[[expect.no_request]]\nmodel = \"m\"\nfrom = \"0s\"\nuntil = \"1s\"\nsince = { fault = 1, edge = \"end\" }\n",
        );
        assert!(
            e.starts_with("s.toml:14:19: expect.no_request[0].since.fault: "),
            "{e}"
        );
        assert!(e.contains("has 1 [[fault]] table(s), fault[0]..fault[0]"), "{e}");
        let e = err(
            "[[expect.first_request]]\nmodel = \"m\"\nafter_first = true\nsince = { fault = 0 }\n",
        );
        assert!(e.starts_with("s.toml:13:9: expect.first_request[0].since: "), "{e}");
        let ok = format!(
            "{HEAD}[[expect.recovered]]\nmodel = \"m\"\nafter = \"0s\"\nsince = {{ fault = \"outage\", edge = \"end\" }}\n\
             [[expect.attempts]]\nmodel = \"m\"\nat_least = 1\nsince = {{ fault = 0 }}\n"
        );
        assert!(check(&ScenarioFile::parse(&ok, "s.toml").unwrap()).is_ok());
    }

    #[test]
    fn a_transition_since_needs_its_at_and_names_a_fault() {
        let e = err(
            "[[expect.transition]]\ndep = \"crm\"\nfrom = \"open\"\nto = \"half_open\"\nafter = \"5s\"\nsince = { fault = \"outage\" }\n",
        );
        assert!(e.starts_with("s.toml:15:9: expect.transition[0].since: "), "{e}");
        assert!(e.contains("give `at` with `since`"), "{e}");
        let e = err(
            "[[expect.transition]]\ndep = \"crm\"\nfrom = \"closed\"\nto = \"open\"\nsince = { fault = \"outage\" }\n",
        );
        assert!(e.starts_with("s.toml:14:9: expect.transition[0].since: "), "{e}");
        assert!(e.contains("expected at any time"), "{e}");
        let e = err(
            "[[expect.transition]]\ndep = \"crm\"\nfrom = \"closed\"\nto = \"open\"\nat = \"1s\"\nsince = { fault = \"outgae\", edge = \"end\" }\n",
        );
        assert!(
            e.starts_with("s.toml:15:19: expect.transition[0].since.fault: "),
            "{e}"
        );
        assert!(e.contains("did you mean `outage`?"), "{e}");
    }

    #[test]
    fn a_turn_window_and_an_alert_name_their_fault_like_every_anchor() {
        let e = err(
            "[[expect.turn]]\nlatency_at_most = \"2s\"\nuntil = \"10s\"\nsince = { fault = \"outgae\" }\n",
        );
        assert!(e.starts_with("s.toml:13:19: expect.turn[0].since.fault: "), "{e}");
        assert!(e.contains("did you mean `outage`?"), "{e}");
        let e = err("[[expect.alert]]\nalert = \"BreakerOpen\"\nfires_within = \"20s\"\nfault = \"otage\"\n");
        assert!(e.starts_with("s.toml:13:9: expect.alert[0].fault: "), "{e}");
        assert!(e.contains("did you mean `outage`?"), "{e}");
        let e = err("[[expect.alert]]\nalert = \"BreakerOpen\"\nfires_within = \"20s\"\nfault = 4\n");
        assert!(e.starts_with("s.toml:13:9: expect.alert[0].fault: "), "{e}");
        assert!(e.contains("fault[4] does not exist"), "{e}");
        let ok = format!(
            "{HEAD}[[expect.alert]]\nalert = \"BreakerOpen\"\nfires_within = \"20s\"\nfault = \"outage\"\n\
             [[expect.transition]]\ndep = \"crm\"\nfrom = \"closed\"\nto = \"open\"\nat = \"1s\"\nsince = {{ fault = 0 }}\n\
             [[expect.turn]]\nequals = 3\nsince = {{ fault = \"outage\", edge = \"end\" }}\n"
        );
        assert!(check(&ScenarioFile::parse(&ok, "s.toml").unwrap()).is_ok());
    }

    #[test]
    fn a_misspelt_edge_or_key_is_a_parse_error() {
        for bad in [
            "since = { fault = \"outage\", edge = \"stop\" }",
            "since = { fault = \"outage\", egde = \"end\" }",
        ] {
            let text =
                format!("{HEAD}[[expect.attempts]]\nmodel = \"m\"\nat_least = 1\n{bad}\n");
            let e = ScenarioFile::parse(&text, "s.toml").unwrap_err().to_string();
            assert!(e.starts_with("s.toml:13:"), "{bad}: {e}");
        }
    }
}
