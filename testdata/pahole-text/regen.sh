#!/usr/bin/env bash
# Regenerates pahole's own text for every struct of the committed fixtures (never
# from layout-diff): pahole 1.24 (Debian bookworm). Run: bash testdata/pahole-text/regen.sh
set -euo pipefail
cd "$(dirname "$0")"
for f in old new old-dwarf4 old-s390x old-clang; do
	[ -f "../$f.elf" ] || continue
	pahole -F dwarf --show_private_classes "../$f.elf" > "$f.txt"
done
