#!/usr/bin/env bash
# The main job: run the scenario suite and write its PASS/FAIL report, then measure ranking's rows
# A01-A07 (scripts/ranking-evaluation.sh) and rows LIKES-P1 and LIKES-P2 in real mode
# (scripts/likes-capacity.sh) and add them to it. Exit 0 when every scenario behaved as its file
# expects (spec variants are expected to FAIL where the seed is defective) and every threshold an
# evaluation file declares held. The capacity rows do not decide the exit: their figures are this
# machine's speed (a busy machine measures less); the report shows their verdicts and the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/report}
rc=0
./build/faultline report --matrix all --out "$out" || rc=$?
if [ "$rc" -le 1 ]; then
  evaluation=0
  ./scripts/ranking-evaluation.sh "$out" || evaluation=$?
  [ "$evaluation" -le 1 ] || { echo "main-job: the ranking evaluation could not run (exit $evaluation)" >&2; rc=2; }
  [ "$evaluation" -ne 1 ] || { echo "main-job: an evaluation threshold was missed (report.md, A01-A07)"; rc=1; }
  capacity=0
  ./scripts/likes-capacity.sh "$out" || capacity=$?
  [ "$capacity" -le 1 ] || echo "main-job: the capacity rows could not be measured (exit $capacity)" >&2
  [ "$capacity" -ne 1 ] || echo "main-job: a capacity target was missed on this machine (report.md, LIKES-P1/P2)"
fi
echo "report: $out/report.md  $out/report.html  $out/junit.xml  $out/report.json"
exit "$rc"
