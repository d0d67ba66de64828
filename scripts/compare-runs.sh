#!/usr/bin/env bash
# Compares two faultline binaries run by run, for seeds 1..N of each scenario file.
#   fingerprints: the trace fingerprint of every scenario file (scenarios/*/*.yaml; saved
#     counterexamples are pinned by CTest). A change meant to keep the simulation (a speed-up, a
#     refactor) must print no DIFF line.
#   reports: everything a run reports: every property's verdict, check count and evidence, the
#     exemptions, the fingerprint and the event count (the `faultline run` output less its wall
#     time), for the given files or every scenario file and saved counterexample. A change to a
#     judge meant to keep its verdicts must print no DIFF line.
#   verdicts: the same less the fingerprint: a change that rewrites what a trace says but should
#     decide nothing differently (a reply's text) must print no DIFF line.
#   scripts/compare-runs.sh fingerprints|reports|verdicts OLD_BINARY NEW_BINARY [N=1] [JOBS=2] [FILE...]
# Exit status: 0 when no run differs, 1 when one does, 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ] || { [ "$1" != fingerprints ] && [ "$1" != reports ] && [ "$1" != verdicts ]; }; then
  echo "usage: $0 fingerprints|reports|verdicts OLD_BINARY NEW_BINARY [SEEDS] [JOBS] [FILE...]" >&2
  exit 2
fi
mode=$1 old=$(realpath "$2") new=$(realpath "$3") seeds=${4:-1} jobs=${5:-2}
shift $(($# < 5 ? $# : 5))
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(scenarios/*/*.yaml)
  [ "$mode" != fingerprints ] && files+=(scenarios/*/found/*.yaml)
fi
report() {  # BINARY FILE SEED: what this mode compares of one run
  if [ "$mode" = fingerprints ]; then
    "$1" run "$2" --seed "$3" --quiet 2>&1 | grep -o "fingerprint [0-9a-f]*" || true
  elif [ "$mode" = reports ]; then
    "$1" run "$2" --seed "$3" 2>&1 | sed 's/ in [0-9.]* wall s//' || true
  else
    "$1" run "$2" --seed "$3" 2>&1 | sed 's/ in [0-9.]* wall s//; s/fingerprint [0-9a-f]*//' || true
  fi
}
compare_one() {  # FILE SEED
  local a b
  a=$(report "$old" "$1" "$2"); b=$(report "$new" "$1" "$2")
  if [ "$mode" = fingerprints ] && [ -z "$a" ] && [ -z "$b" ]; then echo "invalid $1 $2"  # an input error in both
  elif [ "$a" = "$b" ]; then echo "same $1 $2"
  elif [ "$mode" = fingerprints ]; then echo "DIFF $1 $2 old[$a] new[$b]"
  else echo "DIFF $1 $2"; fi
}
export -f report compare_one; export mode old new
out=$(for f in "${files[@]}"; do for s in $(seq 1 "$seeds"); do echo "$f $s"; done; done |
      xargs -P "$jobs" -L 1 bash -c 'compare_one "$0" "$1"')
grep -v "^same" <<<"$out" || true
echo "$(grep -c '^same' <<<"$out" || true) same, $(grep -c '^DIFF' <<<"$out" || true) different, $(grep -c '^invalid' <<<"$out" || true) invalid"
! grep -q "^DIFF" <<<"$out"
