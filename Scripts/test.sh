#!/usr/bin/env bash
# The test suite, as the README runs it: every test, with the fleet's end-to-end test
# (FleetTimeToPageTests: 20 simulated devices, apitrace collect, Prometheus and Alertmanager for
# about six minutes) in a run of its own after the rest, so its load does not share two cores with
# the timing bounds of the other suites. Arguments go to both runs (e.g. --filter to narrow them).
set -euo pipefail
cd "$(dirname "$0")/.."
swift test --skip FleetTimeToPageTests "$@"
swift test --skip-build --filter FleetTimeToPageTests "$@"
