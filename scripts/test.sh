#!/usr/bin/env bash
# Set-up command 2: check the format (scripts/check-format.sh), build and run every test (CTest:
# gtest and RapidCheck suites), then the same tests under AddressSanitizer +
# UndefinedBehaviorSanitizer (skip with FAULTLINE_SKIP_SANITIZE=1).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
./scripts/check-format.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$jobs"
ctest --preset default -j"$jobs"
if [ "${FAULTLINE_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake --preset sanitize >/dev/null
  cmake --build --preset sanitize -j"$jobs"
  ctest --preset sanitize -j"$jobs"
fi
