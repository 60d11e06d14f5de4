#!/usr/bin/env bash
# Build a small, real Linux 6.1 x86_64 kernel (vmlinux with DWARF 5 debug
# info) plus ten variants, each differing from the base by one small source
# change (see patches/*.patch and README.md).  The outputs are inputs for
# replaying real layout regressions through layout-diff.
#
# Usage:   bash bench/replay/build.sh
# Env:     PROFILE     o2 (default: -O2, the first replay) or os (-Os, another
#                      config: the second replay)
#          REPLAY_DIR  work/output dir, must be outside the git repo
#                      (default /work/replay, /work/replay-os for PROFILE=os)
#          FORCE=1     rebuild outputs that already exist
#          JOBS        make -j value (default 2)
#
# Layout under $REPLAY_DIR:
#   linux-source-6.1/     extracted Debian linux-source-6.1 tree (build tree)
#   out/<name>/vmlinux    base and each of VARIANTS below
#   out/<name>/System.map
#   out/<name>/objs/...   recompiled .o files (tree-relative paths)
#   out/<name>/changed-objs.txt, build-seconds, build.log
#   out/summary.txt       the summary printed at the end
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
PATCH_DIR=$SCRIPT_DIR/patches
PROFILE=${PROFILE:-o2}
case $PROFILE in
    o2) REPLAY_DIR=${REPLAY_DIR:-/work/replay} ;;
    os) REPLAY_DIR=${REPLAY_DIR:-/work/replay-os} ;;
    *) printf 'ERROR: PROFILE must be o2 or os, not %s\n' "$PROFILE" >&2; exit 1 ;;
esac
FORCE=${FORCE:-0}
JOBS=${JOBS:-2}

KVER=6.1
SRC_TARBALL=/usr/src/linux-source-$KVER.tar.xz
SRC=$REPLAY_DIR/linux-source-$KVER
OUT=$REPLAY_DIR/out

# Kernel build settings.  The KBUILD_BUILD_* values make the version string
# (init/version.o) identical across builds, so that two builds of the same
# source produce the same objects and only the intended change differs.
export ARCH=x86_64
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=replay
export KBUILD_BUILD_HOST=replay
export KBUILD_BUILD_VERSION=1

# Variants: name -> patches applied on top of the base tree, in order.
VARIANTS=(mce mce-aligned root-user-aligned signal-fn mce-big read-mostly
    mce-aligned-declared user-insert read-mostly-bss bss-aligned)
declare -A VARIANT_PATCHES=(
    [mce]="01-mce-grow.patch"
    [mce-aligned]="01-mce-grow.patch 02-mce-percpu-aligned.patch"
    [root-user-aligned]="03-root-user-aligned.patch"
    [signal-fn]="04-signal-fn.patch"
    [mce-big]="05-mce-grow-past-page.patch"
    [read-mostly]="06-read-mostly.patch"
    [mce-aligned-declared]="01-mce-grow.patch 02-mce-percpu-aligned.patch 07-injectm-declare-aligned.patch"
    [user-insert]="08-user-insert.patch"
    [read-mostly-bss]="09-bss-read-mostly.patch"
    [bss-aligned]="10-bss-aligned.patch"
)

# Objects holding the symbols of interest; always copied for base.
BASE_OBJS=(
    kernel/user.o
    kernel/signal.o
    arch/x86/kernel/cpu/mce/core.o
    arch/x86/kernel/cpu/mce/inject.o
)

# Symbols reported in the summary.
SYMBOLS=(root_user mces_seen injectm replay_added_fn num_cpus_frozen panic_on_oops)

