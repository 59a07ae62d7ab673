//! Which runs of a matrix may overlap (pure): a run judged on timing tighter than [`SLACK`]
//! runs alone; runs that share a port or a gateway process never overlap; otherwise up to
//! `--jobs` at once. docs/matrix.md says why these rules.

use std::time::Duration;

/// The slack a run's timing bounds must keep, in wall time, to share the machine: a run whose
/// tightest bound (scenario time ÷ speed) is below it runs alone. 1 s: the catalogue's 5 s
/// answer bounds at ×4 (1.25 s of wall time) held with five runs at once on a busy 2-core
/// machine (tests/catalogue.rs); its 3 s bound at ×4 (0.75 s) is not given that chance.
const SLACK: Duration = Duration::from_secs(1);

/// The keys of a scenario's `[[expect.*]]` rows that bound a time (a duration string, or ms
/// under a key ending `_ms`): `within`, `at_most`, `tolerance` and any key ending `_within` or
/// `_tolerance` (`answer_within`). Window offsets (`from`, `until`, `after`) are not bounds.
fn is_bound(key: &str) -> bool {
    let key = key.strip_suffix("_ms").unwrap_or(key);
    matches!(key, "within" | "at_most" | "tolerance")
        || key.ends_with("_within")
        || key.ends_with("_tolerance")
}

/// The tightest time bound any expectation of the scenario `text` names, scenario time.
pub fn tightest_bound(text: &str) -> Option<Duration> {
    let doc: toml::Value = toml::from_str(text).ok()?;
    let mut best: Option<Duration> = None;
    walk(doc.get("expect")?, None, &mut best);
    best
}

fn walk(v: &toml::Value, key: Option<&str>, best: &mut Option<Duration>) {
    let found = match (v, key) {
        (toml::Value::String(s), Some(k)) if is_bound(k) => humantime::parse_duration(s).ok(),
        (toml::Value::Integer(n), Some(k)) if k.ends_with("_ms") && is_bound(k) => {
            u64::try_from(*n).ok().map(Duration::from_millis)
        }
        (toml::Value::Float(f), Some(k)) if k.ends_with("_ms") && is_bound(k) => {
            Duration::try_from_secs_f64(f / 1000.0).ok()
        }
        (toml::Value::Table(t), _) => {
            for (k, v) in t {
                walk(v, Some(k), best);
            }
            None
        }
        (toml::Value::Array(a), _) => {
            for v in a {
                walk(v, key, best);
            }
            None
        }
        _ => None,
    };
    if let Some(d) = found {
        *best = Some(best.map_or(d, |b| b.min(d)));
    }
}

/// Whether a run with this tightest bound at `speed` is judged on timing (runs alone).
pub fn timing_judged(bound: Option<Duration>, speed: f64) -> bool {
    bound.is_some_and(|b| {
        Duration::try_from_secs_f64(b.as_secs_f64() / speed.max(f64::MIN_POSITIVE))
            .is_ok_and(|wall| wall < SLACK)
    })
}

/// The target kinds whose every run starts a gateway of its own (its process, its free ports,
/// its directory): two runs of one such target share nothing.
const SUPERVISED: [&str; 3] = ["openclaw", "litellm", "portkey"];

/// The ports and processes a target file's runs hold: `target:NAME` for a gateway the runs
/// share (one at a fixed address: `kind = "http"`, or a file the matrix cannot read), and each
/// `host:port` the file writes (`[target] url`, `[upstream] listen`) — two targets naming the
/// same port never overlap either. A supervised gateway (OpenClaw, LiteLLM, Portkey) is started
/// afresh for every run, on free ports: its runs may overlap, up to `--jobs`.
pub fn target_keys(name: &str, file_text: Option<&str>) -> Vec<String> {
    let Some(text) = file_text else {
        return Vec::new();
    };
    let doc = toml::from_str::<toml::Value>(text).ok();
    let kind = doc
        .as_ref()
        .and_then(|d| d.get("target"))
        .and_then(|t| t.get("kind"))
        .and_then(|k| k.as_str());
    let mut keys = Vec::new();
    if !kind.is_some_and(|k| SUPERVISED.contains(&k)) {
        keys.push(format!("target:{name}"));
    }
    if let Some(doc) = doc {
        let url = doc
            .get("target")
            .and_then(|t| t.get("url"))
            .and_then(|u| u.as_str())
            .map(|u| {
                let rest = u.split_once("://").map_or(u, |(_, r)| r);
                rest.split('/').next().unwrap_or(rest).to_string()
            });
        let listen = doc
            .get("upstream")
            .and_then(|t| t.get("listen"))
            .and_then(|u| u.as_str())
            .map(String::from);
        for hp in [url, listen].into_iter().flatten() {
            if let Some((_, port)) = hp.rsplit_once(':') {
                keys.push(format!("port:{port}"));
            }
        }
    }
    keys
}

