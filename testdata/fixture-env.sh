# Sourced by the fixtures' build.sh scripts (`. "$(dirname "$0")/../fixture-env.sh"`):
# strict mode, the fixture's folder as the working directory (TD), a scratch folder
# for objects that is removed on exit (OBJ), a reproducible locale and build time, and
# the tools, each overridable from the environment (GCC, LD, PAHOLE).
set -euo pipefail
cd "$(dirname "$0")"
TD=$PWD
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT
export LC_ALL=C SOURCE_DATE_EPOCH=0
GCC=${GCC:-gcc}
LD=${LD:-ld}
PAHOLE=${PAHOLE:-pahole}
