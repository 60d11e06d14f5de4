#!/usr/bin/env python3
"""Checks `show --symbol NAME`'s sparse read against the whole read, and times both.

`show --symbol NAME` (a plain name) reads only the variables its view needs
(src/load/around.rs); the same name as a one-character class glob (`[r]oot_user`)
matches the same symbols through the whole read. For a seeded sample of data symbols
of `nm` (globals, locals, per-CPU), both are run in text and JSON and compared byte
for byte. Prints the sample size, the differences and the median times.

usage: check-show-symbol.py VMLINUX [--layout-diff PATH] [-n N] [--seed S]
"""
import argparse
import json
import random
import statistics
import subprocess
import sys
import time


def run(tool, vmlinux, pattern, fmt):
    start = time.monotonic()
    p = subprocess.run([tool, "show", vmlinux, "--symbol", pattern, "--format", fmt],
                       capture_output=True)
    out = p.stdout
    if fmt == "json" and p.returncode == 0:
        # The declaring file of the laid type may differ: layouts equal in all but that
        # file are one, the first unit's of those read (see tests/show_fixtures.rs).
        doc = json.loads(out)
        for s in doc.get("symbols", []):
            (s.get("laid") or {}).pop("decl_file", None)
        out = json.dumps(doc, sort_keys=True).encode()
    return time.monotonic() - start, p.returncode, out, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vmlinux")
    ap.add_argument("--layout-diff", default="target/release/layout-diff")
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    out = subprocess.run(["nm", args.vmlinux], check=True, capture_output=True,
                         text=True).stdout
    names = sorted({p[2] for p in (l.split() for l in out.splitlines())
                    if len(p) == 3 and p[1] in "dDbBrR" and p[2][0].isalpha()})
    sample = random.Random(args.seed).sample(names, min(args.n, len(names)))
    differ, sparse_t, whole_t = [], [], []
    for name in sample:
        glob = f"[{name[0]}]{name[1:]}"
        for fmt in ("text", "json"):
            ts, cs, os_, es = run(args.layout_diff, args.vmlinux, name, fmt)
            tw, cw, ow, ew = run(args.layout_diff, args.vmlinux, glob, fmt)
            # The glob is named in "no symbol matches" notes; nothing else may differ.
            if (cs, os_, es) != (cw, ow, ew.replace(glob.encode(), name.encode())):
                differ.append((name, fmt))
            if fmt == "text":
                sparse_t.append(ts)
                whole_t.append(tw)
    print(f"{args.vmlinux}: {len(sample)} symbols (seed {args.seed}), text and json: "
          f"{len(differ)} differ")
    for d in differ:
        print("  differs:", *d)
    print(f"median wall: sparse {statistics.median(sparse_t):.3f} s, "
          f"whole {statistics.median(whole_t):.3f} s")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
