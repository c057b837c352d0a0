#!/usr/bin/env bash
# Integration test of `envgate completion bash`: loads the script the real binary
# prints into bash and asks it what a user's TAB would offer: commands, a
# subcommand, options of the command typed (not of another one), -o values, the
# environments of envgate.yml (the default file and --config's), the contexts of the
# kubeconfig ($KUBECONFIG, --kubeconfig, ~/.kube/config), file names after an option
# that takes a file, options again after a flag, `help` and `completion` words.
# Usage: completion_cli.sh ENVGATE_BINARY FIXTURES
set -u
envgate=$1
fixtures=$2
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# The script runs the envgate of the command line, found on PATH as a user's is.
PATH=$(dirname "$envgate"):$PATH
cp "$fixtures/config/envgate.yml" envgate.yml # environments gstg and gprd
printf 'version: 1\nenvironments:\n  - {name: eu-west, namespace: a}\n  - {name: us-east, namespace: b}\n' >other.yml
printf 'contexts:\n- name: gke-prod\n  context: {cluster: p}\n- name: kind-dev\n  context: {cluster: d}\n' >kubeconfig
printf 'contexts:\n- name: home-ctx\n  context: {cluster: h}\n' >home-kubeconfig
mkdir -p home/.kube && cp home-kubeconfig home/.kube/config
export KUBECONFIG=$work/kubeconfig
touch notes.txt

# shellcheck disable=SC1090
source <(envgate completion bash) || { echo "FAIL: the script does not load"; exit 1; }
complete -p envgate | grep -q -- '-F _envgate' || fail "no completion registered for envgate"

# offers WORDS...: the candidates for the command line WORDS (the last one is being typed)
offers() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    _envgate
    echo "${COMPREPLY[*]}"
}
# want WANT WORDS...
want() {
    local expected=$1
    shift
    local got
    got=$(offers "$@")
    [ "$got" = "$expected" ] || fail "$*: want '$expected', got '$got'"
}

want "lock lint" envgate l
want "lock" envgate lo
want "version" envgate ver
want "check --help -h" envgate config ""
want "--wait-timeout" envgate run --wa
want "--job-deleted" envgate explain --job-
want "" envgate status --wa # status has no --wait-timeout
want "--wait-timeout" envgate run --no-wait --wa
want "--no-wait" envgate run --env staging --no
# -o values, from each command's own set
want "text json" envgate run -o ""
want "prometheus" envgate status --output p
want "acquire" envgate lock ac
# environment names: envgate.yml here, or the file --config names; qa for the locks
want "gstg gprd" envgate run --env ""
want "gprd" envgate gate --env gp
want "eu-west us-east" envgate run --config other.yml --env ""
want "gstg gprd" envgate unlock g
want "qa" envgate status q
want "gstg" envgate lock acquire gs
# kubeconfig contexts: $KUBECONFIG, else --kubeconfig's file, else ~/.kube/config
want "gke-prod kind-dev" envgate run --context ""
want "kind-dev" envgate status --context k
want "home-ctx" envgate lock --kubeconfig home-kubeconfig --context ""
got=$(KUBECONFIG='' HOME=$work/home offers envgate run --context "")
[ "$got" = "home-ctx" ] || fail "~/.kube/config: got '$got'"
# file names after an option that takes a file
want "notes.txt" envgate run --config no
want "notes.txt" envgate lint no
# help and completion
want "config" envgate help con
want "check" envgate help config ch
want "zsh" envgate completion z

[ "$failures" -eq 0 ] && echo "completion_cli (bash): ok"
exit "$failures"
