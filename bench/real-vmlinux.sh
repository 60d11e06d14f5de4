#!/usr/bin/env bash
# Benchmark layout-diff against pahole and layout-audit on two real Debian
# 6.1 cloud vmlinux builds (fetched by bench/fetch-vmlinux.sh).
#
# Usage:  bash bench/real-vmlinux.sh
#
# Environment:
#   RUNS=N                 runs per command (default 5); medians are reported
#   WARMUP=N               unrecorded runs of each command before them (default 1:
#                          the first run after a large process pays for the memory
#                          it freed)
#   TIMEOUT=SECONDS        per-run limit, a run past it counts as failed (default 900)
#   BUILD_WAIT=SECONDS     how long to wait for a busy machine (someone else's
#                          build or tests) to go quiet before measuring anyway
#                          (default 600)
#   LAYOUT_AUDIT_VERSION   pin the layout-audit version to install (default: newest)
#   LAYOUT_DIFF_CACHE      cache folder (default bench/cache)
#
# Installs what is missing: pahole (Debian package dwarves), /usr/bin/time
# (package time), hyperfine (package hyperfine), layout-audit (cargo install
# into bench/cache/tools). Builds layout-diff with `cargo build --profile dist`
# before any measurement, then runs every measurement sequentially, one process
# at a time.
#
# stdout: a Markdown report (also saved to bench/cache/last-results.md);
# raw per-run numbers go to bench/cache/last-results.tsv (others_cpu_s: CPU
# time that other processes used during the run). Progress on stderr.
set -euo pipefail
# Every figure here is of a read of the vmlinux files themselves: the snapshot cache
# is off (a limit of 0), so no run after the first reads a cached snapshot.
export LAYOUT_DIFF_CACHE_SIZE=0

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache="${LAYOUT_DIFF_CACHE:-$here/cache}"
runs="${RUNS:-5}"
warmup="${WARMUP:-1}"
timeout_s="${TIMEOUT:-900}"
build_wait="${BUILD_WAIT:-600}"
tools="$cache/tools"
logs="$cache/bench-logs"

log() { printf '[bench] %s\n' "$*" >&2; }
die() { printf '[bench] error: %s\n' "$*" >&2; exit 2; }

case "$runs" in ''|*[!0-9]*|0) die "RUNS must be a positive integer (got '$runs')";; esac
case "$warmup" in ''|*[!0-9]*) die "WARMUP must be a non-negative integer (got '$warmup')";; esac
case "$timeout_s" in ''|*[!0-9]*|0) die "TIMEOUT must be a positive integer (got '$timeout_s')";; esac
case "$build_wait" in ''|*[!0-9]*) die "BUILD_WAIT must be a non-negative integer (got '$build_wait')";; esac

mkdir -p "$cache" "$tools" "$logs"

# ---------------------------------------------------------------- installs

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

apt_updated=0
apt_install() {
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install these by hand: $*"
  if [ -z "$(find /var/lib/apt/lists -name '*Packages*' 2>/dev/null | head -1)" ]; then
    log "apt-get update (no package lists yet)"
    as_root apt-get update -qq >&2 || die "apt-get update failed"
    apt_updated=1
  fi
  log "apt-get install $*"
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; then
    [ "$apt_updated" -eq 1 ] && die "apt-get install $* failed"
    log "install failed; retrying after apt-get update"
    as_root apt-get update -qq >&2 || die "apt-get update failed"
    apt_updated=1
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2 \
      || die "apt-get install $* failed"
  fi
}

command -v pahole >/dev/null 2>&1 || apt_install dwarves
command -v pahole >/dev/null 2>&1 || die "pahole still missing after installing dwarves"
[ -x /usr/bin/time ] || apt_install time
[ -x /usr/bin/time ] || die "/usr/bin/time still missing after installing time"
command -v hyperfine >/dev/null 2>&1 || apt_install hyperfine
command -v hyperfine >/dev/null 2>&1 || die "hyperfine still missing after installing it"
command -v timeout >/dev/null 2>&1 || die "coreutils 'timeout' not found"
command -v cargo >/dev/null 2>&1 || die "cargo not found in PATH (install Rust, e.g. with rustup)"

la="$tools/bin/layout-audit"
if [ -x "$la" ]; then
  log "layout-audit already installed: $la"
