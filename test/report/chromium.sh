# shellcheck shell=bash
# Headless Chromium for the report tests (sourced): `browse ARGS...` runs it without a
# sandbox (CI runs as root, without a display), without network chatter, in the
# throwaway profile $CHROMIUM_PROFILE, its stderr appended to $CHROMIUM_LOG. Exits when
# chromium is missing (scripts/install-deps --test installs it).
command -v chromium >/dev/null || { echo "chromium is missing: run scripts/install-deps --test" >&2; exit 1; }
browse() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$CHROMIUM_PROFILE" --hide-scrollbars "$@" 2>>"$CHROMIUM_LOG"
}
# check_png FILE: FILE is a PNG and not a blank page.
check_png() {
  [[ $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || { echo "$1 is not a PNG" >&2; exit 1; }
  (($(stat -c %s "$1") > 20000)) || { echo "$1 looks blank" >&2; exit 1; }
  echo "screenshot: $1"
}
