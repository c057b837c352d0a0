// A Verdict as the JSON object `envgate explain` prints (gate, phase, state,
// progressing, counts, last_failure, command, event, memory).
#pragma once

#include <string>

#include "gates/gate.h"
#include "gates/verdict.h"

namespace envgate::gates {

// One JSON object, indented by 2 spaces, without a trailing newline.
std::string encode_verdict(const Gate& gate, const Verdict& verdict);

}  // namespace envgate::gates
