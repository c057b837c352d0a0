#!/usr/bin/env bash
# Integration test of the OCI image (scripts/image, run as root): built from the
# package of package_deb on a Debian 12 minbase root (debootstrap, kept in
# BASE_DIR between runs), it is checked by skopeo (manifest digest, config: user
# 10001, ENTRYPOINT envgate, labels, the docker-archive), built a second time from
# the same inputs to the same digest, and unpacked by umoci; inside that root, as
# the image's user (chroot), the binary answers `version`, `config check` on the
# demo's config and `explain` on a fixture; the CA certificates are where OpenSSL
# looks by default; the `generate` component's script (inputs at their defaults) runs
# there by /bin/sh, as a GitLab job on the Docker executor would, in a checkout of a
# feature branch owned by root (the runner's): git fetches the default branch, the
# merge base limits the child to the environment changed, and the child only diffs.
# Usage: image_test.sh SOURCE_DIR DEB_DIR WORK_DIR BASE_DIR
set -u
src=$1
deb=$(ls "$2"/envgate_*.deb 2>/dev/null | head -1)
work=$3
base=$4
# shellcheck source=test/package/lib.sh
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
[ -f "$deb" ] || { echo "FAIL: no package in $2 (package_deb makes it)"; exit 1; }
export SOURCE_DATE_EPOCH=1767225600  # 2026-01-01T00:00:00Z
build() {  # build OUT: runs scripts/image, prints the digest
    local start=$SECONDS
    "$src/scripts/image" --deb "$deb" --out "$1" --rootfs "$base" >"$1.log" 2>&1 ||
        { cat "$1.log" >&2; echo "FAIL: scripts/image" >&2; return 1; }
    echo "scripts/image: $((SECONDS - start)) s" >&2
    sed -n 's/^image digest: //p' "$1.log"
}
digest=$(build "$work/a") || exit 1
echo "image digest: $digest"
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || fail "no digest printed: '$digest'"
ref="oci:$work/a/oci:0.1.0"
[ "$(skopeo inspect --format '{{.Digest}}' "$ref")" = "$digest" ] || fail "skopeo's digest differs"
skopeo inspect --config "$ref" >"$work/config.json" || fail "skopeo inspect --config"
[ "$(jq -r .config.User "$work/config.json")" = 10001:10001 ] || fail "user: $(jq .config.User "$work/config.json")"
[ "$(jq -c .config.Entrypoint "$work/config.json")" = '["/usr/bin/envgate"]' ] ||
    fail "entrypoint: $(jq -c .config.Entrypoint "$work/config.json")"
[ "$(jq -r .created "$work/config.json")" = 2026-01-01T00:00:00Z ] || fail "created: $(jq .created "$work/config.json")"
[ "$(jq -r '.config.Labels["org.opencontainers.image.version"]' "$work/config.json")" = 0.1.0 ] ||
    fail "version label"
[ "$(skopeo inspect --format '{{.Os}}/{{.Architecture}}' "docker-archive:$work/a/envgate-image.tar")" = \
    "linux/$(dpkg --print-architecture)" ] || fail "the docker-archive does not inspect"
echo "image size: $(stat -c %s "$work/a/envgate-image.tar") bytes (docker-archive)"

again=$(build "$work/b") || exit 1
[ "$again" = "$digest" ] || fail "not reproducible: a second build gave $again, the first $digest"

umoci unpack --image "$work/a/oci:0.1.0" "$work/bundle" >/dev/null || fail "umoci unpack"
rootfs="$work/bundle/rootfs"
mkdir -p "$rootfs/tmp/in"
cp -r "$src/demo" "$rootfs/tmp/in/demo"
cp "$src/test/fixtures/f1-crashloop-job.json" "$src/test/fixtures/f1-crashloop-pods.json" "$rootfs/tmp/in/"
as_user() { chroot --userspec=10001:10001 "$rootfs" /usr/bin/env -i HOME=/home/envgate "$@"; }
as_user /usr/bin/envgate version >"$work/version.txt" 2>&1 || fail "version in the image: $(cat "$work/version.txt")"
grep -q '^envgate 0.1.0$' "$work/version.txt" || fail "version: $(cat "$work/version.txt")"
as_user /usr/bin/envgate config check --config /tmp/in/demo/envgate.yml >"$work/check.txt" 2>&1 ||
    fail "config check in the image: $(cat "$work/check.txt")"
as_user /usr/bin/envgate explain --gate pre-migrations --job /tmp/in/f1-crashloop-job.json \
    --pods /tmp/in/f1-crashloop-pods.json >"$work/explain.json" 2>&1 ||
    fail "explain in the image: $(cat "$work/explain.json")"
