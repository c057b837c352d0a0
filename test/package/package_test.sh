#!/usr/bin/env bash
# Integration test of the Debian package: from a fresh clone of the source tree's
# HEAD, scripts/package builds the .deb (ccache serves its objects from the tree's
# own build, compiled with the same flags: CI compiles the product once); its
# control fields and contents are checked, dpkg says its Depends are met by
# installed Debian packages (dry run), and it is unpacked (dpkg-deb -x) into an
# empty root whose binary then answers `envgate version` (naming the clone's commit
# and a Release build) and `envgate config check` on the demo's config; its man
# page renders and its bash completion loads. Usage: package_test.sh SOURCE_DIR WORK_DIR
set -u
src=$1
work=$2
# shellcheck source=test/package/lib.sh
source "$(dirname "$0")/lib.sh"
fresh_clone "$src" "$work"
commit=$(git -C "$work/src" rev-parse HEAD)
"$work/src/scripts/package" "$work/src/build-package" "$work/out" >"$work/package.log" 2>&1 ||
    { cat "$work/package.log"; echo "FAIL: scripts/package"; exit 1; }
deb=$(sed -n 's/^package: //p' "$work/package.log")
[ -f "$deb" ] || { cat "$work/package.log"; echo "FAIL: no .deb named on the last line"; exit 1; }
echo "package: $deb ($(stat -c %s "$deb") bytes)"

field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = envgate ] || fail "Package: $(field Package)"
[ "$(field Version)" = 0.1.0 ] || fail "Version: $(field Version)"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture: $(field Architecture)"
depends=$(field Depends)
for lib in libc6 libpoco libgit2 libyaml-cpp libssl libfmt libstdc++6; do
    case $depends in *"$lib"*) ;; *) fail "Depends lacks $lib: $depends" ;; esac
done
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for f in ./usr/bin/envgate ./usr/share/man/man1/envgate.1.gz \
    ./usr/share/bash-completion/completions/envgate ./usr/share/doc/envgate/copyright \
    ./usr/share/doc/envgate/changelog.gz ./usr/share/doc/envgate/README.md \
    ./usr/share/doc/envgate/ci-templates/README.md ./usr/share/zsh/vendor-completions/_envgate \
    ./usr/share/fish/vendor_completions.d/envgate.fish; do
    grep -qxF "$f" <<<"$contents" || fail "the package lacks $f"
done
# dpkg itself judges Depends against the installed packages (nothing is installed).
dpkg --dry-run --install "$deb" >"$work/dpkg.log" 2>&1 ||
    fail "dpkg --dry-run --install: $(cat "$work/dpkg.log")"

root="$work/root"
dpkg-deb -x "$deb" "$root"
"$root/usr/bin/envgate" version -o json >"$work/version.json" 2>&1 || fail "envgate version failed"
[ "$(jq -r .gitCommit "$work/version.json")" = "$commit" ] ||
    fail "version names commit $(jq -r .gitCommit "$work/version.json"), the clone is at $commit"
[ "$(jq -r .buildType "$work/version.json")" = Release ] || fail "build type: $(cat "$work/version.json")"
"$root/usr/bin/envgate" config check --config "$work/src/demo/envgate.yml" >"$work/check.txt" 2>&1 ||
    fail "config check of the demo: $(cat "$work/check.txt")"
grep -q 'name: production' "$work/check.txt" || fail "config check printed no production: $(cat "$work/check.txt")"
MANWIDTH=100 man -l "$root/usr/share/man/man1/envgate.1.gz" >"$work/man.txt" 2>/dev/null ||
    fail "man -l failed"
grep -q 'envgate lock' "$work/man.txt" || fail "the man page has no section for envgate lock"
grep -q -- '--wait-timeout' "$work/man.txt" || fail "the man page lacks the commands' options"
# Debian's documentation: a machine-readable (DEP-5) copyright file naming a licence
# Debian ships, a changelog dpkg parses for this version, and every Markdown file the
# README and the CI/CD components' README link to, where the links point.
doc=$root/usr/share/doc/envgate
copyright=$doc/copyright
head -1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
    fail "copyright is not machine-readable (DEP-5): $(head -1 "$copyright")"
for field in 'Upstream-Name: envgate' 'Files: \*' 'License: Apache-2.0'; do
    grep -qx "$field" "$copyright" || fail "copyright lacks '$field'"
done
[ -f /usr/share/common-licenses/Apache-2.0 ] || fail "copyright names a licence Debian does not ship"
changes=$(zcat "$doc/changelog.gz" | dpkg-parsechangelog -l - 2>&1) || fail "dpkg-parsechangelog: $changes"
[ "$(sed -n 's/^Version: //p' <<<"$changes")" = "$(field Version)" ] ||
    fail "the changelog's last version is not the package's: $changes"
for readme in "$doc/README.md" "$doc/ci-templates/README.md"; do
    for link in $(grep -o '](\(\.\./\)\{0,1\}docs/[a-z-]*\.md' "$readme" | sed 's/^](//'); do
        [ -f "$(dirname "$readme")/$link" ] || fail "$readme links $link, which the package lacks"
    done
done
# envgate lint's "docs:" lines name the installed docs, and the check's section in them.
"$root/usr/bin/envgate" lint --fail-on never "$work/src/test/fixtures/lint" >"$work/lint.txt" 2>&1 ||
    fail "envgate lint: $(cat "$work/lint.txt")"
lint_docs=$(sed -n 's/^  docs: //p' "$work/lint.txt" | sort -u)
[ -n "$lint_docs" ] || fail "envgate lint printed no docs: line: $(head -5 "$work/lint.txt")"
for url in $lint_docs; do
    [ "${url%%#*}" = "$doc/docs/lint.md" ] || fail "lint's docs: $url is not under $doc/docs"
    grep -q "^### \`${url#*#}\`" "${url%%#*}" 2>/dev/null || fail "lint's docs: $url does not resolve"
done
# shellcheck disable=SC1091
bash -c "source '$root/usr/share/bash-completion/completions/envgate' && complete -p envgate" \
    >/dev/null || fail "the bash completion does not load"
zsh -fc "autoload -Uz compinit && compinit -u -D && source '$root/usr/share/zsh/vendor-completions/_envgate'" \
    >/dev/null 2>&1 || fail "the zsh completion does not load"
fish --no-config -c "source '$root/usr/share/fish/vendor_completions.d/envgate.fish'; complete -c envgate | grep -q ." ||
    fail "the fish completion does not load"

finish package_test
