#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each one on a seed corpus made from
# Samples/Traces and Fuzz/Seeds. See Docs/fuzzing.md.
#
#   Scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
#   SECONDS_PER_TARGET  how long each target runs (default 60); 0 only builds and replays
#   TARGET              trace-line, line-decoder, file-reader, timestamp, sse-parser, sse-connection, alert-rules (default: all)
#
# Environment:
#   FUZZ_CONFIG   release (default) or debug
#   FUZZ_ARGS     extra libFuzzer flags, e.g. "-fork=1 -ignore_crashes=1" to keep going after a crash
#   FUZZ_NICE     nice level for the runs (default 19: the fuzzers are background work)
#
# Before fuzzing, every file under Fuzz/Regressions/<target>/ is replayed once; a crash there or
# during fuzzing makes the script exit 1 after all targets ran. Files under Fuzz/Findings/<target>/
# (open findings, see Docs/fuzzing.md) are replayed too and only reported. New reproducers are left in
# .build-fuzz/fuzzing/artifacts/<target>/; the growing corpus is kept in .build-fuzz/fuzzing/corpus/<target>/.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${1:-60}
shift || true
all_targets=(trace-line line-decoder file-reader timestamp sse-parser sse-connection alert-rules)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi
config=${FUZZ_CONFIG:-release}
nice_level=${FUZZ_NICE:-19}
scratch="$root/.build-fuzz"
# Swift's own crash backtracer trips AddressSanitizer (it copies stack memory); libFuzzer prints the
# stack of a trap itself.
export SWIFT_BACKTRACE=enable=no

# libFuzzer dictionary per target (field names and edge values), when one exists.
dictionary() {
  case "$1" in
    file-reader|line-decoder) echo "Fuzz/Dictionaries/trace-line.dict" ;;
    sse-parser|sse-connection) echo "Fuzz/Dictionaries/sse-parser.dict" ;;
    *) [ -f "Fuzz/Dictionaries/$1.dict" ] && echo "Fuzz/Dictionaries/$1.dict" ;;
  esac
}

# Flags a target needs: the timestamp parser's branches compare digits against ranges, which gives
# plain coverage nothing to climb; value profiles let libFuzzer steer by how close a comparison came.
extra_flags() {
  case "$1" in
    timestamp) echo "-use_value_profile=1" ;;
  esac
}

max_len() {
  case "$1" in
    timestamp) echo 64 ;;
    sse-parser) echo 1024 ;;
    *) echo 4096 ;;
  esac
}

echo "== building fuzz targets ($config)"
build_start=$(date +%s)
# The main package is a path dependency: SwiftPM does not notice files added to or removed from it
# and fails with "missing inputs"; dropping the build manifest makes it plan again.
rm -f "$scratch/$config.yaml"
if ! swift build --package-path Fuzz --scratch-path "$scratch" -c "$config" \
    -Xswiftc -sanitize=fuzzer,address 2>&1 | grep -v "Cannot export local symbol"; then
  echo "fuzz.sh: build failed" >&2
  exit 2
fi
[ -x "$scratch/$config/fuzz-trace-line" ] || { echo "fuzz.sh: build failed" >&2; exit 2; }
echo "== built in $(( $(date +%s) - build_start )) s"

