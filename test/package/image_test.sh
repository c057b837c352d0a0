#!/usr/bin/env bash
# Integration test of the OCI image (scripts/image, run as root): built from the
# package of package_deb on a Debian 12 minbase root (debootstrap, kept in
# BASE_DIR between runs), it is checked by skopeo (manifest digest, config: user
# 10001, ENTRYPOINT envgate, labels, the docker-archive), built a second time from
# the same inputs to the same digest, and unpacked by umoci; inside that root, as
# the image's user (chroot), the binary answers `version`, `config check` on the
# demo's config and `explain` on a fixture.
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

finish image_test
