#!/usr/bin/env bash
# validate-ci checks the inputs of `include:` as GitLab does, and the corpus says where
# gitlab-ci-local (scripts/node, the pinned version) agrees. Each file of
# validate-inputs/bad/ is a pipeline GitLab refuses; its first lines say what:
#   # GitLab: <the message validate-ci must print (GitLab's own)>
#   # gitlab-ci-local: rejects: <what it prints> | accepts: <why; GitLab's reference>
#   # gitlab-ci-local preview: <text its --preview must show> (optional)
# Each file of validate-inputs/good/ is one GitLab takes (`# GitLab: valid`), with the
# same gitlab-ci-local line. Every case runs in one project made for the test (the
# components of ci-templates/templates/ and the corpus' templates/ in templates/, a
# git remote acme/components), where `$CI_SERVER_FQDN/$CI_PROJECT_PATH/NAME@$CI_COMMIT_SHA`
# is a component of the project itself for both tools.
# Usage: validate_inputs_test.sh SOURCE_DIR
set -euo pipefail
project=$1
corpus=$(cd "$(dirname "$0")" && pwd)/validate-inputs
gcl=$project/scripts/node/node_modules/.bin/gitlab-ci-local
[[ -x $gcl ]] || { echo "missing $gcl: run scripts/install-deps" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/envgate-validate-inputs.XXXXXX")
trap 'rm -rf "$T"' EXIT

repo=$T/repo
mkdir -p "$repo/templates"
cp "$project"/ci-templates/templates/*.yml "$corpus"/templates/*.yml "$repo/templates/"
git -C "$repo" init -q
git -C "$repo" remote add origin git@gitlab.example.com:acme/components.git
git -C "$repo" add templates
git -C "$repo" -c user.name=test -c user.email=test@localhost commit -qm templates

failures=()
bad=0
# expect CASE KEY: the text after "# KEY: " on the case's own header line.
expect() { sed -n "s/^# $2: //p" "$1" | head -1; }

run_case() {
    local case=$1 kind=$2 name
    name=$kind/$(basename "$case")
    cp "$case" "$repo/.gitlab-ci.yml"
    local want_gitlab want_gcl rc=0
    want_gitlab=$(expect "$case" GitLab)
    want_gcl=$(expect "$case" gitlab-ci-local)
    [[ -n $want_gitlab && -n $want_gcl ]] || { failures+=("$name: no '# GitLab:' or '# gitlab-ci-local:' line"); return; }

    "$project/scripts/validate-ci" "$repo/.gitlab-ci.yml" >"$T/validate.log" 2>&1 || rc=$?
    if [[ $want_gitlab == valid ]]; then
        [[ $rc == 0 ]] || failures+=("$name: validate-ci exit $rc, want 0: $(cat "$T/validate.log")")
    elif [[ $rc != 1 ]]; then
        failures+=("$name: validate-ci exit $rc, want 1: $(cat "$T/validate.log")")
    elif ! grep -qF -- "$want_gitlab" "$T/validate.log"; then
        failures+=("$name: validate-ci does not say '$want_gitlab': $(cat "$T/validate.log")")
    elif ! grep -qF -- ".gitlab-ci.yml:" "$T/validate.log"; then
        failures+=("$name: validate-ci names no file and line: $(cat "$T/validate.log")")
    fi

    rc=0
    (cd "$repo" && env -i PATH="$PATH" HOME="$T" LANG=C.UTF-8 NO_COLOR=1 "$gcl" --list --no-color \
        --ignore-schema-paths "#/definitions/tags/minItems" </dev/null >"$T/gcl.log" 2>&1) || rc=$?
    case $want_gcl in
        accepts*)
            [[ $rc == 0 ]] || failures+=("$name: gitlab-ci-local exit $rc; the case says it accepts: $(cat "$T/gcl.log")") ;;
        rejects:*)
            if [[ $rc == 0 ]]; then
                failures+=("$name: gitlab-ci-local accepts; the case says it rejects: $(cat "$T/gcl.log")")
            elif ! grep -qF -- "${want_gcl#rejects: }" "$T/gcl.log"; then
                failures+=("$name: gitlab-ci-local does not say '${want_gcl#rejects: }': $(cat "$T/gcl.log")")
            fi ;;
        *) failures+=("$name: the gitlab-ci-local line is neither 'accepts' nor 'rejects: ...'") ;;
    esac

    # `# gitlab-ci-local preview: TEXT`: its merged pipeline has TEXT as written.
    local want_preview
    want_preview=$(expect "$case" "gitlab-ci-local preview")
    [[ -n $want_preview ]] || return 0
    (cd "$repo" && env -i PATH="$PATH" HOME="$T" LANG=C.UTF-8 NO_COLOR=1 "$gcl" --preview --no-color \
        --ignore-schema-paths "#/definitions/tags/minItems" </dev/null >"$T/preview.log" 2>&1) || true
    grep -qF -- "$want_preview" "$T/preview.log" ||
        failures+=("$name: gitlab-ci-local --preview lacks '$want_preview': $(cat "$T/preview.log")")
}

for case in "$corpus"/bad/*.yml; do
    bad=$((bad + 1))
    run_case "$case" bad
done
for case in "$corpus"/good/*.yml; do run_case "$case" good; done
((bad >= 20)) || failures+=("the corpus has $bad bad cases, fewer than 20")

if ((${#failures[@]})); then
    printf 'FAIL: %s\n' "${failures[@]}" >&2
    exit 1
fi
echo "validate-inputs: $bad bad cases rejected as GitLab does, $(ls "$corpus"/good/*.yml | wc -l) good ones accepted;" \
    "gitlab-ci-local rejects $(grep -l '^# gitlab-ci-local: rejects' "$corpus"/bad/*.yml | wc -l) of the bad ones"
