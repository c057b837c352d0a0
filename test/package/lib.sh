# What the package, image and README tests share: counting failures, a fresh work
# directory and clone, and the last line (NAME: ok, exit = the number of failures).
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
fresh_dir() {
    rm -rf "$1"
    mkdir -p "$1"
}
# fresh_clone SOURCE_DIR WORK_DIR: WORK_DIR made afresh, SOURCE_DIR's HEAD cloned to
# WORK_DIR/src (what is committed, not the work tree).
fresh_clone() {
    fresh_dir "$2"
    git clone --quiet "$1" "$2/src" || { echo "FAIL: git clone $1"; exit 1; }
}
finish() {
    [ "$failures" -eq 0 ] && echo "$1: ok"
    exit "$failures"
}