# Config: `make tinyconfig`, then these scripts/config arguments, then
# `make olddefconfig`.
CONFIG_ARGS=(
    -e 64BIT -e SMP --set-val NR_CPUS 8
    -e PRINTK -e BUG -e MULTIUSER -e FUTEX -e KALLSYMS
    # Machine check support, with the injector built in (it lives in
    # vmlinux, not a module).  X86_MCE_INJECT depends on X86_MCE,
    # X86_LOCAL_APIC and DEBUG_FS.  X86_MCE_AMD would need AMD_NB -> PCI,
    # which tinyconfig lacks; it is optional and left off.
    -e X86_LOCAL_APIC -e DEBUG_FS
    -e X86_MCE -e X86_MCE_INTEL -e X86_MCE_AMD -e X86_MCE_INJECT
    # Full DWARF 5 debug info in vmlinux; no BTF (pahole not needed).
    -e DEBUG_KERNEL
    -d DEBUG_INFO_NONE -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_DWARF4
    -e DEBUG_INFO -e DEBUG_INFO_DWARF5
    -d DEBUG_INFO_REDUCED -d DEBUG_INFO_BTF -d DEBUG_INFO_COMPRESSED -d DEBUG_INFO_SPLIT
    # tinyconfig builds with -Os; distribution kernels use -O2, which also
    # aligns functions (relevant to the function-alignment regression).
    -d CC_OPTIMIZE_FOR_SIZE -e CC_OPTIMIZE_FOR_PERFORMANCE
)
if [[ $PROFILE == os ]]; then
    # The second replay: tinyconfig's own -Os (as embedded and minimal kernels
    # build), on another config: more CPUs, no AMD MCE, and the /proc, /sys,
    # epoll and eventfd code (EPOLL also puts a percpu_counter into user_struct).
    CONFIG_ARGS=(
        -e 64BIT -e SMP --set-val NR_CPUS 64
        -e PRINTK -e BUG -e MULTIUSER -e FUTEX -e KALLSYMS
        -e PROC_FS -e SYSFS -e EPOLL -e EVENTFD -e SIGNALFD -e TIMERFD
        -e X86_LOCAL_APIC -e DEBUG_FS
        -e X86_MCE -e X86_MCE_INTEL -d X86_MCE_AMD -e X86_MCE_INJECT
        -e DEBUG_KERNEL
        -d DEBUG_INFO_NONE -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_DWARF4
        -e DEBUG_INFO -e DEBUG_INFO_DWARF5
        -d DEBUG_INFO_REDUCED -d DEBUG_INFO_BTF -d DEBUG_INFO_COMPRESSED -d DEBUG_INFO_SPLIT
        -e CC_OPTIMIZE_FOR_SIZE -d CC_OPTIMIZE_FOR_PERFORMANCE
    )
fi
# Options that must come out of olddefconfig as =y, or we stop.
REQUIRED_CONFIG=(
    CONFIG_64BIT CONFIG_SMP CONFIG_X86_MCE CONFIG_X86_MCE_INJECT
    CONFIG_DEBUG_INFO CONFIG_DEBUG_INFO_DWARF5 CONFIG_KALLSYMS CONFIG_FUTEX
    CONFIG_MULTIUSER
)
case $PROFILE in
    o2) REQUIRED_CONFIG+=(CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE) ;;
    os) REQUIRED_CONFIG+=(CONFIG_CC_OPTIMIZE_FOR_SIZE CONFIG_EPOLL CONFIG_PROC_FS) ;;
esac

log() { printf '\n==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------
# 0. Sanity: the work dir must not be inside the git repository (vmlinux files
#    are hundreds of MB and must never be committed).
# ---------------------------------------------------------------------------
replay_abs=$(realpath -m "$REPLAY_DIR")
if repo_top=$(git -C "$SCRIPT_DIR" rev-parse --show-toplevel 2>/dev/null); then
    repo_top=$(realpath "$repo_top")
    case "$replay_abs/" in
        "$repo_top/"*) die "REPLAY_DIR=$replay_abs is inside the git repo $repo_top" ;;
    esac
fi
REPLAY_DIR=$replay_abs
SRC=$REPLAY_DIR/linux-source-$KVER
OUT=$REPLAY_DIR/out
mkdir -p "$OUT"

# ---------------------------------------------------------------------------
# 1. Packages.
# ---------------------------------------------------------------------------
is_installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == 'install ok installed' ]]
}
SUDO=
[[ $(id -u) -eq 0 ]] || SUDO=sudo
apt_install() {
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" ||
        { $SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; }
}
missing=()
for p in linux-source-$KVER flex bison bc libelf-dev libssl-dev xz-utils make gcc; do
    is_installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
    log "installing: ${missing[*]}"
    apt_install "${missing[@]}"
fi
# dwarves (pahole) is nice to have but not required (no BTF); never fatal.
if ! is_installed dwarves; then
    apt_install dwarves || warn "could not install dwarves; continuing without pahole"
fi

# ---------------------------------------------------------------------------
# 2. Source tree (extracted once).
# ---------------------------------------------------------------------------
if [[ ! -f $SRC/Makefile ]]; then
    log "extracting $SRC_TARBALL into $REPLAY_DIR"
    tar -xf "$SRC_TARBALL" -C "$REPLAY_DIR"
fi
[[ -f $SRC/Makefile ]] || die "no kernel tree at $SRC after extraction"
cd "$SRC"

