#!/usr/bin/env bash
# check-reports-browser.sh: look at both reports of a gate as a reader
# would, in headless Chromium: the HTML report, and the pull request
# comment rendered as GitHub renders it (GitHub-flavoured markdown, with
# its mermaid blocks drawn by Mermaid).
#
#   scripts/check-reports-browser.sh [--require] [REPORT.html COMMENT.md [OUTDIR]]
#
# Without arguments it checks `make demo`'s outputs, demo-out/report.html
# and demo-out/comment.md, and writes to demo-out/browser/. It fails when:
#   - the HTML report did not draw every chart (data-charts="N/N"), a chart
#     failed, or the page logged a console, CSP or network error
#     (scripts/screenshot-report.sh);
#   - either report lacks the "what was measured" headline;
#   - a mermaid block of the comment is not valid Mermaid (Mermaid draws a
#     "Syntax error" picture for those: that is detected too), or fewer
#     charts were drawn than the comment has blocks;
#   - a script of the rendered comment threw.
# It saves report.png and comment.png for a person to look at, and the
# DOMs the checks read (report.dom.html, comment.dom.html).
#
# The comment is rendered with marked and Mermaid, pinned below and
# fetched once with npm into ${PERFGATE_BROWSER_CACHE:-~/.cache/perfgate-browser}
# (not in the repository, and not part of make test). Chromium is
# ${CHROMIUM:-chromium}; without it, or without npm, the check is skipped
# (exit 0) unless --require (exit 2).
set -euo pipefail

MERMAID_VERSION=11.12.2
MARKED_VERSION=16.4.1

require=false
args=()
for arg in "$@"; do
  case $arg in
    --require) require=true ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    -*) echo "$0: unknown flag $arg" >&2; exit 2 ;;
    *) args+=("$arg") ;;
  esac
done
cd "$(dirname "$0")/.."

skip() {
  echo "SKIP: $*"
  if $require; then exit 2; fi
  exit 0
}

html=${args[0]:-demo-out/report.html}
md=${args[1]:-demo-out/comment.md}
out=${args[2]:-demo-out/browser}
for f in "$html" "$md"; do
  [[ -f $f ]] || { echo "$0: $f: no such file (run make demo first, or name the report and the comment)" >&2; exit 2; }
done

chromium=${CHROMIUM:-chromium}
command -v "$chromium" >/dev/null 2>&1 || skip "no chromium (set CHROMIUM)"
chromium=$(command -v "$chromium")
export CHROMIUM=$chromium
command -v npm >/dev/null 2>&1 || skip "no npm to fetch mermaid and marked"

mkdir -p "$out"
out=$(cd "$out" && pwd)

# Mermaid and marked, pinned, fetched once.
cache=${PERFGATE_BROWSER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate-browser}/mermaid-$MERMAID_VERSION-marked-$MARKED_VERSION
if [[ ! -f $cache/node_modules/mermaid/dist/mermaid.min.js || ! -f $cache/node_modules/marked/lib/marked.umd.js ]]; then
  mkdir -p "$cache"
  echo "fetching mermaid@$MERMAID_VERSION and marked@$MARKED_VERSION into $cache" >&2
  (cd "$cache" && npm install --no-audit --no-fund --silent --no-save \
    "mermaid@$MERMAID_VERSION" "marked@$MARKED_VERSION" >&2)
fi
cp "$cache/node_modules/mermaid/dist/mermaid.min.js" "$cache/node_modules/marked/lib/marked.umd.js" "$out/"

failed=0
fail() {
  echo "FAIL $*" >&2
  failed=1
}

# dom PAGE: the page's DOM after its scripts ran.
dom() {
  local profile
  profile=$(mktemp -d)
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --window-size=1200,3000 --virtual-time-budget=5000 \
    --dump-dom "file://$1" 2>/dev/null || true
  rm -rf "$profile"
}

# The HTML report: every chart drawn, the headline, a screenshot.
cp "$html" "$out/report.html"
dom "$out/report.html" >"$out/report.dom.html"
drawn=$(grep -o 'data-charts="[0-9]*/[0-9]*"' "$out/report.dom.html" | head -n 1 | sed 's/.*="\(.*\)"/\1/' || true)
if [[ -z $drawn ]]; then
  fail "report: no data-charts on the page: its script did not run to the end"
