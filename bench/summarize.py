#!/usr/bin/env python3
"""Turn bench/real-vmlinux.sh's raw runs into a Markdown report.

Usage:
  bench/summarize.py RAW_TSV [--hyperfine JSON] [--meta KEY=VALUE ...]

RAW_TSV has a header line and the columns
  id  command  run  exit  wall_s  maxrss_kib  others_cpu_s
one line per run (others_cpu_s: CPU-seconds that other processes on the
machine used during the run; a run where that exceeds 0.5 s and 10% of its
wall time is reported as possibly noisy), as written by bench/real-vmlinux.sh. Exit 0 and 1 are
normal (1 = differences found / no match); any other exit is a failure, and
the command is reported as failed with that exit code instead of a time.

JSON (optional) is hyperfine's --export-json of the commands named ld_diff and
ld_snap_diff, timed without wrappers: their medians and ratio get a section.

Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass, field

# Ratios printed under the table: (label, numerator ids, denominator id).
RATIOS = [
    ("(pahole OLD + pahole NEW) / layout-diff diff", ["pahole_old", "pahole_new"], "ld_diff"),
    ("layout-audit diff / layout-diff diff", ["la_diff"], "ld_diff"),
    ("layout-diff diff --format json, 1 thread / 2 threads", ["ld_json_t1"], "ld_json_t2"),
    ("layout-diff diff / bare parallel DIE walk of both files (the floor)", ["ld_diff"], "ld_walk"),
    ("layout-diff diff / DIE walk parsing every attribute", ["ld_diff"], "ld_walk_parse"),
    ("layout-diff diff of the vmlinux pair / diff of their snapshots", ["ld_diff"], "ld_snap_diff"),
]


@dataclass
class Command:
    id: str
    display: str
    walls: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    exits: list[int] = field(default_factory=list)
    noisy_runs: int = 0

    @property
    def failed_exit(self) -> int | None:
        for code in self.exits:
            if code not in (0, 1):
                return code
        return None

    @property
    def ok(self) -> bool:
        return bool(self.walls) and self.failed_exit is None

    def median_wall(self) -> float:
        return statistics.median(self.walls)

    def median_rss_mib(self) -> float:
        return statistics.median(self.rss_kib) / 1024.0


def describe_exit(code: int) -> str:
    if code == 124:
        return "exit 124, timed out"
    if code > 128:
        return f"exit {code}, signal {code - 128}"
    return f"exit {code}"


def load(path: str) -> list[Command]:
    commands: dict[str, Command] = {}
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header != ["id", "command", "run", "exit", "wall_s", "maxrss_kib", "others_cpu_s"]:
            raise SystemExit(f"{path}: unexpected header {header!r}")
        for lineno, line in enumerate(f, start=2):
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 7:
                raise SystemExit(f"{path}:{lineno}: expected 7 columns, got {len(parts)}")
            cid, display, _run, code, wall, rss, others = parts
            cmd = commands.setdefault(cid, Command(cid, display))
            cmd.exits.append(int(code))
            if int(code) in (0, 1) and wall != "NA" and rss != "NA":
                cmd.walls.append(float(wall))
                cmd.rss_kib.append(int(rss))
                if others not in ("", "NA") and float(others) > max(0.5, 0.1 * float(wall)):
                    cmd.noisy_runs += 1
    return list(commands.values())


def md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def table(commands: list[Command]) -> list[str]:
    out = [
        "| command | median wall s | median peak RSS MiB | runs | exit |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for c in commands:
        exits = ", ".join(str(e) for e in sorted(set(c.exits)))
        name = f"`{md_escape(c.display)}`"
        if c.ok:
            out.append(
                f"| {name} | {c.median_wall():.3f} | {c.median_rss_mib():.0f} | {len(c.walls)} | {exits} |"
            )
        else:
            code = c.failed_exit
            why = describe_exit(code) if code is not None else "no measurement"
            out.append(f"| {name} | FAILED ({why}) | - | {len(c.exits)} | {exits} |")
    return out


def ratios(commands: list[Command]) -> list[str]:
    by_id = {c.id: c for c in commands}
    out = []
    for label, num_ids, den_id in RATIOS:
        parts = [by_id.get(i) for i in num_ids + [den_id]]
        missing = [i for i, c in zip(num_ids + [den_id], parts) if c is None or not c.ok]
        if missing:
            out.append(f"- {label}: n/a (failed or missing: {', '.join(missing)})")
            continue
        num = sum(by_id[i].median_wall() for i in num_ids)
        den = by_id[den_id].median_wall()
        if den <= 0:
            out.append(f"- {label}: n/a (denominator time is 0)")
            continue
        out.append(f"- {label}: **{num / den:.2f}x** ({num:.3f} s / {den:.3f} s)")
    return out


def hyperfine_section(path: str) -> list[str]:
    """The vmlinux diff against the snapshot-pair diff, as hyperfine timed them."""
    with open(path, encoding="utf-8") as f:
        results = {r["command"]: r for r in json.load(f).get("results", [])}
    vm, snap = results.get("ld_diff"), results.get("ld_snap_diff")
    if vm is None or snap is None:
        return [f"- hyperfine: n/a (ld_diff or ld_snap_diff missing from {path})"]
    out = []
    for r, label in ((vm, "layout-diff OLD NEW"), (snap, "layout-diff old.snap new.snap")):
        codes = sorted(set(r.get("exit_codes") or []))
        if any(c not in (0, 1) for c in codes):
            return [f"- hyperfine: `{label}` failed (exit codes {codes})"]
        times = r["times"]
        out.append(
            f"- `{label}`: median **{r['median'] * 1000:.1f} ms** "
            f"(min {r['min'] * 1000:.1f}, max {r['max'] * 1000:.1f}, {len(times)} runs)"
        )
    out.append(
        f"- layout-diff diff of the vmlinux pair / diff of their snapshots, process alone: "
        f"**{vm['median'] / snap['median']:.2f}x**"
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("--hyperfine", metavar="JSON")
    ap.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    meta: dict[str, str] = {}
    for item in args.meta:
        key, sep, value = item.partition("=")
        if not sep:
            ap.error(f"--meta wants KEY=VALUE, got {item!r}")
        meta[key] = value

    commands = load(args.raw)
    lines = ["# layout-diff on real vmlinux builds", ""]
    facts = [
        ("date", "date"),
        ("CPU", "cpu"),
        ("cores (nproc)", "nproc"),
        ("memory", "mem"),
        ("OLD", "old"),
        ("NEW", "new"),
        ("layout-diff", "layout_diff"),
        ("layout-audit", "layout_audit"),
        ("pahole", "pahole"),
        ("runs per command", "runs"),
        ("unrecorded warm-up runs before them", "warmup"),
    ]
    for label, key in facts:
        if key in meta:
            lines.append(f"- {label}: {meta[key]}")
    lines.append("")
    lines += table(commands)
    lines.append("")
    lines.append("Medians over the runs; stdout to /dev/null; wall time from bash's `EPOCHREALTIME`")
    lines.append("around each run (including ~2-3 ms to start `/usr/bin/time` and `timeout`), peak RSS")
    lines.append("from `/usr/bin/time -f '%M'`. Exit 1 means differences found (or no match) and is normal.")
    lines.append("")
    lines.append("Ratios of median wall time:")
    lines.append("")
    lines += ratios(commands)
    if "identical" in meta:
        lines.append(f"- 1-thread and 2-thread JSON reports byte-identical: **{meta['identical']}**")
    if "snapshots" in meta:
        lines.append(f"- snapshot sizes: **{meta['snapshots']}**")
    if "snap_identical" in meta:
        lines.append(f"- diff of the snapshots == diff of the vmlinux files (text and JSON, paths replaced): **{meta['snap_identical']}**")
    if args.hyperfine:
        lines.append("")
        lines.append("The two commands of the snapshot ratio again, timed by `hyperfine -N` (each process")
        lines.append("alone: no shell, no `/usr/bin/time` or `timeout` around it; one warm-up run):")
        lines.append("")
        lines += hyperfine_section(args.hyperfine)
    lines.append("")
    lines.append("Notes (as observed with the versions above):")
    lines.append("")
    lines.append("- `pahole -C NAME` stops at the first compile unit that defines NAME, so it reads")
    lines.append("  a small part of the DWARF; `layout-diff show --struct NAME` loads the whole file.")
    lines.append("- `layout-audit inspect --filter` is a substring match, not an exact name.")
    lines.append("- `layout-audit diff` exits 0 even when layouts changed (it has `--fail-on-regression`).")
    noisy = [c for c in commands if c.noisy_runs]
    if noisy:
        lines.append("")
        lines.append("Warning: other work on the machine overlapped these runs even after waiting and")
        lines.append("repeating them, so their timings may be inflated:")
        lines.append("")
        for c in noisy:
            lines.append(f"- `{md_escape(c.display)}`: {c.noisy_runs} of {len(c.walls)} runs")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
