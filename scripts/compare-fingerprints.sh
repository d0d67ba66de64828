#!/usr/bin/env bash
# Compares two faultline binaries run by run: the trace fingerprint of every scenario file
# (scenarios/*/*.yaml, saved counterexamples aside; they are pinned by CTest) for seeds 1..N.
# A change meant to keep every fingerprint (a speed-up, a refactor) must print no DIFF line.
#   scripts/compare-fingerprints.sh OLD_BINARY NEW_BINARY [N=1] [JOBS=2]
# Exit status: 0 when every run of a valid scenario gives the same fingerprint with both, else 1.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_BINARY NEW_BINARY [SEEDS] [JOBS]" >&2
  exit 2
fi
old=$(realpath "$1"); new=$(realpath "$2"); seeds=${3:-1}; jobs=${4:-2}
compare_one() {  # FILE SEED
  local a b
  a=$("$old" run "$1" --seed "$2" --quiet 2>&1 | grep -o "fingerprint [0-9a-f]*" || true)
  b=$("$new" run "$1" --seed "$2" --quiet 2>&1 | grep -o "fingerprint [0-9a-f]*" || true)
  if [ -z "$a" ] && [ -z "$b" ]; then echo "invalid $1 $2"  # an input error in both: nothing to compare
  elif [ "$a" = "$b" ]; then echo "same $1 $2"
  else echo "DIFF $1 $2 old[$a] new[$b]"; fi
}
export -f compare_one; export old new
out=$(for f in scenarios/*/*.yaml; do for s in $(seq 1 "$seeds"); do echo "$f $s"; done; done |
      xargs -P "$jobs" -L 1 bash -c 'compare_one "$0" "$1"')
grep -v "^same" <<<"$out" || true
echo "$(grep -c '^same' <<<"$out") same, $(grep -c '^DIFF' <<<"$out" || true) different, $(grep -c '^invalid' <<<"$out" || true) invalid"
! grep -q "^DIFF" <<<"$out"
