//! `rehearse matrix --textfile-dir DIR`: the batch-job series per cell in
//! `DIR/rehearse_matrix.prom`, written as a run's `rehearse.prom` is (`jobmetrics::textfile`):
//! read, the other matrices' series kept, this matrix's replaced, written back atomically
//! (temp file + rename; the temp name does not end in `.prom`) under an advisory lock. Every
//! family a gauge, one HELP/TYPE each, label values escaped as the run's.
//!
//! - `rehearse_matrix_cell{matrix,case,target,class}`: the share of the cell's repeats of each
//!   class (every class written, 0 for the absent: `== 1` is K of K, `< 1` with `class="pass"`
//!   is a cell that stopped passing).
//! - `rehearse_matrix_cell_meets{matrix,case,target}`: 1 when the cell met what the matrix file
//!   expects of it.
//! - `rehearse_matrix_last_run_timestamp_seconds{matrix}` and
//!   `rehearse_matrix_ok{matrix}` (1: every cell as expected and the matrix finished).

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use super::class::Class;
use super::scorecard::Scorecard;
use crate::scrape::Sample;

/// The file name inside `--textfile-dir`.
pub const TEXTFILE: &str = "rehearse_matrix.prom";
const LOCK: &str = ".rehearse_matrix.prom.lock";

const CELL: &str = "rehearse_matrix_cell";
const MEETS: &str = "rehearse_matrix_cell_meets";
const LAST_RUN: &str = "rehearse_matrix_last_run_timestamp_seconds";
const OK: &str = "rehearse_matrix_ok";

/// Every family, in the order written, with its HELP text.
const FAMILIES: [(&str, &str); 4] = [
    (
        CELL,
        "Share of the repeats of a scorecard cell (case x target) of each class.",
    ),
    (
        MEETS,
        "1 when the scorecard cell met what the matrix file expects of it.",
    ),
    (LAST_RUN, "Unix time the last rehearse matrix run ended."),
    (
        OK,
        "1 when every cell of the last matrix run met what the file expects and the matrix finished.",
    ),
];

/// The samples of `s` (its `matrix` label is `matrix`), ended at `ended_unix_s`.
pub fn samples(s: &Scorecard, matrix: &str, ended_unix_s: f64) -> Vec<Sample> {
    let sample = |name: &str, labels: &[(&str, &str)], value: f64| Sample {
        name: name.to_string(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain([("matrix".to_string(), matrix.to_string())])
            .collect::<BTreeMap<_, _>>(),
        value,
        timestamp_ms: None,
    };
    let mut v = vec![
        sample(LAST_RUN, &[], ended_unix_s),
        sample(OK, &[], f64::from(u8::from(s.ok && s.stopped.is_none()))),
    ];
    for c in &s.cells {
        let k = c.runs.len().max(1) as f64;
        for class in Class::ALL {
            let n = c.counts.get(&class).copied().unwrap_or(0);
            v.push(sample(
                CELL,
                &[
                    ("case", &c.case),
                    ("target", &c.target),
                    ("class", class.as_str()),
                ],
                f64::from(n) / k,
            ));
        }
        v.push(sample(
            MEETS,
            &[("case", &c.case), ("target", &c.target)],
            f64::from(u8::from(c.meets)),
        ));
    }
    v
}

/// Rewrites `dir/rehearse_matrix.prom` with `s`'s series; returns its path and a note when the
/// old file did not parse (its other matrices' series are then lost).
pub fn write(
    dir: &Path,
    s: &Scorecard,
    matrix: &str,
    ended_unix_s: f64,
) -> std::io::Result<(PathBuf, Option<String>)> {
    std::fs::create_dir_all(dir)?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK))?;
    lock.lock()?;
    let path = dir.join(TEXTFILE);
    let mut note = None;
    let mut kept: Vec<Sample> = Vec::new();
    if let Ok(text) = std::fs::read_to_string(&path) {
        match crate::scrape::parse(&text) {
            Ok(e) => kept.extend(
                e.families
                    .iter()
                    .filter(|f| FAMILIES.iter().any(|(n, _)| *n == f.name))
                    .flat_map(|f| &f.samples)
                    .filter(|x| x.labels.get("matrix").is_some_and(|m| m != matrix))
                    .cloned(),
            ),
            Err(e) => {
                note = Some(format!(
                    "{}:{}:{}: {} (rewritten with this matrix's series only)",
                    path.display(),
                    e.line,
                    e.col,
                    e.msg
                ));
            }
        }
    }
    kept.extend(samples(s, matrix, ended_unix_s));
    let text = crate::jobmetrics::series::render_families(&FAMILIES, &kept);
    crate::util::write_atomic(&path, text.as_bytes())?;
    let _ = lock.unlock();
    Ok((path, note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::facts::Figures;
    use crate::matrix::file::Expected;
    use crate::matrix::scorecard::{Run, SCHEMA_VERSION, cell};

    fn card(classes: &[Class]) -> Scorecard {
        let runs = classes
            .iter()
            .enumerate()
            .map(|(i, c)| Run {
                repeat: i as u32 + 1,
                class: *c,
                exit: Some(0),
                seconds: 1.0,
                report_dir: None,
                verdict: None,
                reason: None,
                stopped: false,
                figures: Figures::default(),
            })
            .collect();
        let c = cell("500-once", "gw \"1\"", runs, &Expected::default());
        Scorecard {
            schema_version: SCHEMA_VERSION,
            matrix: "m.toml".into(),
            description: None,
            started_at: "2026-12-05T00:00:00Z".into(),
            duration_ms: 1,
            rehearse_version: None,
            repeats: classes.len() as u32,
            jobs: 1,
            starts: None,
            stopped: None,
            ok: c.meets,
            cases: vec!["500-once".into()],
            targets: vec![],
            cells: vec![c],
        }
    }

    #[test]
    fn each_matrix_rewrites_its_own_cells_and_keeps_the_others() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &card(&[Class::Pass, Class::Fail]), "ci", 100.0).unwrap();
        write(dir.path(), &card(&[Class::Pass]), "field", 150.0).unwrap();
        let (path, note) = write(dir.path(), &card(&[Class::Fail, Class::Fail]), "ci", 200.0).unwrap();
        assert_eq!(note, None);
        let text = std::fs::read_to_string(&path).unwrap();
        let e = crate::scrape::parse(&text).unwrap();
        let get = |name: &str, want: &[(&str, &str)]| -> Vec<f64> {
            e.families
                .iter()
                .flat_map(|f| &f.samples)
                .filter(|s| s.name == name && want.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v)))
                .map(|s| s.value)
                .collect()
        };
        let label = "gw \"1\"";
        assert_eq!(get(CELL, &[("matrix", "ci"), ("target", label), ("class", "fail")]), [1.0]);
        assert_eq!(get(CELL, &[("matrix", "ci"), ("class", "pass")]), [0.0]);
        assert_eq!(get(CELL, &[("matrix", "field"), ("class", "pass")]), [1.0]);
        assert_eq!(get(MEETS, &[("matrix", "ci")]), [0.0]);
        assert_eq!(get(LAST_RUN, &[("matrix", "ci")]), [200.0]);
        assert_eq!(get(LAST_RUN, &[("matrix", "field")]), [150.0]);
        assert_eq!(text.matches("# TYPE rehearse_matrix_cell gauge").count(), 1);
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [LOCK, TEXTFILE], "no temp file left");
    }
}
