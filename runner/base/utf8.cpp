#include "runner/base/utf8.h"

namespace envgate {
namespace {

constexpr std::string_view k_replacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed sequence starting at `text[at]`, or 0 when it is
// ill-formed; `bad` is then how many bytes its maximal subpart spans (at least 1).
std::size_t sequence_at(std::string_view text, std::size_t at, std::size_t& bad) {
    auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    bad = 1;
    if (lead < 0x80) {
        return 1;
    }
    std::size_t need = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 2;
        low = lead == 0xE0 ? 0xA0 : 0x80;   // no overlong forms
        high = lead == 0xED ? 0x9F : 0xBF;  // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 3;
        low = lead == 0xF0 ? 0x90 : 0x80;
        high = lead == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    } else {
        return 0;  // a continuation byte, C0, C1 or F5..FF
    }
    for (std::size_t k = 1; k <= need; ++k) {
        if (at + k >= text.size()) {
            bad = k;
            return 0;
        }
        const unsigned char c = byte(at + k);
        const unsigned char lo = k == 1 ? low : 0x80;
        const unsigned char hi = k == 1 ? high : 0xBF;
        if (c < lo || c > hi) {
            bad = k;
            return 0;
        }
    }
    return need + 1;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
    std::size_t bad = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t n = sequence_at(text, at, bad);
        if (n == 0) {
            return false;
        }
        at += n;
    }
    return true;
}

std::string valid_utf8(std::string_view text) {
    if (is_valid_utf8(text)) {
        return std::string(text);
    }
    std::string out;
    out.reserve(text.size() + 16);
    std::size_t bad = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t n = sequence_at(text, at, bad);
        if (n == 0) {
            out += k_replacement;
            at += bad;
        } else {
            out.append(text.substr(at, n));
            at += n;
        }
    }
    return out;
}

std::string dump_json(const nlohmann::json& value, int indent) {
    return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace envgate
