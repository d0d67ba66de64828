#!/usr/bin/env bash
# Redis's own test suite against the simulated Redis: how much of Redis 7.0 does it behave like?
#
#   scripts/redis-conformance.sh [UNIT...]      (default: the units below)
#
# Gets the tests/ of the installed redis-server's Debian source package (`apt-get source` of the
# same version, with deb-src entries made from the machine's own Debian archive; no other
# download), then runs each unit in external-server mode (`tests/test_helper.tcl --host --port
# --single UNIT`, tags needs:debug, needs:repl and needs:save left out: they need a DEBUG command,
# a replica or a saving server) twice: against a real redis-server the script starts, and against
# `faultline redis-serve`; it stops both, always. Prints one row per unit: unit | real ok |
# simulated ok | simulated failures by cause (the first words of each [err] line; "exception" is
# the error that stopped the unit; "timeout" a unit that ran past UNIT_TIMEOUT_S).
#
# Not in CI (several minutes). Environment: FAULTLINE (default build/faultline), FL_REDIS_SRC
# (default build/redis-src: where the source package is unpacked, kept between runs),
# UNIT_TIMEOUT_S (default 300), KEEP_LOGS=1 keeps the per-unit logs (printed at the end).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=$(realpath "${FAULTLINE:-build/faultline}")
src_root=${FL_REDIS_SRC:-$repo/build/redis-src}
unit_timeout_s=${UNIT_TIMEOUT_S:-300}
units=("$@")
if [ ${#units[@]} -eq 0 ]; then
  units=(unit/keyspace unit/type/string unit/type/incr unit/expire unit/type/hash unit/type/set unit/type/zset
         unit/type/list unit/type/stream-cgroups unit/pubsub unit/multi unit/scripting unit/info-command)
fi
for tool in redis-server tclsh apt-get dpkg-source; do
  command -v "$tool" > /dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "$0: no faultline binary at $bin (set FAULTLINE)" >&2; exit 2; }

# The suite of the installed server's version, unpacked once.
version=$(dpkg-query -W -f='${Version}' redis-server 2>/dev/null) || { echo "$0: redis-server is not a Debian package here" >&2; exit 2; }
tests_dir=$src_root/src
if [ ! -f "$tests_dir/tests/test_helper.tcl" ]; then
  apt_dir=$src_root/apt
  mkdir -p "$apt_dir/lists/partial"
  # deb-src twins of the machine's deb entries (deb822 .sources files and one-line lists).
  {
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] && awk '/^URIs:/{u=$2} /^Suites:/{$1=""; s=$0} /^$/{if(u&&s){n=split(s,a," "); for(i=1;i<=n;i++) print "deb-src " u " " a[i] " main"}; u="";s=""} END{if(u&&s){n=split(s,a," "); for(i=1;i<=n;i++) print "deb-src " u " " a[i] " main"}}' "$f"
    done
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}/deb-src /p'
  } | sort -u > "$apt_dir/sources.list"
  apt_opts=(-q -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$apt_dir/lists")
  apt-get "${apt_opts[@]}" update > "$apt_dir/update.log" 2>&1 || { echo "$0: apt-get update failed: $apt_dir/update.log" >&2; exit 2; }
  (cd "$src_root" && apt-get "${apt_opts[@]}" source --download-only "redis=$version" > "$apt_dir/source.log" 2>&1) ||
    { echo "$0: apt-get source redis=$version failed: $apt_dir/source.log" >&2; exit 2; }
  rm -rf "$tests_dir"
  (cd "$src_root" && dpkg-source -x ./*.dsc src > /dev/null) || { echo "$0: dpkg-source -x failed in $src_root" >&2; exit 2; }
fi

logs=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  wait 2> /dev/null
  [ "${KEEP_LOGS:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ping_port() { timeout 5 redis-cli -p "$1" ping > /dev/null 2>&1; }
wait_port() { for _ in $(seq 100); do ping_port "$1" && return 0; sleep 0.1; done; return 1; }

real_port=$(free_port)
sim_port=$(free_port)
# start_servers: a fresh redis-server and redis-serve for each unit, so that a unit an exception
# stopped before it restored a setting (maxmemory, ...) changes nothing for the next one.
start_servers() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
  redis-server --port "$real_port" --save "" --appendonly no --dir "$logs" >> "$logs/real-server.log" 2>&1 &
  pids=($!)
  "$bin" redis-serve --port "$sim_port" >> "$logs/sim-server.log" 2>&1 &
  pids+=($!)
  wait_port "$real_port" || { echo "$0: redis-server did not start" >&2; exit 2; }
  wait_port "$sim_port" || { echo "$0: faultline redis-serve did not start" >&2; exit 2; }
}

# run_unit PORT UNIT LOG: the unit's output without colours; 124 when it timed out.
run_unit() {
  timeout 10 redis-cli -p "$1" flushall > /dev/null 2>&1
  (cd "$tests_dir" && timeout "$unit_timeout_s" tclsh tests/test_helper.tcl --host 127.0.0.1 --port "$1" --single "$2" \
    --tags -needs:debug --tags -needs:repl --tags -needs:save --clients 1) 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$3"
  return "${PIPESTATUS[0]}"
}

echo "| unit | real ok | simulated ok | simulated failures by cause |"
echo "|---|---|---|---|"
total_real=0 total_sim=0
for unit in "${units[@]}"; do
  name=${unit//\//_}
  start_servers
  run_unit "$real_port" "$unit" "$logs/$name.real"
  run_unit "$sim_port" "$unit" "$logs/$name.sim"
  sim_rc=$?
  real_ok=$(grep -ac '^\[ok\]' "$logs/$name.real")
  sim_ok=$(grep -ac '^\[ok\]' "$logs/$name.sim")
  # Causes: [err] tests, the commands the simulator does not know (top 5), and what stopped the unit.
  errs=$(grep -ac '^\[err\]' "$logs/$name.sim")
  unknown=$(grep -ao "unknown command '[^']*'" "$logs/$name.sim" | sort | uniq -c | sort -rn | head -5 |
            awk '{c=$1; $1=""; printf "%s%s x%d", (NR>1?", ":""), substr($0,2), c}')
  causes="$errs err"
  [ -n "$unknown" ] && causes="$causes; $unknown"
  grep -aq '^\[exception\]' "$logs/$name.sim" && causes="$causes; stopped by an exception"
  [ "$sim_rc" = 124 ] && causes="$causes; timeout"
  echo "| $unit | $real_ok | $sim_ok | $causes |"
  total_real=$((total_real + real_ok)) total_sim=$((total_sim + sim_ok))
  ping_port "$sim_port" || echo "| | | | ($unit left the simulated server unresponsive) |"
done
echo "| all | $total_real | $total_sim | |"
