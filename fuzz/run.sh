#!/usr/bin/env bash
# Runs every target with AFL++ for the given seconds each (600 by default), one after
# another (one core), from corpus/TARGET into out/TARGET; the log of each run goes to
# out-TARGET.log. Usage: bash fuzz/run.sh [SECONDS] [TARGET...]
set -u
cd "$(dirname "$0")"
SECS=${1:-600}
shift $(( $# > 0 ? 1 : 0 ))
TARGETS=${*:-btf image rules c2c hot symbols snapshot}
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
mkdir -p out
for name in $TARGETS; do
	cargo afl fuzz -V "$SECS" -i "corpus/$name" -o "out/$name" "target/release/$name" > "out-$name.log" 2>&1
	grep -E '^(execs_done|execs_per_sec|corpus_count|saved_crashes|saved_hangs) ' "out/$name/default/fuzzer_stats" 2>/dev/null | sed "s/^/$name: /"
done
