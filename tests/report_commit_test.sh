#!/bin/sh
# A report names the commit the binary was built from, wherever the binary runs: run from / (no
# git checkout there), a sweep's JSON still carries exactly the commit `faultline --version`
# prints (the build stamp), not what the current directory's git says.
#   report_commit_test.sh FAULTLINE SCENARIO
set -eu
faultline=$1
scenario=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd /
version=$("$faultline" --version)
commit=${version#faultline }
# "unknown (no git commit)" when the build could not read the checkout (no git, another owner).
echo "$commit" | grep -Eq '^([0-9a-f]{40}(-dirty)?|unknown \(no git commit\))$' ||
  { echo "not a commit: $version" >&2; exit 1; }
"$faultline" sweep "$scenario" --seeds 1 --jobs 1 --quiet --json "$out/r.json" >/dev/null
grep -q "\"commit\":\"$commit\"" "$out/r.json" ||
  { echo "the report names another commit than $commit:" >&2; grep -o '"commit":"[^"]*"' "$out/r.json" >&2; exit 1; }
echo "report commit = build commit = $commit"
