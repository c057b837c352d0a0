#include "runner/report/text.h"

#include <cctype>

#include "runner/base/utf8.h"

namespace envgate {
namespace {

// Length of a UTF-8 prefix of `text` of at most `max` bytes that ends on a
// character boundary.
size_t utf8_cut(std::string_view text, size_t max) {
    if (text.size() <= max) {
        return text.size();
    }
    size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) {
        --n;
    }
    return n;
}

}  // namespace

std::string strip_control(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == 0x1b) {
            // CSI: ESC [ params final-byte (0x40..0x7e); other escapes: drop ESC + next.
            if (i + 1 < text.size() && text[i + 1] == '[') {
                i += 2;
                while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) {
                    ++i;
                }
            } else {
                ++i;
            }
            continue;
        }
        if (c == '\r') {
            continue;
        }
        if (c < 0x20 && c != '\n' && c != '\t') {
            continue;
        }
        if (c == 0x7f) {
            continue;
        }
        out.push_back(static_cast<char>(c));
    }
    return valid_utf8(out);  // XML and HTML readers stop at a byte that is not UTF-8
}

std::string xml_escape(std::string_view text) {
    std::string clean = strip_control(text);
    std::string out;
    out.reserve(clean.size() + 16);
    for (char c : clean) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out.push_back(c);
        }
    }
    return out;
}

std::string first_line(std::string_view text, size_t max) {
    std::string clean = strip_control(text);
    std::string_view line = clean;
    size_t nl = line.find('\n');
    bool cut = false;
    if (nl != std::string_view::npos) {
        line = line.substr(0, nl);
        cut = true;
    }
    if (line.size() > max) {
        size_t n = utf8_cut(line, max);
        size_t space = line.find_last_of(' ', n);
        if (space != std::string_view::npos && space > max / 2) {
            n = space;  // the last whole word
        }
        line = line.substr(0, n);
        while (!line.empty() && (line.back() == ' ' || line.back() == ',' || line.back() == ';' ||
                                 line.back() == ':')) {
            line.remove_suffix(1);  // "word…", not "word:…"
        }
        cut = true;
    }
    std::string out(line);
    if (cut) {
        out += "…";
    }
    return out;
}

std::string without_command(std::string_view message, std::string_view command) {
    size_t at = command.empty() ? std::string_view::npos : message.find(command);
    if (at == std::string_view::npos || at < 2 || message.substr(at - 2, 2) != ": ") {
        return std::string(message);
    }
    // Back over the label ("Details", "Logs", "kubectl describe shows why") to what opens
    // it: a sentence's end or a parenthesis.
    size_t label = at - 2;
    while (label > 0 && at - label < 40 &&
           (std::isalpha(static_cast<unsigned char>(message[label - 1])) != 0 ||
            message[label - 1] == ' ')) {
        --label;
    }
    size_t end = at + command.size();
    if (label == 0 || at - label >= 40) {
        return std::string(message);
    }
    char opener = message[label - 1];
    if (opener == '(' && end < message.size() && message[end] == ')') {
        size_t from = label - 1;
        if (from > 0 && message[from - 1] == ' ') {
            --from;
        }
        return std::string(message.substr(0, from)) + std::string(message.substr(end + 1));
    }
    if (opener != '.' && opener != ';') {
        return std::string(message);
    }
    return std::string(message.substr(0, label - 1)) + std::string(message.substr(end));
}

std::string cap_size(std::string_view text, size_t max) {
    if (text.size() <= max) {
        return std::string(text);
    }
    size_t n = utf8_cut(text, max);
    return std::string(text.substr(0, n)) + "\n… (" + std::to_string(text.size() - n) +
           " more bytes cut)";
}

}  // namespace envgate
