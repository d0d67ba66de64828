#!/usr/bin/env bash
# Rows LIKES-P1 and LIKES-P2 (002 §1.1 L9-10, §9.2 L489-492) measured in real mode and added to a
# report: likes_load_bench runs each variant against a real redis-server and an SQLite file (both
# started and removed by the benchmark), once with likes and unlikes only (LIKES-P1: 10,000+ like
# operations/s, p99 < 50 ms) and once with half of the requests reading a count (LIKES-P2: also a
# cache hit rate > 95 % and a Redis/DB count difference < 1 %). Each run's figures, this machine
# and its command are the rows' evidence; `faultline report --merge` adds them to REPORT_DIR's
# report.json (the scenario suite's report, written first by `faultline report`). Each run's own
# report and output stay in REPORT_DIR/capacity/.
#
#   scripts/likes-capacity.sh [REPORT_DIR]     (default out/report)
#
# Environment: SECONDS_PER_RUN (5), CONNECTIONS (32), DRAIN_LIMIT_S (20: how long a run waits,
# after its clients stop, for the service's queued DB writes before it compares the stores). The
# figures are this machine's: a busy machine measures less. spec is expected to fail
# likes-throughput or likes-count-difference: it acknowledges a like before its DB write
# (write-behind, 002:L124, L228), whose statements run one transaction each, so its writes fall
# behind and the stores disagree after the run (docs/systems/likes.md, "Load benchmark").
# Exit: 0 every run as expected, 1 a target missed that the run did not expect to miss, 2 an
# error (no benchmark binary, no report to add to, a run that could not run).
set -uo pipefail
cd "$(dirname "$0")/.."
report_dir=${1:-out/report}
seconds=${SECONDS_PER_RUN:-5} connections=${CONNECTIONS:-32} drain_limit=${DRAIN_LIMIT_S:-20}
bench=build/bench/likes_load_bench
[ -x "$bench" ] || { echo "$0: no $bench (build the default preset first)" >&2; exit 2; }
[ -x build/faultline ] || { echo "$0: no build/faultline" >&2; exit 2; }
[ -f "$report_dir/report.json" ] || { echo "$0: no $report_dir/report.json (run faultline report first)" >&2; exit 2; }
work=$report_dir/capacity  # each run's report and full output, kept beside the report as its evidence
mkdir -p "$work"

jsons=()
for variant in hardened spec; do
  expect=()
  [ "$variant" = spec ] && expect=(--expect-fail likes-throughput,likes-count-difference)
  for read_share in 0 0.5; do
    json=$work/$variant-$read_share.json
    rm -f "$json"
    "$bench" --seconds "$seconds" --connections "$connections" --variant "$variant" --read-share "$read_share" \
      --drain-limit "$drain_limit" --report-json "$json" "${expect[@]}" >"$work/$variant-$read_share.log" 2>&1
    rc=$?
    if [ ! -f "$json" ]; then
      echo "$0: likes_load_bench --variant $variant --read-share $read_share did not run (exit $rc):" >&2
      cat "$work/$variant-$read_share.log" >&2
      exit 2
    fi
    grep -E "like/unlike:|count reads:|difference" "$work/$variant-$read_share.log" | sed "s/^/$variant read-share $read_share: /"
    jsons+=("$json")
  done
done
build/faultline report --merge "$report_dir/report.json" "${jsons[@]}" --out "$report_dir"
