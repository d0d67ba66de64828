#!/bin/sh
# The toy system declares itself (docs/adding-a-system.md): no file outside its own folders names
# it (docs excepted: they describe it), and it appears in list, run, sweep, report and redis-serve.
#   sh harness/systems/toy/toy_system_test.sh FAULTLINE_BINARY SOURCE_DIR
set -eu
bin=$1
src=$2
tmp=$(mktemp -d)
serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
cd "$src"

# 1. Its own folders: every other file that names the toy is documentation.
own='^(impl/toy|model/toy|properties/toy|harness/systems/toy|scenarios/toy)/|^docs/|^CHANGELOG\.md$'
if [ -d .git ] || [ -f .git ]; then
  files=$(git ls-files)
else
  files=$(find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||')
fi
outside=$(printf '%s\n' "$files" | grep -Ev "$own" | while read -r f; do
  if grep -qwi toy "$f" 2>/dev/null; then echo "$f"; fi
done)
[ -z "$outside" ] || fail "files outside the toy's folders name it: $outside"
printf '%s\n' "$files" | grep -q '^harness/systems/toy/CMakeLists.txt$' || fail "the toy's declaration is missing"

# 2. list: the system, its properties, its rows.
"$bin" list systems | grep -qw toy || fail "list systems does not show toy"
"$bin" list rows toy | grep -q 'TOY-1' || fail "list rows toy does not show TOY-1"

# 3. sweep: hardened passes, spec fails as its file expects (exit 0 means "as expected").
"$bin" sweep scenarios/toy/visits.yaml --seeds 20 --jobs 2 > "$tmp/sweep.txt" || fail "sweep of visits.yaml: $(tail -5 "$tmp/sweep.txt")"
"$bin" sweep scenarios/toy/visits-spec.yaml --seeds 20 --jobs 2 > "$tmp/sweep-spec.txt" ||
  fail "sweep of visits-spec.yaml: $(tail -5 "$tmp/sweep-spec.txt")"
grep -q 'FAIL' "$tmp/sweep-spec.txt" || fail "the spec sweep found no failure"

# 4. report: the toy's matrix, its row judged with evidence.
"$bin" report --matrix toy --out "$tmp/report" --seeds 3 --jobs 2 --no-shrink > "$tmp/report.txt" ||
  fail "report --matrix toy: $(tail -5 "$tmp/report.txt")"
grep -q 'TOY-1' "$tmp/report/report.md" || fail "report.md has no TOY-1 row"
grep -Eq '\| *TOY-1 *\|.*PASS' "$tmp/report/report.md" || fail "TOY-1 is not PASS for hardened in report.md"

# 5. redis-serve: the toy's scripts preloaded, callable by their SHA1 from redis-cli.
"$bin" redis-serve --socket "$tmp/redis.sock" --scripts toy > "$tmp/serve.txt" 2>&1 &
serve_pid=$!
i=0
while [ ! -S "$tmp/redis.sock" ] && [ $i -lt 100 ]; do
  sleep 0.1
  i=$((i + 1))
done
[ -S "$tmp/redis.sock" ] || fail "redis-serve did not listen: $(cat "$tmp/serve.txt")"
sha=$(awk '/faultline redis-serve: script / {print $5; exit}' "$tmp/serve.txt")
[ -n "$sha" ] || fail "redis-serve --scripts toy preloaded no script: $(cat "$tmp/serve.txt")"
[ "$(redis-cli -s "$tmp/redis.sock" SCRIPT EXISTS "$sha")" = 1 ] || fail "SCRIPT EXISTS $sha is not 1"
echo "toy: confined to its folders; in list, sweep, report and redis-serve"
