#include "runner/report/text.h"

#include "runner/utf8.h"

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
        line = line.substr(0, utf8_cut(line, max));
        cut = true;
    }
    std::string out(line);
    if (cut) {
        out += "…";
    }
    return out;
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
