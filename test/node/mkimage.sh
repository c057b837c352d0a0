#!/usr/bin/env bash
# Makes a container image without a registry: a docker-archive (what `ctr images import`
# reads) whose one layer is Debian's static busybox with a link per applet.
#   mkimage.sh OUT.tar NAME:TAG [ENTRYPOINT...]
# e.g. mkimage.sh pause.tar envgate.test/pause:1 /bin/sleep infinity
# The archive is reproducible: fixed mtimes and owners, sorted entries.
set -euo pipefail
out=$1 ref=$2
shift 2
busybox=${BUSYBOX:-/bin/busybox}
[[ $(LC_ALL=C ldd "$busybox" 2>&1) == *'not a dynamic executable'* ]] ||
    { echo "mkimage.sh: $busybox is not a static busybox (Debian package busybox-static)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/envgate-mkimage.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root"/{bin,etc,tmp,proc,sys,dev,root}
chmod 1777 "$root/tmp"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
    [[ $applet == busybox || -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$work/layer.tar" .
diff_id=sha256:$(sha256sum "$work/layer.tar" | cut -d' ' -f1)

json_array() {
    local first=1 s
    printf '['
    for s in "$@"; do
        ((first)) || printf ','
        first=0
        s=${s//\\/\\\\}
        printf '"%s"' "${s//\"/\\\"}"
    done
    printf ']'
}
entry=null
(($# == 0)) || entry=$(json_array "$@")
cat >"$work/config.json" <<EOF
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Env":["PATH=/bin"],"Entrypoint":$entry,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["$diff_id"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"test/node/mkimage.sh: busybox-static"}]}
EOF
config_id=$(sha256sum "$work/config.json" | cut -d' ' -f1)
mkdir -p "$work/archive"
mv "$work/config.json" "$work/archive/$config_id.json"
mv "$work/layer.tar" "$work/archive/layer.tar"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer.tar"]}]\n' "$config_id" "$ref" \
    >"$work/archive/manifest.json"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/archive" -cf "$out.tmp" .
mv "$out.tmp" "$out"