/// What one pending or running run holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// It runs alone.
    pub alone: bool,
    /// What it holds ([`target_keys`]).
    pub keys: Vec<String>,
}

/// The first of `pending` that may start beside `running` with at most `jobs` at once, in
/// order: nothing beside a run that runs alone, a run that runs alone only on an idle machine,
/// no two holding one key. `None`: wait for a run to end.
pub fn next(pending: &[Slot], running: &[&Slot], jobs: usize) -> Option<usize> {
    if running.len() >= jobs.max(1) || running.iter().any(|r| r.alone) {
        return None;
    }
    pending.iter().position(|p| {
        (!p.alone || running.is_empty())
            && !running
                .iter()
                .any(|r| r.keys.iter().any(|k| p.keys.contains(k)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tightest_bound_is_read_from_the_expectations_only() {
        let text = "duration = \"2s\"\n[[fault]]\nfrom = \"1s\"\n\
                    [[expect.per_turn]]\nanswer_within = \"5s\"\nfrom = \"0s\"\n\
                    [[expect.first_request]]\nat_most = \"3s\"\n\
                    [[expect.transition]]\ntolerance_ms = 300\nafter = \"0s\"\n";
        assert_eq!(tightest_bound(text), Some(Duration::from_millis(300)));
        assert_eq!(tightest_bound("[[expect.per_turn]]\nrequests_at_most = 4\n"), None);
        assert_eq!(tightest_bound("not toml ["), None);
        assert_eq!(
            tightest_bound("[[expect.per_turn]]\nanswer_within = \"5s\"\nfrom = \"0s\"\n"),
            Some(Duration::from_secs(5))
        );
    }

    #[test]
    fn timing_judged_below_the_slack_in_wall_time() {
        let five = Some(Duration::from_secs(5));
        assert!(!timing_judged(five, 1.0));
        assert!(!timing_judged(five, 4.0), "1.25 s of wall time");
        assert!(timing_judged(Some(Duration::from_secs(3)), 4.0), "0.75 s");
        assert!(!timing_judged(None, 100.0));
    }

    #[test]
    fn a_target_holds_its_gateway_and_the_ports_it_names() {
        assert!(target_keys("engine", None).is_empty());
        let k = target_keys(
            "gw",
            Some("[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:4000/v1\"\n[upstream]\nlisten = \"127.0.0.1:18081\"\n"),
        );
        assert_eq!(k, ["target:gw", "port:4000", "port:18081"]);
        // A supervised gateway is started afresh per run, on free ports: nothing shared.
        for kind in ["openclaw", "litellm", "portkey"] {
            let k = target_keys("oc", Some(&format!("[target]\nkind = \"{kind}\"\n")));
            assert!(k.is_empty(), "{kind}: {k:?}");
        }
        // One whose file names a fixed upstream port still holds that port.
        let k = target_keys(
            "oc",
            Some("[target]\nkind = \"openclaw\"\n[upstream]\nlisten = \"127.0.0.1:18081\"\n"),
        );
        assert_eq!(k, ["port:18081"]);
        // A file the matrix cannot read holds its name.
        assert_eq!(target_keys("x", Some("not toml [")), ["target:x"]);
    }

    #[test]
    fn runs_overlap_only_when_nothing_forbids_it() {
        let free = Slot {
            alone: false,
            keys: vec![],
        };
        let alone = Slot {
            alone: true,
            keys: vec![],
        };
        let gw = Slot {
            alone: false,
            keys: vec!["target:gw".into()],
        };
        // Up to jobs at once.
        assert_eq!(next(std::slice::from_ref(&free), &[&free], 2), Some(0));
        assert_eq!(next(std::slice::from_ref(&free), &[&free, &free], 2), None);
        assert_eq!(next(std::slice::from_ref(&free), &[], 0), Some(0), "jobs 0 is 1");
        // A timing-judged run waits for an idle machine, and nothing starts beside it.
        assert_eq!(next(&[alone.clone(), free.clone()], &[&free], 4), Some(1));
        assert_eq!(next(std::slice::from_ref(&alone), &[], 4), Some(0));
        assert_eq!(next(std::slice::from_ref(&free), &[&alone], 4), None);
        // Two runs of one gateway never overlap; another target's may.
        assert_eq!(next(&[gw.clone(), free.clone()], &[&gw], 4), Some(1));
        assert_eq!(next(std::slice::from_ref(&gw), &[&gw], 4), None);
    }
}