else
  spec=layout-audit
  [ -n "${LAYOUT_AUDIT_VERSION:-}" ] && spec="layout-audit@$LAYOUT_AUDIT_VERSION"
  log "cargo install $spec --locked --root $tools"
  if ! cargo install "$spec" --locked --root "$tools" >&2; then
    log "--locked install failed; retrying without --locked"
    cargo install "$spec" --root "$tools" >&2 || die "cargo install $spec failed"
  fi
  [ -x "$la" ] || die "layout-audit not found at $la after install"
fi

# ------------------------------------------------------------------ inputs

log "fetching inputs (bench/fetch-vmlinux.sh)"
if ! fetched=$(bash "$here/fetch-vmlinux.sh"); then
  die "bench/fetch-vmlinux.sh failed: could not download or unpack the vmlinux packages"
fi
old=$(printf '%s\n' "$fetched" | sed -n 1p)
new=$(printf '%s\n' "$fetched" | sed -n 2p)
[ -s "$old" ] || die "OLD vmlinux missing or empty: '$old'"
[ -s "$new" ] || die "NEW vmlinux missing or empty: '$new'"
log "OLD = $old"
log "NEW = $new"

# ------------------------------------------------------------------- build

log "cargo build --profile dist"
(cd "$repo" && cargo build --profile dist) >&2 || die "cargo build --profile dist failed"
# Measure a snapshot, so a rebuild by someone else mid-run changes nothing.
ld="$tools/layout-diff.bench"
cp -f "$repo/target/dist/layout-diff" "$ld.tmp"
mv -f "$ld.tmp" "$ld"
ld_version=$("$ld" --version 2>/dev/null || echo "layout-diff (unknown version)")
ld_commit=$(cd "$repo" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
ld_dirty=$(cd "$repo" && { git diff --quiet HEAD -- src Cargo.toml Cargo.lock 2>/dev/null && echo "" || echo " + uncommitted changes"; })
la_version=$("$la" --version 2>/dev/null || echo "layout-audit (unknown version)")
pahole_version=$(pahole --version 2>/dev/null || echo unknown)

# ------------------------------------------------------------- measurement

raw="$cache/last-results.tsv"
printf 'id\tcommand\trun\texit\twall_s\tmaxrss_kib\tothers_cpu_s\n' > "$raw"

# The machine may be shared (someone building or testing next to us), which
# skews timings. Before each run, wait (bounded) until no compiler runs and the
# CPUs are idle; after it, compare all CPU time spent on the machine during the
# run with the CPU time of the measured command, and repeat the run (at most
# twice) when something else took a noticeable share.
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
busy_ticks() {  # non-idle ticks of all CPUs since boot (steal counts: it is lost time too)
  local _c u n s i w q sq st _rest
  read -r _c u n s i w q sq st _rest < /proc/stat
  echo $((u + n + s + q + sq + st))
}
building() { pgrep -x rustc >/dev/null 2>&1 || pgrep -x cc1 >/dev/null 2>&1; }
# quiet: no compiler, and under 0.3 CPU-seconds of work in the last second.
quiet() {
  building && return 1
  local b0 b1
  b0=$(busy_ticks); sleep 1; b1=$(busy_ticks)
  [ $(( (b1 - b0) * 10 )) -lt $((hz * 3)) ]
}
wait_for_quiet() {
  local start=$SECONDS announced=0
  until quiet; do
    if [ $((SECONDS - start)) -ge "$build_wait" ]; then
      log "warning: machine still busy after ${build_wait}s; measuring anyway"
      return 0
    fi
    if [ "$announced" -eq 0 ]; then
      log "machine busy (a build or other work); waiting for it (up to ${build_wait}s)"
      announced=1
    fi
    sleep 4
  done
  [ "$announced" -eq 1 ] && log "machine quiet again after ~$((SECONDS - start))s"
  return 0
}

# measure ID DISPLAY CMD...   run CMD $runs times, stdout to /dev/null.
# Exit 0 and 1 are normal (1 = differences found / no match); anything else
# is a failure: it is recorded and the remaining runs of it are skipped.
measure() {
  local id=$1 display=$2; shift 2
  local i rc line wall rss cpu b0 b1 t0 t1 others retries
  local tf="$logs/$id.time" ef="$logs/$id.stderr"
  log "measuring $display ($runs runs after $warmup unrecorded)"
  for ((i = 1; i <= warmup; i++)); do
    wait_for_quiet
    timeout --kill-after=10 "$timeout_s" "$@" >/dev/null 2>&1 || true
  done
  for ((i = 1; i <= runs; i++)); do
    retries=0
    while :; do
      wait_for_quiet
      rc=0
      b0=$(busy_ticks)
      # Wall time from bash's microsecond clock: /usr/bin/time's %e has 10 ms steps,
      # a sixth of a snapshot diff. It includes starting /usr/bin/time and timeout
      # (about 3 ms here), which only ever counts against the command measured.
      t0=$EPOCHREALTIME
      /usr/bin/time -f '%e %M %U %S' -o "$tf" -- \
        timeout --kill-after=10 "$timeout_s" "$@" >/dev/null 2>"$ef" || rc=$?
      t1=$EPOCHREALTIME
      b1=$(busy_ticks)
      line=$(tail -n 1 "$tf" 2>/dev/null || true)
      read -r rss cpu <<<"$(awk '{print $2, $3 + $4}' <<<"$line")"
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
      # CPU-seconds spent by everything else during the run.
      others=$(awk -v d=$((b1 - b0)) -v hz="$hz" -v c="${cpu:-0}" 'BEGIN {o = d / hz - c; printf "%.2f", (o < 0 ? 0 : o)}')
      if [ "$rc" -ge 2 ] || ! awk -v o="$others" -v w="${wall:-0}" 'BEGIN {exit !(o > 0.5 && o > 0.1 * w)}'; then
        break
      fi
      if [ "$retries" -ge 2 ]; then
        log "  run $i: other work took ${others} CPU-s during it again; keeping it (may be noisy)"
          break
      fi
      retries=$((retries + 1))
      log "  run $i: other work took ${others} CPU-s during it (${wall}s); repeating it"
    done
    case "$wall" in ''|*[!0-9.]*) wall=NA;; esac
    case "$rss" in ''|*[!0-9]*) rss=NA;; esac
    printf '%s\t%s\t%d\t%d\t%s\t%s\t%s\n' "$id" "$display" "$i" "$rc" "$wall" "$rss" "$others" >> "$raw"
    if [ "$rc" -ge 2 ]; then
      log "  run $i: FAILED with exit $rc$([ "$rc" -eq 124 ] && echo " (timed out after ${timeout_s}s)"); stderr tail:"
      tail -n 5 "$ef" | sed 's/^/[bench]     /' >&2 || true
      return 0
    fi
    log "  run $i: ${wall}s, ${rss} KiB, exit $rc (others used ${others} CPU-s)"
  done
}

