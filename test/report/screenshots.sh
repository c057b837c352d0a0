#!/usr/bin/env bash
# Screenshots of summary.html and the dashboard for four catalogue scenarios (crash loop
# then success, restart limit exhausted, eviction, lock held after a failure), from the
# reports their end-to-end tests kept (ENVGATE_KEEP_REPORTS, test/e2e/lib.sh), in
# headless Chromium, light and dark. For each page and scheme it also checks what the
# browser laid out (measure_page.js, in a copy of the page): every text at least 4.5:1
# against its background (WCAG AA; 3:1 for large text) and nothing wider than the window
# or cut off, at 1280 and 600 px wide.
# Usage: screenshots.sh ENVGATE REPORTS_DIR OUT_DIR; $CI_PROJECT_DIR/artifacts/screenshots
# replaces OUT_DIR when CI_PROJECT_DIR is set. Fails if chromium is missing
# (scripts/install-deps --test installs it).
set -euo pipefail
envgate=$1
reports=$2
out=${CI_PROJECT_DIR:+$CI_PROJECT_DIR/artifacts/screenshots}
out=${out:-$3}
here=$(cd "$(dirname "$0")" && pwd)
scenarios=(crashloop restart_limit evict_preempt lock_held)
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CHROMIUM_PROFILE=$work/profile CHROMIUM_LOG=$out/chromium.log
source "$here/chromium.sh"

# measure PAGE NAME WIDTH SCHEME: the measurement of PAGE at WIDTH px in SCHEME (light
# or dark), as JSON in $work/NAME.WIDTH.SCHEME.json.
measure() {
  local page=$1 name=$2 width=$3 scheme=$4 copy dark=()
  copy=$(dirname "$page")/.measure-$(basename "$page")
  { sed 's|</body></html>||' "$page"; printf '<script>\n'; cat "$here/measure_page.js"
    printf '</script></body></html>\n'; } >"$copy"
  [[ $scheme == light ]] || dark=(--blink-settings=preferredColorScheme=0)
  browse "${dark[@]}" --window-size="$width,1000" --dump-dom "file://$copy" >"$work/dom.html"
  rm -f "$copy"
  python3 - "$work/dom.html" >"$work/$name.$width.$scheme.json" <<'EOF'
import html, re, sys
found = re.findall(r'<pre id="envgate-measure">(.*?)</pre>', open(sys.argv[1], encoding="utf-8").read(), re.S)
print(html.unescape(found[-1]) if found else "{}")
EOF
}

# shoot PAGE NAME SCHEME: NAME-SCHEME.png, 1280 px wide.
shoot() {
  local page=$1 name=$2 scheme=$3 dark=()
  [[ $scheme == light ]] || dark=(--blink-settings=preferredColorScheme=0)
  browse "${dark[@]}" --window-size=1280,1600 --screenshot="$out/$name-$scheme.png" \
    "file://$page" >/dev/null
  check_png "$out/$name-$scheme.png"
}

for s in "${scenarios[@]}"; do
  dir=$reports/$s
  [[ -s $dir/rep/summary.html ]] ||
    { echo "$dir/rep/summary.html is missing: the e2e scenario $s did not keep its reports" >&2; exit 1; }
  mkdir -p "$work/$s/locks"
  [[ ! -d $dir/locks ]] || cp -r "$dir/locks/." "$work/$s/locks/"
  printf 'version: 1\ndefaults:\n  namespace: e2e\n  lock: { store: file, path: %s }\nenvironments:\n  - name: e1\n' \
    "$work/$s/locks" >"$work/$s/envgate.yml"
  "$envgate" dashboard --config "$work/$s/envgate.yml" --runs "$dir" --out "$work/$s/site" >/dev/null
  cp "$dir/rep/summary.html" "$work/$s/summary.html"
  for page in summary dashboard; do
    file=$work/$s/summary.html
    [[ $page == summary ]] || file=$work/$s/site/index.html
    measure "$file" "$s-$page" 1280 light
    measure "$file" "$s-$page" 600 dark
    shoot "$file" "$s-$page" light
    shoot "$file" "$s-$page" dark
  done
done

python3 - "$work" "${scenarios[@]}" <<'EOF'
import json, os, sys
work, scenarios = sys.argv[1], sys.argv[2:]
failures = []
def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)
for s in scenarios:
    for page in ("summary", "dashboard"):
        for width, scheme in ((1280, "light"), (600, "dark")):
            name = f"{s} {page} at {width}px, {scheme}"
            m = json.load(open(os.path.join(work, f"{s}-{page}.{width}.{scheme}.json")))
            check(m.get("dark") == (scheme == "dark") and m.get("width") == width,
                  f"{name}: the browser laid it out so (dark={m.get('dark')}, {m.get('width')}px)")
            check(m.get("checked", 0) >= 10, f"{name}: {m.get('checked', 0)} texts measured")
            check(not m.get("low"), f"{name}: contrast at least 4.5:1 (lowest "
                  f"{m.get('min_ratio', 0):.2f}) {m.get('low', [])[:3]}")
            check(m.get("page_width") == m.get("client_width") and not m.get("overflow"),
                  f"{name}: nothing wider than the window or cut off {m.get('overflow', [])[:3]}")
dash = open(os.path.join(work, "lock_held", "site", "index.html"), encoding="utf-8").read()
check('class="lock state-failed" id="lock-e1"' in dash, "lock_held dashboard: e1 is failed, first")
check(dash.find('id="lock-e1"') < dash.find('id="lock-qa"'), "lock_held dashboard: e1 before qa")
sys.exit(1 if failures else 0)
EOF
