#!/usr/bin/env bash
# The demo's reports as a person reads them: runs scripts/demo on this build, then opens
# each run's summary.html and both dashboards (production locked, then unlocked) in
# headless Chromium. Saves a screenshot of each (1280 px, light) in OUT_DIR, and checks
# the text the browser laid out (page_text.js, every <details> opened; measure_page.js)
# at 1280 and 600 px:
#  * each fact once: no sentence of 40 characters or more, and no command, twice in one
#    dashboard card or one step row of a summary (or the rest of the summary page);
#  * nothing cut mid-word: no word split across two lines but after a separator
#    ("demo-pipel|ine-3"), no "…" right after part of a word of the text it shortens;
#  * no "pod X: pod X failed";
#  * the page no wider than the window, no text under 4.5:1 contrast.
# And run 3's job log: no command printed on a line of its own is also named in the line
# above it, and none is printed on its own more than twice.
# Usage: demo_pages.sh SOURCE_DIR BUILD_DIR OUT_DIR; $CI_PROJECT_DIR/artifacts/
# screenshots/demo replaces OUT_DIR when CI_PROJECT_DIR is set. Fails if chromium is
# missing (scripts/install-deps installs it).
set -euo pipefail
src=$1
build=$2
out=${CI_PROJECT_DIR:+$CI_PROJECT_DIR/artifacts/screenshots/demo}
out=${out:-$3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CHROMIUM_PROFILE=$work/profile CHROMIUM_LOG=$out/chromium.log
source "$here/chromium.sh"

demo=$work/demo
ENVGATE_BUILD_DIR=$build ENVGATE_DEMO_SKIP_BUILD=1 ENVGATE_DEMO_DIR=$demo \
  "$src/scripts/demo" >"$out/demo.log" 2>&1 </dev/null ||
  { cat "$out/demo.log"; echo "the demo failed" >&2; exit 1; }

pages=(
  "run1-summary:$demo/reports/1-staging-clean/summary.html"
  "run2-summary:$demo/reports/2-staging-flaky-pre/summary.html"
  "run3-summary:$demo/reports/3-production-broken-post/summary.html"
  "dashboard-locked:$demo/dashboard-locked/index.html"
  "dashboard:$demo/dashboard/index.html"
)

# read_page FILE NAME WIDTH: what page_text.js and measure_page.js found in FILE at WIDTH
# px, as JSON in $work/NAME.WIDTH.{text,measure}.json.
read_page() {
  local file=$1 name=$2 width=$3 copy
  copy=$(dirname "$file")/.text-$(basename "$file")
  { sed 's|</body></html>||' "$file"; printf '<script>\n'; cat "$here/page_text.js"
    printf '</script><script>\n'; cat "$here/measure_page.js"
    printf '</script></body></html>\n'; } >"$copy"
  browse --window-size="$width,1000" --dump-dom "file://$copy" >"$work/dom.html"
  rm -f "$copy"
  python3 - "$work/dom.html" "$work/$name.$width" <<'EOF'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
for kind, id_ in (("text", "envgate-text"), ("measure", "envgate-measure")):
    found = re.findall(r'<pre id="%s">(.*?)</pre>' % id_, dom, re.S)
    open(sys.argv[2] + "." + kind + ".json", "w", encoding="utf-8").write(
        html.unescape(found[-1]) if found else "{}")
EOF
}

for entry in "${pages[@]}"; do
  name=${entry%%:*}
  file=${entry#*:}
  [[ -s $file ]] || { echo "$file is missing" >&2; exit 1; }
  read_page "$file" "$name" 1280
  read_page "$file" "$name" 600
  browse --window-size=1280,1600 --screenshot="$out/$name.png" "file://$file" >/dev/null
  check_png "$out/$name.png"
done

python3 - "$work" "$demo" "$out/demo.log" "${pages[@]%%:*}" <<'EOF'
import glob, json, os, re, sys
work, demo, log, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
failures = []
def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)

# The texts the reports shorten: every string of every run.json and lock record.
corpus = []
def strings(v):
    if isinstance(v, str):
        corpus.append(re.sub(r"\s+", " ", v))
    elif isinstance(v, dict):
        for x in v.values():
            strings(x)
    elif isinstance(v, list):
        for x in v:
            strings(x)
for path in glob.glob(os.path.join(demo, "reports", "*", "run.json")) + \
        glob.glob(os.path.join(demo, ".envgate", "locks", "*.json")):
    strings(json.load(open(path, encoding="utf-8")))

def sentences(text):
    # Sentence ends (. ; ! ?) before a space, and line ends.
    for line in text.split("\n"):
        for s in re.split(r"(?<=[.;!?])\s+", line):
            s = re.sub(r"\s+", " ", s).strip()
            if len(s) >= 40:
                yield s

def cut_mid_word(text):
    """Each "…" right after part of a word: the corpus goes on with a letter there."""
    cut = []
    for m in re.finditer(r"(\S{1,30})…", re.sub(r"\s+", " ", text)):
        start = max(0, m.start(1) - 30)
        before = re.sub(r"\s+", " ", text)[start:m.end(1)]
        if not re.search(r"\w$", before):
            continue
        for s in corpus:
            at = s.find(before)
            if at >= 0 and at + len(before) < len(s) and re.match(r"\w", s[at + len(before)]):
                cut.append(before + "…")
                break
    return cut

for name in names:
    for width in (1280, 600):
        where = f"{name} at {width}px"
        t = json.load(open(os.path.join(work, f"{name}.{width}.text.json"), encoding="utf-8"))
        m = json.load(open(os.path.join(work, f"{name}.{width}.measure.json"), encoding="utf-8"))
        check(t.get("width") == width and t.get("sections"),
              f"{where}: laid out at {t.get('width')}px, {len(t.get('sections', []))} sections read")
        for sec in t.get("sections", []):
            seen = {}
            for s in sentences(sec["text"]):
                seen[s] = seen.get(s, 0) + 1
            again = [f"{n}x {s[:100]}" for s, n in seen.items() if n > 1]
            check(not again, f"{where}, {sec['name']}: no sentence said twice {again[:3]}")
            commands = sorted({c.strip() for c in sec["codes"]
                               if re.match(r"(kubectl|envgate) ", c.strip())})
            flat = re.sub(r"\s+", " ", sec["text"])
            twice = [c for c in commands if flat.count(re.sub(r"\s+", " ", c)) > 1]
            check(not twice, f"{where}, {sec['name']}: each command once {twice[:3]}")
            cut = cut_mid_word(sec["text"])
            check(not cut, f"{where}, {sec['name']}: nothing cut mid-word {cut[:3]}")
            pods = re.findall(r"\bpod ([a-z0-9][a-z0-9.-]+)\W+pod \1\b", sec["text"])
            check(not pods, f"{where}, {sec['name']}: no 'pod X: pod X' {pods[:3]}")
        broken = t.get("broken", [])
        check(not broken, f"{where}: no word broken across lines {broken[:3]}")
        check(m.get("page_width") == m.get("client_width") and not m.get("overflow"),
              f"{where}: nothing wider than the window {m.get('overflow', [])[:3]}")
        check(not m.get("low"), f"{where}: contrast at least 4.5:1 {m.get('low', [])[:3]}")

# Run 3's job log, from its heading to the next.
text = open(log, encoding="utf-8").read()
run3 = text[text.index("==== Run 3:"):]
run3 = run3[:run3.index("\n====", 1)]
lines = run3.split("\n")
own = [(i, l.strip()) for i, l in enumerate(lines) if re.match(r"    (kubectl|envgate) ", l)]
named_above = [c for i, c in own
               if any(c in lines[j] for j in range(max(0, i - 2), i) if not lines[j].startswith("    "))]
check(not named_above, f"run 3's job log: no command also named in the line above it {named_above[:2]}")
counts = {}
for _, c in own:
    counts[c] = counts.get(c, 0) + 1
check(all(n <= 2 for n in counts.values()),
      f"run 3's job log: each command on its own line at most twice {counts}")
pods = re.findall(r"\bpod ([a-z0-9][a-z0-9.-]+)\W+pod \1\b", run3)
check(not pods, f"run 3's job log: no 'pod X: pod X' {pods[:3]}")
sys.exit(1 if failures else 0)
EOF