jq -e . "$work/explain.json" >/dev/null || fail "explain printed no JSON: $(cat "$work/explain.json")"
[ "$(as_user /usr/bin/id -un)" = envgate ] || fail "uid 10001 is not the user envgate"
as_user /usr/bin/test -s /usr/lib/ssl/cert.pem ||
    fail "no CA certificates where OpenSSL looks by default (/usr/lib/ssl/cert.pem)"
grep -q "BEGIN CERTIFICATE" "$rootfs/etc/ssl/certs/ca-certificates.crt" 2>/dev/null ||
    fail "the CA bundle has no certificate"

# The `generate` component's job script, its inputs at their defaults.
python3 - "$src/ci-templates/templates/generate.yml" envgate-generate-all \
    >"$rootfs/tmp/in/generate.sh" <<'PY' || fail "cannot read the generate component's script"
import re, sys, yaml
spec_text, jobs_text = open(sys.argv[1]).read().split("\n---\n", 1)
inputs = yaml.safe_load(spec_text)["spec"]["inputs"]
def value(name):
    v = inputs[name].get("default", "")
    return ("true" if v else "false") if isinstance(v, bool) else str(v)
jobs = yaml.safe_load(re.sub(r"\$\[\[ inputs\.(\w+) \]\]", lambda m: value(m.group(1)), jobs_text))
print("\n".join(jobs[sys.argv[2]]["script"]))
PY
# Every component's job hands its script to a shell, not to the image's ENTRYPOINT.
python3 - "$src"/ci-templates/templates/*.yml <<'PY' || fail "a component's job keeps the image's entrypoint"
import sys, yaml
for path in sys.argv[1:]:
    for name, job in yaml.safe_load(open(path).read().split("\n---\n", 1)[1]).items():
        if isinstance(job, dict) and "image" in job:
            assert job["image"].get("entrypoint") == [""], (path, name, job["image"])
PY
# The project: staging and production; the feature branch changes staging alone. The
# runner clones the pipeline's branch only, as root, with umask 0000.
repo="$work/repo-src"
mkdir -p "$repo/envs/staging" "$repo/envs/production"
printf '%s\n' 'version: 1' 'defaults:' '  namespace: app' \
    '  lock: { store: file, path: .envgate/locks }' 'environments:' '  - name: staging' \
    '    paths: [ "envs/staging/**/*" ]' '  - name: production' \
    '    paths: [ "envs/production/**/*" ]' '    after: [ staging ]' 'steps:' \
    '  deploy: "echo deploy $ENVGATE_ENV"' >"$repo/envgate.yml"
echo 1 >"$repo/envs/staging/app"
echo 1 >"$repo/envs/production/app"
g() { git -C "$repo" -c user.email=ci@example.com -c user.name=ci "$@"; }
g init -q -b main && g add -A && g commit -qm base && g checkout -qb feature &&
    echo 2 >"$repo/envs/staging/app" && g commit -qam staging || fail "the project repository"
head_sha=$(g rev-parse HEAD)
git clone -q --bare "$repo" "$rootfs/tmp/in/origin.git"
mkdir -p "$rootfs/builds"
git clone -q --single-branch --branch feature "$rootfs/tmp/in/origin.git" "$rootfs/builds/app"
git -C "$rootfs/builds/app" remote set-url origin /tmp/in/origin.git
chmod -R a+rwX "$rootfs/builds" "$rootfs/tmp/in/origin.git"
mknod -m 666 "$rootfs/dev/null" c 1 3 # the container runtime mounts /dev
as_user PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GITLAB_CI=true \
    CI_COMMIT_BRANCH=feature CI_DEFAULT_BRANCH=main CI_COMMIT_SHA="$head_sha" CI_PROJECT_DIR=/builds/app \
    CI_COMMIT_BEFORE_SHA=0000000000000000000000000000000000000000 CI_PIPELINE_SOURCE=push \
    /bin/sh -c "cd /builds/app && exec /bin/sh -e /tmp/in/generate.sh" >"$work/generate.log" 2>&1 ||
    fail "the generate component's script in the image: $(cat "$work/generate.log")"
! grep -q "could not fetch" "$work/generate.log" ||
    fail "git fetch failed in the image: $(cat "$work/generate.log")"
grep -q "envgate generate: staging: 1 changed path(s)" "$work/generate.log" ||
    fail "staging is not planned from the merge base: $(cat "$work/generate.log")"
! grep -q "envgate generate: production" "$work/generate.log" ||
    fail "production counts as changed (no merge base): $(cat "$work/generate.log")"
grep -qF 'diff only, no lock: branch "feature" is not the default branch "main"' "$work/generate.log" ||
    fail "the feature branch's child is not diff-only: $(cat "$work/generate.log")"
[ -s "$rootfs/builds/app/envgate-child.yml" ] || fail "no child pipeline written"
! grep -q "lock acquire" "$rootfs/builds/app/envgate-child.yml" || fail "the feature branch's child takes the lock"

finish image_test
