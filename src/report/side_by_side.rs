//! What the two side-by-side sections share — OpenClaw versions ([`super::versions`]) and
//! several `--target` files ([`super::targets`]): a row of figures or of text per arm, and the
//! table of rows with one column per arm and a last column marking the rows that moved.

use super::table::Table;
use super::versions_model::DiffRow;
use crate::verdict::secs;

/// Moved past the drift threshold and noise floor, either way.
fn moved(ms: bool, a: f64, b: f64) -> bool {
    let floor = if ms { 100.0 } else { 0.5 };
    let d = (a - b).abs();
    d > crate::report::drift::DEFAULT_THRESHOLD * a.abs().max(b.abs()) && d > floor
}

/// A row of figures: `values` per arm (`-` for none, in seconds when `ms`), changed when two
/// neighbours differ past the drift threshold and the noise floor, or one has a value and the
/// other none.
pub(super) fn numeric(figure: &str, of: &str, values: Vec<Option<f64>>, ms: bool) -> DiffRow {
    let shown = values
        .iter()
        .map(|v| match v {
            None => "-".to_string(),
            Some(x) if ms => secs(*x as i64),
            Some(x) => format!("{x}"),
        })
        .collect();
    let changed = values.windows(2).any(|w| match (w[0], w[1]) {
        (Some(a), Some(b)) => moved(ms, a, b),
        (None, None) => false,
        _ => true,
    });
    DiffRow {
        figure: figure.into(),
        of: of.into(),
        shown,
        values,
        changed,
    }
}

/// A row of text per arm, changed when two neighbours differ.
pub(super) fn text(figure: &str, of: &str, shown: Vec<String>) -> DiffRow {
    let changed = shown.windows(2).any(|w| w[0] != w[1]);
    DiffRow {
        figure: figure.into(),
        of: of.into(),
        values: vec![None; shown.len()],
        shown,
        changed,
    }
}

/// The rows as a table: `figure`, `of`, one column per arm (`arms`, their names), and a last
/// column headed `marker` that says `marker` on a row that changed.
pub(super) fn table<'a>(arms: impl Iterator<Item = &'a str> + Clone, marker: &'a str, rows: &[DiffRow]) -> Table {
    let mut head: Vec<&str> = vec!["figure", "of"];
    head.extend(arms.clone());
    head.push(marker);
    let mut numeric = vec![false, false];
    numeric.extend(arms.map(|_| true));
    numeric.push(false);
    let mut t = Table::new(&head, &numeric);
    for r in rows {
        let mut row = vec![r.figure.clone(), r.of.clone()];
        row.extend(r.shown.iter().cloned());
        row.push(if r.changed { marker } else { "" }.to_string());
        t.rows.push(row);
    }
    t
}
