#!/usr/bin/env bash
# Scores `whatif` on every replay variant, as the predictions issue counts it: each
# data and per-CPU object (and, for the variant given its recompiled objects, each
# function) that the real build or the prediction moves, predicted at its real
# address and size. Prints one row per variant; exits 1 when any is short.
#
# Usage: bash bench/replay/score.sh LAYOUT_DIFF [REPLAY_DIR...]
#        (default replay dirs: /work/replay /work/replay-os, where build.sh puts them)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
tool=${1:?usage: score.sh LAYOUT_DIFF [REPLAY_DIR...]}
shift
dirs=("$@")
((${#dirs[@]})) || dirs=(/work/replay /work/replay-os)

# The change of each variant as its user would write it to whatif.
declare -A ARGS=(
    [mce]="--struct mce=+8"
    [mce-aligned]="--struct mce=+8 --percpu-aligned mces_seen --percpu-aligned-definition injectm"
    [mce-aligned-declared]="--struct mce=+8 --percpu-aligned mces_seen --percpu-aligned injectm"
    [root-user-aligned]="--symbol root_user --align 64"
    [mce-big]="--struct mce=+256"
    [read-mostly]="--read-mostly min_free_kbytes"
    [user-insert]="--struct user_struct --insert replay_inserted=8 --after __count"
    [read-mostly-bss]="--read-mostly num_cpus_frozen"
    [bss-aligned]="--symbol panic_on_oops --align 64"
)
VARIANTS=(mce mce-aligned mce-aligned-declared root-user-aligned signal-fn mce-big
    read-mostly user-insert read-mostly-bss bss-aligned)

status=0
for dir in "${dirs[@]}"; do
    out=$dir/out
    echo "replay $dir ($(grep -m1 -o 'CONFIG_CC_OPTIMIZE_FOR_[A-Z]*=y' "$out/base/config" 2>/dev/null))"
    for v in "${VARIANTS[@]}"; do
        [[ -f $out/$v/vmlinux ]] || { printf '  %-22s not built\n' "$v"; continue; }
        if [[ $v == signal-fn ]]; then
            mapfile -t objs < <(find "$out/$v/objs" -name '*.o' | sort)
            args=(--objects "${objs[@]}")
            extra=(--functions)
        else
            read -r -a args <<<"${ARGS[$v]}"
            extra=()
        fi
        result=$(python3 "$here/check-whatif.py" --moved "${extra[@]}" "$tool" \
            "$out/base/vmlinux" "$out/$v/vmlinux" -- "${args[@]}" 2>&1)
        rc=$?
        ((rc == 0)) || status=1
        printf '  %-22s %s\n' "$v" "$(head -1 <<<"$result" | sed 's/^moved (real or predicted): //')"
        ((rc == 0)) || sed -n '2,6p' <<<"$result" | sed 's/^/      /'
    done
done
exit $status
