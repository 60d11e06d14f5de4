#!/usr/bin/env python3
"""Score layout-diff against the zoo (bench/replay/zoo.toml): published layout
regressions replayed on real Linux 6.1 builds (bench/replay/zoo-build.sh).

For every case:
Every diff is run with `--access` (the struct lines judged with the typed access
map, which the snapshots hold) unless --no-access is given.

  regression direction  layout-diff FIX REGRESSION: does the first screen (the
                        default text report, at most its first 80 lines) name
                        each culprit with its line in the regression build, and
                        is the exit status 1?
  fix direction         layout-diff REGRESSION FIX: exit 0 (nothing flagged),
                        and the culprit listed as an improvement?
  controls              layout-diff BASE VARIANT and VARIANT BASE: exit 0 both.

What counts as naming a culprit (decided from the published commit, recorded in
zoo.toml, never from the tool's output):
  struct member  one report line holds the member's name (every part of a dotted
                 path, in order) and its line in the regression build, as
                 "NAME OLD->LINE" or "line LINE";
  object         a report line names the object, and that line or one of the 8
                 after it holds the object's address in the regression build (or
                 the address of its line), read from that build's System.map.

Each build is read from out/NAME/vmlinux.snap; a missing or stale snapshot is
written from out/NAME/vmlinux first (`layout-diff snapshot`), so a machine that
has the snapshots (and System.map files) needs no vmlinux and rebuilds nothing.

Usage: zoo-score.py [--zoo DIR] [--layout-diff BIN] [--case NAME]... [--markdown]
                    [--no-access]
  DIR: the zoo's out directory or its parent (default $LAYOUT_DIFF_ZOO, else
  /work/zoo).  Exit 0 when every case was scored (whatever the score), 2 when a
  build is missing or layout-diff failed: the table says which.
"""

import argparse
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRST_SCREEN = 80  # lines; the default report is fitted to at most 80 lines


class Missing(Exception):
    pass


def out_dir(arg):
    d = Path(arg)
    if (d / "out").is_dir() and not (d / "base").is_dir():
        d = d / "out"
    return d


def build_name(case, side):
    spec = case[side]
    return "base" if spec == "base" else f'{case["name"]}-{side}'


