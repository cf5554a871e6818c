#!/usr/bin/env bash
# screenshot-report.sh: render an HTML report (perfgate's --html output) to a
# PNG with headless Chromium, to look at it as a person would: are the charts
# drawn, labelled and apart, are the tables readable.
#
#   scripts/screenshot-report.sh REPORT.html OUT.png [WIDTH,HEIGHT]
#
# The window is 1400×3000 unless given; the page gets five seconds of virtual
# time for its scripts. Chromium runs with networking features off and a
# throwaway profile; the report's own Content-Security-Policy forbids any
# fetch, and Chromium's log (REPORT's name with .log, beside OUT.png) is
# searched for a refused or attempted load, which fails the script.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTH,HEIGHT]" >&2
  exit 2
fi
in=$1
out=$2
size=${3:-1400,3000}
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [[ -z $chromium ]]; then
  echo "$0: no chromium found (set CHROMIUM)" >&2
  exit 2
fi
if [[ ! -f $in ]]; then
  echo "$0: $in: no such file" >&2
  exit 2
fi
abs=$(cd "$(dirname "$in")" && pwd)/$(basename "$in")
outabs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
log="${outabs%.png}.log"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

rm -f "$outabs"
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --disable-default-apps --disable-extensions --metrics-recording-only \
  --user-data-dir="$profile" --window-size="$size" --hide-scrollbars \
  --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
  --screenshot="$outabs" "file://$abs" >"$log" 2>&1 || {
  echo "$0: chromium failed; its log:" >&2
  tail -n 20 "$log" >&2
  exit 1
}
if [[ ! -s $outabs ]]; then
  echo "$0: no screenshot written; chromium's log:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
# The page's console errors and CSP refusals show in the log.
if grep -E "CONSOLE|Content Security Policy|Refused to|net::ERR_|Uncaught" "$log" >&2; then
  echo "$0: the page tried to load something or its script failed (above; full log: $log)" >&2
  exit 1
fi
echo "$outabs"
