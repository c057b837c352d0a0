// libFuzzer target over the gate's input edge: decode a Job, a pod list and a memory
// from arbitrary bytes, then evaluate and encode the verdict. Any crash, sanitizer report
// or escaping exception is a bug. The input is split on NUL bytes: job \0 pods \0 memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gates/decode.h"
#include "gates/evaluate.h"
#include "gates/memory_json.h"
#include "gates/verdict_json.h"

using namespace envgate;
using namespace envgate::gates;

namespace {

std::string_view next_part(std::string_view& rest) {
    std::size_t nul = rest.find('\0');
    std::string_view part = rest.substr(0, nul);
    rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
    return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    std::string_view job_text = next_part(rest);
    std::string_view pods_text = next_part(rest);
    std::string_view memory_text = next_part(rest);
    auto job = decode_job(job_text, "job.json");
    auto pods = decode_pods(pods_text.empty() ? std::string_view("[]") : pods_text, "pods.json");
    GateMemory memory;
    if (!memory_text.empty()) {
        auto m = decode_memory(memory_text, "memory.json");
        if (m.is_ok()) {
            memory = *m;
        }
    }
    std::optional<Job> present;
    if (job.is_ok()) {
        present = *job;
    }
    // A job that does not decode stands for a deleted Job: evaluate that path too.
    std::vector<Pod> no_pods;
    Verdict v = evaluate(Gate::pre_migrations, present, pods.is_ok() ? *pods : no_pods, memory,
                         *parse_rfc3339("2025-05-29T08:00:00Z"));
    (void)encode_verdict(Gate::pre_migrations, v);
    auto annotations = memory_annotations(v.memory);
    auto back = memory_from_annotations(annotations);
    if (!back.is_ok() || !(*back == v.memory)) {
        __builtin_trap();  // the memory must survive its annotations
    }
    Verdict again = evaluate(Gate::pre_migrations, present, pods.is_ok() ? *pods : no_pods,
                             v.memory, *parse_rfc3339("2025-05-29T08:00:00Z"));
    if (again.event || !(again.memory == v.memory)) {
        __builtin_trap();  // evaluating the same snapshot twice must change nothing
    }
    return 0;
}
