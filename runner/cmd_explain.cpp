#include "runner/cmd_explain.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "gates/decode.h"
#include "gates/evaluate.h"
#include "gates/memory_json.h"
#include "gates/verdict_json.h"
#include "runner/base/exit_status.h"
#include "runner/config/run_order.h"

namespace envgate {
namespace {

// The whole of the file at `path`; the error names the path.
Result<std::string> read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Status(Code::io, path + ": cannot read: " + std::strerror(errno));
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        return Status(Code::io, path + ": read failed");
    }
    return text.str();
}

// --gate: a built-in gate, else one the config adds (which is then read).
Result<gates::Gate> gate_of(const ExplainOptions& o) {
    if (auto builtin = gates::gate_from_name(o.gate)) {
        return *builtin;
    }
    std::string path = o.config_path.value_or("envgate.yml");
    std::error_code ec;
    if (!o.config_path && !std::filesystem::exists(path, ec)) {
        return resolve_gate(o.gate, nullptr);
    }
    TRY_ASSIGN(Config config, load_config(path));
    return resolve_gate(o.gate, &config);
}

struct ExplainInput {
    gates::Gate gate = gates::Gate::pre_migrations;
    std::optional<gates::Job> job;  // nullopt: --job-deleted
    std::vector<gates::Pod> pods;
    gates::GateMemory memory;
    TimePoint now;
};

Result<ExplainInput> load(const ExplainOptions& o, Clock& clock) {
    ExplainInput in;
    TRY_ASSIGN(in.gate, gate_of(o));
    if (o.job_deleted == !o.job_path.empty()) {
        return Status(Code::invalid, "give either --job FILE or --job-deleted (with --memory)");
    }
    if (!o.job_deleted) {
        TRY_ASSIGN(std::string job_text, read_text_file(o.job_path));
        TRY_ASSIGN(in.job, gates::decode_job(job_text, o.job_path));
    }
    if (o.pods_path) {
        TRY_ASSIGN(std::string pods_text, read_text_file(*o.pods_path));
        TRY_ASSIGN(in.pods, gates::decode_pods(pods_text, *o.pods_path));
    }
    if (o.memory_path) {
        TRY_ASSIGN(std::string memory_text, read_text_file(*o.memory_path));
        TRY_ASSIGN(in.memory, gates::decode_memory(memory_text, *o.memory_path));
    }
    in.now = clock.now();
    if (o.now) {
        auto now = parse_rfc3339(*o.now);
        if (!now) {
            return Status(Code::invalid, "--now: \"" + *o.now + "\" is not an RFC 3339 time");
        }
        in.now = *now;
    }
    return in;
}

}  // namespace

int run_explain(const ExplainOptions& options, Context& ctx) {
    Result<ExplainInput> in = load(options, ctx.clock);
    if (!in) {
        ctx.err << "envgate explain: " << in.status().message() << "\n";
        return k_exit_usage;
    }
    gates::Verdict verdict = gates::evaluate(in->gate, in->job, in->pods, in->memory, in->now);
    ctx.out << gates::encode_verdict(in->gate, verdict) << "\n";
    return k_exit_success;
}

}  // namespace envgate
