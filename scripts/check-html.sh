#!/usr/bin/env bash
# Renders a trace's HTML timeline in headless Chromium and saves a screenshot.
#
#   scripts/check-html.sh TRACE.json [OUT.png]
#
# Writes OUT.html next to OUT.png (default: target/check-html/<trace>.png), takes the
# screenshot at 1400x900, and fails when Chromium is missing, the page is not written, or the
# screenshot is empty. Needs Debian's chromium (apt-get install -y chromium).
set -euo pipefail

trace=${1:?usage: scripts/check-html.sh TRACE.json [OUT.png]}
name=$(basename "$trace" .json)
png=${2:-target/check-html/$name.png}
html=${png%.png}.html
leaselab=${LEASELAB:-target/debug/leaselab}

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "check-html: chromium is not installed (apt-get install -y chromium)" >&2
    exit 3
fi
if [ ! -x "$leaselab" ]; then
    cargo build --quiet --bin leaselab
fi

mkdir -p "$(dirname "$png")"
"$leaselab" show "$trace" --html "$html" > /dev/null
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
rm -f "$png"
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --screenshot="$png" --window-size=1400,900 "file://$(realpath "$html")" > /dev/null 2>&1
if [ ! -s "$png" ]; then
    echo "check-html: no screenshot of $html" >&2
    exit 1
fi
echo "$png"
