#!/usr/bin/env bash
# Runs one list of commands with two layout-diff binaries and compares what each
# printed (stdout, stderr) and its exit status: the check that a refactor changed no
# output. Fixture commands always; the real pair's commands when bench/cache holds it
# (bench/fetch-vmlinux.sh), and 7.x ones when K3/K4 name two more vmlinux files.
#
#   bash bench/same-outputs.sh OLD_BINARY NEW_BINARY [OUT_DIR]
#
# Prints one line per command (same/DIFFERENT) and a total; exits 1 on any difference.
set -uo pipefail
set -f  # the commands hold globs for layout-diff, not the shell
a=$1 b=$2
out=${3:-$(mktemp -d)}
cd "$(dirname "$0")/.."
T=testdata
cache=${LAYOUT_DIFF_CACHE:-bench/cache}
K1=$cache/linux-image-6.1.0-47-cloud-amd64-dbg/vmlinux
K2=$cache/linux-image-6.1.0-50-cloud-amd64-dbg/vmlinux
snaps=$out/snaps
mkdir -p "$out/a" "$out/b" "$snaps"

cmds=(
  "$T/old.elf $T/new.elf"
  "$T/old.elf $T/new.elf --all"
  "$T/old.elf $T/new.elf --format json"
  "$T/old.elf $T/new.elf --format markdown"
  "$T/old.elf $T/new.elf --format html"
  "$T/old.elf $T/new.elf --explain root_user"
  "$T/old.elf $T/new.elf --explain mce"
  "$T/evidence/old.elf $T/evidence/new.elf --all"
  "$T/evidence/old.elf $T/evidence/new.elf --hot $T/evidence/perf-type.txt --format json"
  "$T/suggest/old.elf $T/suggest/new.elf --hot $T/suggest/hot.txt"
  "show $T/old.elf"
  "show $T/old.elf --struct user_struct"
  "show $T/old.elf --struct user_struct --annotate"
  "show $T/old.elf --struct * --format json"
  "show $T/old.elf --symbol root_user"
  "show $T/old.elf --symbol root_user --format json"
  "show $T/old.elf --symbol root_user --format html"
  "show $T/old.elf --percpu --line 11c0"
  "show $T/old-clang.elf --struct mce"
  "show $T/old-s390x.elf --struct mce"
  "show $T/bad/truncated.elf"
  "show $T/bad/not-elf.txt"
  "check --rules $T/check/rules/root_user.toml $T/check/base.elf"
  "check --rules $T/check/rules/root_user.toml $T/check/patched.elf --format json"
  "check --rules $T/check/rules/mce.toml $T/old.elf $T/new.elf"
  "check --rules $T/check/rules/groups.toml $T/check/base.elf --format html"
  "check --rules $T/check/rules/bad-key.toml $T/check/base.elf"
  "whatif $T/old.elf --struct mce=+8"
  "whatif $T/old.elf --struct mce=+8 --format json"
  "whatif $T/old.elf --struct user_struct --align 64 --nm"
  "suggest $T/suggest/old.elf $T/suggest/new.elf --hot $T/suggest/hot.txt"
  "suggest $T/suggest/structs.elf --rules $T/suggest/structs.toml"
  "history $T/old.elf $T/new.elf --symbol root_user --struct mce"
)
if [ -s "$K1" ] && [ -s "$K2" ]; then
  cmds+=(
    "$K1 $K2"
    "$K1 $K2 --all"
    "$K1 $K2 --format json"
    "$K1 $K2 --format markdown"
    "$K1 $K2 --format html"
    "$K1 $K2 --explain root_user"
    "$K1 $K2 --explain init_user_ns"
    "show $K2 --struct task_struct"
    "show $K2 --symbol root_user"
    "show $K2 --symbol init_user_ns --format json"
    "show $K2 --percpu --line 233c0"
    "check --rules bench/suggest-rules/6.1.176.toml $K1 $K2"
    "whatif $K2 --struct user_struct=+8"
    "suggest $K1 $K2"
  )
fi
if [ -n "${K3:-}" ] && [ -n "${K4:-}" ]; then
  cmds+=("$K3 $K4" "$K3 $K4 --format json" "show $K4 --struct tcp_sock" "suggest $K3 $K4")
fi

run() { # binary side index command...
  local bin=$1 side=$2 i=$3; shift 3
  "$bin" "$@" >"$out/$side/$i.out" 2>"$out/$side/$i.err"; echo $? >"$out/$side/$i.rc"
}
# Snapshots of the fixture pair, written by each binary at the same paths (which the
# report prints) and diffed by it; the files themselves must be equal too.
n=1 bad=0
for side in a b; do
  bin=$a; [ $side = b ] && bin=$b
  "$bin" snapshot -o "$snaps/old.snap" "$T/old.elf" >/dev/null 2>&1
  "$bin" snapshot -o "$snaps/new.snap" "$T/new.elf" >/dev/null 2>&1
  cp "$snaps/old.snap" "$snaps/$side-old.snap"
  run "$bin" $side 0 "$snaps/old.snap" "$snaps/new.snap" --all
done
if cmp -s "$snaps/a-old.snap" "$snaps/b-old.snap" && cmp -s "$out/a/0.out" "$out/b/0.out" \
   && cmp -s "$out/a/0.err" "$out/b/0.err"; then
  echo "same       snapshot file, and the diff of the snapshot pair --all"
else
  echo "DIFFERENT  snapshot file, or the diff of the snapshot pair ($out/{a,b}/0.*)"; bad=1
fi
i=0
for c in "${cmds[@]}"; do
  i=$((i + 1)); n=$((n + 1))
  run "$a" a $i $c
  run "$b" b $i $c
  if cmp -s "$out/a/$i.out" "$out/b/$i.out" && cmp -s "$out/a/$i.err" "$out/b/$i.err" \
     && cmp -s "$out/a/$i.rc" "$out/b/$i.rc"; then
    printf 'same       exit %s  %s\n' "$(cat "$out/a/$i.rc")" "$c"
  else
    printf 'DIFFERENT  %s  (%s)\n' "$c" "$out/{a,b}/$i.*"; bad=$((bad + 1))
  fi
done
echo "$((n - bad)) same, $bad different (outputs in $out)"
[ "$bad" -eq 0 ]
