#!/bin/sh
# likes_load_bench's report is evidence for rows LIKES-P1 and LIKES-P2: a short run of each
# variant (real redis-server and SQLite, started and removed by the benchmark) writes a report
# that `faultline report --merge` judges; each row is then PASS or FAIL (never NOT_RUN) and shows
# the machine and the command instead of a trace fingerprint. The verdicts themselves are this
# machine's speed in a fraction of a second, so they are not checked here.
#   likes_capacity_test.sh LIKES_LOAD_BENCH FAULTLINE
set -eu
bench=$1
faultline=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$out"
"$bench" --seconds 0.3 --warmup 0.1 --connections 4 --assets 50 --variant hardened --report-json p1.json \
  >p1.log 2>&1 || true
"$bench" --seconds 0.3 --warmup 0.1 --connections 4 --assets 50 --variant spec --read-share 0.5 \
  --report-json p2.json --expect-fail likes-count-difference >p2.log 2>&1 || true
for f in p1 p2; do
  [ -s "$f.json" ] || { echo "no report from the $f run:" >&2; cat "$f.log" >&2; exit 1; }
done
"$faultline" report --merge p1.json p2.json --out merged >merge.log 2>&1 || true
[ -s merged/report.json ] || { echo "the merge wrote no report:" >&2; cat merge.log >&2; exit 1; }
row() {  # the status of row $1, variant $2, in the merged report
  tr -d '\n ' <merged/report.json | grep -o "{\"id\":\"$1\",\"matrix\":\"likes\",\"variant\":\"$2\",\"status\":\"[A-Z_]*\"" |
    sed 's/.*"status":"//; s/"$//'
}
for rv in "LIKES-P1 hardened" "LIKES-P2 spec"; do
  status=$(row $rv)
  case "$status" in
    PASS | FAIL) echo "$rv: $status" ;;
    *) echo "$rv is '$status', not PASS or FAIL" >&2; exit 1 ;;
  esac
done
# The runs the rows do not cover stay NOT_RUN: a run is evidence only for its own row and variant.
[ "$(row LIKES-P2 hardened)" = NOT_RUN ] || { echo "LIKES-P2 hardened judged without a run" >&2; exit 1; }
[ "$(row LIKES-P1 spec)" = NOT_RUN ] || { echo "LIKES-P1 spec judged without a run" >&2; exit 1; }
grep -q "real mode on [0-9]* cores" merged/report.md || { echo "no machine in report.md" >&2; exit 1; }
grep -q "likes_load_bench --seconds 0.3 --warmup 0.1 --connections 4 --assets 50 --variant spec" merged/report.md ||
  { echo "no command in report.md" >&2; exit 1; }
grep -q "cache hit rate\|GETs hit" merged/report.md || { echo "no hit rate figure in report.md" >&2; exit 1; }
echo "rows LIKES-P1 (hardened) and LIKES-P2 (spec) judged on the benchmark's evidence"
