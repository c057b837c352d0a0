#!/usr/bin/env bash
# Opens summary.html and the dashboard in headless Chromium, checks the DOM the
# browser built (the retrying badge, commands and the unlock command as <code>
# inside <pre>, no scripts), and takes a screenshot of each for a person to look at.
# Usage: browser_check.sh SUMMARY_HTML DASHBOARD_HTML OUT_DIR. Fails if chromium is
# missing (scripts/install-deps --test installs it).
set -euo pipefail
summary=$(realpath "$1")
dashboard=$(realpath "$2")
out=$3
mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
CHROMIUM_PROFILE=$profile CHROMIUM_LOG=$out/chromium.log
source "$(dirname "$0")/chromium.sh"

for page in summary dashboard; do
  file=${!page}
  browse --dump-dom "file://$file" >"$out/$page.dom.html"
  browse --window-size=1200,1700 --screenshot="$out/$page.png" "file://$file" >/dev/null
  check_png "$out/$page.png"
done

python3 - "$out/summary.dom.html" "$out/dashboard.dom.html" <<'EOF'
import sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    """Collects every element as (tag, classes, ancestors' tags, text)."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.elements = [], []
    def handle_starttag(self, tag, attrs):
        if tag in ("meta", "br", "hr", "img", "link", "input"):
            return
        e = {"tag": tag, "cls": (dict(attrs).get("class") or "").split(), "text": "",
             "parents": [p["tag"] for p in self.stack], "href": dict(attrs).get("href")}
        self.stack.append(e)
        self.elements.append(e)
    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break
    def handle_data(self, data):
        for e in self.stack:
            e["text"] += data

def load(path):
    d = Dom()
    d.feed(open(path, encoding="utf-8").read())
    return d.elements

failures = []
def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)

def common(name, els):
    check(not any(e["tag"] in ("script", "iframe", "object", "embed") for e in els),
          f"{name}: no scripts or embedded content")
    check(all(e["href"] is None or e["href"].startswith(("https://", "http://", "#"))
              for e in els if e["tag"] == "a"), f"{name}: links are http(s) only")
    check(any(e["tag"] == "style" for e in els), f"{name}: inline style")

summary = load(sys.argv[1])
common("summary", summary)
check(any(e["tag"] == "span" and "retrying" in e["cls"] and e["text"] == "retried"
          for e in summary), "summary: a retried run has a badge of its own")
check(any(e["tag"] == "span" and "passed-after-retries" in e["cls"] for e in summary),
      "summary: the retried gate is 'passed after retries'")
check(any(e["tag"] == "code" and "pre" in e["parents"] and
          e["text"].startswith("envgate unlock ") for e in summary),
      "summary: the unlock command in <pre><code>")
check(any(e["tag"] == "code" and "pre" in e["parents"] and e["text"].startswith("kubectl ")
          for e in summary), "summary: the kubectl command in <pre><code>")

dash = load(sys.argv[2])
common("dashboard", dash)
unlock = [e for e in dash if e["tag"] == "code" and "unlock" in e["cls"]]
check(len(unlock) == 1 and "pre" in unlock[0]["parents"] and
      unlock[0]["text"].startswith("envgate unlock gprd --reason"),
      "dashboard: the unlock command in <pre><code class=unlock>")
check(any(e["tag"] == "section" and "state-failed" in e["cls"] for e in dash),
      "dashboard: a failed lock card")
check(any(e["tag"] == "span" and "failed" in e["cls"] and "locked until" in e["text"]
          for e in dash), "dashboard: the failed lock's label")
waiters = [e for e in dash if e["tag"] == "li" and "ol" in e["parents"]]
check(len(waiters) == 2, "dashboard: two waiters in an ordered list")
check(any(e["tag"] == "a" and (e["href"] or "").endswith("/jobs/98765") for e in dash),
      "dashboard: a link to the holder's job")
check(any(e["tag"] == "span" and "passed-after-retries" in e["cls"] for e in dash),
      "dashboard: a last run that passed after retries")
sys.exit(1 if failures else 0)
EOF