# Seeds: small pieces of the sample traces, so mutations start from real lines.
seeds="$scratch/fuzzing/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{trace-line,line-decoder,file-reader,timestamp,sse-parser,sse-connection,alert-rules}
sample="$seeds/sample.jsonl"
# The first lines of a few files: the sample day holds thousands, a seed per line would drown the fuzzer.
for f in $(ls Samples/Traces/*.jsonl.gz | head -n 6); do gzip -dc "$f" | head -n 80; done > "$sample"
header=$(head -n 1 "$sample")
n=0
while IFS= read -r line; do
  n=$((n + 1))
  printf '%s\n' "$line" > "$seeds/trace-line/line-$n.jsonl"
  printf '%s' "$line" > "$seeds/line-decoder/line-$n.jsonl"
  # Every fifth line also as a tiny file behind the header, plain.
  if [ $((n % 5)) -eq 2 ]; then printf '%s\n%s\n' "$header" "$line" > "$seeds/file-reader/line-$n.jsonl"; fi
done < "$sample"
# Fields the sample does not hold but producers write: a sampled success, counts of suppressed
# errors, a dropped count; each next to a real line so the fuzzer can move the numbers.
grep '"type":"request".*"status":200' "$sample" | head -n 3 | sed 's/^{/{"sample_rate":0.25,/' > "$seeds/trace-line/sampled.jsonl"
grep '"type":"error"' "$sample" | head -n 2 | sed 's/^{/{"suppressed":12,/' > "$seeds/trace-line/suppressed.jsonl"
grep '"type":"dropped"' "$sample" | head -n 1 > "$seeds/trace-line/dropped.jsonl"
cat "$seeds/trace-line/sampled.jsonl" "$seeds/trace-line/suppressed.jsonl" "$seeds/trace-line/dropped.jsonl" |
  { printf '%s\n' "$header"; cat; } > "$seeds/file-reader/fields.jsonl"
head -n 12 "$sample" > "$seeds/trace-line/first-lines.jsonl"
head -n 6 "$sample" > "$seeds/file-reader/first-lines.jsonl"
head -n 6 "$sample" | gzip -c > "$seeds/file-reader/first-lines.jsonl.gz"
head -n 6 "$sample" | head -c 700 > "$seeds/file-reader/cut-mid-line.jsonl"
grep -o '"\(ts\|started\)":"[^"]*"' "$sample" | sed 's/^"[a-z]*":"//; s/"$//' | sort -u | head -n 40 |
  while IFS= read -r ts; do printf '%s' "$ts" > "$seeds/timestamp/sample-$(printf '%s' "$ts" | cksum | cut -d' ' -f1).txt"; done
for t in "${all_targets[@]}"; do
  if [ -d "Fuzz/Seeds/$t" ]; then cp Fuzz/Seeds/"$t"/* "$seeds/$t/"; fi
done
# The connection target reads two header bytes (chunk size, limits) before the body.
for f in Fuzz/Seeds/sse-parser/*; do { printf '\007\052'; cat "$f"; } > "$seeds/sse-connection/$(basename "$f")"; done

status=0
for t in "${targets[@]}"; do
  bin="$scratch/$config/fuzz-$t"
  [ -x "$bin" ] || { echo "fuzz.sh: no target $t (known: ${all_targets[*]})" >&2; status=1; continue; }
  corpus="$scratch/fuzzing/corpus/$t"
  artifacts="$scratch/fuzzing/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"

  regressions=(Fuzz/Regressions/"$t"/*)
  if [ -e "${regressions[0]}" ]; then
    echo "== $t: replaying ${#regressions[@]} regression input(s)"
    if ! "$bin" -runs=1 -rss_limit_mb=2048 -timeout=10 "${regressions[@]}" > "$scratch/fuzzing/$t-regressions.log" 2>&1; then
      echo "fuzz.sh: $t: a regression input fails again:" >&2
      grep -E "Fatal error|ERROR: |Running: " "$scratch/fuzzing/$t-regressions.log" | tail -n 6 >&2
      status=1
    fi
  fi

  # Open findings: known to crash until the reading code is fixed; reported, not failing. A fixed one
  # moves to Fuzz/Regressions/<target>/, where it must keep passing.
  for finding in Fuzz/Findings/"$t"/*; do
    [ -e "$finding" ] || continue
    if "$bin" -runs=1 -rss_limit_mb=2048 -timeout=10 "$finding" > /dev/null 2>&1; then
      echo "== $t: open finding $finding no longer crashes: move it to Fuzz/Regressions/$t/"
    else
      echo "== $t: open finding still crashes: $finding"
    fi
  done

  [ "$seconds" -gt 0 ] || continue
  echo "== $t: fuzzing for $seconds s"
  log="$scratch/fuzzing/$t.log"
  dict=$(dictionary "$t")
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
  nice -n "$nice_level" "$bin" "$corpus" "$seeds/$t" \
    -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 ${dict:+-dict="$dict"} $(extra_flags "$t") ${FUZZ_ARGS:-} > "$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$')
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$')
  if [ -z "$runs" ]; then  # fork mode prints no final stats: take its last status line
    runs=$(grep -o '^#[0-9]*' "$log" | tail -n 1 | tr -d '#')
    [ -n "$runs" ] && speed=$((runs / seconds))
  fi
  echo "   runs: ${runs:-?}, exec/s: ${speed:-?}, corpus: $(find "$corpus" -type f | wc -l) files, log: $log"
  if [ $rc -ne 0 ] || grep -q "^==[0-9]*==ERROR\|Fatal error\|deadly signal" "$log"; then
    echo "fuzz.sh: $t: crash (libFuzzer exit $rc); reproducers in $artifacts/:" >&2
    grep -E "Fatal error|ERROR: |SUMMARY|Test unit written" "$log" | head -n 8 >&2
    status=1
  fi
done
exit $status
