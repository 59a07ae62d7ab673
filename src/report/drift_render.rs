//! The "Since the last runs" section ([`super::drift::DriftSection`]) and the key figures table
//! in report.md and report.html.

use super::drift::DriftSection;
use crate::verdict::drift::show;

/// The section in Markdown (empty when the report has none).
pub fn markdown(d: Option<&DriftSection>) -> String {
    let Some(d) = d else {
        return String::new();
    };
    let mut md = String::from("## Since the last runs\n\n");
    md.push_str(&format!("System under test: {}", d.system));
    if let Some(c) = &d.change {
        md.push_str(&format!(" — changed: **{c}**, compared against the runs before it"));
    }
    md.push_str("\n\n");
    if let Some(l) = d.left_out_text() {
        md.push_str(&format!("{l}\n\n"));
    }
    if let Some(n) = &d.note {
        md.push_str(&format!("{n}\n\n"));
        return md;
    }
    let flagged = d.rows.iter().filter(|r| r.flagged).count();
    md.push_str(&format!(
        "Against the median of the last {} run(s) of this scenario (the same digest) and kind \
         of system; a figure that moved more than {:.0}%, is new (none of those runs had it, \
         though each watched for it) or is gone is flagged ({flagged} flagged).\n\n",
        d.baseline.len(),
        d.threshold * 100.0
    ));
    md.push_str("| policy | figure | this run | median | runs | change | |\n|---|---|---|---|---|---|---|\n");
    for r in &d.rows {
        let v = |x: Option<f64>| x.map_or("–".into(), |x| show(&r.figure, x));
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.policy,
            r.figure,
            v(r.value),
            v(r.median),
            r.runs,
            r.change(),
            flag(r)
        ));
    }
    md.push('\n');
    md
}

/// A flagged row's mark: `⚠ new`, `⚠ gone` or `⚠ moved` (empty when not flagged).
fn flag(r: &super::drift::DriftRow) -> &'static str {
    match (r.flagged, r.median, r.value) {
        (false, _, _) => "",
        (true, None, Some(_)) => "⚠ new",
        (true, Some(_), None) => "⚠ gone",
        (true, _, _) => "⚠ moved",
    }
}

/// The key figures of every arm, one Markdown table (empty when no arm has them).
pub fn figures_markdown(r: &crate::report::model::Report) -> String {
    // Every figure with a value; then those the run could not count, "unknown" (never 0), and
    // OpenClaw's own count of cooling profiles, labelled as its source.
    let rows: Vec<(String, String, String)> = r
        .policies
        .iter()
        .filter_map(|p| p.figures.as_ref().map(|f| (p, f)))
        .flat_map(|(p, f)| {
            let known = f
                .flat()
                .into_iter()
                .map(move |(n, v)| (p.policy.clone(), show(&n, v), n));
            let unknown = f
                .unknown()
                .into_iter()
                .map(move |n| (p.policy.clone(), "unknown".to_string(), n));
            let state = f.providers.iter().filter_map(move |(name, v)| {
                v.cooldowns_auth_state.map(|c| {
                    (
                        p.policy.clone(),
                        c.to_string(),
                        format!("cooldowns{{{name}}} (OpenClaw auth state)"),
                    )
                })
            });
            known.chain(unknown).chain(state)
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from("## Key figures\n\n| policy | figure | value |\n|---|---|---|\n");
    for (p, v, n) in rows {
        md.push_str(&format!("| {p} | {n} | {v} |\n"));
    }
    md.push('\n');
    md
}

/// The section in HTML (empty when the report has none).
pub fn html(d: Option<&DriftSection>) -> String {
    use crate::report::svg::esc;
    let Some(d) = d else {
        return String::new();
    };
    let mut o = String::from("<h2>Since the last runs</h2>\n");
    o.push_str(&format!("<p>System under test: {}", esc(&d.system)));
    if let Some(c) = &d.change {
        o.push_str(&format!(
            " — changed: <b>{}</b>, compared against the runs before it",
            esc(c)
        ));
    }
    o.push_str("</p>\n");
    if let Some(l) = d.left_out_text() {
        o.push_str(&format!("<p>{}</p>\n", esc(&l)));
    }
    if let Some(n) = &d.note {
        o.push_str(&format!("<p>{}</p>\n", esc(n)));
        return o;
    }
    o.push_str(&format!(
        "<p>Against the median of the last {} run(s) of the same scenario digest; moved more than {:.0}%, new or gone is flagged.</p>\n",
        d.baseline.len(),
        d.threshold * 100.0
    ));
    o.push_str("<table><tr><th>policy</th><th>figure</th><th>this run</th><th>median</th><th>runs</th><th>change</th></tr>\n");
    for r in &d.rows {
        let v = |x: Option<f64>| x.map_or("–".into(), |x| show(&r.figure, x));
        o.push_str(&format!(
            "<tr{}><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
            if r.flagged { " class=\"bad\"" } else { "" },
            esc(&r.policy),
            esc(&r.figure),
            v(r.value),
            v(r.median),
            r.runs,
            esc(&r.change())
        ));
    }
    o.push_str("</table>\n");
    o
}