log "warming the page cache with both inputs"
cat "$old" "$new" > /dev/null

# Default runs use rayon's default thread count whatever the caller's env says (unset
# here rather than with an `env -u` wrapper: one more process start per run, ~1 ms).
unset RAYON_NUM_THREADS

measure ld_diff "layout-diff OLD NEW" "$ld" "$old" "$new"
measure ld_diff_json "layout-diff OLD NEW --format json" "$ld" "$old" "$new" --format json
measure ld_show_one "layout-diff show OLD --struct user_struct" "$ld" show "$old" --struct user_struct
measure ld_show_all "layout-diff show OLD --struct '*' --format json" "$ld" show "$old" --struct '*' --format json
measure ld_json_t1 "RAYON_NUM_THREADS=1 layout-diff OLD NEW --format json" env RAYON_NUM_THREADS=1 "$ld" "$old" "$new" --format json
measure ld_json_t2 "RAYON_NUM_THREADS=2 layout-diff OLD NEW --format json" env RAYON_NUM_THREADS=2 "$ld" "$old" "$new" --format json
measure ld_walk "layout-diff bench-walk OLD NEW (bare parallel DIE walk: the floor)" "$ld" bench-walk "$old" "$new"
measure ld_walk_parse "layout-diff bench-walk --parse OLD NEW (every attribute parsed)" "$ld" bench-walk --parse "$old" "$new"
measure ld_show_task "layout-diff show OLD --struct task_struct" "$ld" show "$old" --struct task_struct
snap_old="$cache/old.snap"; snap_new="$cache/new.snap"
measure ld_snapshot "layout-diff snapshot OLD -o old.snap" "$ld" snapshot "$old" -o "$snap_old"
"$ld" snapshot "$new" -o "$snap_new" 2>/dev/null || die "layout-diff snapshot NEW failed"
snapshots="OLD $(stat -c %s "$snap_old") bytes, NEW $(stat -c %s "$snap_new") bytes"
measure ld_snap_diff "layout-diff old.snap new.snap" "$ld" "$snap_old" "$snap_new"
measure ld_snap_show "layout-diff show old.snap --struct user_struct" "$ld" show "$snap_old" --struct user_struct
measure pahole_one "pahole -F dwarf -C user_struct OLD" pahole -F dwarf -C user_struct "$old"
measure pahole_old "pahole -F dwarf OLD" pahole -F dwarf "$old"
measure pahole_new "pahole -F dwarf NEW" pahole -F dwarf "$new"
measure la_diff "layout-audit diff OLD NEW" "$la" diff "$old" "$new"
measure la_inspect "layout-audit inspect OLD --filter user_struct" "$la" inspect "$old" --filter user_struct

