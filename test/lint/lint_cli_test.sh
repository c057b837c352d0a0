#!/bin/sh
# Integration test of `envgate lint`: the real binary on the labelled corpus, stdin,
# bad input and envgate.yml's lint: section. Checks exit codes 0/1/2, the text and
# JSON output, the Code Quality report against GitLab's documented fields (ajv), and
# that fingerprints stay put when unrelated lines move.
# Usage: lint_cli_test.sh ENVGATE_BINARY FIXTURES_DIR SOURCE_DIR
set -u
envgate=$1
fixtures=$2/lint
src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
validate() { node "$src/test/lint/validate_codequality.js" "$@"; }

# The corpus: findings at error and above, so exit 1; every output readable.
# Run from the project root, as CI does, so report paths are relative to the repository.
(cd "$src" && "$envgate" lint test/fixtures/lint --codequality "$work/cq.json") >out.txt 2>err.txt
code=$?
[ "$code" -eq 1 ] || fail "corpus: exit $code, want 1; stderr: $(cat err.txt)"
grep -q "^test/fixtures/lint/pod-init-migrate.yaml:12:17: error migrate-in-init-container: Pod/app: " out.txt ||
    fail "corpus: Pod finding missing: $(grep pod-init out.txt)"
grep -q '^  fix: Run the migration once' out.txt || fail "corpus: no fix line"
# As many findings as the corpus has labels (test/fixtures/lint/README.md).
labels=$(python3 -c '
import glob, re, sys
n = 0
for f in glob.glob(sys.argv[1] + "/*"):
    for line in open(f):
        m = re.search(r"# expect: ([a-z0-9, -]+)$", line.rstrip("\n"))
        if m:
            n += len(m.group(1).split(","))
        elif f.endswith(".expect") and line.strip() and not line.startswith("#"):
            n += 1
print(n)' "$fixtures")
grep -q "^envgate lint: $labels findings" out.txt || fail "corpus: want $labels findings: $(tail -1 out.txt)"
validate cq.json >v.txt || fail "corpus: Code Quality report invalid: $(cat v.txt)"
"$envgate" lint "$fixtures" --output json --fail-on never >out.json || fail "json: exit $?"
python3 -c 'import json,sys; d=json.load(open("out.json")); sys.exit(0 if d["summary"]["findings"]==int(sys.argv[1]) else 1)' "$labels" ||
    fail "json: not $labels findings"

# Absolute paths inside the working directory are reported relative to it.
(cd "$src" && "$envgate" lint "$fixtures/pod-init-migrate.yaml") | grep -q '^test/fixtures/lint/pod-init-migrate.yaml:12' ||
    fail "absolute path not made relative"

# Clean input exits 0; --fail-on moves the bar.
"$envgate" lint "$fixtures/clean-envgate-gate-layout.yaml" >out.txt || fail "clean: exit $?"
grep -q '^envgate lint: no findings in 2 workloads' out.txt || fail "clean: $(cat out.txt)"
"$envgate" lint "$fixtures/laravel-job-ttl.yaml" >/dev/null || fail "warnings only: exit $?, want 0"
"$envgate" lint --fail-on warning "$fixtures/laravel-job-ttl.yaml" >/dev/null
[ $? -eq 1 ] || fail "--fail-on warning: want exit 1"

# Standard input, named for the report with --stdin-name.
"$envgate" lint - --stdin-name rendered.yaml --codequality stdin.json \
    <"$fixtures/daemonset-migrate.yaml" >out.txt
[ $? -eq 1 ] || fail "stdin: want exit 1"
grep -q '^rendered.yaml:21:33: critical migrate-in-start-command' out.txt || fail "stdin: $(cat out.txt)"
validate stdin.json >v.txt || fail "stdin: report invalid: $(cat v.txt)"

# Fingerprints: unrelated documents and lines above leave them unchanged.
cp "$fixtures/stretched-startup-probe.yaml" a.yaml
{ printf 'apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n---\n# moved\n\n'; cat a.yaml; } >b.yaml
"$envgate" lint a.yaml --codequality a.json >/dev/null
cp b.yaml a.yaml
"$envgate" lint a.yaml --codequality b.json >/dev/null
fp() { python3 -c 'import json,sys; print(sorted(i["fingerprint"] for i in json.load(open(sys.argv[1]))))' "$1"; }
ln() { python3 -c 'import json,sys; print(sorted(i["location"]["lines"]["begin"] for i in json.load(open(sys.argv[1]))))' "$1"; }
[ "$(fp a.json)" = "$(fp b.json)" ] || fail "fingerprints moved: $(fp a.json) vs $(fp b.json)"
[ "$(ln a.json)" != "$(ln b.json)" ] || fail "lines did not move: the test proves nothing"

# Unreadable input: exit 2, named, with the line; other inputs still linted.
printf 'kind: Deployment\nspec:\n  replicas: [1\n' >broken.yaml
"$envgate" lint broken.yaml "$fixtures/daemonset-migrate.yaml" >out.txt 2>err.txt
[ $? -eq 2 ] || fail "broken: want exit 2"
grep -q '^envgate lint: broken.yaml:[0-9]*:[0-9]*: not valid YAML or JSON' err.txt || fail "broken: $(cat err.txt)"
grep -q 'telemetry-agent' out.txt || fail "broken: the other input was not linted"
"$envgate" lint missing.yaml >/dev/null 2>err.txt
[ $? -eq 2 ] || fail "missing: want exit 2"
grep -q 'missing.yaml: cannot read' err.txt || fail "missing: $(cat err.txt)"
python3 -c '
lines = ["a0: &a0 [" + ",".join(["\"lol\""] * 10) + "]"]
for i in range(1, 10):
    lines.append("a%d: &a%d [%s]" % (i, i, ",".join(["*a%d" % (i - 1)] * 10)))
open("bomb.yaml", "w").write("\n".join(lines) + "\n")'
"$envgate" lint bomb.yaml >/dev/null 2>err.txt
[ $? -eq 2 ] || fail "bomb: want exit 2"
grep -q 'bomb.yaml:[0-9]*:[0-9]*: more than 1048576 nodes once aliases are expanded' err.txt || fail "bomb: $(cat err.txt)"
head -c 100000 /dev/urandom >garbage.yaml
"$envgate" lint garbage.yaml >/dev/null 2>err.txt
[ $? -eq 2 ] || fail "garbage: want exit 2"
grep -q '^envgate lint: garbage.yaml' err.txt || fail "garbage: $(cat err.txt)"
python3 -c 'import sys; sys.stdout.write("items:\n" + "  - " + "x" * 70 + "\n" * 1 * 0 + ("  - " + "y" * 60 + "\n") * 1700000)' >big.yaml
"$envgate" lint big.yaml >/dev/null 2>err.txt
[ $? -eq 2 ] || fail "100 MB: want exit 2"
grep -q 'big.yaml: larger than 64 MiB' err.txt || fail "100 MB: $(cat err.txt)"
"$envgate" lint - <big.yaml >/dev/null 2>err.txt
[ $? -eq 2 ] || fail "100 MB on stdin: want exit 2"
grep -q '^envgate lint: -: larger than 64 MiB' err.txt || fail "100 MB on stdin: $(cat err.txt)"

# envgate.yml lint: section: disabled checks and thresholds apply; errors name the line.
# config LINES...: an envgate.yml whose lint: section is LINES.
config() {
    printf 'version: 1\nenvironments:\n  - name: prod\n    namespace: prod\nlint:\n' >envgate.yml
    printf '%s\n' "$@" >>envgate.yml
}
config '  disable: [migrate-in-start-command]' '  thresholds:' '    startup: 30m'
"$envgate" lint "$fixtures/stretched-startup-probe.yaml" >out.txt || fail "config: exit $?, want 0: $(cat out.txt)"
grep -q 'no findings' out.txt || fail "config: not applied: $(cat out.txt)"
mkdir -p k8s/generated
cp "$fixtures/daemonset-migrate.yaml" k8s/generated/
cp "$fixtures/pod-init-migrate.yaml" k8s/
config '  exclude_paths: ["k8s/generated/**/*"]'
"$envgate" lint k8s >out.txt
[ $? -eq 1 ] || fail "exclude_paths: want exit 1 (the Pod)"
grep -q '^k8s/pod-init-migrate.yaml:12:17: error migrate-in-init-container' out.txt || fail "exclude_paths: $(cat out.txt)"
! grep -q 'daemonset' out.txt || fail "exclude_paths: excluded file linted: $(cat out.txt)"
config '  disable: [migrate-in-start-comand]' '  thresholds:' '    startup: soon'
"$envgate" lint "$fixtures/stretched-startup-probe.yaml" >/dev/null 2>err.txt
[ $? -eq 2 ] || fail "bad config: want exit 2"
grep -qF 'envgate.yml:6:13: lint.disable[0]: "migrate-in-start-comand" is not a check; did you mean "migrate-in-start-command"?' err.txt ||
    fail "bad config: disable: $(cat err.txt)"
grep -qF 'envgate.yml:8:14: lint.thresholds.startup: "soon" is not a duration' err.txt ||
    fail "bad config: threshold: $(cat err.txt)"

# Usage errors exit 2.
"$envgate" lint >/dev/null 2>&1
[ $? -eq 2 ] || fail "no path: want exit 2"
"$envgate" lint --fail-on sometimes "$fixtures" >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad --fail-on: want exit 2"

[ "$failures" -eq 0 ] && echo "lint_cli: all passed"
exit "$failures"
