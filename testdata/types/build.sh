#!/usr/bin/env bash
# Rebuild the type-model fixtures from types.c and the pahole listings the tests
# compare against (never from layout-diff). Run from anywhere: bash testdata/types/build.sh
# Pinned: Debian bookworm gcc 12.2.0, binutils 2.40 (flags copied from
# testdata/build.sh); the listings from pahole 1.32 (PAHOLE132, default the wrapper
# /tmp/bin/pahole, which runs `bash /work/shared/tools/debian-newer.sh pahole "$@"`),
# but pahole-atomic_t.txt from pahole 1.24 (PAHOLE124, default /usr/bin/pahole): 1.32
# prints a typedef'd struct asked for with -C with its type column 8 narrower and an
# empty line after it, which layout-diff does not imitate. The s390x (big-endian, DWARF 4) build needs
# `apt-get install gcc-s390x-linux-gnu`; it is skipped with a message when missing.
set -euo pipefail
cd "$(dirname "$0")"
PAHOLE132=${PAHOLE132:-/tmp/bin/pahole}
PAHOLE124=${PAHOLE124:-/usr/bin/pahole}
"$PAHOLE132" --version | grep -qx 'v1.32' || { echo "need pahole 1.32 (PAHOLE132=...)" >&2; exit 1; }
"$PAHOLE124" --version | grep -qx 'v1.24' || { echo "need pahole 1.24 (PAHOLE124=...)" >&2; exit 1; }
TD=$(cd .. && pwd)
export LC_ALL=C SOURCE_DATE_EPOCH=0
COMMON=(
	-std=gnu11 -O2 -g
	-fdebug-prefix-map="$TD"=.
	-ffreestanding -fno-builtin -fno-common
	-fno-pie -fno-pic -fno-stack-protector
	-fno-asynchronous-unwind-tables -fno-unwind-tables
	-falign-functions=16
	-fno-reorder-functions -fno-toplevel-reorder
	-Wall -Wextra
)
LDFLAGS=(-static -e touch --build-id=none -z max-page-size=0x1000 -z norelro -z noexecstack)
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT

gcc "${COMMON[@]}" -m64 -mcmodel=kernel -mno-red-zone -fcf-protection=none \
	-gdwarf-5 -c types.c -o "$OBJ/types.o"
ld "${LDFLAGS[@]}" -Ttext=0xffffffff81000000 -o types.elf "$OBJ/types.o"
"$PAHOLE132" -F dwarf --show_private_classes types.elf > pahole.txt
"$PAHOLE124" -F dwarf -C atomic_t types.elf > pahole-atomic_t.txt

if command -v s390x-linux-gnu-gcc >/dev/null; then
	s390x-linux-gnu-gcc "${COMMON[@]}" -gdwarf-4 -c types.c -o "$OBJ/types-s390x.o"
	s390x-linux-gnu-ld "${LDFLAGS[@]}" -Ttext=0x100000 -o types-s390x.elf "$OBJ/types-s390x.o"
	"$PAHOLE132" -F dwarf --show_private_classes types-s390x.elf > pahole-s390x.txt
else
	echo "skip types-s390x.elf: s390x-linux-gnu-gcc not installed" >&2
fi
