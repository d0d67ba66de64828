#!/usr/bin/env bash
# Instructions per run (valgrind's callgrind; repeatable for the same binary and inputs whatever
# else the machine runs, unlike CPU seconds): seed 1 of the 8 ranking hardened exploratory files,
# combo explore-hardened and likes swarm-hardened. Profiles land in OUT_DIR for
# `callgrind_annotate OUT_DIR/FILE.out`.
#   scripts/count-instructions.sh BINARY OUT_DIR [SCENARIO...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 BINARY OUT_DIR [SCENARIO...]" >&2
  exit 2
fi
bin=$(realpath "$1"); out_dir=$2; shift 2
mkdir -p "$out_dir"
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  for f in explore-hardened explore-board-hardened explore-publish-hardened explore-rebalance-hardened \
           explore-salted-hardened explore-scope-control-hardened explore-stale-owner-hardened \
           explore-watermarks-hardened; do scenarios+=("scenarios/ranking/$f.yaml"); done
  scenarios+=(scenarios/combo/explore-hardened.yaml scenarios/likes/swarm-hardened.yaml)
fi
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
objcopy --strip-debug "$bin" "$stripped"  # callgrind reads debug info slowly; names stay
for s in "${scenarios[@]}"; do
  profile=$out_dir/$(echo "${s#scenarios/}" | tr / - | sed 's/\.yaml$//').out
  valgrind --tool=callgrind --callgrind-out-file="$profile" "$stripped" run "$s" --seed 1 --quiet >/dev/null 2>&1 || true
  echo "$s $(callgrind_annotate "$profile" 2>/dev/null | awk '/PROGRAM TOTALS/ {print $1}')"
done