# Leave no variant patch applied (e.g. after an interrupted run): revert any
# patch that is currently applied, last one first.
patch_applied() { patch -p1 -R --dry-run -s -f <"$PATCH_DIR/$1" >/dev/null 2>&1; }
apply_patch() {
    log "applying $1"
    patch -p1 -s -f <"$PATCH_DIR/$1" || die "patch $1 failed"
}
revert_patch() {
    log "reverting $1"
    patch -p1 -R -s -f <"$PATCH_DIR/$1" || die "reverting $1 failed"
}
revert_all_patches() {
    local p
    for p in $(cd "$PATCH_DIR" && ls -r *.patch); do
        if patch_applied "$p"; then revert_patch "$p"; fi
    done
}
revert_all_patches
stale_tree=0   # set to 1 when the tree must be rebuilt back to base state
if [[ -n $(find . -name '*.orig' -o -name '*.rej' | head -1) ]]; then
    warn "*.orig/*.rej files present in $SRC"
fi

# ---------------------------------------------------------------------------
# 3. Config.  Regenerated only when CONFIG_ARGS (or this step) changed; a
#    new config makes every existing output stale, so it implies FORCE=1.
# ---------------------------------------------------------------------------
# (The first replay's stamp predates profiles: only the second names its own.)
stamp_profile=()
[[ $PROFILE == o2 ]] || stamp_profile=("$PROFILE")
config_stamp=$(printf '%s\n' "${stamp_profile[@]}" tinyconfig "${CONFIG_ARGS[@]}" olddefconfig | sha256sum | cut -d' ' -f1)
if [[ ! -f .config || $(cat "$REPLAY_DIR/.config-stamp" 2>/dev/null) != "$config_stamp" ]]; then
    log "configuring (tinyconfig + ${#CONFIG_ARGS[@]} scripts/config args + olddefconfig)"
    make tinyconfig >/dev/null
    scripts/config "${CONFIG_ARGS[@]}"
    make olddefconfig >/dev/null
    echo "$config_stamp" >"$REPLAY_DIR/.config-stamp"
    FORCE=1
fi
for opt in "${REQUIRED_CONFIG[@]}"; do
    grep -qx "$opt=y" .config || die "$opt=y missing from .config after olddefconfig"
done
if grep -qx 'CONFIG_DEBUG_INFO_BTF=y' .config; then
    die "CONFIG_DEBUG_INFO_BTF unexpectedly enabled"
fi

# ---------------------------------------------------------------------------
# Helpers.
# ---------------------------------------------------------------------------
# timed_build DEST_DIR: incremental `make vmlinux`, log in DEST_DIR/build.log,
# wall seconds in DEST_DIR/build-seconds.
timed_build() {
    local dest=$1 t0 t1
    mkdir -p "$dest"
    log "make -j$JOBS vmlinux  (log: $dest/build.log)"
    t0=$(date +%s.%N)
    if ! make -j"$JOBS" vmlinux >"$dest/build.log" 2>&1; then
        tail -40 "$dest/build.log" >&2
        die "build failed, see $dest/build.log"
    fi
    t1=$(date +%s.%N)
    printf '%.1f\n' "$(echo "$t1 - $t0" | bc)" >"$dest/build-seconds"
    log "built in $(cat "$dest/build-seconds") s"
}

# copy_objs DEST_DIR PATH...: copy tree-relative files, keeping their paths.
copy_objs() {
    local dest=$1 f
    shift
    for f in "$@"; do
        [[ -f $f ]] || { warn "no $f to copy"; continue; }
        mkdir -p "$dest/objs/$(dirname "$f")"
        cp -p "$f" "$dest/objs/$f"
    done
}

# Objects worth keeping from a changed-objs list: skip the huge whole-kernel
# link intermediates (vmlinux.o, .tmp_vmlinux*, kallsyms objects).
keepable_objs() {
    grep -v -E '(^|/)(vmlinux\.o|\.tmp_[^/]*)$' "$1" || true
}

# rebuild_base: bring the (reverted) tree back to the base build, so the next
# variant's build recompiles only what its own patch touches.
rebuild_base() {
    [[ $stale_tree == 1 ]] || return 0
    log "rebuilding tree back to base state"
    mkdir -p "$OUT/.restore"
    timed_build "$OUT/.restore"
    stale_tree=0
}

# ---------------------------------------------------------------------------
# 4. Base build.
# ---------------------------------------------------------------------------
if [[ $FORCE == 1 || ! -f $OUT/base/vmlinux ]]; then
    log "building base"
    rm -rf "$OUT/base"
    mkdir -p "$OUT/base"
    # Start from no objects so the base time is a full build.
    make clean >/dev/null
    timed_build "$OUT/base"
    cp -p vmlinux System.map "$OUT/base/"
    cp -p .config "$OUT/base/config"
    copy_objs "$OUT/base" "${BASE_OBJS[@]}"
