#!/usr/bin/env bash
# Integration test of scripts/release (the release job of .gitlab-ci.yml), from a
# fresh clone of the source tree's HEAD, against a local container registry (Debian's
# docker-registry: TLS from a CA made here, htpasswd login) and a local bare git
# repository as the component project. Checks: the registry serves image_oci's
# layout at :0.1.0 with scripts/image's digest, and only to a logged-in client; the
# component project has templates/, README.md, LICENSE and .gitlab-ci.yml at its root
# and the annotated tag 0.1.0 (no v, as the Catalog wants) on its main branch; its
# pipeline and the project's own pass validate-ci, and gitlab-ci-local lists the jobs
# of both (the components included at the commit: `component:` in the component
# project, `project:` in this one), the release jobs on a tag pipeline only; a re-run
# changes nothing; a bad tag, a tag the layout does not carry and a wrong password
# fail; the planted password and token appear in no output, no registry log and no
# commit or tag; the same release to an HTTPS component project (git http-backend,
# TLS, Basic auth with the token) pushes the same tree, and a wrong token fails
# without printing it.
# Usage: release_test.sh SOURCE_DIR IMAGE_WORK_DIR WORK_DIR
set -u
src=$1
image_work=$2
work=$3
# shellcheck source=test/package/lib.sh
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
registry_pid= git_pid=
trap 'for p in $registry_pid $git_pid; do kill "$p" 2>/dev/null; done' EXIT
oci=$image_work/a/oci
digest=$(sed -n 's/^image digest: //p' "$image_work/a.log" 2>/dev/null)
[[ $digest =~ ^sha256:[0-9a-f]{64}$ && -f $oci/index.json ]] ||
    { echo "FAIL: no image from image_oci in $image_work"; exit 1; }
for tool in docker-registry skopeo openssl git jq python3; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (scripts/install-deps --test)"; exit 1; }
done
gcl=$src/scripts/node/node_modules/.bin/gitlab-ci-local
[ -x "$gcl" ] || { echo "FAIL: $gcl missing (scripts/install-deps --test)"; exit 1; }
git clone --quiet "$src" "$work/src" || { echo "FAIL: git clone $src"; exit 1; }

# --- a registry with TLS and a login ------------------------------------------------
password=planted-Registry-Pass-4711
token=planted-git-token-0815
certs=$work/certs
mkdir -p "$certs" "$work/tmp"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=release-test-ca \
    -keyout "$work/ca.key" -out "$certs/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$work/tls.key" \
    -out "$work/tls.csr" 2>/dev/null
openssl x509 -req -in "$work/tls.csr" -CA "$certs/ca.crt" -CAkey "$work/ca.key" \
    -CAcreateserial -days 2 -extfile <(echo "subjectAltName=IP:127.0.0.1") \
    -out "$work/tls.crt" 2>/dev/null
# The registry reads bcrypt htpasswd entries only.
python3 -W ignore -c 'import crypt, sys; print("ci-release:" + crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))' \
    "$password" >"$work/htpasswd"
cat >"$work/registry.yml" <<EOF
version: 0.1
log: { level: info }
storage: { filesystem: { rootdirectory: $work/registry-data } }
http:
  addr: 127.0.0.1:0
  secret: release-test-not-a-secret
  tls: { certificate: $work/tls.crt, key: $work/tls.key }
auth:
  htpasswd: { realm: release-test, path: $work/htpasswd }
EOF
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
port=''
for _ in $(seq 1 600); do  # up to 30 s for the registry to say where it listens
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/registry.log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$registry_pid" 2>/dev/null || break
    sleep 0.05
done
[ -n "$port" ] || { cat "$work/registry.log"; echo "FAIL: the registry did not start"; exit 1; }
registry=127.0.0.1:$port
git init --quiet --bare -b main "$work/components.git"

release() {  # release LOG ARGS...: scripts/release as the release job runs it; sets rc
    local log=$1
    shift
    rc=0
    env TMPDIR="$work/tmp" CI_REGISTRY="$registry" CI_REGISTRY_IMAGE="$registry/acme/envgate" \
        CI_REGISTRY_USER=ci-release CI_REGISTRY_PASSWORD="${pass:-$password}" \
        ENVGATE_COMPONENTS_TOKEN="${tok:-$token}" ENVGATE_RELEASE_CERT_DIR="$certs" \
        GIT_SSL_CAINFO="$certs/ca.crt" \
        CI_PROJECT_URL=https://gitlab.example.com/acme/envgate CI_COMMIT_SHA=0123abc \
        "$work/src/scripts/release" --oci "$oci" --components "$work/components.git" "$@" \
        >"$work/$log" 2>&1 || rc=$?
}

# --- the release --------------------------------------------------------------------
release first.log --tag v0.1.0
[ "$rc" = 0 ] || fail "scripts/release failed ($rc): $(cat "$work/first.log")"
ref=docker://$registry/acme/envgate:0.1.0
pushed=$(skopeo inspect --cert-dir "$certs" --creds "ci-release:$password" --format '{{.Digest}}' \
    "$ref" 2>&1)
