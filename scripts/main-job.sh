#!/usr/bin/env bash
# The main job: run the scenario suite and write its PASS/FAIL report, then measure rows LIKES-P1
# and LIKES-P2 in real mode and add them to it (scripts/likes-capacity.sh). Exit 0 when every
# scenario behaved as its file expects (spec variants are expected to FAIL where the seed is
# defective). The capacity rows do not decide the exit: their figures are this machine's speed
# (a busy machine measures less); the report shows their verdicts and the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/report}
rc=0
./build/faultline report --matrix all --out "$out" || rc=$?
if [ "$rc" -le 1 ]; then
  capacity=0
  ./scripts/likes-capacity.sh "$out" || capacity=$?
  [ "$capacity" -le 1 ] || echo "main-job: the capacity rows could not be measured (exit $capacity)" >&2
  [ "$capacity" -ne 1 ] || echo "main-job: a capacity target was missed on this machine (report.md, LIKES-P1/P2)"
fi
echo "report: $out/report.md  $out/report.html  $out/junit.xml  $out/report.json"
exit "$rc"
