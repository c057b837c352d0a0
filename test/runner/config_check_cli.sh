#!/bin/sh
# Integration test of `envgate config check`: runs the real binary on a good and a
# broken envgate.yml (copied to a scratch directory) and checks exit codes 0 and 2,
# the printed settings, the error lines, and that nothing but reading happened.
# Usage: config_check_cli.sh ENVGATE_BINARY FIXTURES_DIR
set -u
envgate=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$fixtures/config/bad.yml" "$fixtures/config/good-file-store.yml" "$work/"
cd "$work" || exit 1
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

"$envgate" config check --config good-file-store.yml >out.txt 2>err.txt
code=$?
[ "$code" -eq 0 ] || fail "good config: exit $code, want 0; stderr: $(cat err.txt)"
grep -q '^  - name: review$' out.txt || fail "good config: environment not printed"
grep -q 'wait_timeout: 10m' out.txt || fail "good config: override not printed"
grep -q 'on_failure: release' out.txt || fail "good config: default not applied"

"$envgate" config check --config bad.yml >out.txt 2>err.txt
code=$?
[ "$code" -eq 2 ] || fail "bad config: exit $code, want 2"
grep -qF 'bad.yml:6:53: defaults.lock.on_faillure: unknown key; did you mean "on_failure"?' \
    err.txt || fail "bad config: unknown key not reported: $(cat err.txt)"
grep -qF 'bad.yml:8:11: environments[0].name: "Prod_1" is not a DNS-1123 label' err.txt ||
    fail "bad config: bad name not reported: $(cat err.txt)"
grep -qF 'bad.yml:10:14: environments[1].after[0]: "gstg" is not an environment' err.txt ||
    fail "bad config: unknown after not reported: $(cat err.txt)"
[ "$(wc -l <err.txt)" -eq 3 ] || fail "bad config: want 3 error lines: $(cat err.txt)"
[ ! -s out.txt ] || fail "bad config: printed a config: $(cat out.txt)"

"$envgate" config check --config missing.yml >out.txt 2>err.txt
code=$?
[ "$code" -eq 2 ] || fail "missing config: exit $code, want 2"
grep -qF 'missing.yml: cannot read the config file' err.txt || fail "missing: $(cat err.txt)"

[ ! -e locks-must-not-appear ] || fail "config check created the lock directory"
[ ! -e .envgate ] || fail "config check created .envgate"

[ "$failures" -eq 0 ] && echo "config check: all good" && exit 0
exit 1
