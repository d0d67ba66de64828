#!/usr/bin/env bash
# Compares two faultline binaries run by run on everything a run reports: every property's
# verdict, check count and evidence, the exemptions, the fingerprint and the event count (the
# whole `faultline run` output less its wall time). A change to a judge meant to keep every
# verdict (a speed-up, a refactor) must print no DIFF line; compare-fingerprints.sh checks only
# the trace. Files: the given ones, else every scenario file and saved counterexample.
#   scripts/compare-verdicts.sh OLD_BINARY NEW_BINARY [N=1] [JOBS=2] [FILE...]
# Exit status: 0 when every run prints the same with both binaries, else 1.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_BINARY NEW_BINARY [SEEDS] [JOBS] [FILE...]" >&2
  exit 2
fi
old=$(realpath "$1"); new=$(realpath "$2"); seeds=${3:-1}; jobs=${4:-2}
shift $(($# < 4 ? $# : 4))
files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=(scenarios/*/*.yaml scenarios/*/found/*.yaml); fi
compare_one() {  # FILE SEED
  local a b
  a=$("$old" run "$1" --seed "$2" 2>&1 | sed 's/ in [0-9.]* wall s//' || true)
  b=$("$new" run "$1" --seed "$2" 2>&1 | sed 's/ in [0-9.]* wall s//' || true)
  if [ "$a" = "$b" ]; then echo "same $1 $2"; else echo "DIFF $1 $2"; fi
}
export -f compare_one; export old new
out=$(for f in "${files[@]}"; do for s in $(seq 1 "$seeds"); do echo "$f $s"; done; done |
      xargs -P "$jobs" -L 1 bash -c 'compare_one "$0" "$1"')
grep "^DIFF" <<<"$out" || true
echo "$(grep -c '^same' <<<"$out" || true) same, $(grep -c '^DIFF' <<<"$out" || true) different"
! grep -q "^DIFF" <<<"$out"