[ "$pushed" = "$digest" ] || fail "the registry serves $pushed, scripts/image made $digest"
echo "pushed $ref: $pushed"
skopeo inspect --cert-dir "$certs" --no-creds "$ref" >/dev/null 2>&1 &&
    fail "the registry served the image without a login: the test's registry does not check"
[ -z "$(ls -A "$work/tmp")" ] || fail "scripts/release left files behind: $(ls -A "$work/tmp")"

pub=$work/published
git clone --quiet "$work/components.git" "$pub" || fail "cannot clone the component project"
files=$(git -C "$pub" ls-tree --name-only HEAD | tr '\n' ' ')
for f in templates README.md LICENSE .gitlab-ci.yml; do
    [[ " $files" == *" $f "* ]] || fail "the component project's root lacks $f: $files"
done
[[ " $files" == *" ci-templates "* ]] && fail "ci-templates/ itself was published, not its content"
# As committed, but for the image input's default: envgate's image in the registry
# the release pushed it to, at the component's version.
for t in deploy gate generate lint lock unlock; do
    sed "s#registry.gitlab.com/envgate/envgate:#$registry/acme/envgate:#g" "$src/ci-templates/templates/$t.yml" |
        cmp -s "$pub/templates/$t.yml" - ||
        fail "templates/$t.yml differs from ci-templates/templates/$t.yml beyond the image's registry"
    grep -qF "default: \"$registry/acme/envgate:\$ENVGATE_COMPONENT_VERSION\"" "$pub/templates/$t.yml" ||
        fail "templates/$t.yml's image does not default to the pushed image at the component's version"
done
cmp -s "$pub/LICENSE" "$src/LICENSE" || fail "LICENSE is not the project's"
[ "$(git -C "$pub" cat-file -t 0.1.0)" = tag ] || fail "0.1.0 is not an annotated tag"
[ "$(git -C "$pub" rev-parse '0.1.0^{commit}')" = "$(git -C "$pub" rev-parse origin/main)" ] ||
    fail "0.1.0 is not the head of main"
[ "$(git -C "$pub" tag -l)" = 0.1.0 ] || fail "the component project has other tags: $(git -C "$pub" tag -l)"
grep -q '\.\./README\.md' "$pub/README.md" && fail "README.md links outside the component project"
git -C "$pub" log -1 --format=%B | grep -q 'at 0123abc' || fail "the commit does not name its source"

