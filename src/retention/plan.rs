//! The decision, pure: given what the report directory holds, which of the runs of one key to
//! remove. The newest `keep` finished runs stay (the current one always); an older finished run
//! goes; a run that never finished (killed, or its report broken) goes once `keep` finished runs
//! newer than it exist and its process is gone. Nothing that is not ours, and nothing of
//! another key, is ever chosen.

use crate::rundir::marker::Marker;
use super::scan::{Entry, Finished, Owner};

/// What to remove, and what was left alone because it is not ours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Decision {
    /// Directory names to remove, each with why.
    pub remove: Vec<(String, String)>,
    /// Children that are not ours (left alone).
    pub foreign: usize,
}

/// Decides what to remove among `entries` for `key`, keeping `keep` finished runs (at least 1).
/// `current` is the pruning run's directory name (always kept); `alive` says whether a marker's
/// process still runs (a run in progress is never removed).
pub(crate) fn decide(
    entries: &[Entry],
    key: &str,
    keep: usize,
    current: Option<&str>,
    alive: &dyn Fn(&Marker) -> bool,
) -> Decision {
    let keep = keep.max(1);
    let mut out = Decision {
        foreign: entries
            .iter()
            .filter(|e| matches!(e.owner, Owner::NotOurs(_)))
            .count(),
        ..Decision::default()
    };
    // Ours, of this key, newest first (the current run first of all).
    let mut ours: Vec<(&Entry, &Marker)> = entries
        .iter()
        .filter_map(|e| match &e.owner {
            Owner::Ours(m) if m.key == key => Some((e, m)),
            _ => None,
        })
        .collect();
    let order = |e: &Entry, m: &Marker| (current == Some(e.name.as_str()), m.started_unix_ms);
    ours.sort_by(|(a, ma), (b, mb)| {
        order(b, mb)
            .cmp(&order(a, ma))
            .then_with(|| b.name.cmp(&a.name))
    });
    let mut finished_newer = 0usize;
    for (e, m) in ours {
        let is_current = current == Some(e.name.as_str());
        match &e.finished {
            Finished::Yes(_) => {
                if !is_current && finished_newer >= keep {
                    out.remove.push((
                        e.name.clone(),
                        format!("older than the {keep} kept run(s) of {key}"),
                    ));
                }
                finished_newer += 1;
            }
            Finished::No(why) => {
                if is_current || finished_newer < keep || alive(m) {
                    continue;
                }
                out.remove.push((
                    e.name.clone(),
                    format!("{why}; {finished_newer} newer finished run(s) of {key}"),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(key: &str, ms: u64, pid: u32) -> Marker {
        Marker {
            dir: None,
            tool: "rehearse".into(),
            version: "0".into(),
            key: key.into(),
            scenarios: vec![key.into()],
            pid,
            host: "h".into(),
            started_at: String::new(),
            started_unix_ms: ms,
        }
    }

    fn ours(name: &str, key: &str, ms: u64, finished: bool) -> Entry {
        Entry {
            name: name.into(),
            owner: Owner::Ours(marker(key, ms, 7)),
            finished: if finished {
                Finished::Yes("pass".into())
            } else {
                Finished::No("no report.json".into())
            },
        }
    }

    fn names(d: &Decision) -> Vec<&str> {
        let mut v: Vec<&str> = d.remove.iter().map(|(n, _)| n.as_str()).collect();
        v.sort();
        v
    }

    #[test]
    fn keeps_the_newest_finished_and_removes_older_ones() {
        let e: Vec<Entry> = (1..=5)
            .map(|i| ours(&format!("r{i}"), "weekly", i * 1000, true))
            .collect();
        let d = decide(&e, "weekly", 2, Some("r5"), &|_| false);
        assert_eq!(names(&d), ["r1", "r2", "r3"]);
        assert!(d.remove[0].1.contains("older than the 2 kept"), "{:?}", d.remove);
        // keep 0 is read as 1: the current run is never removed.
        let d = decide(&e, "weekly", 0, Some("r5"), &|_| false);
        assert_eq!(names(&d), ["r1", "r2", "r3", "r4"]);
        // Another key's runs are not counted and not removed.
        let d = decide(&e, "smoke", 1, None, &|_| false);
        assert!(d.remove.is_empty());
    }

    #[test]
    fn an_unfinished_run_goes_only_once_keep_finished_runs_are_newer() {
        let e = vec![
            ours("r1", "w", 1000, true),
            ours("r2-killed", "w", 2000, false),
            ours("r3", "w", 3000, true),
            ours("r4", "w", 4000, true),
        ];
        // keep 3: r2 has only 2 finished runs newer than it.
        let d = decide(&e, "w", 3, Some("r4"), &|_| false);
        assert!(d.remove.is_empty(), "{d:?}");
        // keep 2: r3 and r4 are newer and finished.
        let d = decide(&e, "w", 2, Some("r4"), &|_| false);
        assert_eq!(names(&d), ["r1", "r2-killed"]);
        assert!(d.remove.iter().any(|(n, why)| n == "r2-killed"
            && why.contains("no report.json; 2 newer finished")));
        // Its process still alive: in progress, never removed.
        let d = decide(&e, "w", 2, Some("r4"), &|m| m.started_unix_ms == 2000);
        assert_eq!(names(&d), ["r1"]);
    }

    #[test]
    fn foreign_entries_are_counted_never_removed_and_the_current_run_stays() {
        let mut e = vec![
            Entry {
                name: "notes".into(),
                owner: Owner::NotOurs("no marker".into()),
                finished: Finished::No("not ours".into()),
            },
            ours("r1", "w", 1000, true),
        ];
        // The current run sorts first even when its clock says it is older.
        e.push(ours("r0-current", "w", 10, true));
        let d = decide(&e, "w", 1, Some("r0-current"), &|_| false);
        assert_eq!(names(&d), ["r1"]);
        assert_eq!(d.foreign, 1);
    }
}
