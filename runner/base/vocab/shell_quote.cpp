#include "runner/base/vocab/shell_quote.h"

namespace envgate {

std::string quote_for_shell(std::string_view text, std::string_view bare) {
    if (!text.empty() && text.find_first_not_of(bare) == std::string_view::npos) {
        return std::string(text);
    }
    std::string out = "'";
    for (char c : text) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

}  // namespace envgate
