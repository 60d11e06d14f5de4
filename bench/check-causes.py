#!/usr/bin/env python3
"""Checks layout-diff's shift-run causes against `nm -n -S` of both files.

For every run that is not a whole-line shift, the run's first symbol and the base of
its gap (the previous neighbour named by the cause, or the section start) are looked up
in nm's output of each file by address and name; the change of delta is computed from
those nm addresses alone, and compared with the bytes the cause claims. Item sizes the
cause lists are checked against nm too. Prints, per pair:
  % of byte-claiming runs (kinds changes, padding, reordered) explained within 64 bytes,
  % of those whose nm change is exactly the claimed bytes plus the claimed padding, with
    the padding under the run's bound (alignment times the items in the gap plus one:
    each may sit after up to alignment - 1 bytes of padding),
  % of runs whose cause is `unexplained`.

usage: check-causes.py OLD NEW [--layout-diff PATH] [--json FILE] [-v]
"""
import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict

TOLERANCE = 64


def nm(path):
    """{(address, name): size} and {name: [addresses]} from `nm -n -S`."""
    out = subprocess.run(["nm", "-n", "-S", path], check=True, capture_output=True,
                         text=True).stdout
    sized, by_name = {}, defaultdict(list)
    percpu_start = None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            addr, size, _kind, name = parts
            sized[(int(addr, 16), name)] = int(size, 16)
        elif len(parts) == 3:
            addr, _kind, name = parts
            sized.setdefault((int(addr, 16), name), 0)
        else:
            continue
        by_name[name].append(int(parts[0], 16))
        if name == "__per_cpu_start":
            percpu_start = int(parts[0], 16)
    return sized, by_name, percpu_start


def bare(qualified):
    """`dir/file.c:name` -> `name` (the ELF symbol name)."""
    return qualified.rsplit(":", 1)[-1]


def base_name(name):
    """The name without all-digit components (`x.isra.3` -> `x.isra`): clone and
    static-local numbers change between builds, so the new side is matched on this."""
    return ".".join(p for p in name.split(".") if not p.isdigit())


HEX = re.compile(r"^0x[0-9a-f]+$")


def unhex(obj):
    """The diff JSON spells addresses as hex strings; read them back as integers."""
    return {k: int(v, 16) if isinstance(v, str) and HEX.match(v) else v
            for k, v in obj.items()}


def bad_items_before(r, c, sizes_of, pfx):
    """Whether any non-prefix item's size is missing from nm (checked again here so the
    bound metric does not count a run with a wrong item)."""
    for it in c.get("items", []):
        if it["change"] in ("prefix", "padding"):
            continue
        for s, k in ((0, "old"), (1, "new")):
            size = it["size"][k]
            if size and size not in sizes_of[s].get(base_name(bare(it["symbol"])), ()):
                return True
    return False


def address(run_space, place, percpu_start):
    if run_space == "percpu":
        return place + (percpu_start or 0)
    return place


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--layout-diff", default="target/release/layout-diff")
    ap.add_argument("--json", help="an existing `--format json` diff of OLD and NEW")
    ap.add_argument("-v", action="store_true", help="list each failing run")
    args = ap.parse_args()
    if args.json:
        with open(args.json) as f:
            report = json.load(f, object_hook=unhex)
    else:
        out = subprocess.run([args.layout_diff, args.old, args.new, "--format", "json"],
                             capture_output=True, text=True)
        if out.returncode not in (0, 1):
            sys.exit(f"layout-diff failed: {out.stderr.strip()}")
        report = json.loads(out.stdout, object_hook=unhex)
    sides = [nm(args.old), nm(args.new)]

    at_address = [defaultdict(set), defaultdict(set)]
    for side in (0, 1):
        for (a, n) in sides[side][0]:
            at_address[side][a].add(base_name(n))

    sizes_of = [defaultdict(set), defaultdict(set)]
    for side in (0, 1):
        for (a, n), sz in sides[side][0].items():
            sizes_of[side][base_name(n)].add(sz)

    def where(side, space, place, name):
        """nm's address of `name` at `place` (renumbered clones allowed), or None when
        nm has no such symbol there."""
        pstart = sides[side][2]
        a = address(space, place, pstart)
        return a if base_name(bare(name)) in at_address[side][a] else None

    pfx = [next((sz for (a, n), sz in sides[s][0].items() if n.startswith("__pfx_")), 0)
           for s in (0, 1)]
    claiming = explained = bounded = unexplained = total = bad_items = 0
    for r in report["runs"]:
        if r["whole_lines"]:
            continue
        total += 1
        c = r["cause"]
        if c["kind"] == "unexplained":
            unexplained += 1
            continue
        claiming += 1
        first = [where(s, r["space"], r["start"][k], r["first"])
                 for s, k in ((0, "old"), (1, "new"))]
        if c["previous"] is not None:
            base = [where(s, r["space"], r["base"][k], c["previous"])
                    for s, k in ((0, "old"), (1, "new"))]
        else:
            # Section start: check it is below the first symbol, trust its address.
            base = [address(r["space"], r["base"][k], sides[s][2])
                    for s, k in ((0, "old"), (1, "new"))]
        ok = None not in first and None not in base
        within_bound = False
        if ok:
            change = (first[1] - base[1]) - (first[0] - base[0])
            padding = c.get("padding", 0)
            gap = len(c.get("items", [])) + c.get("omitted_items", 0)
            within_bound = (change == c["bytes"] + padding
                            and abs(padding) < c.get("alignment", 1) * (gap + 1))
            ok = abs(change - c["bytes"]) <= TOLERANCE
        for it in c.get("items", []):
            if it["change"] == "padding":
                # Padding between the gap's symbols: not a symbol, nothing to look up.
                continue
            if it["change"] == "prefix":
                # __pfx_ padding: a multiple of the build's __pfx_ symbol size.
                for s, k in ((0, "old"), (1, "new")):
                    size = pfx[s]
                    if it["size"][k] and (not size or it["size"][k] % size):
                        bad_items += 1
                        ok = False
                continue
            for s, k in ((0, "old"), (1, "new")):
                size = it["size"][k]
                if size == 0:
                    continue
                # Items are named as in the old build: match renumbered clones too.
                if size not in sizes_of[s].get(base_name(bare(it["symbol"])), ()):
                    bad_items += 1
                    ok = False
                    if args.v:
                        print(f"  item size not in nm: {it}")
        if within_bound and not bad_items_before(r, c, sizes_of, pfx):
            bounded += 1
        if ok:
            explained += 1
        elif args.v:
            print(f"  not explained: {r['section']} {r['first']} delta {r['delta']} "
                  f"prev {r['previous_delta']} cause {json.dumps(c)[:300]}")
    pct = lambda n, d: 100.0 * n / d if d else 0.0
    print(f"{args.old} -> {args.new}: {total} non-whole-line runs, {claiming} claim bytes; "
          f"explained within {TOLERANCE} B: {explained}/{claiming} = {pct(explained, claiming):.1f}%; "
          f"bytes plus padding within its bound: {bounded}/{claiming} = {pct(bounded, claiming):.1f}%; "
          f"unexplained: {unexplained}/{total} = {pct(unexplained, total):.1f}%; "
          f"item sizes not matching nm: {bad_items}")


if __name__ == "__main__":
    main()
