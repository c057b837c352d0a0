// split_commands: a small POSIX sh word splitter (XCU 2.2-2.4: quoting, token
// recognition, reserved words). Expansions are left as written.
#include "runner/lint/shell_words.h"

#include <algorithm>
#include <array>

namespace envgate::lint {
namespace {

constexpr std::array<std::string_view, 16> k_reserved = {
    "if",    "then", "else", "elif", "fi", "do", "done", "while",
    "until", "for",  "case", "esac", "!",  "{",  "}",    "time"};

bool is_assignment(const std::string& w) {
    std::size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
        return false;
    }
    return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
        return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
               (c >= '0' && c <= '9');
    });
}

class Splitter {
  public:
    explicit Splitter(std::string_view s) : m_s(s) {}

    std::vector<SimpleCommand> run() {
        while (m_i < m_s.size()) {
            step();
        }
        end_command();
        return std::move(m_out);
    }

  private:
    void step() {
        char c = m_s[m_i];
        if (c == ' ' || c == '\t') {
            end_word();
            ++m_i;
        } else if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
                   c == '`') {
            end_command();
            ++m_i;
        } else if (c == '#' && !m_in_word) {
            std::size_t nl = m_s.find('\n', m_i);
            m_i = nl == std::string_view::npos ? m_s.size() : nl;
        } else if (c == '$' && m_i + 1 < m_s.size() && m_s[m_i + 1] == '(') {
            end_command();  // $(cmd): cmd is a command of its own
            m_i += 2;
        } else if (c == '\\') {
            if (m_i + 1 < m_s.size() && m_s[m_i + 1] != '\n') {
                append(m_s[m_i + 1]);
            }
            m_i += 2;
        } else if (c == '\'') {
            quoted('\'');
        } else if (c == '"') {
            quoted('"');
        } else {
            append(c);
            ++m_i;
        }
    }

    // A quoted part joins the current word; inside "..." a backslash escapes \ " $ `.
    void quoted(char q) {
        start_word();
        ++m_i;
        while (m_i < m_s.size() && m_s[m_i] != q) {
            if (q == '"' && m_s[m_i] == '\\' && m_i + 1 < m_s.size()) {
                ++m_i;
            }
            m_word.push_back(m_s[m_i]);
            ++m_i;
        }
        ++m_i;
    }

    void start_word() {
        if (!m_in_word) {
            m_in_word = true;
            m_start = m_i;
        }
    }

    void append(char c) {
        start_word();
        m_word.push_back(c);
    }

    void end_word() {
        if (!m_in_word) {
            return;
        }
        bool leading = m_command.empty();
        bool reserved = std::find(k_reserved.begin(), k_reserved.end(), m_word) != k_reserved.end();
        if (!(leading && (reserved || is_assignment(m_word)))) {
            m_command.push_back({m_word, m_start});
        }
        m_word.clear();
        m_in_word = false;
    }

    void end_command() {
        end_word();
        if (!m_command.empty()) {
            m_out.push_back(std::move(m_command));
        }
        m_command.clear();
    }

    std::string_view m_s;
    std::size_t m_i = 0;
    std::string m_word;
    bool m_in_word = false;
    std::size_t m_start = 0;
    SimpleCommand m_command;
    std::vector<SimpleCommand> m_out;
};

}  // namespace

std::vector<SimpleCommand> split_commands(std::string_view script) {
    return Splitter(script).run();
}

}  // namespace envgate::lint
