#!/usr/bin/env bash
# The trace fingerprint of every scenario file, seeds 1..N, with two binaries (compare-runs.sh).
#   scripts/compare-fingerprints.sh OLD_BINARY NEW_BINARY [N=1] [JOBS=2] [FILE...]
exec "$(dirname "$0")/compare-runs.sh" fingerprints "$@"
