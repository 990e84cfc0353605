#!/usr/bin/env bash
# Regenerates the canonical traces listed in traces/canonical.txt with the leaselab CLI,
# after a deliberate change of the simulation's behaviour. Old traces in each directory are
# removed first; review the diff before committing.
#
#   scripts/regenerate-traces.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin leaselab
leaselab=target/debug/leaselab

grep -v '^\s*\(#\|$\)' traces/canonical.txt | awk '{print $1}' | sort -u | while read -r dir; do
    rm -f "traces/$dir"/*.json
done
grep -v '^\s*\(#\|$\)' traces/canonical.txt | while read -r dir command; do
    echo "== traces/$dir: leaselab $command"
    # A BROKEN run exits 1; that is the point here.
    # shellcheck disable=SC2086
    "$leaselab" $command --save-traces "traces/$dir" > /dev/null || [ $? -eq 1 ]
done
# `run --shrink` also saves the unshrunk run next to the shrunk one: keep only the latter.
for file in traces/shrunk/*.json; do
    grep -q '"shrunk_from"' "$file" || rm -f "$file"
done
ls traces/*/
