#!/usr/bin/env bash
# Set-up command 1: install what is missing, build, and run the main job — the scenario suite
# and its PASS/FAIL report (out/report/report.{md,html,json}, junit.xml).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then ./scripts/install-deps.sh; else sudo ./scripts/install-deps.sh; fi
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"
exec ./scripts/main-job.sh
