#!/usr/bin/env bash
# The mutation check: would faultline notice a plausible mistake in hardened?
#
#   scripts/mutation-check.sh [SYSTEM...]        (default: every system with scripts/mutants/SYSTEM/)
#
# Each mutant is a small edit to hardened (a half-fix, a swapped comparison, a dropped version
# check, two steps reordered), kept as a diff in scripts/mutants/SYSTEM/NAME.diff whose leading
# comment lines say what it breaks:
#   # mutant: <what the edit does, and which fix or invariant it defeats>
#   # equivalent: <why no run can tell it apart>      (only for an equivalent mutant)
# The sweeps that try to kill a system's mutants are scripts/mutants/SYSTEM/sweeps.txt, one
# `faultline sweep` argument list per line (a scenario file and its flags: exploratory files with
# at most 200 seeds, ranking 100; --crash-points; --pause-points), or `explore FILE --budget N ...`
# for a `faultline explore` line (coverage-guided schedules of an exploratory file, N at most 200,
# ranking 100); no specialised scenario.
#
# In a scratch worktree of HEAD, for each mutant: apply it, rebuild faultline, run the sweeps in
# order until one fails (exit 1: a property broke, the mutant is KILLED), revert. A mutant no sweep
# kills SURVIVED: either it is equivalent (say why in its header) or the judges or the faults have a
# gap to close. Prints one line per mutant and a table per system; exits 1 when a system kills less
# than 90 % of its non-equivalent mutants. Not in CI: it rebuilds once per mutant.
#
# Environment: JOBS (default 2) for the sweeps, FL_MUTANT_DIR (default /tmp/faultline-mutants) for
# the scratch worktree, KEEP=1 keeps it.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
jobs=${JOBS:-2}
scratch=${FL_MUTANT_DIR:-/tmp/faultline-mutants}
systems=("$@")
if [ ${#systems[@]} -eq 0 ]; then
  for d in scripts/mutants/*/; do [ -d "$d" ] && systems+=("$(basename "$d")"); done
fi

rm -rf "$scratch"
git worktree prune
git worktree add --detach "$scratch" HEAD >/dev/null || { echo "cannot create $scratch"; exit 2; }
cleanup() { [ "${KEEP:-0}" = 1 ] || { git -C "$repo" worktree remove --force "$scratch" >/dev/null 2>&1; }; }
trap cleanup EXIT
(cd "$scratch" && cmake --preset default >/dev/null && cmake --build build --target faultline >/dev/null) ||
  { echo "the unmutated build failed"; exit 2; }

status=0
summary=""
for system in "${systems[@]}"; do
  dir="$repo/scripts/mutants/$system"
  [ -f "$dir/sweeps.txt" ] || { echo "no $dir/sweeps.txt"; status=2; continue; }
  killed=0 survived=0 equivalent=0 stale=0
  for diff in "$dir"/*.diff; do
    [ -e "$diff" ] || continue
    name=$(basename "$diff" .diff)
    what=$(sed -n 's/^# mutant: //p' "$diff" | head -n1)
    equiv=$(sed -n 's/^# equivalent: //p' "$diff" | head -n1)
    git -C "$scratch" checkout -q -- .
    if ! git -C "$scratch" apply "$diff" 2>/dev/null; then
      echo "[$system] $name: STALE (does not apply to HEAD)"
      stale=$((stale + 1))
      continue
    fi
    if ! (cd "$scratch" && cmake --build build --target faultline >/dev/null 2>&1); then
      echo "[$system] $name: STALE (does not build)"
      stale=$((stale + 1))
      continue
    fi
    start=$(date +%s)
    by=""
    while read -r line; do
      case "$line" in ''|'#'*) continue ;; esac
      command=sweep
      case "$line" in explore\ *) command=explore line=${line#explore } ;; esac
      # shellcheck disable=SC2086
      (cd "$scratch" && ./build/faultline $command $line --jobs "$jobs" --quiet >/dev/null 2>&1)
      rc=$?
      if [ $rc -eq 1 ]; then by="$command $line"; break; fi
      if [ $rc -ge 2 ]; then echo "[$system] $name: $command error ($rc) on: $line"; fi
    done < "$dir/sweeps.txt"
    secs=$(( $(date +%s) - start ))
    if [ -n "$by" ]; then
      killed=$((killed + 1))
      echo "[$system] $name: KILLED in ${secs} s by: $by   ($what)"
    elif [ -n "$equiv" ]; then
      equivalent=$((equivalent + 1))
      echo "[$system] $name: survived, equivalent: $equiv"
    else
      survived=$((survived + 1))
      echo "[$system] $name: SURVIVED ${secs} s of sweeps   ($what)"
    fi
  done
  git -C "$scratch" checkout -q -- .
  total=$((killed + survived))
  pct=$(( total > 0 ? 100 * killed / total : 100 ))
  summary+="| $system | $killed | $survived | $equivalent | $stale | ${pct} % |"$'\n'
  [ $pct -ge 90 ] || status=1
done
echo
echo "| system | killed | survived | equivalent | stale | killed of non-equivalent |"
echo "|---|---|---|---|---|---|"
printf "%s" "$summary"
exit $status
