#include "locks/describe.h"

#include <algorithm>

#include "runner/base/vocab/shell_quote.h"

namespace envgate::locks {

std::string shell_quote(const std::string& text) {
    return quote_for_shell(text,
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                           "@%+=:,./_-#");
}

std::string unlock_command(const LockRecord& r) {
    std::string cmd = "envgate unlock " + r.name + " --reason \"...\"";
    if (r.holder) {
        cmd += " --expect-holder " + shell_quote(r.holder->id);
    }
    return cmd;
}

std::string describe_holder(const LockRecord& r, TimePoint now) {
    if (r.state == LockState::free || !r.holder) {
        return "free";
    }
    std::string text = std::string(r.state == LockState::failed ? "failed, held by " : "held by ") +
                       r.holder->id + " since " + format_rfc3339(r.acquired_at) + " (" +
                       format_duration(now - r.acquired_at) + " ago)";
    if (!r.step.empty()) {
        text += ", step " + r.step;
    }
    if (!r.holder->job_url.empty()) {
        text += ", job " + r.holder->job_url;
    }
    return text;
}

std::string failure_text(const Failure& f) {
    std::string text = f.step.empty() ? std::string() : f.step + ": ";
    text += f.reason.empty() ? std::string("Failed") : f.reason;
    if (!f.message.empty()) {
        text += ": " + f.message;
    }
    return text;
}

std::string failure_in(const Transition& t) {
    // The policy writes these (policy_ops.cpp): "TEXT[ (policy release: lock freed)]",
    // and "REASON (was failed by ID, TEXT)" for an unlock.
    if (t.what == "fail") {
        const std::string released = " (policy release: lock freed)";
        return t.why.ends_with(released) ? t.why.substr(0, t.why.size() - released.size()) : t.why;
    }
    if (t.what == "vanished") {
        return t.why;
    }
    const std::string was = " (was failed by ";
    auto at = t.why.find(was);
    if (t.what != "unlock" || at == std::string::npos || !t.why.ends_with(")")) {
        return {};
    }
    auto comma = t.why.find(", ", at + was.size());
    if (comma == std::string::npos) {
        return {};
    }
    return t.why.substr(comma + 2, t.why.size() - 1 - (comma + 2));
}

std::string describe_failure(const LockRecord& r) {
    if (!r.failure) {
        return {};
    }
    const Failure& f = *r.failure;
    std::string text = f.step.empty() ? std::string() : "step " + f.step + ": ";
    text += f.reason;
    if (!f.message.empty()) {
        text += ": " + f.message;
    }
    return text + " (at " + format_rfc3339(f.at) + ")";
}

}  // namespace envgate::locks
