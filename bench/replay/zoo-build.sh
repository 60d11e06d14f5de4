#!/usr/bin/env bash
# Build the zoo: published layout regressions replayed on Debian's Linux 6.1
# source (linux-source-6.1, 6.1.192), each as the regression and the fix, plus
# controls (bench/replay/zoo.toml says which patches make each build).
#
# One command, from a fresh checkout:   bash bench/replay/zoo-build.sh
#
# Env:  ZOO_DIR      work/output dir, outside the git repo (default /work/zoo)
#       JOBS         make -j (default 2)
#       NICE         nice level of every make (default 19)
#       FORCE=1      rebuild every output, the base from `make clean`
#       LAYOUT_DIFF  a layout-diff binary: write each build's snapshot beside it
#                    (out/NAME/vmlinux.snap); zoo-score.py writes missing ones
#
# Outputs ($ZOO_DIR/out/NAME, NAME = base and each build of zoo.toml):
#   vmlinux, System.map, build-seconds, build.log, patches.txt, [vmlinux.snap]
#   out/summary.txt   build times and sizes
#
# How: the base is a full build; every other build applies its patches to the
# tree (after reverting the previous build's), runs an incremental `make
# vmlinux` and collects it.  There is no rebuild back to the base in between:
# make recompiles what the reverted and the applied patches touch together,
# which is one rebuild instead of two.  KBUILD_BUILD_* are fixed, so a build
# depends only on its sources.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ZOO_TOML=$SCRIPT_DIR/zoo.toml
PATCH_DIR=$SCRIPT_DIR/zoo/patches
FRAGMENT=$SCRIPT_DIR/zoo/zoo.config
ZOO_DIR=${ZOO_DIR:-/work/zoo}
JOBS=${JOBS:-2}
NICE=${NICE:-19}
FORCE=${FORCE:-0}
LAYOUT_DIFF=${LAYOUT_DIFF:-}

SRC_TARBALL=/usr/src/linux-source-6.1.tar.xz

export ARCH=x86_64
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=replay
export KBUILD_BUILD_HOST=replay
export KBUILD_BUILD_VERSION=1

log() { printf '\n==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# The work dir must not be inside the repository (vmlinux files are large).
zoo_abs=$(realpath -m "$ZOO_DIR")
if repo_top=$(git -C "$SCRIPT_DIR" rev-parse --show-toplevel 2>/dev/null); then
    case "$zoo_abs/" in "$(realpath "$repo_top")/"*) die "ZOO_DIR=$zoo_abs is inside the git repo" ;; esac
fi
ZOO_DIR=$zoo_abs
SRC=$ZOO_DIR/linux-source-6.1
OUT=$ZOO_DIR/out
mkdir -p "$OUT"

# Packages (as build.sh): the source package and the build tools.
is_installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == 'install ok installed' ]]; }
SUDO=
[[ $(id -u) -eq 0 ]] || SUDO=sudo
missing=()
for p in linux-source-6.1 flex bison bc libelf-dev libssl-dev xz-utils make gcc python3; do
    is_installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
    log "installing: ${missing[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" ||
        { $SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; }
fi

