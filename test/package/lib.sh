# What package_test.sh and image_test.sh share: counting failures, a fresh work
# directory, and the last line (NAME: ok, exit = the number of failures).
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
fresh_dir() {
    rm -rf "$1"
    mkdir -p "$1"
}
finish() {
    [ "$failures" -eq 0 ] && echo "$1: ok"
    exit "$failures"
}
