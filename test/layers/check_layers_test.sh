#!/usr/bin/env bash
# Given a copy of the product sources, scripts/check-layers passes; then each planted
# violation (a back arrow, a command including a command, an old forwarded path, the
# vocabulary's old home in gates/, a library header in the vocabulary, a
# second Status -> exit code mapping, a second masker, a second atomic write, a second
# HTTP status table, base64 decoder or shell quoting) makes it
# fail, naming the file and the rule. Usage: check_layers_test.sh REPO_ROOT
set -euo pipefail
repo=$1
check="$repo/scripts/check-layers"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$repo/gates" "$repo/locks" "$repo/runner" "$work/"

"$check" "$work" >/dev/null || { echo "FAIL: the clean tree does not pass"; "$check" "$work"; exit 1; }

failures=0
# plant FILE LINE EXPECTED: appends LINE to FILE, expects the check to fail saying
# EXPECTED, then restores FILE.
plant() {
  local file=$1 line=$2 expected=$3 out
  cp "$work/$file" "$work/$file.orig"
  printf '%s\n' "$line" >>"$work/$file"
  if out=$("$check" "$work" 2>&1); then
    echo "FAIL: planted in $file, the check passed: $line"
    failures=$((failures + 1))
  elif ! grep -qF -- "$expected" <<<"$out"; then
    echo "FAIL: planted in $file, the check did not say \"$expected\":"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $file: $expected"
  fi
  mv "$work/$file.orig" "$work/$file"
}

plant runner/kube/retry.cpp '#include "runner/connect/kube_session.h"' \
  "runner/kube/retry.cpp: kube -> connect is not an arrow"
plant gates/gate.cpp '#include "runner/base/files.h"' "gates/gate.cpp: gates -> base is not an arrow"
# The vocabulary is the bottom, and gates/ is no longer anyone's vocabulary: the back
# arrows of issue 25 (kube -> gates for Status and time) and their kin fail.
plant runner/kube/retry.cpp '#include "gates/verdict.h"' "runner/kube/retry.cpp: kube -> gates is not an arrow"
plant runner/base/files.cpp '#include "gates/gate.h"' "runner/base/files.cpp: base -> gates is not an arrow"
plant locks/lock_record.cpp '#include "gates/memory_json.h"' "lock_model -> gates is not an arrow"
plant runner/report/text.cpp '#include "gates/verdict.h"' "report -> gates is not an arrow"
plant runner/base/vocab/time.cpp '#include "runner/base/files.h"' \
  "runner/base/vocab/time.cpp: vocab -> base is not an arrow"
plant runner/base/vocab/status.cpp '#include "gates/verdict.h"' \
  "runner/base/vocab/status.cpp: vocab -> gates is not an arrow"
plant runner/base/vocab/status.h '#include <nlohmann/json.hpp>' \
  "runner/base/vocab/status.h: vocab-std-only: <nlohmann/json.hpp>"
plant runner/base/vocab/time.cpp '#include <Poco/Timestamp.h>' "vocab-std-only: <Poco/Timestamp.h>"
plant runner/kube/errors.cpp '#include "gates/status.h"' \
  "runner/kube/errors.cpp: old path gates/status.h: include runner/base/vocab/status.h"
plant gates/evaluate.cpp '#include "gates/time.h"' "old path gates/time.h: include runner/base/vocab/time.h"
plant locks/lock_record.cpp '#include "gates/dns_label.h"' "old path gates/dns_label.h"
plant runner/generate/render_child.cpp '#include "gates/shell_quote.h"' "old path gates/shell_quote.h"
plant runner/kube/kube_api.cpp '#include "gates/enum_names.h"' "old path gates/enum_names.h"
plant locks/record_json.cpp '#include "runner/cmd_status.h"' "lock_model -> runner is not an arrow"
plant runner/report/text.cpp '#include "locks/kubernetes_lease_store.h"' \
  "runner/report/text.cpp: report -> locks is not an arrow"
plant runner/config/config.cpp '#include "runner/generate/plan.h"' "config -> generate is not an arrow"
plant runner/run/upgrade.cpp '#include "runner/cmd_lock.h"' "run -> runner is not an arrow"
plant runner/cmd_status.cpp '#include "runner/cmd_lock.h"' "a command includes another command"
plant runner/kube/retry.cpp '#include "runner/secrets.h"' "old path runner/secrets.h"
plant runner/cmd_lint.cpp 'int f(Code c) { return c == Code::invalid ? k_exit_usage : k_exit_infra; }' \
  "exit-code"
plant runner/cmd_lint.cpp 'int f(Code c) { switch (c) { case Code::invalid: return k_exit_usage; } }' \
  "exit-code"
plant runner/connect/gitlab_members.cpp 'const std::string mask = "[MASKED]";' "masker"
plant runner/kube/errors.cpp 'auto at = text.find(secret);' "masker"
plant runner/report/write_reports.cpp 'int g() { return ::rename("a", "b"); }' "atomic-write"
plant locks/file_store.cpp 'int g() { return ::rename("a", "b"); }' "atomic-write"
plant runner/connect/gitlab_members.cpp 'Code h(int s) { switch (s) { case 404: return Code::not_found; } return Code::failed; }' \
  "http-status"
plant runner/kube/kubeconfig_entry.cpp 'Poco::Base64Decoder* d = nullptr;' "base64"
plant runner/generate/render_child.cpp "std::string q(char c) { return c == '\\'' ? \"'\\\\''\" : \"\"; }" \
  "shell-quote"
plant runner/cmd_lock.cpp 'RealClock clock;' "real-object"
plant runner/run/run.cpp 'PosixProcessRunner processes;' "real-object"
plant runner/connect/lock_target.cpp 'auto s = std::make_unique<FileStore>(path);' "real-object"
plant runner/status_gates.cpp 'auto k = open_kube_session(t, g, c, p, l);' "real-object"
plant runner/cmd_unlock.cpp 'auto m = make_gitlab_members(s);' "real-object"
plant runner/kube/retry.cpp '#include "runner/base/signals.h"' "signal-read"

[ "$failures" = 0 ] || { echo "$failures planted violation(s) not caught"; exit 1; }
echo "every planted violation was caught"
