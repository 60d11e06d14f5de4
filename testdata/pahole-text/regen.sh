#!/usr/bin/env bash
# Regenerates pahole's own text for every struct of the committed fixtures (never
# from layout-diff): pahole 1.32, the reference of `show --struct`, run through the
# wrapper /tmp/bin/pahole (`bash /work/shared/tools/debian-newer.sh pahole "$@"`; set
# PAHOLE to another 1.32). Run: bash testdata/pahole-text/regen.sh
set -euo pipefail
cd "$(dirname "$0")"
PAHOLE=${PAHOLE:-/tmp/bin/pahole}
"$PAHOLE" --version | grep -qx 'v1.32' || { echo "need pahole 1.32 (PAHOLE=...)" >&2; exit 1; }
for f in old new old-dwarf4 old-s390x old-clang; do
	[ -f "../$f.elf" ] || continue
	"$PAHOLE" -F dwarf --show_private_classes "../$f.elf" > "$f.txt"
done
