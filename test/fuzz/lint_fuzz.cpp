// libFuzzer target over `envgate lint`'s input edge: arbitrary bytes read as a
// manifest stream, small limits so bombs and depth are reached, then every check and
// every renderer. Any crash, sanitizer report or escaping exception is a bug; so is
// an error without the file name in front.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/lint/lint.h"
#include "runner/lint/render.h"

using namespace envgate;
using namespace envgate::lint;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    ReadLimits limits;
    limits.max_document_bytes = 32 << 10;
    limits.max_depth = 40;
    limits.max_expanded_nodes = 20000;
    Linter linter(LintSettings{}, limits);
    Status s = linter.add("in.yaml", text);
    if (!s.is_ok() && !s.message().starts_with("in.yaml")) {
        __builtin_trap();
    }
    LintReport report = linter.finish();
    (void)render_text(report);
    (void)render_json(report);
    (void)render_codequality(report);
    return 0;
}
