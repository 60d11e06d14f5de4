#!/usr/bin/env bash
# Rebuild the type-model fixtures from types.c and the pahole listings the tests
# compare against (never from layout-diff). Run from anywhere: bash testdata/types/build.sh
# Pinned: Debian bookworm gcc 12.2.0, binutils 2.40, pahole 1.24 (flags copied
# from testdata/build.sh). The s390x (big-endian, DWARF 4) build needs
# `apt-get install gcc-s390x-linux-gnu`; it is skipped with a message when missing.
set -euo pipefail
cd "$(dirname "$0")"
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
pahole -F dwarf --show_private_classes types.elf > pahole.txt
pahole -F dwarf -C atomic_t types.elf > pahole-atomic_t.txt

if command -v s390x-linux-gnu-gcc >/dev/null; then
	s390x-linux-gnu-gcc "${COMMON[@]}" -gdwarf-4 -c types.c -o "$OBJ/types-s390x.o"
	s390x-linux-gnu-ld "${LDFLAGS[@]}" -Ttext=0x100000 -o types-s390x.elf "$OBJ/types-s390x.o"
	pahole -F dwarf --show_private_classes types-s390x.elf > pahole-s390x.txt
else
	echo "skip types-s390x.elf: s390x-linux-gnu-gcc not installed" >&2
fi
