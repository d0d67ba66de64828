#!/usr/bin/env bash
# Long sweeps in resumable chunks (the 20,000-seed sweeps of issues 12 and 13).
#
# Runs seeds FIRST..LAST of FILE as `faultline sweep` chunks of CHUNK seeds, each writing
# OUT_DIR/NAME-S.json and OUT_DIR/NAME-S.log (NAME = the file's name without .yaml, S = the
# chunk's first seed). A sweep writes its JSON only when it ends, so a chunk whose JSON is there
# is done and is skipped: after a reboot the same command goes on where it stopped. Then it merges
# every chunk of the range into OUT_DIR/NAME-FIRST-LAST/ (`faultline report --merge`: one run
# with every seed, the commits it came from in the title) and prints one line per chunk.
#
#   scripts/sweep-chunks.sh FILE FIRST LAST OUT_DIR
#
# Paths are the caller's (relative to the current directory). Resume with the same CHUNK: a
# chunk is known by its first seed.
# Environment: FAULTLINE the binary (default build/faultline), CHUNK seeds per chunk (2500),
# JOBS worker processes (2), TIMEOUT_S a seed's wall-second limit (900: high, so that neighbours
# on a shared machine cannot time a seed out), NICE (10).
# Exit: 0 every chunk ran as its scenario expects, 1 a chunk found a failure (its log names the
# seeds and replay commands), 2 a usage error, a chunk that could not run, or chunks that do not
# merge into one run (the scenario file changed between them).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ne 4 ] || ! [[ "$2" =~ ^[0-9]+$ && "$3" =~ ^[0-9]+$ ]] || [ "$2" -lt 1 ] || [ "$3" -lt "$2" ]; then
  echo "usage: $0 FILE FIRST LAST OUT_DIR   (1 <= FIRST <= LAST)" >&2
  exit 2
fi
file=$1 first=$2 last=$3 out_dir=$4
bin=$(realpath "${FAULTLINE:-$repo/build/faultline}")
chunk=${CHUNK:-2500} jobs=${JOBS:-2} timeout_s=${TIMEOUT_S:-900} niceness=${NICE:-10}
for v in "$chunk" "$jobs" "$timeout_s"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "$0: CHUNK, JOBS and TIMEOUT_S must be positive integers" >&2; exit 2; }
done
[ -f "$file" ] || { echo "$0: no such scenario file: $file" >&2; exit 2; }
[ -x "$bin" ] || { echo "$0: no faultline binary at $bin (set FAULTLINE)" >&2; exit 2; }
name=$(basename "$file" .yaml)
mkdir -p "$out_dir"

status=0
jsons=()
for ((s = first; s <= last; s += chunk)); do
  n=$((last - s + 1 < chunk ? last - s + 1 : chunk))
  json=$out_dir/$name-$s.json log=$out_dir/$name-$s.log
  if [ ! -f "$json" ]; then
    nice -n "$niceness" "$bin" sweep "$file" --first-seed "$s" --seeds "$n" --jobs "$jobs" \
      --timeout-s "$timeout_s" --json "$json" > "$log" 2>&1
    rc=$?
    if [ $rc -ge 2 ] || [ ! -f "$json" ]; then
      echo "$0: the chunk of seeds $s..$((s + n - 1)) did not run (exit $rc): see $log" >&2
      exit 2
    fi
  fi
  jsons+=("$json")
  commit=$(grep -o '"commit": *"[0-9a-f]*' "$json" | head -1 | grep -o '[0-9a-f]*$')
  line=$(grep "^sweep " "$log" 2>/dev/null || echo "sweep (no log)")
  echo "seeds $s-$((s + n - 1)) commit ${commit:0:7}: ${line#*: }"
  grep -q '"as_expected": *true' "$json" || status=1
done

merged=$out_dir/$name-$first-$last
# One scenario config across the chunks merges into one run; more means the file changed between
# chunks, and the range is not one sweep of one scenario.
# `report --merge` exits 1 when a merged run was not as expected (the chunks' failing seeds, which
# `status` already holds): the merge itself failed only on 2 or worse.
summary=$("$bin" report --merge "${jsons[@]}" --out "$merged")
merge_rc=$?
if [ "$merge_rc" -ge 2 ]; then
  echo "$0: merging the chunks failed: $summary" >&2
  status=2
elif ! grep -q "(1 runs)" <<<"$summary"; then
  echo "$0: the chunks do not merge into one run (the scenario changed between chunks?): $summary" >&2
  status=2
fi
echo "merged report: $merged/report.md"
exit $status
