#!/usr/bin/env zsh
# Integration test of `envgate completion zsh`: compinit, then the script the real
# binary prints, sourced as a user does; it must register _envgate for envgate (and
# so must the same file found in $fpath). The completion system's compadd and _files
# are replaced by recorders, `words` and CURRENT set as zsh sets them at a TAB, and
# _envgate asked what it offers: commands, options, -o values, environments from
# envgate.yml, kubeconfig contexts, file names after an option that takes a file.
# Usage: zsh -f completion_zsh.zsh ENVGATE_BINARY FIXTURES
envgate=$1
fixtures=$2
integer failures=0
fail() { print -r -- "FAIL: $*"; failures+=1 }
work=$(mktemp -d)
trap 'rm -rf $work' EXIT
cd $work || exit 1
path=(${envgate:h} $path)
cp $fixtures/config/envgate.yml envgate.yml  # environments gstg and gprd
print -l 'contexts:' '- name: gke-prod' '  context: {cluster: p}' '- name: kind-dev' \
    '  context: {cluster: d}' >kubeconfig
export KUBECONFIG=$work/kubeconfig
touch notes.txt

mkdir fpath && envgate completion zsh >fpath/_envgate
fpath=($work/fpath $fpath)
autoload -U compinit && compinit -u -D
[[ $_comps[envgate] == _envgate ]] || fail "compinit did not find _envgate in \$fpath"
unset '_comps[envgate]'
source <(envgate completion zsh) || { print "FAIL: the script does not load"; exit 1 }
[[ $_comps[envgate] == _envgate ]] || fail "sourcing did not register _envgate for envgate"

typeset -a added
integer asked_files=0
compadd() { [[ $1 == -- ]] && shift; added+=("$@") }
_files() { asked_files=1 }
# offers WORDS...: what _envgate adds for WORDS (the last one is being typed), and
# " +files" when it asks for file names.
offers() {
    words=("$@")
    CURRENT=$#
    added=()
    asked_files=0
    _envgate
    print -rn -- "${added[*]}"
    (( asked_files )) && print -rn -- " +files"
    print
}
want() {
    local expected=$1
    shift
    local got=$(offers "$@")
    [[ $got == $expected ]] || fail "$*: want '$expected', got '$got'"
}

want "lock lint" envgate l
want "check --help -h" envgate config ""
want "--wait-timeout" envgate run --wa
want "" envgate status --wa
want "text json" envgate run -o ""
want "--output=json" envgate status --output=j
want "gstg gprd" envgate run --env ""
want "gke-prod kind-dev" envgate gate --context ""
want " +files" envgate run --config no
want "check" envgate help config ch
want "fish" envgate completion f

(( failures == 0 )) && print "completion_zsh: ok"
exit $failures
