#include "runner/generate/plain_scalar.h"

#include <yaml-cpp/yaml.h>

#include <ostream>
#include <string>

namespace envgate {
namespace {

// yaml-cpp writes a longer plain string as a long key ("? ...") when it is a key.
constexpr std::size_t k_max_plain = 1024;

bool is_null_word(std::string_view text) {
    return text == "~" || text == "null" || text == "Null" || text == "NULL";
}

bool plain_first(char c) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    return alnum || c == '_' || c == '.' || c == '/' || c == '$';
}

// What yaml-cpp's integral path writes: the text, after the same node preparation
// (indentation, "key: ", "- ") as a string it has chosen to write plain.
struct Verbatim {
    std::string_view text;
};

std::ostream& operator<<(std::ostream& os, Verbatim v) {
    return os.write(v.text.data(), static_cast<std::streamsize>(v.text.size()));
}

bool is_bool_word(std::string_view t) {
    for (const char* w :
         {"y",    "Y",    "yes",   "Yes",   "YES",   "n",  "N",  "no", "No",  "NO",  "true",
          "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"}) {
        if (t == w) {
            return true;
        }
    }
    return false;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

}  // namespace

bool reads_as_non_string(std::string_view text) {
    if (is_bool_word(text)) {
        return true;
    }
    std::string_view t = text;
    if (!t.empty() && (t.front() == '+' || t.front() == '-')) {
        t.remove_prefix(1);
    }
    for (std::string_view special : {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"}) {
        if (t == special) {
            return true;
        }
    }
    bool numeric_start =
        !t.empty() && (is_digit(t.front()) || (t.front() == '.' && t.size() > 1 && is_digit(t[1])));
    if (!numeric_start) {
        return false;
    }
    // Digits with what YAML 1.1 ints, floats, sexagesimals and timestamps may hold.
    return t.find_first_not_of("0123456789+-._: eExXoObBaAcCdDfFtTzZ") == std::string_view::npos;
}

bool is_plain_in_block(std::string_view text) {
    if (text.empty() || text.size() > k_max_plain || is_null_word(text) ||
        !plain_first(text.front()) || text.back() == ' ' || text.back() == ':') {
        return false;
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c < 0x20 || c > 0x7e || c == '#' || (c == ':' && text[i + 1] == ' ')) {
            return false;
        }
    }
    return true;
}

void emit_text(YAML::Emitter& out, std::string_view text) {
    if (reads_as_non_string(text)) {
        out << YAML::DoubleQuoted << std::string(text);
    } else if (is_plain_in_block(text)) {
        out.WriteIntegralType(Verbatim{text});
    } else {
        out << std::string(text);
    }
}

}  // namespace envgate