else
    log "base exists, skipping (FORCE=1 to rebuild)"
    # The tree may have been left mid-variant by an interrupted run.
    stale_tree=1
fi

# ---------------------------------------------------------------------------
# 5. Variants: base + patch(es), incremental build, collect, revert, rebuild.
# ---------------------------------------------------------------------------
for name in "${VARIANTS[@]}"; do
    dest=$OUT/$name
    if [[ $FORCE != 1 && -f $dest/vmlinux ]]; then
        log "$name exists, skipping (FORCE=1 to rebuild)"
        continue
    fi
    rebuild_base
    log "building variant $name (${VARIANT_PATCHES[$name]})"
    rm -rf "$dest"
    mkdir -p "$dest"

    # Everything compiled after this marker belongs to this variant.
    marker=$dest/.build-start
    touch "$marker"
    for p in ${VARIANT_PATCHES[$name]}; do apply_patch "$p"; done
    stale_tree=1
    timed_build "$dest"
    # (grep -c, not grep -q: with pipefail, grep -q exiting early would make
    # nm die of SIGPIPE and the pipeline fail.)
    if [[ $name == signal-fn ]] && ! nm vmlinux | grep -c ' replay_added_fn$' >/dev/null; then
        die "replay_added_fn missing from the signal-fn vmlinux"
    fi
    cp -p vmlinux System.map "$dest/"
    printf '%s\n' ${VARIANT_PATCHES[$name]} >"$dest/patches.txt"

    # Every .o rebuilt for this variant (compiled after the marker).
    find . -name '*.o' -newer "$marker" | sed 's|^\./||' | sort >"$dest/changed-objs.txt"
    mapfile -t objs < <(keepable_objs "$dest/changed-objs.txt")
    copy_objs "$dest" "${objs[@]}"

    for p in $(printf '%s\n' ${VARIANT_PATCHES[$name]} | tac); do revert_patch "$p"; done
    rebuild_base

    # The tree is base again: save the base versions of the same objects, and
    # check that rebuilt base objects match the originals (reproducibility).
    : >"$dest/restore-check.txt"
    for f in "${objs[@]}"; do
        [[ -f $f ]] || continue
        if [[ -f $OUT/base/objs/$f ]]; then
            cmp -s "$f" "$OUT/base/objs/$f" ||
                echo "differs from base/objs after rebuild: $f" >>"$dest/restore-check.txt"
        else
            copy_objs "$OUT/base" "$f"
        fi
    done
    if [[ -s $dest/restore-check.txt ]]; then warn "see $dest/restore-check.txt"; fi
done

# ---------------------------------------------------------------------------
# 6. Restore base state and summarize.
# ---------------------------------------------------------------------------
revert_all_patches
rebuild_base

summary() {
    local name v
    echo "layout-diff replay builds in $OUT"
    echo "toolchain: $(gcc --version | head -1) | $(ld --version | head -1)"
    echo
    printf '%-18s %10s %12s %s\n' variant build_s vmlinux_B debug_info
    for name in base "${VARIANTS[@]}"; do
        v=$OUT/$name/vmlinux
        [[ -f $v ]] || { printf '%-18s missing\n' "$name"; continue; }
        printf '%-18s %10s %12s %s\n' "$name" "$(cat "$OUT/$name/build-seconds" 2>/dev/null || echo '?')" \
            "$(stat -c %s "$v")" "$(readelf -S "$v" | grep -c '\.debug_info' >/dev/null && echo yes || echo NO)"
    done
    echo
    echo "nm -n -S (address size type name):"
    for name in base "${VARIANTS[@]}"; do
        v=$OUT/$name/vmlinux
        [[ -f $v ]] || continue
        echo "  [$name]"
        nm -n -S "$v" | awk -v syms="${SYMBOLS[*]}" '
            BEGIN { n = split(syms, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
            ($NF in want) { print "    " $0 }'
    done
    echo
    echo "per-CPU (d/D) neighbours of mces_seen and injectm (3 before, 3 after):"
    for name in base mce mce-aligned; do
        v=$OUT/$name/vmlinux
        [[ -f $v ]] || continue
        for s in mces_seen injectm; do
            echo "  [$name] $s"
            nm -n -S "$v" | awk '$(NF-1) ~ /^[dD]$/' | { grep -C3 " $s\$" || echo "(not found)"; } | sed 's/^/    /'
        done
    done
    echo
    for name in "${VARIANTS[@]}"; do
        [[ -f $OUT/$name/changed-objs.txt ]] || continue
        echo "changed objects [$name]: $(tr '\n' ' ' <"$OUT/$name/changed-objs.txt")"
    done
}
summary | tee "$OUT/summary.txt"
