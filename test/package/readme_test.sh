#!/usr/bin/env bash
# The README's commands work as written: every ```sh block of README.md runs, in the
# order a newcomer meets them, by bash -e in a fresh clone of the source tree's HEAD
# (what is committed), and must exit 0. One block is not run here: the test command
# itself (it would run this test again); the test checks instead that .ci/run runs
# each of its commands, so CI runs it on every change. Each block's time and the log of a
# failed one are printed. Usage: readme_test.sh SOURCE_DIR WORK_DIR
set -u
src=$1
work=$2
# shellcheck source=test/package/lib.sh
source "$(dirname "$0")/lib.sh"
fresh_clone "$src" "$work"
readme=$work/src/README.md

# The blocks: a file per block, named by the README line it starts on.
mkdir -p "$work/blocks"
awk -v dir="$work/blocks" '
    /^```sh$/ { block = sprintf("%s/%04d.sh", dir, NR + 1); next }
    /^```/ { block = ""; next }
    block != "" { print > block }' "$readme"
blocks=$(ls "$work/blocks")
[ "$(wc -w <<<"$blocks")" -ge 5 ] || fail "found only $(wc -w <<<"$blocks") sh blocks in README.md"

test_command=$(sed -n '/^Run the tests/,/^```$/{/^scripts\//p}' "$readme")
[ -n "$test_command" ] || fail "README.md has no test command under 'Run the tests'"

for b in $blocks; do
    line=$((10#${b%.sh}))
    if [ "$(cat "$work/blocks/$b")" = "$test_command" ]; then
        # Each command of it (a && b) starts a line of .ci/run (which adds arguments:
        # the build dir and a JUnit file).
        while read -r part; do
            grep -q "^$part\( \|\$\)" "$work/src/.ci/run" ||
                fail "README.md:$line: '$part' of the test command is not run by .ci/run"
        done < <(sed 's/ && /\n/g' <<<"$test_command")
        echo "README.md:$line: the test command, run by .ci/run (not here)"
        continue
    fi
    start=$SECONDS
    # The environment is the test's own: in CI (CI set) the blocks build with the flags
    # of CI's build of the tree, -Werror included, so ccache serves their objects.
    if (cd "$work/src" && bash -eo pipefail "$work/blocks/$b") >"$work/blocks/$b.log" 2>&1; then
        echo "README.md:$line: ok ($((SECONDS - start)) s): $(head -1 "$work/blocks/$b")"
    else
        rc=$?
        tail -40 "$work/blocks/$b.log"
        fail "README.md:$line: exit $rc after $((SECONDS - start)) s: $(cat "$work/blocks/$b")"
    fi
done
finish readme_test
