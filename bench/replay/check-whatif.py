#!/usr/bin/env python3
"""Scores a `whatif` prediction against the real build it predicts.

usage: check-whatif.py [--all-sections | --moved [--functions]] LAYOUT_DIFF BASE VARIANT
                       -- WHATIF-CHANGES...

Runs `LAYOUT_DIFF whatif BASE CHANGES --nm`, reads VARIANT's functions and data
objects with `readelf -sW` (STT_FUNC and STT_OBJECT, with their section), and for
every output section in which the real build moved or resized any of them (the
sections the change touches), counts those whose predicted address and size are
the real ones. With --all-sections, every section holding functions or data
objects is counted, moved or not.
Objects are matched by name; names shared by several statics are compared as
multisets of (address, size). Prints one line per touched section and a total,
then the first mispredicted objects; exits 1 unless every object is right.

With --moved, the count is the one the predictions issue scores: every data and
per-CPU object (and with --functions every function too) that the real build or
the prediction moves or resizes against BASE, in any section, and how many of
those the prediction puts at their real address and size.
"""

import collections
import subprocess
import sys


def objects(path):
    """{section: {name: [(address, size), ...]}} of the STT_OBJECT and STT_FUNC symbols."""
    secs = {}
    for line in subprocess.run(["readelf", "-SW", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        line = line.strip()
        if line.startswith("[") and "]" in line:
            idx = line[1:line.index("]")].strip()
            rest = line[line.index("]") + 1:].split()
            if idx.isdigit() and rest:
                secs[idx] = rest[0]
    out = collections.defaultdict(lambda: collections.defaultdict(list))
    for line in subprocess.run(["readelf", "-sW", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) < 8 or f[3] not in ("OBJECT", "FUNC") or not f[6].isdigit():
            continue
        out[secs.get(f[6], f[6])][f[7]].append((int(f[1], 16), int(f[2], 0)))
        if f[3] == "FUNC":
            FUNCTIONS.add(f[7])
    return out


# Names of the functions objects() read (a name is a function's in either build).
FUNCTIONS = set()


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    cut = sys.argv.index("--")
    flags = {"--all-sections", "--moved", "--functions"}
    every = "--all-sections" in sys.argv[1:cut]
    tool, base, variant = [a for a in sys.argv[1:cut] if a not in flags]
    changes = sys.argv[cut + 1:]
    out = subprocess.run([tool, "whatif", base, *changes, "--nm"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        sys.exit(f"whatif failed: {out.stderr.strip()}")
    predicted = collections.defaultdict(list)
    for line in out.stdout.splitlines():
        a, s, _, name = line.split(maxsplit=3)
        predicted[name].append((int(a, 16), int(s, 16)))
    old, new = objects(base), objects(variant)
    if "--moved" in sys.argv[1:cut]:
        sys.exit(moved(old, new, predicted, "--functions" in sys.argv[1:cut]))
    total = right = 0
    wrong = []
    for sec in sorted(new):
        changed = any(sorted(new[sec][n]) != sorted(old.get(sec, {}).get(n, []))
                      for n in new[sec])
        if not changed and not every:
            continue
        n_sec = ok_sec = 0
        for name, real in new[sec].items():
            want = collections.Counter(real)
            got = collections.Counter(predicted.get(name, []))
            ok = sum((want & got).values())
            n_sec += len(real)
            ok_sec += ok
            if ok < len(real):
                wrong.append((sec, name, sorted(real), sorted(predicted.get(name, []))))
        total += n_sec
        right += ok_sec
        print(f"{sec}: {ok_sec}/{n_sec} objects predicted at their real address and size")
    print(f"total: {right}/{total}")
    for sec, name, real, pred in sorted(wrong, key=lambda w: w[2])[:15]:
        fmt = lambda l: ", ".join(f"{a:#x}+{s}" for a, s in l[:3])
        print(f"  wrong {sec} {name}: real {fmt(real)}; predicted {fmt(pred)}")
    sys.exit(0 if right == total else 1)


def by_name(table, functions):
    """{name: [(address, size), ...]} over every section, data objects (and functions)."""
    out = collections.defaultdict(list)
    for names in table.values():
        for name, places in names.items():
            if functions or name not in FUNCTIONS:
                out[name].extend(places)
    return out


def moved(old, new, predicted, functions):
    """Scores objects the real build or the prediction moved; returns the exit code."""
    base, real = by_name(old, functions), by_name(new, functions)
    total = right = 0
    wrong = []
    for name in sorted(set(real) | set(base)):
        b, r = sorted(base.get(name, [])), sorted(real.get(name, []))
        p = sorted(predicted.get(name, [])) if name in predicted else b
        if b == r and b == p:
            continue
        n = max(len(r), len(p))
        ok = sum((collections.Counter(r) & collections.Counter(p)).values())
        total += n
        right += ok
        if ok < n:
            wrong.append((name, b, r, p))
    print(f"moved (real or predicted): {right}/{total} at their real address and size")
    fmt = lambda l: ", ".join(f"{a:#x}+{s}" for a, s in l[:3])
    for name, b, r, p in wrong[:15]:
        print(f"  wrong {name}: base {fmt(b)}; real {fmt(r)}; predicted {fmt(p)}")
    return 0 if right == total else 1


if __name__ == "__main__":
    main()
