#!/usr/bin/env python3
"""Compare `layout-diff show VMLINUX --struct '*'` with pahole's text, block by block.

Usage:
    compare-pahole-text.py VMLINUX [--pahole-out FILE] [--ours-out FILE]
                           [--layout-diff BIN] [--examples N]
                           [--pahole BIN] [--pahole-flags "-F btf --show_private_classes"]

The reference is pahole 1.32 run as `pahole -F dwarf --show_private_classes
--lang_exclude rust VMLINUX` (--pahole names the binary, e.g. a wrapper for 1.32;
--pahole-flags replaces everything but the vmlinux).

Either listing can be read from a saved file (--pahole-out / --ours-out); when the
file does not exist yet, the command is run and its output saved there.

How blocks are formed: a block starts at a line `struct NAME {` or `union NAME {`
at column 0 and ends at the next line `};` (or `} __attribute__...;`) at column 0.
Everything outside blocks (layout-diff's header line and `/* file.c */` comments)
is ignored. Inside a block every run of whitespace is collapsed to one space and
leading/trailing whitespace of each line is dropped, empty lines are dropped.

How blocks are matched: pahole prints a name once per distinct layout, so a name
can occur several times (same struct defined differently in two places). Blocks are
keyed by (name, k) where k counts earlier blocks of that name; each pahole block
is identical when ANY layout-diff block of the same name has the same collapsed
text (the two tools may order duplicates differently), otherwise it is compared with
layout-diff's block of the same occurrence number to classify the difference.

The figure is: identical pahole blocks / all pahole blocks. Differences are grouped
into classes by the first differing line (a short signature of what differs), with
one example each.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

OPEN = re.compile(r"^(struct|union) (\S+) \{$")


def blocks(text):
    """Yields (name, [collapsed lines]) for each top-level struct/union block."""
    name, cur = None, None
    for raw in text.splitlines():
        if name is None:
            m = OPEN.match(raw)
            if m:
                name, cur = m.group(1) + " " + m.group(2), [raw]
            continue
        line = " ".join(raw.split())
        if line:
            cur.append(line)
        if raw.startswith("}"):
            yield name, cur
            name, cur = None, None


def read_or_run(path, cmd):
    if path and os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    out = subprocess.run(cmd, check=True, capture_output=True).stdout.decode(
        "utf-8", "replace"
    )
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(out)
    return out


def classify(p, o):
    """A short signature of the first differing line between two blocks."""
    if o is None:
        return "block missing in layout-diff"
    for i in range(max(len(p), len(o))):
        a = p[i] if i < len(p) else "<end>"
        b = o[i] if i < len(o) else "<end>"
        if a != b:
            return signature(a) + " | " + signature(b), i
    return "identical", 0


def signature(line):
    """Line shape: numbers and identifiers abstracted away, comments kept by kind."""
    if line.startswith("/*"):
        return re.sub(r"\d+", "N", line)[:60]
    s = re.sub(r"/\*.*\*/", "/*pos*/", line)
    s = re.sub(r"\b\d+\b", "N", s)
    s = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: m.group(0) if m.group(0) in KEYWORDS else "x", s)
    return s[:60]


KEYWORDS = {"struct", "union", "enum", "const", "volatile", "restrict", "__attribute__",
            "__aligned__", "__packed__", "void", "XXX", "cacheline", "boundary"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vmlinux")
    ap.add_argument("--pahole-out")
    ap.add_argument("--ours-out")
    ap.add_argument("--layout-diff", default="target/release/layout-diff")
    ap.add_argument("--examples", type=int, default=1)
    ap.add_argument("--pahole", default="pahole", help="pahole binary (1.32 is the reference)")
    ap.add_argument("--pahole-flags", default="-F dwarf --show_private_classes --lang_exclude rust",
                    help="flags for pahole (e.g. '-F btf --show_private_classes' for a "
                    "BTF-only vmlinux)")
    a = ap.parse_args()
    pahole = read_or_run(a.pahole_out, [a.pahole, *a.pahole_flags.split(), a.vmlinux])
    ours = read_or_run(a.ours_out, [a.layout_diff, "show", a.vmlinux, "--struct", "*"])

    theirs = list(blocks(pahole))
    mine = collections.defaultdict(list)
    for name, b in blocks(ours):
        mine[name].append(b)
    texts = {name: {"\n".join(b) for b in bs} for name, bs in mine.items()}

    seen = collections.Counter()
    same = 0
    classes = collections.defaultdict(list)
    for name, b in theirs:
        k = seen[name]
        seen[name] += 1
        if "\n".join(b) in texts.get(name, ()):
            same += 1
            continue
        cands = mine.get(name, [])
        o = cands[k] if k < len(cands) else (cands[0] if cands else None)
        if o is None:
            classes["block missing in layout-diff"].append((name, None, None))
            continue
        sig, i = classify(b, o)
        classes[sig].append((name, b[i] if i < len(b) else "<end>", o[i] if i < len(o) else "<end>"))

    total = len(theirs)
    print(f"{a.vmlinux}: {same}/{total} pahole blocks identical "
          f"({100.0 * same / max(total, 1):.2f}%), layout-diff blocks: "
          f"{sum(len(v) for v in mine.values())}")
    for sig, items in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{len(items):6}  {sig}")
        for name, p, o in items[: a.examples]:
            print(f"        e.g. {name}")
            if p is not None:
                print(f"          pahole:      {p}")
                print(f"          layout-diff: {o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
