#!/usr/bin/env bash
# BTF-only fixtures, made from the committed DWARF fixtures (so their addresses
# are those of testdata/EXPECTED.md and testdata/types/FACTS.md):
#   old-btf.elf   = testdata/old.elf with BTF encoded by pahole, DWARF stripped
#   old.btf       = its raw .BTF section (what /sys/kernel/btf/vmlinux holds)
#   old.map       = `nm -n testdata/old.elf` (System.map format)
#   types-btf.elf = testdata/types/types.elf likewise (bitfields, unions, enums)
# Pinned tools: pahole 1.24 (-J, the encoder), binutils 2.40; the reference texts
# pahole-*.txt from pahole 1.32 (PAHOLE132, default the wrapper /tmp/bin/pahole, which
# runs `bash /work/shared/tools/debian-newer.sh pahole "$@"`).
# Run: bash testdata/btf/build.sh
set -euo pipefail
cd "$(dirname "$0")"
export LC_ALL=C
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for base in old:../old.elf types:../types/types.elf; do
	name=${base%%:*} src=${base#*:}
	cp "$src" "$TMP/$name.elf"
	pahole -J "$TMP/$name.elf"
	objcopy --strip-debug "$TMP/$name.elf" "$name-btf.elf"
done
objcopy --dump-section .BTF=old.btf old-btf.elf "$TMP/discard.elf"
nm -n ../old.elf > old.map
# The facts the tests assert, from pahole's own BTF reader (and nm: old.map):
PAHOLE132=${PAHOLE132:-/tmp/bin/pahole}
"$PAHOLE132" --version | grep -qx 'v1.32' || { echo "need pahole 1.32 (PAHOLE132=...)" >&2; exit 1; }
"$PAHOLE132" -F btf old-btf.elf > pahole-old.txt
"$PAHOLE132" -F btf types-btf.elf > pahole-types.txt
