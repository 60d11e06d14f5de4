#!/usr/bin/env bash
# The default text report of each real pair must fit a terminal: no line over 100
# columns, no report over 80 lines (issue 33). Prints, per pair, the lines, the widest
# line and the exit status, and fails when a report does not fit.
#
#   bash bench/report-width.sh [LAYOUT_DIFF]     (default: target/release/layout-diff)
#
# The pairs are read from bench/cache (bench/fetch-vmlinux.sh); PAIRS="OLD NEW;OLD NEW"
# names others. A pair whose files are missing is skipped and said so.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/release/layout-diff}
cache=${CACHE:-bench/cache}
k=$cache/kernels
cloud=$cache/linux-image-6.1.0-%s-cloud-amd64-dbg/vmlinux
default_pairs="$(printf "$cloud" 47) $(printf "$cloud" 50);\
$k/6.12.117+deb12.vmlinux $k/6.12.118+deb12.vmlinux;\
$k/6.12.118+deb12.vmlinux $k/7.3.4.vmlinux;\
$(printf "$cloud" 50) $k/6.12.117+deb12.vmlinux"
pairs=${PAIRS:-$default_pairs}
max_cols=100 max_lines=80 failed=0
IFS=';' read -ra list <<<"$pairs"
for pair in "${list[@]}"; do
  read -r old new <<<"$pair"
  if [[ ! -f $old || ! -f $new ]]; then
    echo "skipped: $old -> $new (missing)"
    continue
  fi
  out=$("$bin" "$old" "$new" 2>/dev/null)
  code=$?
  lines=$(printf '%s\n' "$out" | wc -l)
  cols=$(printf '%s\n' "$out" | awk '{ n = length($0); if (n > m) m = n } END { print m + 0 }')
  verdict=ok
  if ((code > 1 || lines > max_lines || cols > max_cols)); then
    verdict=FAIL
    failed=1
  fi
  printf '%-4s %3d lines, widest %3d columns, exit %d: %s -> %s\n' \
    "$verdict" "$lines" "$cols" "$code" "$old" "$new"
done
exit $failed
