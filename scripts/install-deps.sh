#!/usr/bin/env bash
# Installs the Debian packages faultline needs (only those missing). Idempotent; needs root.
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config clang-14 libclang-rt-14-dev
  clang-format-14  # scripts/check-format.sh: the format CI checks
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev libabsl-dev
  libsqlite3-dev libyaml-cpp-dev libhiredis-dev redis-server redis-tools
  liblua5.1-0-dev  # the Lua 5.1 Redis 7.0 embeds: the simulated Redis runs scripts with it
  lua-cjson-dev lua-bitop-dev  # the cjson and bit libraries Redis 7.0 loads into it
  libmsgpack-dev  # msgpack-c: the MessagePack bytes of its cmsgpack library (sim/redis/lua_cmsgpack.h)
  nlohmann-json3-dev  # JSON with exact 64-bit integers
  libcli11-dev  # subcommand flags (header-only)
  libmimalloc-dev  # the allocator of every executable (CMakeLists.txt)
  chromium  # the HTML report test renders report.html headless
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
# clang-14 provides clang-14/clang++-14; make the unversioned names exist for the presets.
command -v clang++ >/dev/null || ln -sf "$(command -v clang++-14)" /usr/local/bin/clang++
command -v clang >/dev/null || ln -sf "$(command -v clang-14)" /usr/local/bin/clang
