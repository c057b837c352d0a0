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

const std::vector<RememberedRun>& RememberedRuns::list() const {
    static const std::vector<RememberedRun> k_none;
    return m_runs ? *m_runs : k_none;
}

std::vector<RememberedRun>& RememberedRuns::edit() {
    if (!m_runs) {
        m_runs = std::make_shared<std::vector<RememberedRun>>();
    } else if (m_runs.use_count() > 1) {
        m_runs = std::make_shared<std::vector<RememberedRun>>(*m_runs);
    }
    return *m_runs;
}

void remember_runs(GateMemory& memory, const std::vector<SeenRun>& runs,
                   const std::vector<const Pod*>& pods) {
    // Only the newest k_remembered_runs of them can be kept; a pass that lists none
    // new (nearly every pass) leaves the shared records alone.
    const std::size_t from = runs.size() > static_cast<std::size_t>(k_remembered_runs)
                                 ? runs.size() - k_remembered_runs
                                 : 0;
    int skipped = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (remembered(memory, runs[i].key) != nullptr) {
            continue;
        }
        if (i < from) {
            ++skipped;  // dropped at once: as if kept, then pushed out
            continue;
        }
        memory.runs.edit().push_back(record_of(runs[i], pods));
    }
    memory.runs_forgotten += skipped;
    const auto excess = static_cast<int>(memory.runs.size()) - k_remembered_runs;
    if (excess > 0) {
        auto& kept = memory.runs.edit();
        kept.erase(kept.begin(), kept.begin() + excess);
        memory.runs_forgotten += excess;
    }
}

void note_kept(GateMemory& memory, std::string_view key, std::string_view job_url, bool tail_kept) {
    const RememberedRun* r = remembered(memory, key);
    if (r == nullptr || (r->seen_by == job_url && r->tail_kept == tail_kept)) {
        return;
    }
    const auto at = static_cast<std::size_t>(r - memory.runs.list().data());
    RememberedRun& changed = memory.runs.edit()[at];
    changed.seen_by = std::string(job_url);
    changed.tail_kept = tail_kept;
}

}  // namespace envgate::gates
