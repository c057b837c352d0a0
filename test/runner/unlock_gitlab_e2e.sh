#!/bin/bash
# End to end, the real envgate binary: who may unlock from CI. A lock whose unlockers
# is [alice] is failed; a server on 127.0.0.1 answers /api/v4/job with alice for any
# job token, as a server a job set up would. Then:
# 1. the job points CI_SERVER_URL (and CI_SERVER_TLS_CA_FILE) at that server, no
#    gitlab.url in envgate.yml: exit 2 saying what to add; the server hears nothing,
#    so never the job token; the lock stays failed;
# 2. gitlab.url pins another server: exit 1 naming both; the server hears nothing;
# 3. gitlab.url pins the server and gitlab.id_token is set: an ID token signed by its
#    key (openssl genpkey here; the key set at /oauth/discovery/keys) for audience
#    envgate unlocks as the token's user_login, and no job token reaches the server;
#    tokens signed by another key, for another audience, from another issuer, or
#    expired are refused with exit 1.
# Usage: unlock_gitlab_e2e.sh ENVGATE_BINARY
set -u
envgate=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
tool="$here/fake_gitlab_oidc.py"
work=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out gitlab.pem 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out other.pem 2>/dev/null
python3 "$tool" jwks gitlab.pem gitlab-ci >jwks.json || exit 1
python3 "$tool" serve jwks.json alice >port.txt 2>server.log &
server=$!
for _ in $(seq 100); do [ -s port.txt ] && break; sleep 0.1; done
port=$(cat port.txt)
url="http://127.0.0.1:$port"
job_token=glcbt-64_real-j0b-t0ken-1302

config() {  # config [GITLAB_SECTION]
    printf '%s\n' "version: 1" "defaults:" "  namespace: app" \
        "  lock: { store: file, path: locks }" "  unlockers: [alice]" \
        "environments:" "  - name: gstg" >envgate.yml
    [ $# -gt 0 ] && printf '%s\n' "$1" >>envgate.yml
}
local_env=(env -i "PATH=$PATH" "HOME=$work" USER=sre)
failed_lock() {
    rm -rf locks
    "${local_env[@]}" "$envgate" lock acquire gstg --holder 'grp/app#7' --no-wait >/dev/null 2>&1 &&
        "${local_env[@]}" "$envgate" lock fail gstg --holder 'grp/app#7' --step deploy \
            --reason MigrationsJobFailed --message 'exit 1' >/dev/null 2>&1 ||
        fail "could not make a failed lock"
}
state() {
    "${local_env[@]}" "$envgate" status gstg -o json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["locks"][0]["lock"]["state"])' \
            2>/dev/null
}
unlock() {  # unlock [VAR=VALUE...]: from a CI job that pointed CI_SERVER_URL at the server
    env -i "PATH=$PATH" "HOME=$work" CI=true GITLAB_CI=true CI_JOB_ID=77 \
        "CI_JOB_TOKEN=$job_token" "CI_SERVER_URL=$url" "CI_SERVER_TLS_CA_FILE=$work/ca.pem" \
        GITLAB_USER_LOGIN=alice "$@" "$envgate" unlock gstg --reason 'migration fixed by hand' \
        >out.txt 2>err.txt
}

# 1. Nothing pinned: refused before anything is sent.
config
failed_lock
unlock
code=$?
[ "$code" -eq 2 ] || fail "unpinned: exit $code, want 2; $(cat err.txt)"
grep -q 'envgate.yml does not name the GitLab server' err.txt ||
    fail "unpinned: no advice: $(cat err.txt)"
grep -q '^    url: https://gitlab.example.com' err.txt || fail "unpinned: does not say what to add"
[ "$(state)" = failed ] || fail "unpinned: lock is $(state), want failed"

# 2. Another server pinned: CI_SERVER_URL disagrees, refused.
config "gitlab: { url: https://gitlab.example.com }"
unlock
code=$?
[ "$code" -eq 1 ] || fail "pinned elsewhere: exit $code, want 1; $(cat err.txt)"
grep -qF "CI_SERVER_URL is $url, but envgate.yml names gitlab.url https://gitlab.example.com" \
    err.txt || fail "pinned elsewhere: does not name both: $(cat err.txt)"
[ "$(state)" = failed ] || fail "pinned elsewhere: lock is $(state), want failed"
[ ! -s server.log ] || fail "the job's server was asked: $(cat server.log)"

# 3. ID tokens from the pinned server.
config "gitlab:
  url: $url
  id_token: { variable: ENVGATE_ID_TOKEN, audience: envgate }"
token() {  # token KEY AUDIENCE ISSUER EXP_OFFSET
    local now
    now=$(date +%s)
    python3 "$tool" sign "$1" gitlab-ci "$(printf '{"iss": "%s", "aud": "%s", "iat": %d,
        "nbf": %d, "exp": %d, "user_login": "alice", "user_id": "1",
        "project_path": "grp/app", "ref": "main", "ref_protected": "true",
        "sub": "project_path:grp/app:ref_type:branch:ref:main"}' \
        "$3" "$2" "$now" "$now" $((now + $4)))"
}
for refusal in "other.pem envgate $url 300 signature does not verify" \
    "gitlab.pem vault $url 300 audience (aud) is not" \
    "gitlab.pem envgate https://gitlab.example.com 300 not by the GitLab server" \
    "gitlab.pem envgate $url -600 it expired at"; do
    read -r key aud iss exp want <<<"$refusal"
    jwt=$(token "$key" "$aud" "$iss" "$exp")
    unlock "ENVGATE_ID_TOKEN=$jwt"
    code=$?
    [ "$code" -eq 1 ] || fail "$key/$aud/$iss/$exp: exit $code, want 1; $(cat err.txt)"
    grep -qF "$want" err.txt || fail "$key/$aud/$iss/$exp: not '$want': $(cat err.txt)"
    grep -qF "$jwt" out.txt err.txt && fail "$key/$aud/$iss/$exp: the token was printed"
    [ "$(state)" = failed ] || fail "$key/$aud/$iss/$exp: lock is $(state), want failed"
done
jwt=$(token gitlab.pem envgate "$url" 300)
unlock "ENVGATE_ID_TOKEN=$jwt" GITLAB_USER_LOGIN=mallory
code=$?
[ "$code" -eq 0 ] || fail "valid token: exit $code, want 0; $(cat err.txt)"
grep -q 'recorded as alice: migration fixed by hand' out.txt ||
    fail "valid token: not recorded as alice: $(cat out.txt err.txt)"
[ "$(state)" = free ] || fail "valid token: lock is $(state), want free"
grep -q 'GET /oauth/discovery/keys job-token=no' server.log || fail "key set never fetched"
grep -v '^GET /oauth/discovery/keys job-token=no$' server.log &&
    fail "the server got other requests (above)"
grep -qF "$job_token" out.txt err.txt && fail "the job token was printed"

if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "unlock_gitlab_e2e: ok"
