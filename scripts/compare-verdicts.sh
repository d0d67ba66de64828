#!/usr/bin/env bash
# Every run's whole report (verdicts, check counts, evidence, fingerprint), seeds 1..N, with two
# binaries (compare-runs.sh).
#   scripts/compare-verdicts.sh OLD_BINARY NEW_BINARY [N=1] [JOBS=2] [FILE...]
exec "$(dirname "$0")/compare-runs.sh" reports "$@"
