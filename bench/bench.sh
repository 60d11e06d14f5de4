#!/usr/bin/env bash
# Times every row of issue 32's table for one pair of builds, with hyperfine's
# medians, and prints them as a Markdown table stamped with the commit, the tool
# versions, the machine and its load (/proc/loadavg before and after):
#
#   bash bench/bench.sh OLD NEW
#
# Rows: the cold diff (--no-cache), the parallel walk of every DIE of both files (the
# hidden bench-walk command, the cold path's floor), pahole -F dwarf on each file when
# pahole is installed, the first diff that writes the cache, the diff of two snapshots,
# whatif on a snapshot (a small change and one that reaches thousands of structs), the
# diff with the cache warm, and with SUGGEST=1 suggest OLD NEW
# (cold, with its peak RSS). Settings (environment):
#   LD=PATH        the layout-diff binary (default target/dist/layout-diff; build it
#                  with `cargo build --profile dist`)
#   RUNS=N         runs of the fast rows (default 10); COLD_RUNS=N of the slow ones (3)
#   WHATIF='...'   the change whatif predicts (default: --struct user_struct=+8)
#   WHATIF_WIDE='...'  a change that reaches thousands of structs (default: --struct
#                  list_head=+8; a change is carried to every struct embedding it)
#   SUGGEST=1      time suggest OLD NEW too (slow: minutes on a large pair)
# Snapshots and the cache go to a temporary directory, removed at the end.
set -euo pipefail
# $whatif, $whatif_wide and $no_cache are lists of words (or none): unquoted on purpose.
# shellcheck disable=SC2086
if [ $# -ne 2 ]; then
	echo "usage: bash bench/bench.sh OLD NEW" >&2
	exit 2
fi
old=$1 new=$2
top=$(cd "$(dirname "$0")/.." && pwd)
ld=${LD:-$top/target/dist/layout-diff}
runs=${RUNS:-10}
cold_runs=${COLD_RUNS:-3}
whatif=${WHATIF:---struct user_struct=+8}
whatif_wide=${WHATIF_WIDE:---struct list_head=+8}
for tool in "$ld" hyperfine python3; do
	command -v "$tool" >/dev/null || { echo "bench.sh: $tool not found" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/xdg
# A layout-diff from before the cache (to time the build before issue 32): its rows
# without the cache's.
no_cache=--no-cache
if ! "$ld" --help | grep -q '^  cache '; then
	no_cache=""
fi

load_before=$(cat /proc/loadavg)
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	commit="$commit (dirty)"
fi

# median NAME RUNS [hyperfine options] -- COMMAND...: hyperfine's median wall time in
# seconds; the mean CPU time of the runs (user + system) is left in $work/NAME.cpu.
median() {
	local name=$1 n=$2
	shift 2
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	hyperfine -N --style none -i -r "$n" "${opts[@]}" \
		--export-json "$work/$name.json" -- "$*" >/dev/null 2>&1
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"][0]
open(sys.argv[2], "w").write("%.3f" % (r["user"] + r["system"]))
print("%.3f" % r["median"])' "$work/$name.json" "$work/$name.cpu"
}
# cpu NAME: the mean CPU seconds of that row.
cpu() { cat "$work/$1.cpu"; }

"$ld" snapshot "$old" -o "$work/old.snap" 2>/dev/null
"$ld" snapshot "$new" -o "$work/new.snap" 2>/dev/null

cold=$(median cold "$cold_runs" -w 1 -- "$ld" $no_cache "$old" "$new")
walk=$(median walk "$cold_runs" -w 1 -- "$ld" bench-walk "$old" "$new")
pahole_old="" pahole_new=""
if command -v pahole >/dev/null; then
	pahole_old=$(median pahole-old "$cold_runs" -- pahole -F dwarf "$old")
	pahole_new=$(median pahole-new "$cold_runs" -- pahole -F dwarf "$new")
fi
first="" warm=""
if [ -n "$no_cache" ]; then
	first=$(median first "$cold_runs" --prepare "$ld cache --clear" -- "$ld" "$old" "$new")
fi
snap=$(median snap "$runs" -w 2 -- "$ld" "$work/old.snap" "$work/new.snap")
what=$(median whatif "$runs" -w 2 -- "$ld" whatif "$work/new.snap" $whatif)
wide=$(median whatif-wide "$runs" -w 1 -- "$ld" whatif "$work/new.snap" $whatif_wide)
if [ -n "$no_cache" ]; then
	"$ld" "$old" "$new" >/dev/null 2>&1 || true
	warm=$(median warm "$runs" -w 2 -- "$ld" "$old" "$new")
fi
suggest="" suggest_rss=""
if [ "${SUGGEST:-}" = 1 ]; then
	suggest=$(median suggest 1 -- "$ld" suggest $no_cache "$old" "$new")
	suggest_rss=$(/usr/bin/time -f %M "$ld" suggest $no_cache "$old" "$new" 2>&1 >/dev/null | tail -1)
fi
load_after=$(cat /proc/loadavg)

ratio() { python3 -c 'import sys; a,b=map(float,sys.argv[1:]); print("%.2fx" % (a/b))' "$1" "$2"; }
echo "## layout-diff benchmark: $(basename "$(dirname "$old")")/$(basename "$old") -> $(basename "$(dirname "$new")")/$(basename "$new")"
echo
echo "- worktree at commit $commit; binary: $("$ld" --version)"
echo "- $(hyperfine --version)$(command -v pahole >/dev/null && echo ", pahole $(pahole --version)")"
echo "- $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- /proc/loadavg before: $load_before; after: $load_after"
echo "- wall: median of $cold_runs runs (cold rows) and $runs runs (snapshot and cache rows); CPU: their mean user + system time"
echo
echo "| run | median wall s | CPU s | against (wall) |"
echo "| --- | ---: | ---: | --- |"
echo "| \`layout-diff OLD NEW\` cold (\`--no-cache\`) | $cold | $(cpu cold) | $(ratio "$cold" "$walk") the DIE walk |"
echo "| \`bench-walk OLD NEW\` (every DIE of both, in parallel) | $walk | $(cpu walk) | |"
if [ -n "$pahole_old" ]; then
	both=$(python3 -c "print('%.3f' % ($pahole_old + $pahole_new))")
	both_cpu=$(python3 -c "print('%.3f' % ($(cpu pahole-old) + $(cpu pahole-new)))")
	echo "| \`pahole -F dwarf\` on both ($pahole_old + $pahole_new) | $both | $both_cpu | cold diff $(ratio "$both" "$cold") faster |"
fi
if [ -n "$first" ]; then
	echo "| \`layout-diff OLD NEW\`, first run, writing the cache | $first | $(cpu first) | $(ratio "$first" "$cold") the cold diff |"
fi
echo "| diff of two snapshots | $snap | $(cpu snap) | cold diff $(ratio "$cold" "$snap") slower |"
echo "| \`whatif\` on a snapshot (\`$whatif\`) | $what | $(cpu whatif) | |"
echo "| \`whatif\` on a snapshot, a struct embedded everywhere (\`$whatif_wide\`) | $wide | $(cpu whatif-wide) | |"
if [ -n "$warm" ]; then
	echo "| \`layout-diff OLD NEW\`, cache warm | $warm | $(cpu warm) | cold diff $(ratio "$cold" "$warm") slower |"
fi
if [ -n "$suggest" ]; then
	echo "| \`suggest OLD NEW\` cold (peak RSS $((suggest_rss / 1024)) MiB) | $suggest | $(cpu suggest) | $(ratio "$suggest" "$cold") the cold diff |"
fi
