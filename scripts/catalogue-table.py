#!/usr/bin/env python3
"""Markdown tables of catalogue runs from their report.json files: a case × verdict table with
every failed row's reason, then every row of every case (kind, subject, expected, observed,
verdict). Used by scripts/catalogue.sh after its runs, and on a scorecard's column:

    scripts/catalogue-table.py DIR...

Each DIR is a run's report directory (holding report.json) or a directory above one or more of
them (the newest report.json under it is taken): e.g. a scorecard's `cells/*/TARGET/r1`.
A DIR with no report.json is a row saying so: `not applicable` with the refusal when its stderr
(`stderr.log` in it, or `DIR.log` beside it) says so. Exit 0, or 2 on bad usage.
"""
import glob
import json
import os
import sys


def newest_report(d):
    if os.path.isfile(os.path.join(d, "report.json")):
        return os.path.join(d, "report.json")
    found = sorted(glob.glob(os.path.join(d, "**", "report.json"), recursive=True))
    return found[-1] if found else None


def refusal(d):
    """The `not applicable:` line a run refused its case with (its stderr: the matrix's
    `stderr.log` in DIR, scripts/catalogue.sh's `DIR.log` beside it), if any."""
    for log in (os.path.join(d, "stderr.log"), d.rstrip("/") + ".log"):
        if os.path.isfile(log):
            for line in open(log, errors="replace"):
                if "not applicable: " in line:
                    return line.strip()
    return None


def cell(text, limit=400):
    text = " ".join(str(text or "").split()).replace("|", "/")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def main(dirs):
    summary, rows = [], []
    for d in dirs:
        path = newest_report(d)
        if path is None:
            why = refusal(d)
            verdict = "not applicable" if why else "no report"
            summary.append("| %s | %s | %s |" % (cell(d), verdict, cell(why or "-", 900)))
            continue
        r = json.load(open(path))
        case = r.get("scenario", "?")
        verdict = r.get("verdict", "?")
        exps = [e for p in r.get("policies", []) for e in p.get("expectations", [])]
        failed = [e for e in exps if e.get("status") not in ("pass", "no_baseline")]
        if r.get("reason"):
            why = r["reason"]
        elif failed:
            why = "; ".join(
                "%s %s: %s" % (e.get("kind"), e.get("status"), e.get("detail", "")) for e in failed
            )
        else:
            why = "%d of %d rows pass" % (len(exps), len(exps))
        summary.append("| %s | %s | %s |" % (case, verdict, cell(why, 900)))
        for e in exps:
            rows.append(
                "| %s | %s | %s | %s | %s | %s |"
                % (
                    case,
                    cell(e.get("kind")),
                    cell(e.get("dep")),
                    cell(e.get("expected")),
                    cell(e.get("observed"), 300),
                    e.get("status", "?"),
                )
            )
    print("| case | verdict | reason (every row that did not pass) |")
    print("|---|---|---|")
    print("\n".join(summary))
    print()
    print("| case | row | subject | expected | observed | verdict |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: %s DIR..." % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1:])
