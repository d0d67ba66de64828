#!/usr/bin/env bash
# How the simulated ranking chain (seed 004 part 1) scales with the number of events: the
# scenario of bench/ranking_chain_bench.cc at each producer rate given, seed 1, and per rate the
# business events committed, wall seconds, events per wall second and peak RSS (/usr/bin/time, if
# installed) of a run without the trace, then, from the same run again with its trace, the
# aggregators' checkpoint state (the partition state each flush writes, 004:L319) as the DB
# received it: the final state of every keyed partition, and the bytes written over the run.
# Long runs: a documented measurement (docs/systems/ranking.md, "Scale"), not a CI step.
#   scripts/ranking-chain-scale.sh BINARY RATE...      e.g. build/faultline 10 30 100
# Environment: DURATION_S the events' simulated seconds (10, as the bench; the quiet tail grows
# with it, 15 s + 0.4 s per second past 10, for the backlog a long run leaves); INCREMENTAL=1 runs
# with incremental checkpoints (param incremental_checkpoints) and skips the trace pass (its
# checkpoint columns are for whole-state checkpoints, and a long run's trace is gigabytes); JUDGES=0
# runs the world without its judges (`faultline run --no-judges`: the chain alone, its speed and
# state; the events are then the producers' emits that completed ok, rank-ingest-durable's count).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 BINARY RATE...   (RATE: events per simulated second per producer, 3 producers)" >&2
  exit 2
fi
bin=$(realpath "$1"); shift
duration_s=${DURATION_S:-10} incremental=${INCREMENTAL:-0} judges=${JUDGES:-1}
[[ $duration_s =~ ^[1-9][0-9]*$ ]] || { echo "$0: DURATION_S must be a positive integer" >&2; exit 2; }
[[ $incremental =~ ^[01]$ ]] || { echo "$0: INCREMENTAL must be 0 or 1" >&2; exit 2; }
[[ $judges =~ ^[01]$ ]] || { echo "$0: JUDGES must be 0 or 1" >&2; exit 2; }
judge_flags=()
[ "$judges" = 0 ] && judge_flags=(--no-judges)
for rate in "$@"; do
  if ! [[ $rate =~ ^[0-9]+$ ]] || [ "$rate" -eq 0 ]; then
    echo "$0: RATE must be a positive integer, not '$rate'" >&2
    exit 2
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%M' -o "$work/rss")

# Sums, from the JSON-lines trace, the state parameter of each checkpoint write the DB received
# (INSERT INTO agg_checkpoint / UPDATE agg_checkpoint SET ... state = ?), unescaping JSON's
# two-character escapes so that lengths are bytes of state text. Keeps the last per partition.
checkpoint_bytes() {
  awk '
    /"kind":"send"/ && /agg_checkpoint / {
      n = split($0, parts, / \| /)
      for (i = 1; i <= n; ++i) {
        p = parts[i]
        ins = index(p, "INSERT INTO agg_checkpoint ") == 1 || index(p, "INSERT OR REPLACE INTO agg_checkpoint ") == 1
        upd = index(p, "UPDATE agg_checkpoint SET") == 1
        if (!ins && !upd) continue
        params = substr(p, index(p, " ["))
        q1 = index(params, "\x27"); rest = substr(params, q1 + 1); q2 = index(rest, "\x27")
        state = substr(rest, 1, q2 - 1); after = substr(rest, q2 + 1)
        bytes = length(state) - gsub(/\\./, "", state)
        if (ins) { match(params, /^ \[[0-9]+/); part = substr(params, 3, RLENGTH - 2) }
        else { match(after, /\x27[0-9a-f]+\x27, [0-9]+/); s = substr(after, RSTART, RLENGTH); sub(/.*, /, "", s); part = s }
        last[part] = bytes; written += bytes; ++writes
      }
    }
    END { for (k in last) final += last[k]; printf "%d %d %d\n", writes, written, final }'
}

printf '%-6s %-8s %-8s %-12s %-10s %-10s %-14s %-12s %s\n' rate events wall_s events/wall_s rss_MB \
  writes written_MB final_KB final_B/event
for rate in "$@"; do
  scenario=$work/chain-$rate.yaml
  sed -e "s/rate_per_s: 10\$/rate_per_s: $rate/" -e "s/^name: .*/name: ranking-chain-scale-$rate/" \
    -e "s/^duration_ms: .*/duration_ms: ${duration_s}000/" \
    -e "s/^quiescent_tail_ms: .*/quiescent_tail_ms: $((15000 + (duration_s > 10 ? (duration_s - 10) * 400 : 0)))/" \
    -e "s/^params: {/params: {incremental_checkpoints: \"$incremental\", /" \
    scenarios/ranking/bench-chain-hardened.yaml > "$scenario"
  "${timer[@]}" "$bin" run "$scenario" --seed 1 "${judge_flags[@]}" > "$work/out-$rate" || true  # timed, no trace
  if [ "$incremental" = 1 ]; then
    echo "0 0 0" > "$work/cp-$rate"
  else
    mkfifo "$work/trace-$rate"  # the same run again for its trace, read as it is written
    checkpoint_bytes < "$work/trace-$rate" > "$work/cp-$rate" &
    "$bin" run "$scenario" --seed 1 --quiet --trace "$work/trace-$rate" "${judge_flags[@]}" > /dev/null || true
    wait
  fi
  if [ "$judges" = 1 ]; then
    events=$(awk '/rank-ingest-durable/ { gsub(/[()]/, ""); for (i = 1; i <= NF; ++i) if ($i == "checks") print $(i - 1) }' "$work/out-$rate")
  else
    events=$(sed -n 's/.*; \([0-9]*\) client operations ok;.*/\1/p' "$work/out-$rate")
  fi
  wall_s=$(sed -n 's/.* simulated s in \([0-9.]*\) wall s.*/\1/p' "$work/out-$rate")
  # The last line: time(1) writes "Command exited with non-zero status N" first when the run
  # exits non-zero (an unexpected verdict, or always with --no-judges).
  rss_mb=$( [ -f "$work/rss" ] && awk 'END { printf "%.0f", $1 / 1024 }' "$work/rss" || echo "-")
  read -r writes written final < "$work/cp-$rate"
  awk -v r="$rate" -v e="$events" -v w="$wall_s" -v m="$rss_mb" -v n="$writes" -v b="$written" -v f="$final" \
      -v inc="$incremental" 'BEGIN {
    if (inc) printf "%-6s %-8d %-8.2f %-12.1f %-10s %-10s %-14s %-12s %s\n", r, e, w, e / w, m, "-", "-", "-", "-"
    else printf "%-6s %-8d %-8.2f %-12.1f %-10s %-10d %-14.1f %-12.1f %.0f\n", r, e, w, e / w, m, n, b / 1e6, f / 1e3, f / e }'
done
