#!/usr/bin/env bash
# The test suite, as the README runs it: every test, one test target (one library) per `swift test`
# run, then the fleet's end-to-end test (FleetTimeToPageTests: 20 simulated devices, apitrace
# collect, Prometheus and Alertmanager for about six minutes) in a run of its own.
#
# Why not one `swift test`: every suite of a run shares one process, and Swift's executor on Linux
# has one thread per core. On 2 cores, the CLI suites' synchronous work (writing and reading
# fixture files) held both threads for long stretches, so the uploader's and URLSession's tasks in
# other suites waited minutes for a turn and overran their own bounds (a 3 s test failing after
# 150 s; thread dumps in the issue notes). One library's suites per process keep each library's
# timing bounds its own. Every run is made, and the script fails if any did.
#
# With arguments (e.g. --filter X), it is a single `swift test` with them.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then exec swift test "$@"; fi

swift build --build-tests || exit 1
failed=()
for dir in Tests/APITrace*Tests; do
  target=$(basename "$dir")
  skip=()
  if [ "$target" = APITraceCLITests ]; then skip=(--skip FleetTimeToPageTests); fi
  echo "== $target"
  swift test --skip-build --filter "^$target\\." "${skip[@]}" || failed+=("$target")
done
echo "== FleetTimeToPageTests"
swift test --skip-build --filter FleetTimeToPageTests || failed+=(FleetTimeToPageTests)

if [ ${#failed[@]} -gt 0 ]; then
  echo "Scripts/test.sh: failing runs: ${failed[*]}" >&2
  exit 1
fi
echo "Scripts/test.sh: every run passed"
