#include "runner/base/base64.h"

#include <array>
#include <sstream>

#include <Poco/Base64Decoder.h>

namespace envgate {

// The decoder throws on a character outside the alphabet. istream::read catches that
// and sets badbit, so no exception crosses a half-built string (the fuzzer found one
// such string leaked when the throw came through istreambuf_iterator).
std::optional<std::string> decode_base64(std::string_view encoded) {
    std::istringstream in{std::string(encoded)};
    Poco::Base64Decoder decoder(in);
    std::string out;
    std::array<char, 512> chunk{};
    do {
        decoder.read(chunk.data(), chunk.size());
        out.append(chunk.data(), static_cast<std::size_t>(decoder.gcount()));
    } while (decoder.good());
    if (decoder.bad()) {
        return std::nullopt;
    }
    return out;
}

}  // namespace envgate