class Builds:
    def __init__(self, root, tool):
        self.root = root
        self.tool = tool
        self.extra = ["--access"]
        self.snaps = {}

    def snapshot(self, name, rewrite=False):
        """The build's snapshot, written from its vmlinux when missing or stale."""
        if name in self.snaps and not rewrite:
            return self.snaps[name]
        d = self.root / name
        snap, vml = d / "vmlinux.snap", d / "vmlinux"
        stale = snap.exists() and vml.exists() and vml.stat().st_mtime > snap.stat().st_mtime
        # A snapshot of another format (an older layout-diff) is refused: write it again.
        if snap.exists() and not stale and vml.exists():
            probe = subprocess.run([self.tool, "show", str(snap)], capture_output=True, text=True)
            stale = probe.returncode == 2 and "format version" in probe.stderr
        if rewrite or stale or not snap.exists():
            if not vml.exists():
                if snap.exists() and not rewrite:
                    self.snaps[name] = snap
                    return snap
                raise Missing(f"{d}: neither vmlinux.snap nor vmlinux")
            tmp = d / "vmlinux.snap.tmp"
            r = subprocess.run([self.tool, "snapshot", str(vml), "-o", str(tmp)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise Missing(f"layout-diff snapshot {vml} failed: {r.stderr.strip()}")
            tmp.replace(snap)
        self.snaps[name] = snap
        return snap

    def address(self, name, symbol):
        m = self.root / name / "System.map"
        if not m.exists():
            raise Missing(f"{m} missing")
        for line in m.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2] == symbol:
                return int(parts[0], 16)
        raise Missing(f"{symbol} not in {m}")

    def diff(self, old, new):
        """(exit status, stdout lines) of the default diff; a stale snapshot is
        written again once."""
        for attempt in (0, 1):
            a, b = self.snapshot(old, attempt == 1), self.snapshot(new, attempt == 1)
            r = subprocess.run([self.tool, str(a), str(b)] + self.extra, capture_output=True,
                               text=True)
            if r.returncode in (0, 1):
                return r.returncode, r.stdout.splitlines()
        raise Missing(f"layout-diff {old} {new} exit {r.returncode}: {r.stderr.strip()}")


def member_named(screen, member, line):
    """The member is named with its line: in its clause (the text between the
    commas around its name), "line L" or "line N->L"; or, when the part after
    the name says no "line", a bare "N->L" right after the name (the numbers
    are then lines, as in "members changing line: a 1->0")."""
    parts = [re.escape(p) for p in member.split(".")]
    name = r"(?<![\w])" + r"\b.*?\b".join(parts) + r"\b"
    for text in screen:
        for m in re.finditer(name, text):
            segment = text[m.end():].split(",")[0]
            before = text[:m.start()].split(",")[-1]
            if any(re.search(rf"\blines?\s+(?:\d+\s*->\s*)?{line}\b", part)
                   for part in (segment, before)):
                return True
            if not re.search(r"\blines?\b", segment) and re.match(rf"\s+\d+\s*->\s*{line}\b", segment):
                return True
    return False


def object_named(screen, obj, addr):
    line_addr = addr & ~63
    wanted = {f"{addr:x}", f"{line_addr:x}"}
    for i, text in enumerate(screen):
        if re.search(rf"(?<![\w.]){re.escape(obj)}\b", text):
            block = " ".join(screen[i:i + 9]).lower()
            if any(re.search(rf"(?<![0-9a-f]){w}(?![0-9a-f])", block) for w in wanted):
                return True
    return False


def improvement_listed(screen, names):
    """A line tagged [improvement], or a line of an 'improvements ...' section,
    that names one of `names`."""
    section = False
    for text in screen:
        if text and not text.startswith(" "):
            section = text.lower().startswith("improvements to")
        if section or "[improvement]" in text:
            if any(re.search(rf"(?<![\w.]){re.escape(n)}\b", text) for n in names):
                return True
    return False


def score_case(case, builds):
    row = {"case": case["name"], "kind": case["kind"]}
    if case["kind"] == "control":
        base, var = "base", f'{case["name"]}-variant'
        e1, _ = builds.diff(base, var)
        e2, _ = builds.diff(var, base)
        row.update(forward=e1, backward=e2, ok=(e1 == 0 and e2 == 0))
        return row
    reg, fix = build_name(case, "regression"), build_name(case, "fix")
    status, out = builds.diff(fix, reg)
    screen = out[:FIRST_SCREEN]
    missed = []
    for member, line in case.get("members", {}).items():
        if not member_named(screen, member, line):
            missed.append(f"{member}@{line}")
    for obj in case.get("objects", []):
        if not object_named(screen, obj, builds.address(reg, obj)):
            missed.append(obj)
    fstatus, fout = builds.diff(reg, fix)
    names = [case["struct"]] if "struct" in case else list(case.get("objects", []))
    names += [m.split(".")[0] for m in case.get("members", {})]
    improved = improvement_listed(fout[:FIRST_SCREEN], names)
    row.update(exit=status, named=not missed, missed=missed, fix_exit=fstatus,
               improved=improved,
               caught=(status == 1 and not missed),
               fix_ok=(fstatus == 0 and improved))
    return row


def yn(b):
    return "yes" if b else "no"


def table(rows, markdown):
    head = ["case", "regression: exit", "names culprit+line", "caught",
            "fix: exit", "improvement listed", "fix clean"]
    body = []
    for r in rows:
        if "error" in r:
            body.append([r["case"], "MISSING", r["error"], "", "", "", ""])
        elif r["kind"] == "control":
            body.append([r["case"] + " (control)", str(r["forward"]), "-", "-",
                         str(r["backward"]), "-", "quiet" if r["ok"] else "FLAGGED"])
        else:
            named = "yes" if r["named"] else "no (" + ", ".join(r["missed"]) + ")"
            body.append([r["case"], str(r["exit"]), named, yn(r["caught"]),
                         str(r["fix_exit"]), yn(r["improved"]), yn(r["fix_ok"])])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
    else:
        w = [max(len(x) for x in col) for col in zip(head, *body)]
        lines = ["  ".join(c.ljust(n) for c, n in zip(head, w)).rstrip()]
        lines += ["  ".join(c.ljust(n) for c, n in zip(row, w)).rstrip() for row in body]
    cases = [r for r in rows if r.get("kind") == "regression" and "error" not in r]
    controls = [r for r in rows if r.get("kind") == "control" and "error" not in r]
    lines.append("")
    lines.append(f"regressions caught (culprit and line on the first screen, exit 1): "
                 f"{sum(r['caught'] for r in cases)}/{len(cases)}; "
                 f"named: {sum(r['named'] for r in cases)}/{len(cases)}; "
                 f"exit 1: {sum(r['exit'] == 1 for r in cases)}/{len(cases)}")
    lines.append(f"fixes clean (exit 0, listed as an improvement): "
                 f"{sum(r['fix_ok'] for r in cases)}/{len(cases)}; "
                 f"exit 0: {sum(r['fix_exit'] == 0 for r in cases)}/{len(cases)}")
    lines.append(f"controls quiet (exit 0 both ways): {sum(r['ok'] for r in controls)}/{len(controls)}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", default=os.environ.get("LAYOUT_DIFF_ZOO", "/work/zoo"))
    ap.add_argument("--layout-diff", default=os.environ.get("LAYOUT_DIFF", "layout-diff"))
    ap.add_argument("--toml", default=str(HERE / "zoo.toml"))
    ap.add_argument("--case", action="append", help="score only these cases")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--no-access", action="store_true",
                    help="diff without --access (struct lines not judged)")
    args = ap.parse_args()
    zoo = tomllib.load(open(args.toml, "rb"))
    root = out_dir(args.zoo)
    if not root.is_dir():
        print(f"zoo-score: {root} is not a directory (bash bench/replay/zoo-build.sh builds the zoo)",
              file=sys.stderr)
        return 2
    builds = Builds(root, args.layout_diff)
    builds.extra = [] if args.no_access else ["--access"]
    rows, failed = [], False
    for case in zoo["case"]:
        if args.case and case["name"] not in args.case:
            continue
        try:
            rows.append(score_case(case, builds))
        except Missing as e:
            failed = True
            rows.append({"case": case["name"], "kind": case["kind"], "error": str(e)})
    print(f"zoo: {root}, layout-diff: {args.layout_diff}")
    print(table(rows, args.markdown))
    if failed:
        print("zoo-score: some cases could not be scored (see MISSING)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
