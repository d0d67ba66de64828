#!/usr/bin/env bash
# Rows A01-A07 (004 §16.2 L453-464) measured and added to a report: `faultline evaluate` runs each
# evaluation file of evaluations/ranking/ (every rule version it declares on the same frozen
# inputs, docs/evaluation.md), writes its own report under REPORT_DIR/evaluation/NAME/ (with the
# charts), and `faultline report --merge` adds the rows to REPORT_DIR's report.json (the scenario
# suite's report, written first by `faultline report`). Rows are MEASURED, or PASS/FAIL where a
# file declares thresholds.
#
#   scripts/ranking-evaluation.sh [REPORT_DIR]     (default out/report)
#
# Exit: 0 every declared threshold held, 1 a threshold missed, 2 an error (no binary, no report
# to add to, a file that could not be evaluated).
set -uo pipefail
cd "$(dirname "$0")/.."
report_dir=${1:-out/report}
[ -x build/faultline ] || { echo "$0: no build/faultline (build the default preset first)" >&2; exit 2; }
[ -f "$report_dir/report.json" ] || { echo "$0: no $report_dir/report.json (run faultline report first)" >&2; exit 2; }
status=0
jsons=()
for file in evaluations/ranking/*.yaml; do
  name=$(basename "$file" .yaml)
  out=$report_dir/evaluation/$name
  rm -rf "$out"
  build/faultline evaluate "$file" --out "$out" >"$report_dir/evaluation-$name.log" 2>&1
  rc=$?
  if [ "$rc" -gt 1 ] || [ ! -f "$out/report.json" ]; then
    echo "$0: faultline evaluate $file failed (exit $rc):" >&2
    cat "$report_dir/evaluation-$name.log" >&2
    exit 2
  fi
  [ "$rc" -eq 1 ] && status=1
  grep -E "^(PASS|FAIL) " "$report_dir/evaluation-$name.log" | sed "s/^/$name: /"
  jsons+=("$out/report.json")
done
build/faultline report --merge "$report_dir/report.json" "${jsons[@]}" --out "$report_dir" >/dev/null
merged=$?
[ "$merged" -le 1 ] || { echo "$0: could not merge the evaluation reports into $report_dir (exit $merged)" >&2; exit 2; }
exit "$status"
