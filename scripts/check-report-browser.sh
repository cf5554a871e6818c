#!/usr/bin/env bash
# check-report-browser.sh: render the capacity fixtures' HTML report and
# check it in headless Chromium: every chart drawn (the page's script sets
# data-charts="drawn/all" on its root element), none failed, no console,
# CSP or network error (scripts/screenshot-report.sh); then that the pull
# request comment of the same report fits GitHub's limit. Prints the
# screenshots' paths for a person to look at.
#
#   scripts/check-report-browser.sh [--install] [--require] [OUTDIR]
#
# Chromium is ${CHROMIUM:-chromium}. Without it the check is skipped (exit
# 0), unless --require (exit 2); --install installs Debian's chromium
# (apt-get, as root) first. make test needs no browser: this is a check to
# run by hand or in a job that has one. The fixtures are committed results
# built in code: go test ./internal/report -run TestCapacityFixtures -update.
set -euo pipefail

install=false
require=false
out=""
for arg in "$@"; do
  case $arg in
    --install) install=true ;;
    --require) require=true ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "$0: unknown flag $arg" >&2; exit 2 ;;
    *) out=$arg ;;
  esac
done

cd "$(dirname "$0")/.."

chromium=${CHROMIUM:-chromium}
if ! command -v "$chromium" >/dev/null 2>&1 && $install; then
  apt-get install -y chromium >&2
  chromium=${CHROMIUM:-/usr/bin/chromium}
fi
if ! command -v "$chromium" >/dev/null 2>&1; then
  echo "SKIP: no chromium (run with --install, or set CHROMIUM)"
  if $require; then exit 2; fi
  exit 0
fi
chromium=$(command -v "$chromium")
export CHROMIUM=$chromium

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${out:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

go build -o "$tmp/perfgate" ./cmd/perfgate

fixtures=internal/report/testdata/capacity
failed=0
pngs=()

# check_page PAGE NAME EXPECTED: PAGE drew at least EXPECTED charts, all it
# has, none failed, fetched and logged nothing amiss; its screenshot is
# $out/NAME.png.
check_page() {
  local page=$1 name=$2 expected=$3 dom profile
  profile=$(mktemp -d)
  dom=$("$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --virtual-time-budget=5000 --dump-dom "file://$page" 2>/dev/null) || {
    rm -rf "$profile"
    echo "FAIL $name: chromium could not load $page" >&2
    failed=1
    return
  }
  rm -rf "$profile"
  local drawn
  drawn=$(grep -o 'data-charts="[0-9]*/[0-9]*"' <<<"$dom" | head -n 1 | sed 's/.*="\(.*\)"/\1/' || true)
  if [[ -z $drawn ]]; then
    echo "FAIL $name: no data-charts on the page: its script did not run to the end" >&2
    failed=1
    return
  fi
  local n=${drawn%/*} all=${drawn#*/}
  if [[ $n != "$all" || $n -lt $expected ]]; then
    echo "FAIL $name: data-charts=$drawn, want N/N with N >= $expected" >&2
    failed=1
  fi
  # A chart that throws is replaced by its error, after its parent's tag
  # (the script's own text has the words in quotes).
  if grep -q '>chart failed' <<<"$dom"; then
    echo "FAIL $name: $(grep -o '>chart failed[^<]*' <<<"$dom" | head -n 1 | cut -c2-)" >&2
    failed=1
  fi
  if scripts/screenshot-report.sh "$page" "$out/$name.png" 1400,3000 >/dev/null; then
    pngs+=("$out/$name.png")
  else
    failed=1
  fi
  echo "$name: data-charts=$drawn (want >= $expected)"
}

# The sweep and capacity page: 2 curves per sweep and 1 chart per capacity
# scenario at least (the gated scenarios add their repetitions').
"$tmp/perfgate" report --baselines "$fixtures/base.json" --html "$out/curves.html" "$fixtures/cand.json" >"$out/curves.md"
sweeps=$(grep -o '"of": "[^"]*"' "$fixtures/cand.json" | sort -u | wc -l)
searches=$(grep -c '"capacity": {' "$fixtures/cand.json" || true)
check_page "$out/curves.html" curves $((2 * sweeps + searches))

# The comment of the same report fits GitHub's limit (also a Go test:
# TestCapacityMarkdownFitsComment).
size=$(wc -c <"$out/curves.md")
if ((size > 65536)); then
  echo "FAIL curves.md: $size bytes, more than a comment's 65536" >&2
  failed=1
else
  echo "curves.md: $size bytes (a comment holds 65536)"
fi

# The quality-cost frontier of the frontier fixtures (six configurations,
# three suites): one chart per suite and axis that has a placed point; the
# fixtures place five (a suite answered only by unpriced configurations has
# no cost chart), and the markdown of the same frontier fits a comment.
"$tmp/perfgate" report --frontier -f markdown --html "$out/frontier.html" internal/report/testdata/frontier/*.json >"$out/frontier.md"
check_page "$out/frontier.html" frontier 5
size=$(wc -c <"$out/frontier.md")
if ((size > 65536)); then
  echo "FAIL frontier.md: $size bytes, more than a comment's 65536" >&2
  failed=1
else
  echo "frontier.md: $size bytes (a comment holds 65536)"
fi

for p in ${pngs[@]+"${pngs[@]}"}; do
  echo "$p"
done
if ((failed)); then
  echo "FAIL: the report's charts did not all draw (above)" >&2
  exit 1
fi
echo "ok: every chart drawn; look at the screenshots above"