# The vmlinux diff and the snapshot-pair diff once more, timed by hyperfine without a
# shell or wrapper (-N): the runs above include ~2-3 ms to start `/usr/bin/time` and
# `timeout`, which is noise for a 1 s command but 5-6% of a 45 ms one.
hf_runs=$((runs * 4))
hf_json="$logs/hyperfine.json"
wait_for_quiet
log "hyperfine: the vmlinux diff and the snapshot-pair diff, $hf_runs runs each"
if ! hyperfine -N --warmup 1 --runs "$hf_runs" --ignore-failure --style none \
    --export-json "$hf_json" \
    -n ld_diff "$ld $old $new" \
    -n ld_snap_diff "$ld $snap_old $snap_new" >&2; then
  log "hyperfine failed; its section of the report stays empty"
  rm -f "$hf_json"
fi

# Determinism: the 1-thread and 2-thread JSON reports must be byte-identical.
log "checking that 1-thread and 2-thread JSON outputs are byte-identical"
j1="$logs/diff-t1.json"; j2="$logs/diff-t2.json"
rc1=0; rc2=0
env RAYON_NUM_THREADS=1 "$ld" "$old" "$new" --format json > "$j1" 2>/dev/null || rc1=$?
env RAYON_NUM_THREADS=2 "$ld" "$old" "$new" --format json > "$j2" 2>/dev/null || rc2=$?
if [ "$rc1" -ge 2 ] || [ "$rc2" -ge 2 ]; then
  identical="no (a run failed: exit $rc1 with 1 thread, $rc2 with 2)"
elif cmp -s "$j1" "$j2"; then
  identical="yes ($(wc -c < "$j1") bytes, exit $rc1)"
  rm -f "$j1" "$j2"
else
  identical="no (see $j1 and $j2)"
fi
log "byte-identical: $identical"

# Snapshots: their diff must be the vmlinux diff, paths aside.
log "checking that the diff of the snapshots equals the diff of the vmlinux files"
snap_identical=yes
for fmt in text json; do
  a="$logs/diff-elf.$fmt"; b="$logs/diff-snap.$fmt"
  "$ld" "$old" "$new" --all --format "$fmt" > "$a" 2>/dev/null || true
  "$ld" "$snap_old" "$snap_new" --all --format "$fmt" 2>/dev/null \
    | sed "s#$snap_old#$old#g; s#$snap_new#$new#g" > "$b" || true
  if cmp -s "$a" "$b"; then rm -f "$a" "$b"; else snap_identical="no ($fmt differs: see $a and $b)"; fi
done
[ "$snap_identical" = yes ] && snap_identical="yes (text and JSON, --all)"
log "snapshot diff identical: $snap_identical"

# ------------------------------------------------------------------ report

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
[ -n "$cpu_model" ] || cpu_model=$(uname -m)
report="$cache/last-results.md"
hf_args=()
[ -s "$hf_json" ] && hf_args=(--hyperfine "$hf_json")
python3 "$here/summarize.py" "$raw" "${hf_args[@]}" \
  --meta "date=$(date -u '+%Y-%m-%d %H:%M UTC')" \
  --meta "cpu=$cpu_model" \
  --meta "nproc=$(nproc)" \
  --meta "mem=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)" \
  --meta "runs=$runs" \
  --meta "warmup=$warmup" \
  --meta "old=$old ($(stat -c %s "$old") bytes)" \
  --meta "new=$new ($(stat -c %s "$new") bytes)" \
  --meta "layout_diff=$ld_version (commit $ld_commit$ld_dirty)" \
  --meta "layout_audit=$la_version" \
  --meta "pahole=pahole $pahole_version" \
  --meta "identical=$identical" \
  --meta "snapshots=$snapshots" \
  --meta "snap_identical=$snap_identical" \
  > "$report.tmp"
mv -f "$report.tmp" "$report"
cat "$report"
log "report saved to $report; raw runs in $raw"