"$src/scripts/validate-ci" "$pub/.gitlab-ci.yml" "$pub"/templates/*.yml "$src/.gitlab-ci.yml" \
    >"$work/validate.log" 2>&1 || fail "validate-ci: $(cat "$work/validate.log")"
# gitlab-ci-local resolves $CI_SERVER_FQDN/$CI_PROJECT_PATH/NAME@$CI_COMMIT_SHA from
# the clone itself when its remote is that project and the commit its HEAD; an
# `include: project:` it fetches with git archive --remote, sent here to the clone.
gcl_list() {  # gcl_list DIR PROJECT LOG ARGS...: gitlab-ci-local --list in DIR as PROJECT
    local dir=$1 project=$2 log=$3
    shift 3
    git -C "$dir" remote set-url origin "git@gitlab.example.com:$project.git"
    git -C "$dir" config uploadArchive.allowUnreachable true
    (cd "$dir" && env -i PATH="$PATH" HOME="$work" GIT_CONFIG_COUNT=1 \
        GIT_CONFIG_KEY_0="url.$dir/.git.insteadOf" \
        GIT_CONFIG_VALUE_0="ssh://git@gitlab.example.com:22/$project.git" \
        "$gcl" --list --no-color --ignore-schema-paths "#/definitions/tags/minItems" "$@" \
        </dev/null >"$work/$log" 2>&1) || fail "gitlab-ci-local --list in $dir: $(cat "$work/$log")"
}
listed() { grep -q "^$2 " "$work/$1" || fail "gitlab-ci-local lists no $2: $(cat "$work/$1")"; }
gcl_list "$pub" acme/envgate-components list-components.log
for job in envgate-lint-components envgate-unlock-staging; do listed list-components.log "$job"; done
grep -q '^create-release ' "$work/list-components.log" && fail "a branch pipeline creates a release"
gcl_list "$pub" acme/envgate-components list-components-tag.log --variable CI_COMMIT_TAG=0.1.0
listed list-components-tag.log create-release
gcl_list "$pub" acme/envgate-components list-components-vtag.log --variable CI_COMMIT_TAG=v0.1.0
grep -q '^create-release ' "$work/list-components-vtag.log" &&
    fail "a v-prefixed tag creates a Catalog release, which GitLab refuses"
# The project's own pipeline: its component test (lint given this pipeline's package)
# on every pipeline; the image and the release on a release tag only.
gcl_list "$work/src" acme/envgate list-project.log
for job in package ci envgate-lint-demo; do listed list-project.log "$job"; done
grep -q '^envgate-lint-demo .*\[package\]' "$work/list-project.log" ||
    fail "the lint component's job does not take the package: $(cat "$work/list-project.log")"
grep -qE '^(oci-image|release-publish|release) ' "$work/list-project.log" &&
    fail "a branch pipeline releases: $(cat "$work/list-project.log")"
gcl_list "$work/src" acme/envgate list-project-tag.log --variable CI_COMMIT_TAG=v0.1.0
for job in oci-image release-publish release; do listed list-project-tag.log "$job"; done

# --- again: nothing changes; then what must fail ------------------------------------
head_before=$(git -C "$work/components.git" rev-parse main)
release again.log --tag v0.1.0
[ "$rc" = 0 ] || fail "a re-run failed ($rc): $(cat "$work/again.log")"
grep -q 'already has 0.1.0' "$work/again.log" || fail "re-run: $(cat "$work/again.log")"
[ "$(git -C "$work/components.git" rev-parse main)" = "$head_before" ] || fail "a re-run committed"
release badtag.log --tag 1.2
[ "$rc" = 2 ] || fail "tag 1.2: exit $rc, want 2: $(cat "$work/badtag.log")"
release notag.log --tag v9.9.9
[ "$rc" = 1 ] && grep -q 'no image tagged 9.9.9' "$work/notag.log" ||
    fail "v9.9.9, which the layout lacks: exit $rc: $(cat "$work/notag.log")"
pass=wrong-$password release badpass.log --tag v0.1.0
[ "$rc" = 1 ] && grep -q "login to $registry as ci-release failed" "$work/badpass.log" ||
    fail "a wrong password: exit $rc: $(cat "$work/badpass.log")"

# --- the component project over HTTPS, the token as the password ---------------------
# As a GitLab project: TLS (the test's CA, through git's GIT_SSL_CAINFO), HTTP Basic
# with user oauth2 and the token, 401 to anything else.
mkdir -p "$work/git-root"
git init --quiet --bare -b main "$work/git-root/components.git"
python3 "$(dirname "$0")/git_https_server.py" "$work/git-root" "$work/tls.crt" "$work/tls.key" \
    oauth2 "$token" "$work/git-https-requests.log" >"$work/git-https.log" 2>&1 &
git_pid=$!
gport=''
for _ in $(seq 1 600); do
    gport=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/git-https.log")
    [ -n "$gport" ] && break
    kill -0 "$git_pid" 2>/dev/null || break
    sleep 0.05
done
[ -n "$gport" ] || fail "the HTTPS git server did not start: $(cat "$work/git-https.log")"
https_url=https://127.0.0.1:$gport/components.git
release https.log --tag v0.1.0 --skip-image --components "$https_url"
[ "$rc" = 0 ] || fail "scripts/release over https failed ($rc): $(cat "$work/https.log")"
[ "$(git -C "$work/git-root/components.git" cat-file -t 0.1.0)" = tag ] ||
    fail "https: the component project has no annotated tag 0.1.0"
[ "$(git -C "$work/git-root/components.git" rev-parse 'main^{tree}')" = \
  "$(git -C "$work/components.git" rev-parse 'main^{tree}')" ] ||
    fail "https: the published tree differs from the one published to the local path"
grep -q ' 401$' "$work/git-https-requests.log" ||
    fail "https: the server never asked for the token (no 401): the test does not check auth"
grep -q '^POST /components.git/git-receive-pack oauth2 200$' "$work/git-https-requests.log" ||
    fail "https: no authenticated push: $(cat "$work/git-https-requests.log")"
tok=wrong-$token release https-badtoken.log --tag v0.1.1 --skip-image --components "$https_url"
[ "$rc" = 1 ] && grep -q "cannot clone the component project $https_url" "$work/https-badtoken.log" ||
    fail "https, a wrong token: exit $rc: $(cat "$work/https-badtoken.log")"
grep -qF -- "wrong-$token" "$work/https-badtoken.log" && fail "https: the wrong token was printed"
git -C "$work/git-root/components.git" log -p --all >"$work/history-https.txt"
git -C "$work/git-root/components.git" for-each-ref --format='%(contents)' refs/tags \
    >>"$work/history-https.txt"

# --- no credential anywhere ---------------------------------------------------------
git -C "$work/components.git" log -p --all >"$work/history.txt"
git -C "$work/components.git" for-each-ref --format='%(contents)' refs/tags >>"$work/history.txt"
for f in "$work"/*.log "$work"/history*.txt "$work/components.git/config" \
    "$work/git-root/components.git/config"; do
    for secret in "$password" "$token"; do
        grep -qF -- "$secret" "$f" && fail "$(basename "$f") contains the planted secret $secret"
    done
done
finish release_test
