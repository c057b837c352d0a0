// libFuzzer target over every decoder of input envgate did not write: the first byte
// picks one, the rest is its input. envgate.yml, a gate's Job manifest, a kubeconfig,
// an exec credential plugin's output, a lock record (file store), a Lease, a run.json.
// Any crash, sanitizer report, escaping exception or run past libFuzzer's -timeout is
// a bug: each must return a value (an error naming what is wrong) instead.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "locks/kubernetes_lease_store.h"
#include "locks/record_json.h"
#include "runner/config/config.h"
#include "runner/gating/manifest.h"
#include "runner/kube/exec_credential.h"
#include "runner/kube/kubeconfig.h"
#include "runner/report/render.h"

using namespace envgate;

namespace {

std::optional<std::string> fuzz_env(const std::string& name) {
    if (name == "CI_PIPELINE_ID" || name == "CI_COMMIT_SHA") {
        return "1234";
    }
    return std::nullopt;
}

void kubeconfig(const std::string& text) {
    static const std::string path = "/tmp/envgate-fuzz-kubeconfig-" + std::to_string(::getpid());
    std::ofstream(path, std::ios::trunc | std::ios::binary) << text;
    (void)kube::load_kubeconfig_files({path}, std::nullopt);
}

void lease(const std::string& text) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_discarded()) {
        (void)locks::record_from_lease("gstg", j);
    }
}

void lock_record(const std::string& text) {
    auto j = locks::parse_record_text(text);
    if (j.is_ok()) {
        (void)locks::record_from_json(*j, "gstg");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 7) {
        case 0:
            (void)parse_config(text, "envgate.yml");
            break;
        case 1:
            (void)render_job_manifest({text, "job.yaml", "gstg", "pre-migrations", "gitlab", "1"},
                                      fuzz_env);
            break;
        case 2:
            kubeconfig(text);
            break;
        case 3:
            (void)kube::parse_exec_credential(text, "exec credential plugin fuzz");
            break;
        case 4:
            lock_record(text);
            break;
        case 5:
            lease(text);
            break;
        case 6:
            (void)parse_run_json(text, "run.json");
            break;
    }
    return 0;
}
