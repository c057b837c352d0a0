#!/usr/bin/env bash
# Integration test of `envgate completion bash`: loads the script the real binary
# prints into bash and asks it what a user's TAB would offer: commands, a
# subcommand, options of the command typed (not of another one), nothing after an
# option that takes a value (bash then completes file names), options again after
# a flag. Usage: completion_cli.sh ENVGATE_BINARY
set -u
envgate=$1
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
# shellcheck disable=SC1090
source <("$envgate" completion bash) || { echo "FAIL: the script does not load"; exit 1; }
complete -p envgate | grep -q -- '-F _envgate' || fail "no completion registered for envgate"

# offers WORDS...: the candidates for the command line WORDS (the last one is being typed)
offers() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    _envgate
    echo "${COMPREPLY[*]}"
}

[ "$(offers envgate l)" = "lock lint" ] || fail "envgate l: got '$(offers envgate l)'"
[ "$(offers envgate lo)" = "lock" ] || fail "envgate lo: got '$(offers envgate lo)'"
[ "$(offers envgate ver)" = "version" ] || fail "envgate ver: got '$(offers envgate ver)'"
[ "$(offers envgate config "")" = "check --help -h" ] ||
    fail "envgate config: got '$(offers envgate config "")'"
[ "$(offers envgate run --wa)" = "--wait-timeout" ] ||
    fail "envgate run --wa: got '$(offers envgate run --wa)'"
[ "$(offers envgate explain --job-)" = "--job-deleted" ] ||
    fail "envgate explain --job-: got '$(offers envgate explain --job-)'"
[ -z "$(offers envgate status --wa)" ] || fail "status has no --wait-timeout, got one"
[ -z "$(offers envgate run --config "")" ] || fail "after --config: want files, got words"
[ "$(offers envgate run --no-wait --wa)" = "--wait-timeout" ] ||
    fail "after the flag --no-wait: got '$(offers envgate run --no-wait --wa)'"
[ "$(offers envgate run --env staging --no)" = "--no-wait" ] ||
    fail "after --env VALUE: got '$(offers envgate run --env staging --no)'"

[ "$failures" -eq 0 ] && echo "completion_cli: ok"
exit "$failures"
