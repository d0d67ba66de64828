#!/usr/bin/env bash
# The main job: run the scenario suite and write its PASS/FAIL report. Exit 0 when every scenario
# behaved as its file expects (spec variants are expected to FAIL where the seed is defective).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/report}
./build/faultline report --matrix all --out "$out"
echo "report: $out/report.md  $out/report.html  $out/junit.xml  $out/report.json"