# The builds and their patches, from zoo.toml: "NAME PATCH..." per line.
mapfile -t BUILD_LINES < <(python3 - "$ZOO_TOML" <<'EOF'
import sys, tomllib
zoo = tomllib.load(open(sys.argv[1], "rb"))
builds = {}
for case in zoo["case"]:
    for side in ("regression", "fix", "variant"):
        spec = case.get(side, "base")
        if spec != "base":
            builds[f'{case["name"]}-{side}'] = spec
# build_order first (cheap builds from the base tree, then the wide ones, so
# that a wide patch's revert is paid once), then any build it does not name.
order = [n for n in zoo.get("build_order", []) if n in builds]
order += [n for n in builds if n not in order]
for name in order:
    print(name, *builds[name])
EOF
)
((${#BUILD_LINES[@]})) || die "no builds in $ZOO_TOML"
for line in "${BUILD_LINES[@]}"; do
    for p in ${line#* }; do [[ -f $PATCH_DIR/$p ]] || die "$p (zoo.toml) missing from $PATCH_DIR"; done
done

# Source tree.
if [[ ! -f $SRC/Makefile ]]; then
    log "extracting $SRC_TARBALL into $ZOO_DIR"
    tar -xf "$SRC_TARBALL" -C "$ZOO_DIR"
fi
cd "$SRC"

patch_applied() { patch -p1 -R --dry-run -s -f <"$PATCH_DIR/$1" >/dev/null 2>&1; }
apply_patch() { patch -p1 -s -f <"$PATCH_DIR/$1" >/dev/null || die "patch $1 failed"; }
revert_patch() { patch -p1 -R -s -f <"$PATCH_DIR/$1" >/dev/null || die "reverting $1 failed"; }
# Revert every zoo patch that is applied, last-named first (an interrupted run
# may have left some); the tree is then the base source.
revert_all() {
    local p
    for p in $(cd "$PATCH_DIR" && ls -r -- *.patch); do
        if patch_applied "$p"; then log "reverting $p"; revert_patch "$p"; fi
    done
}
revert_all

# Config: tinyconfig + the fragment (merge_config.sh) + olddefconfig.  A new
# fragment makes every output stale.
stamp=$(cat "$FRAGMENT" | sha256sum | cut -d' ' -f1)
if [[ ! -f .config || $(cat "$ZOO_DIR/.config-stamp" 2>/dev/null) != "$stamp" ]]; then
    log "configuring: tinyconfig + zoo/zoo.config"
    make tinyconfig >/dev/null
    scripts/kconfig/merge_config.sh -m .config "$FRAGMENT" >/dev/null
    make olddefconfig >/dev/null
    echo "$stamp" >"$ZOO_DIR/.config-stamp"
    FORCE=1
fi
while read -r l; do
    case $l in
        CONFIG_*=*) grep -qxF "$l" .config || die "$l (zoo.config) is not in .config after olddefconfig" ;;
        '# CONFIG_'*' is not set') o=${l#\# }; o=${o%% *}; ! grep -q "^$o=" .config || die "$o is set, zoo.config says not" ;;
    esac
done <"$FRAGMENT"

timed_make() { # DEST: make vmlinux, log and wall seconds in DEST
    local dest=$1 t0 t1
    mkdir -p "$dest"
    t0=$(date +%s.%N)
    if ! nice -n "$NICE" make -j"$JOBS" vmlinux >"$dest/build.log" 2>&1; then
        tail -40 "$dest/build.log" >&2
        die "build failed, see $dest/build.log"
    fi
    t1=$(date +%s.%N)
    printf '%.1f\n' "$(echo "$t1 - $t0" | bc)" >"$dest/build-seconds"
    log "built in $(cat "$dest/build-seconds") s"
}

collect() { # NAME PATCH...: copy the build's outputs, snapshot it when asked
    local name=$1 dest=$OUT/$1
    shift
    cp -p vmlinux System.map "$dest/"
    cp -p .config "$dest/config"
    printf '%s\n' "$@" >"$dest/patches.txt"
    if [[ -n $LAYOUT_DIFF ]]; then
        rm -f "$dest/vmlinux.snap"
        "$LAYOUT_DIFF" snapshot "$dest/vmlinux" -o "$dest/vmlinux.snap" >/dev/null ||
            warn "snapshot of $name failed"
    fi
}

# Base: a full build.
if [[ $FORCE == 1 || ! -f $OUT/base/vmlinux ]]; then
    log "building base (full build, make -j$JOBS)"
    rm -rf "$OUT/base"
    mkdir -p "$OUT/base"
    make clean >/dev/null
    timed_make "$OUT/base"
    collect base
else
    log "base exists, skipping (FORCE=1 rebuilds)"
fi

# Variants, each from the tree as the previous one left it.
applied=()
for line in "${BUILD_LINES[@]}"; do
    read -r name patches <<<"$line"
    read -r -a want <<<"$patches"
    if [[ $FORCE != 1 && -f $OUT/$name/vmlinux ]]; then
        log "$name exists, skipping"
        continue
    fi
    log "building $name: ${want[*]}"
    # Keep the applied patches that start this build's list; revert the rest.
    keep=0
    while ((keep < ${#applied[@]} && keep < ${#want[@]})) && [[ ${applied[keep]} == "${want[keep]}" ]]; do
        keep=$((keep + 1))
    done
    for ((i = ${#applied[@]} - 1; i >= keep; i--)); do revert_patch "${applied[i]}"; done
    applied=("${applied[@]:0:keep}")
    for ((i = keep; i < ${#want[@]}; i++)); do apply_patch "${want[i]}"; applied+=("${want[i]}"); done
    rm -rf "$OUT/$name"
    mkdir -p "$OUT/$name"
    timed_make "$OUT/$name"
    collect "$name" "${want[@]}"
done
for ((i = ${#applied[@]} - 1; i >= 0; i--)); do revert_patch "${applied[i]}"; done
revert_all

# Snapshot of the base when asked and missing.
if [[ -n $LAYOUT_DIFF && ! -f $OUT/base/vmlinux.snap ]]; then
    "$LAYOUT_DIFF" snapshot "$OUT/base/vmlinux" -o "$OUT/base/vmlinux.snap" >/dev/null || warn "snapshot of base failed"
fi

{
    echo "zoo builds in $OUT ($(gcc --version | head -1); make -j$JOBS)"
    printf '%-28s %10s %12s  %s\n' build seconds vmlinux_B patches
    total=0
    for name in base $(printf '%s\n' "${BUILD_LINES[@]}" | cut -d' ' -f1); do
        s=$(cat "$OUT/$name/build-seconds" 2>/dev/null || echo '?')
        [[ $s == '?' ]] || total=$(echo "$total + $s" | bc)
        printf '%-28s %10s %12s  %s\n' "$name" "$s" "$(stat -c %s "$OUT/$name/vmlinux" 2>/dev/null || echo missing)" \
            "$(tr '\n' ' ' <"$OUT/$name/patches.txt" 2>/dev/null)"
    done
    echo "sum of the builds' make times: $total s"
} | tee "$OUT/summary.txt"
