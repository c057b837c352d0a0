// Status and Result<T>: how every layer of envgate returns an expected failure.
// Codes follow the Kubernetes API errors envgate distinguishes; `invalid` is bad
// input (a config, a manifest, a JSON file). Exceptions never cross a module edge.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace envgate {

enum class Code {
    ok,
    invalid,
    not_found,
    conflict,
    already_exists,
    gone,
    unauthorized,
    forbidden,
    transient,
    timeout,
    cancelled,
    failed,
    io,
};

// The name of `code` as written in messages (`not_found` -> "NotFound").
const char* code_name(Code code);
std::ostream& operator<<(std::ostream& out, Code code);

class [[nodiscard]] Status {
  public:
    Status() = default;
    Status(Code code, std::string message) : m_code(code), m_message(std::move(message)) {}
    static Status ok() { return {}; }

    bool is_ok() const { return m_code == Code::ok; }
    Code code() const { return m_code; }
    const std::string& message() const { return m_message; }

    // A copy whose message is "`context`: <message>", so that errors read outside-in.
    Status with_context(const std::string& context) const {
        return {m_code, context + ": " + m_message};
    }

  private:
    Code m_code = Code::ok;
    std::string m_message;
};

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : m_value(std::move(value)) {}         // NOLINT: implicit by design
    Result(Status status) : m_value(std::move(status)) {}  // NOLINT: implicit by design

    bool is_ok() const { return std::holds_alternative<T>(m_value); }
    explicit operator bool() const { return is_ok(); }

    // REQUIRES: is_ok().
    T& value() & { return std::get<T>(m_value); }
    const T& value() const& { return std::get<T>(m_value); }
    T&& value() && { return std::get<T>(std::move(m_value)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    // REQUIRES: !is_ok().
    const Status& status() const { return std::get<Status>(m_value); }

  private:
    std::variant<T, Status> m_value;
};

}  // namespace envgate

#define ENVGATE_CONCAT_INNER(a, b) a##b
#define ENVGATE_CONCAT(a, b) ENVGATE_CONCAT_INNER(a, b)

// TRY(expr): return the Status of `expr` from the enclosing function if it failed.
#define TRY(expr) TRY_IMPL(ENVGATE_CONCAT(envgate_try_, __COUNTER__), expr)
#define TRY_IMPL(tmp, expr)             \
    do {                                \
        ::envgate::Status tmp = (expr); \
        if (!tmp.is_ok()) {             \
            return tmp;                 \
        }                               \
    } while (false)

// TRY_ASSIGN(lhs, expr): evaluate a Result<T>; return its Status on failure, else
// move its value into `lhs` (which may be a declaration: `TRY_ASSIGN(auto x, f())`).
#define TRY_ASSIGN(lhs, expr) TRY_ASSIGN_IMPL(ENVGATE_CONCAT(envgate_res_, __COUNTER__), lhs, expr)
#define TRY_ASSIGN_IMPL(tmp, lhs, expr) \
    auto tmp = (expr);                  \
    if (!tmp.is_ok()) {                 \
        return tmp.status();            \
    }                                   \
    lhs = std::move(tmp).value()
