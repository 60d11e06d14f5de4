#!/usr/bin/env bash
# testdata/cache/{old,new}.elf: testdata/old.elf and new.elf with a GNU build-id note
# added (objcopy, binutils 2.40), because the other fixtures are linked with
# --build-id=none and the snapshot cache keeps only builds that have one. The note is
# a section outside every segment, so addresses and layouts are those of the
# originals. The build-id is the SHA-1 of the original file, as `ld --build-id=sha1`
# would take one of the output. FACTS.md holds `readelf -n` of both.
set -euo pipefail
cd "$(dirname "$0")"
export LC_ALL=C
OBJCOPY=${OBJCOPY:-objcopy}
NOTE=$(mktemp)
trap 'rm -f "$NOTE"' EXIT
for v in old new; do
	id=$(sha1sum "../$v.elf" | cut -d' ' -f1)
	# Elf64_Nhdr: namesz 4, descsz 20, type 3 (NT_GNU_BUILD_ID); "GNU\0"; the id.
	{
		printf '\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00'
		printf '%s' "$id" | xxd -r -p
	} >"$NOTE"
	"$OBJCOPY" --add-section .note.gnu.build-id="$NOTE" \
		--set-section-flags .note.gnu.build-id=readonly \
		--set-section-alignment .note.gnu.build-id=4 \
		"../$v.elf" "$v.elf"
done
{
	echo "# testdata/cache: facts"
	echo
	echo "Written by build.sh from \`readelf -n\` and \`ls -l\`."
	for v in old new; do
		echo
		echo "## $v.elf ($(stat -c %s $v.elf) bytes)"
		echo
		echo '```'
		readelf -n "$v.elf" | sed -e '/^$/d'
		echo '```'
	done
} >FACTS.md
