#!/usr/bin/env bash
# Rebuild every fixture in testdata/ from testdata/src/, then regenerate
# EXPECTED.md with facts.py.  Run from anywhere: bash testdata/build.sh
#
# All flags are pinned here.  The committed files were built with Debian
# bookworm's gcc 12.2.0, binutils 2.40, clang 14 and pahole 1.24; another
# compiler version gives other addresses, so EXPECTED.md must then be
# regenerated along with the ELF files (and the tests' numbers checked).
#
# Optional outputs (old-s390x.elf, old-clang.elf) are skipped with a message
# when their compiler is missing.  On Debian/Ubuntu:
#   apt-get install -y gcc-s390x-linux-gnu clang
set -euo pipefail

cd "$(dirname "$0")"
TD=$PWD
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT

# Make paths in DWARF and the output independent of where the repo lives.
export LC_ALL=C
export SOURCE_DATE_EPOCH=0

GCC=${GCC:-gcc}
LD=${LD:-ld}
OBJCOPY=${OBJCOPY:-objcopy}

if ! "$GCC" --version | head -n1 | grep -qE '\) 12\.'; then
	echo "warning: $GCC is not gcc 12 ($("$GCC" --version | head -n1));" \
		"addresses will differ from the committed EXPECTED.md" >&2
fi

# Flags shared by every gcc build (x86_64 and s390x).
COMMON=(
	-std=gnu11 -O2 -g
	-fdebug-prefix-map="$TD"=.
	-ffreestanding -fno-builtin -fno-common
	-fno-pie -fno-pic -fno-stack-protector
	-fno-asynchronous-unwind-tables -fno-unwind-tables
	-falign-functions=16
	-fno-reorder-functions -fno-toplevel-reorder
	-fno-ipa-sra -fno-ipa-cp -fno-partial-inlining
	-Wall -Wextra
)
# x86_64 kernel-like code generation.
X86=(
	-m64 -mcmodel=kernel -mno-red-zone -fcf-protection=none
	-mno-sse -mno-mmx -mno-sse2 -mno-3dnow -mno-avx
)
# Like the kernel: a static link with a script, relocations kept in the
# executable (Debian's vmlinux has .rela.debug_info too: already applied).
LDFLAGS=(
	-static -T src/kernel.lds --build-id=none
	-z max-page-size=0x1000 -z norelro -z noexecstack
)

cc_x86() { # out.o src.c [extra flags...]
	local out=$1 src=$2
	shift 2
	"$GCC" "${COMMON[@]}" "${X86[@]}" "$@" -c "$src" -o "$out"
}

echo "== gcc x86_64, DWARF 5: old.elf new.elf old.o"
cc_x86 "$OBJ/kernel-old.o" src/kernel.c -gdwarf-5
cc_x86 "$OBJ/kernel-new.o" src/kernel.c -gdwarf-5 -DNEW
cc_x86 "$OBJ/other.o" src/other.c -gdwarf-5
"$LD" "${LDFLAGS[@]}" --emit-relocs -o old.elf "$OBJ/kernel-old.o" "$OBJ/other.o"
"$LD" "${LDFLAGS[@]}" --emit-relocs -o new.elf "$OBJ/kernel-new.o" "$OBJ/other.o"
cp "$OBJ/kernel-old.o" old.o

echo "== gcc x86_64, DWARF 4: old-dwarf4.elf"
cc_x86 "$OBJ/kernel-d4.o" src/kernel.c -gdwarf-4
cc_x86 "$OBJ/other-d4.o" src/other.c -gdwarf-4
"$LD" "${LDFLAGS[@]}" -o old-dwarf4.elf "$OBJ/kernel-d4.o" "$OBJ/other-d4.o"

echo "== objcopy variants: old-zlib.elf old-zstd.elf old-nodebug.elf"
"$OBJCOPY" --compress-debug-sections=zlib old.elf old-zlib.elf
if "$OBJCOPY" --compress-debug-sections=zstd old.elf old-zstd.elf 2>"$OBJ/zstd.err"; then
	:
else
	echo "skip old-zstd.elf: $(cat "$OBJ/zstd.err")" >&2
	rm -f old-zstd.elf
fi
"$OBJCOPY" --strip-debug old.elf old-nodebug.elf

echo "== gcc s390x (big-endian): old-s390x.elf"
S390_GCC=${S390_GCC:-s390x-linux-gnu-gcc}
S390_LD=${S390_LD:-s390x-linux-gnu-ld}
if command -v "$S390_GCC" >/dev/null && command -v "$S390_LD" >/dev/null; then
	"$S390_GCC" "${COMMON[@]}" -m64 -march=z196 -gdwarf-5 \
		-c src/kernel.c -o "$OBJ/kernel-s390x.o"
	"$S390_GCC" "${COMMON[@]}" -m64 -march=z196 -gdwarf-5 \
		-c src/other.c -o "$OBJ/other-s390x.o"
	"$S390_LD" "${LDFLAGS[@]}" -o old-s390x.elf \
		"$OBJ/kernel-s390x.o" "$OBJ/other-s390x.o"
else
	echo "skip old-s390x.elf: $S390_GCC not found" >&2
	rm -f old-s390x.elf
fi

echo "== clang x86_64, DWARF 5: old-clang.elf"
CLANG=${CLANG:-clang}
if command -v "$CLANG" >/dev/null; then
	CLANG_FLAGS=(
		--target=x86_64-linux-gnu -std=gnu11 -O2 -g -gdwarf-5
		-fdebug-prefix-map="$TD"=.
		-ffreestanding -fno-builtin -fno-common
		-fno-pie -fno-pic -fno-stack-protector
		-fno-asynchronous-unwind-tables -fno-unwind-tables
		-falign-functions=16
		-mcmodel=kernel -mno-red-zone -fcf-protection=none
		-mno-sse -mno-mmx -mno-sse2 -mno-3dnow -mno-avx
		-fno-addrsig -Wall
	)
	"$CLANG" "${CLANG_FLAGS[@]}" -c src/kernel.c -o "$OBJ/kernel-clang.o"
	"$CLANG" "${CLANG_FLAGS[@]}" -c src/other.c -o "$OBJ/other-clang.o"
	"$LD" "${LDFLAGS[@]}" -o old-clang.elf "$OBJ/kernel-clang.o" "$OBJ/other-clang.o"
else
	echo "skip old-clang.elf: $CLANG not found" >&2
	rm -f old-clang.elf
fi

echo "== bad inputs: bad/"
mkdir -p bad
printf 'This is a text file, not an ELF object.\nlayout-diff must reject it.\n' >bad/not-elf.txt
head -c 1000 old.elf >bad/truncated.elf
: >bad/empty

echo "== EXPECTED.md"
python3 facts.py >EXPECTED.md

echo "== done"
ls -l ./*.elf old.o bad/*
du -sh .
