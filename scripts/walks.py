#!/usr/bin/env python3
"""Walks of a parameter through the run's calls, measured statically (issue "one home").

From an entry function, the walk follows calls depth first, in the order they appear in each
body (a call resolves to the crate's one function of that name, or to the one in the same file,
or to the one whose file path contains the qualifying module; an ambiguous call is not followed),
each function once. A *stay* is a visit to a function whose body reads the parameter (matches its
pattern); consecutive stays in one file are one stay. A *room* is the folder of a stay's file
(`src/run/`, `src/rehearsal/gateway/`, `src/scenario/`). A *return* is a stay in a room that the
walk had been in and left. Fewer stays, rooms and returns: the parameter is read in fewer places
and the reader does not go back and forth.

    scripts/walks.py [SRC_DIR]     (default: src of this checkout)
"""
import os
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
SRC = os.path.normpath(SRC)

WALKS = [
    # name, entry function, pattern of a read of the parameter
    ("[target] table of an OpenClaw scenario", "command", r"\.target\b(?!s)|\bTargetKind\b|user_config\b"),
    ("fleet plan", "command", r"\.fleet\b|\bFleetConfig\b|\bCoordination\b|\bHostSpec\b"),
    ("speed", "command", r"\bspeed\b|\bSpeed\b"),
]

FN = re.compile(r"^(\s*)(?:pub(?:\([a-z]+\))? )?(?:async )?(?:const )?(?:unsafe )?fn (\w+)", re.M)
CALL = re.compile(r"(?:(\w+)::)?(\w+)\s*(?:::<[^>]*>)?\(")
KEYWORDS = {"if", "while", "for", "match", "return", "Some", "Ok", "Err", "loop", "move", "fn"}


def strip(text):
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def functions():
    out = {}
    for root, _, files in os.walk(SRC):
        for f in sorted(files):
            if not f.endswith(".rs") or f == "tests.rs":
                continue
            path = os.path.join(root, f)
            text = strip(open(path, encoding="utf-8").read())
            # leave #[cfg(test)] modules out
            cut = text.find("#[cfg(test)]\nmod tests {")
            if cut >= 0:
                text = text[:cut]
            lines = text.split("\n")
            for m in FN.finditer(text):
                indent, name = m.group(1), m.group(2)
                start = text.count("\n", 0, m.start())
                if lines[start].rstrip().endswith(";"):
                    continue
                end = start
                while end < len(lines) and lines[end] != indent + "}":
                    end += 1
                body = "\n".join(lines[start:end + 1])
                out.setdefault(name, []).append((os.path.relpath(path, os.path.dirname(SRC)), body))
    return out


def resolve(fns, qual, name, here):
    cands = fns.get(name, [])
    if len(cands) == 1:
        return cands[0]
    same = [c for c in cands if c[0] == here]
    if len(same) == 1:
        return same[0]
    if qual:
        q = [c for c in cands if re.search(r"(^|/)" + re.escape(qual) + r"(\.rs|/)", c[0])]
        if len(q) == 1:
            return q[0]
    return None


def walk(fns, entry, pattern):
    pat = re.compile(pattern)
    seen = set()
    stays = []

    def visit(fn, depth):
        path, body = fn
        key = (path, body[:80])
        if key in seen or depth > 40:
            return
        seen.add(key)
        if pat.search(body):
            if not stays or stays[-1] != path:
                stays.append(path)
        for m in CALL.finditer(body.split("\n", 1)[1] if "\n" in body else ""):
            qual, name = m.group(1), m.group(2)
            if name in KEYWORDS or name[0].isupper():
                continue
            target = resolve(fns, qual, name, path)
            if target is not None:
                visit(target, depth + 1)

    start = [c for c in fns.get(entry, []) if "rehearsal" in c[0]]
    if not start:
        sys.exit(f"no entry {entry} under rehearsal/")
    visit(start[0], 0)
    rooms, left, returns, last = [], set(), 0, None
    for s in stays:
        room = os.path.dirname(s)
        if room != last:
            if room in left:
                returns += 1
            if last is not None:
                left.add(last)
            last = room
        if room not in rooms:
            rooms.append(room)
    return stays, rooms, returns


def main():
    fns = functions()
    for name, entry, pattern in WALKS:
        stays, rooms, returns = walk(fns, entry, pattern)
        print(f"{name}: {len(stays)} stays in {len(rooms)} rooms, {returns} returns")
        if "-v" in sys.argv:
            for s in stays:
                print("   ", s)


if __name__ == "__main__":
    main()
