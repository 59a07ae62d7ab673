#!/usr/bin/env python3
"""One sentence per failing run, from its upstream's record and what its client got: what a
system under test did in a catalogue case. For a scorecard's cells (docs/matrix.md):

    scripts/cell-story.py SCORECARD_DIR [TARGET...]

prints, per target, a Markdown table `case | class | what it did` for every cell whose first
repeat did not pass: the first turn a fault touched, its upstream requests in order (profile,
model, the fault that answered it), how its client's turn ended and after how long; then over
the run, the turns' client outcomes, the most upstream requests one turn took, how many turns
reached a model other than the primary, and the rows that failed. Exit 0, or 2 on bad usage.
"""
import collections
import json
import os
import sys


def load(run_dir):
    """The report of the run directory `run_dir` (the scorecard's `report_dir`), and the dir."""
    path = os.path.join(run_dir, "report.json")
    if not os.path.isfile(path):
        return None, None
    return json.load(open(path)), run_dir


def story(r, d):
    fp = {p["dep"].split("/")[-1]: p["id"].split(":")[-1] for p in r.get("profiles", [])}
    per = collections.defaultdict(list)
    primary = None
    path = os.path.join(d, "upstream.jsonl")
    for line in open(path) if os.path.isfile(path) else []:
        q = json.loads(line)
        if q.get("warmup") or q.get("probe"):
            continue
        primary = primary or q.get("model")
        per[q.get("turn")].append(q)
    turns = (r.get("target") or {}).get("turns") or [
        t for p in r.get("policies", []) for t in (p.get("client_turns") or [])
    ]
    by_turn = {t.get("turn"): t for t in turns}
    first = next((k for k in sorted(x for x in per if x is not None) if any(q.get("fault") for q in per[k])), None)
    parts = []
    if first is not None:
        seq = []
        for q in per[first]:
            who = "%s/%s" % (fp.get(q.get("profile_fp"), q.get("profile_fp")), q.get("model"))
            seq.append("%s %s" % (who, q["fault"] if q.get("fault") else ("served" if q.get("whole", True) else "cut")))
        t = by_turn.get(first, {})
        t0 = per[first][0]["scenario_ms"] / 1000
        gap = ""
        if len(per[first]) > 1:
            gap = " over %.1f s" % ((per[first][-1]["scenario_ms"] - per[first][0]["scenario_ms"]) / 1000)
        end = t.get("outcome", "?")
        if t.get("error"):
            end += " (\u201c%s\u201d)" % " ".join(t["error"].split())[:70]
        parts.append(
            "first faulted turn (%.1f s): %s%s; its client: %s after %.1f s"
            % (t0, " \u2192 ".join(seq), gap, end, t.get("elapsed_ms", 0) / 1000)
        )
    outcomes = collections.Counter(t.get("outcome") for t in turns)
    most = max((len(v) for k, v in per.items() if k is not None), default=0)
    other = sum(1 for k, v in per.items() if k is not None and any(q.get("model") != primary for q in v))
    parts.append(
        "over the run: %s; at most %d upstream requests a turn; %d turns reached a model other than %s"
        % (", ".join("%d %s" % (n, o) for o, n in outcomes.most_common()), most, other, primary)
    )
    failed = [e for p in r.get("policies", []) for e in p.get("expectations", []) if e.get("status") not in ("pass", "no_baseline")]
    if failed:
        parts.append("failed: " + "; ".join("%s %s" % (e.get("kind"), e.get("expected")) for e in failed))
    if r.get("reason"):
        parts.append("reason: " + " ".join(r["reason"].split())[:200])
    return ". ".join(parts).replace("|", "/") + "."


def main(out, targets):
    card = json.load(open(os.path.join(out, "scorecard.json")))
    names = targets or [t["name"] for t in card["targets"]]
    for name in names:
        cells = [c for c in card["cells"] if c["target"] == name and c.get("class") != "pass"]
        print("### %s\n" % name)
        if not cells:
            print("Every cell passed.\n")
            continue
        print("| case | class | what it did (first repeat) |")
        print("|---|---|---|")
        for c in cells:
            counts = ", ".join("%s %d" % (k, v) for k, v in sorted(c["counts"].items()))
            run = c["runs"][0]
            r, d = load(os.path.join(out, run["report_dir"])) if run.get("report_dir") else (None, None)
            text = story(r, d) if r else (c.get("reason") or "no report")
            print("| %s | %s | %s |" % (c["case"], counts, text))
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: %s SCORECARD_DIR [TARGET...]" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2:])
