#!/usr/bin/env bash
# Re-records `expect.fingerprint` in saved counterexamples (scenarios/*/found/*.yaml) after an
# intentional change to what a trace contains. A file is updated only when its expected property
# still fails with its seed (the failure reproduces); otherwise it is listed and left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
F=${FAULTLINE:-./build/faultline}
status=0
for file in "${@:-scenarios/*/found/*.yaml}"; do
  for f in $file; do
    grep -q "fingerprint:" "$f" || continue
    out=$("$F" replay "$f" || true)
    fp=$(sed -n 's/.*fingerprint \([0-9a-f]\{16\}\).*/\1/p' <<<"$out" | head -n1)
    if grep -q "^REPRODUCED" <<<"$out"; then continue; fi
    # Re-record only when the verdicts match and just the fingerprint moved.
    tmp=$(mktemp)
    sed "s/fingerprint: 0x[0-9a-f]\{16\}/fingerprint: 0x$fp/" "$f" > "$tmp"
    if "$F" replay "$tmp" | grep -q "^REPRODUCED"; then
      mv "$tmp" "$f"
      echo "re-recorded $f -> 0x$fp"
    else
      rm -f "$tmp"
      echo "NOT REPRODUCED (verdicts differ): $f"
      status=1
    fi
  done
done
exit $status
