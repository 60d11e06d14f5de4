#!/usr/bin/env bash
# Runs every target with AFL++ for the given seconds each, one after another (one
# core), from corpus/TARGET into out/TARGET. Usage: bash fuzz/run.sh [SECONDS_BIG] [SECONDS_SMALL]
set -u
cd "$(dirname "$0")"
BIG=${1:-600} SMALL=${2:-180}
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
for t in btf:$BIG image:$BIG rules:$SMALL c2c:$SMALL symbols:$SMALL; do
	name=${t%%:*} secs=${t#*:}
	cargo afl fuzz -V "$secs" -i "corpus/$name" -o "out/$name" "target/release/$name" > "out-$name.log" 2>&1
done