elif [[ ${drawn%/*} != "${drawn#*/}" || ${drawn%/*} -lt 1 ]]; then
  fail "report: data-charts=$drawn, want N/N with N >= 1"
fi
grep -q '>chart failed' "$out/report.dom.html" && fail "report: $(grep -o '>chart failed[^<]*' "$out/report.dom.html" | head -n 1 | cut -c2-)"
grep -q '<p class="measured">model ' "$out/report.dom.html" || fail "report: no 'what was measured' line in its header"
scripts/screenshot-report.sh "$out/report.html" "$out/report.png" 1400,3000 >/dev/null || fail "report: screenshot (above)"
echo "report: data-charts=$drawn"

# The comment: rendered as GitHub does, its details opened.
blocks=$(grep -c '^```mermaid$' "$md" || true)
base64 -w0 "$md" >"$out/comment.b64"
{
  cat <<'HEAD'
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>perfgate comment</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 980px; margin: 16px auto; font-size: 14px; color: #1f2328; }
table { border-collapse: collapse; } td, th { border: 1px solid #d1d9e0; padding: 3px 8px; }
pre { background: #f6f8fa; padding: 8px; overflow: auto; }
.mermaid { margin: 12px 0; }
</style>
<script>
window.addEventListener("error", function (e) {
  document.documentElement.setAttribute("data-errors", (document.documentElement.getAttribute("data-errors") || "") + " " + e.message);
});
</script>
<script src="marked.umd.js"></script>
<script src="mermaid.min.js"></script>
</head><body>
<article id="comment"></article>
<script id="source" type="text/plain">
HEAD
  cat "$out/comment.b64"
  cat <<'TAIL'
</script>
<script>
(async function () {
  var root = document.documentElement;
  var bytes = Uint8Array.from(atob(document.getElementById("source").textContent.trim()), function (c) { return c.charCodeAt(0); });
  var text = new TextDecoder().decode(bytes);
  var article = document.getElementById("comment");
  article.innerHTML = marked.parse(text, { gfm: true });
  article.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var codes = article.querySelectorAll("pre > code.language-mermaid");
  var bad = [];
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  for (var i = 0; i < codes.length; i++) {
    var src = codes[i].textContent;
    try { await mermaid.parse(src); } catch (e) { bad.push((i + 1) + ": " + String(e.message || e).split("\n")[0]); }
    var div = document.createElement("div");
    div.className = "mermaid";
    div.textContent = src;
    codes[i].parentNode.replaceWith(div);
  }
  try { await mermaid.run({ querySelector: ".mermaid" }); } catch (e) { bad.push("run: " + String(e.message || e).split("\n")[0]); }
  var svgs = article.querySelectorAll(".mermaid svg").length;
  var errors = article.querySelectorAll('.mermaid svg[aria-roledescription="error"]').length;
  root.setAttribute("data-mermaid", svgs + "/" + codes.length);
  root.setAttribute("data-mermaid-errors", String(errors + bad.length));
  if (bad.length) { root.setAttribute("data-mermaid-bad", bad.join(" | ")); }
})();
</script>
</body></html>
TAIL
} >"$out/comment.html"
rm -f "$out/comment.b64"
dom "$out/comment.html" >"$out/comment.dom.html"
rendered=$(grep -o 'data-mermaid="[0-9]*/[0-9]*"' "$out/comment.dom.html" | head -n 1 | sed 's/.*="\(.*\)"/\1/' || true)
errors=$(grep -o 'data-mermaid-errors="[0-9]*"' "$out/comment.dom.html" | head -n 1 | sed 's/.*="\(.*\)"/\1/' || true)
if [[ -z $rendered ]]; then
  fail "comment: its script did not run to the end (no data-mermaid)"
else
  [[ $rendered == "$blocks/$blocks" ]] || fail "comment: mermaid drew $rendered charts, want $blocks/$blocks"
  [[ $errors == 0 ]] || fail "comment: $errors mermaid charts are not valid: $(grep -o 'data-mermaid-bad="[^"]*"' "$out/comment.dom.html" | head -n 1)"
fi
grep -q 'Syntax error' "$out/comment.dom.html" && fail "comment: Mermaid drew a 'Syntax error' chart"
grep -q 'data-errors=' "$out/comment.dom.html" && fail "comment: a script threw: $(grep -o 'data-errors="[^"]*"' "$out/comment.dom.html" | head -n 1)"
grep -q '<strong>Measured:</strong> model ' "$out/comment.dom.html" || fail "comment: no 'what was measured' line under its verdict"
scripts/screenshot-report.sh "$out/comment.html" "$out/comment.png" 1100,4200 >/dev/null || fail "comment: screenshot (above)"
echo "comment: mermaid charts drawn ${rendered:-none} (the comment has $blocks), invalid ${errors:-?}"

echo "$out/report.png"
echo "$out/comment.png"
if ((failed)); then
  echo "FAIL: the reports did not render as they should (above)" >&2
  exit 1
fi
echo "ok: both reports rendered; look at the screenshots above"
