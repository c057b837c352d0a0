#include "gates/memory.h"

#include <algorithm>

#include "gates/messages.h"

namespace envgate::gates {

std::string cut_text(std::string_view text, std::size_t max) {
    if (text.size() <= max) {
        return std::string(text);
    }
    static constexpr std::string_view k_mark = "…";
    std::size_t at = max > k_mark.size() ? max - k_mark.size() : 0;
    while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) {
        --at;  // not inside a UTF-8 sequence
    }
    return std::string(text.substr(0, at)) + std::string(k_mark);
}

const RememberedRun* remembered(const GateMemory& memory, std::string_view key) {
    for (const RememberedRun& r : memory.runs) {
        if (r.key == key) {
            return &r;
        }
    }
    return nullptr;
}

namespace {

RememberedRun record_of(const SeenRun& run, const std::vector<const Pod*>& pods) {
    RememberedRun r;
    r.key = run.key;
    r.pod = run.failure.pod;
    r.container = run.failure.container;
    r.number = run.number;
    r.counted = run.counted;
    r.attempt = run.counted ? run.counts.attempt : 0;
    r.limit = run.counted ? run.counts.limit : 0;
    r.text = cut_text(run_text(run), k_remembered_text_bytes);
    r.at = run.failure.at;
    for (const Pod* pod : pods) {
        if (pod->name == r.pod && !r.pod.empty()) {
            r.index = pod->completion_index;
        }
    }
    return r;
}

}  // namespace

void remember_runs(GateMemory& memory, const std::vector<SeenRun>& runs,
                   const std::vector<const Pod*>& pods) {
    for (const SeenRun& run : runs) {
        if (remembered(memory, run.key) == nullptr) {
            memory.runs.push_back(record_of(run, pods));
        }
    }
    const auto excess = static_cast<int>(memory.runs.size()) - k_remembered_runs;
    if (excess > 0) {
        memory.runs.erase(memory.runs.begin(), memory.runs.begin() + excess);
        memory.runs_forgotten += excess;
    }
}

void note_kept(GateMemory& memory, std::string_view key, std::string_view job_url, bool tail_kept) {
    for (RememberedRun& r : memory.runs) {
        if (r.key == key) {
            r.seen_by = std::string(job_url);
            r.tail_kept = tail_kept;
        }
    }
}

}  // namespace envgate::gates
