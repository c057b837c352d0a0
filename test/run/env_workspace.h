// An envgate.yml in a temp folder (environment e1, namespace gitlab; gates pre- and
// post-migrations; steps diff and deploy; the lock in the file store of the folder, or
// as Leases on the fake cluster) and every command run in-process on a FakeEnv: the
// fixture of the unit cases that took over the decisions the bash e2e tests check
// (test/run/README.md lists which).
#pragma once

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "locks/file_store.h"
#include "runner/base/exit_status.h"
#include "runner/cmd_gate.h"
#include "runner/cmd_lock.h"
#include "runner/cmd_status.h"
#include "runner/cmd_unlock.h"
#include "runner/run/run.h"
#include "test/fakes/fake_env.h"
#include "test/locks/store_factories.h"

namespace envgate::test {

inline const TimePoint k_start = *parse_rfc3339("2026-03-01T10:00:00Z");

struct CommandRun {
    int code;
    std::string out;
    std::string err;
    std::string all() const { return out + err; }
};

struct EnvWorkspace {
    TempDir dir;
    FakeEnv env{k_start};
    std::string config = dir.path() + "/envgate.yml";
    std::string locks = dir.path() + "/locks";
    std::string reports = dir.path() + "/reports";
    std::map<std::string, std::string> vars = {{"USER", "sre"}};

    // `lock` is the defaults' lock line; `steps` the steps: block.
    explicit EnvWorkspace(const std::string& lock =
                              "{ store: file, path: locks, "
                              "on_failure: hold, local_unlock: true }",
                          const std::string& deploy = "helmfile apply") {
        write_job("pre.yaml", "pre");
        write_job("post.yaml", "post");
        std::ofstream(config) << "version: 1\n"
                                 "defaults:\n"
                                 "  namespace: gitlab\n"
                                 "  lock: " +
                                     lock +
                                     "\n"
                                     "environments:\n"
                                     "  - name: e1\n"
                                     "    kube_context: ctx-e1\n"
                                     "gates:\n"
                                     "  pre-migrations: { job: pre.yaml }\n"
                                     "  post-migrations: { job: post.yaml }\n"
                                     "steps:\n"
                                     "  diff: \"helmfile diff\"\n"
                                     "  deploy: \"" +
                                     deploy + "\"\n";
        // The Job controller: every Job completes at once, unless a test says otherwise.
        env.on_job_created = [this](const nlohmann::json& job) { finish(job, job_outcome(job)); };
    }

    void write_job(const std::string& file, const std::string& name,
                   const std::string& extra_metadata = "") {
        std::ofstream(dir.path() + "/" + file) << "apiVersion: batch/v1\n"
                                                  "kind: Job\n"
                                                  "metadata:\n"
                                                  "  name: " +
                                                      name + "\n" + extra_metadata +
                                                      "spec:\n"
                                                      "  backoffLimit: 2\n"
                                                      "  template:\n"
                                                      "    spec:\n"
                                                      "      restartPolicy: OnFailure\n"
                                                      "      containers:\n"
                                                      "        - name: migrations\n"
                                                      "          image: registry.example.com/m:1\n"
                                                      "          command: [\"db-migrate\"]\n";
    }

    // Which Jobs fail (by the prefix of their name: "pre", "post"); the rest complete.
    std::map<std::string, std::string> failing;  // prefix -> the failure's message
    std::string job_outcome(const nlohmann::json& job) const {
        std::string name = job["metadata"].value("name", "");
        for (const auto& [prefix, message] : failing) {
            if (name.rfind(prefix + "-", 0) == 0) {
                return "Failed";
            }
        }
        return "Complete";
    }

    // Plays the Job controller: the Job `job` ends with condition `type`.
    void finish(const nlohmann::json& job, const std::string& type) {
        const std::string ns = job["metadata"].value("namespace", "");
        const std::string name = job["metadata"].value("name", "");
        const std::string now = format_rfc3339(env.fake_clock.now());
        env.kube.mutate(kube::jobs(ns).with_name(name), [&](nlohmann::json& j) {
            nlohmann::json condition = {{"type", type},
                                        {"status", "True"},
                                        {"lastTransitionTime", now},
                                        {"reason", type == "Failed" ? "BackoffLimitExceeded" : ""},
                                        {"message", type == "Failed" ? "Job has reached the "
                                                                       "specified backoff limit"
                                                                     : ""}};
            j["status"]["startTime"] = now;
            j["status"]["conditions"] = nlohmann::json::array({condition});
            if (type == "Complete") {
                j["status"]["succeeded"] = 1;
                j["status"]["completionTime"] = now;
            } else {
                j["status"]["failed"] = k_failed_pods;
            }
        });
        if (type == "Failed") {
            // Its pods, as the kubelet left them: the gate counts and names them (without
            // them, it would wait for their deletion to arrive, on a clock nobody moves).
            const std::string uid = job["metadata"].value("uid", "");
            for (int i = 0; i < k_failed_pods; ++i) {
                const std::string pod = name + "-" + std::to_string(i);
                env.kube.seed(
                    kube::pods(ns, pod),
                    {{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata",
                      {{"name", pod},
                       {"namespace", ns},
                       {"uid", uid + "-pod-" + std::to_string(i)},
                       {"labels",
                        {{"job-name", name}, {"batch.kubernetes.io/controller-uid", uid}}}}},
                     {"status",
                      {{"phase", "Failed"},
                       {"startTime", now},
                       {"containerStatuses",
                        {{{"name", "migrations"},
                          {"restartCount", 0},
                          {"state",
                           {{"terminated",
                             {{"exitCode", 1},
                              {"reason", "Error"},
                              {"startedAt", now},
                              {"finishedAt", now}}}}}}}}}}});
            }
        }
    }
    static constexpr int k_failed_pods = 3;  // backoffLimit 2: three pods failed

    // The names of the Jobs created so far, in order.
    std::vector<std::string> jobs_created() const {
        std::vector<std::string> out;
        for (const auto& call : env.kube.calls) {
            if (call.verb == "create" && call.ref.resource == "jobs") {
                out.push_back(call.body["metadata"].value("name", ""));
            }
        }
        return out;
    }

    // How many Jobs the fake cluster holds (a create refused as AlreadyExists, as a
    // re-attaching run makes, adds none).
    std::size_t jobs_stored() {
        auto listed = env.kube.list(kube::jobs("gitlab"), {});
        BOOST_REQUIRE(listed.is_ok());
        return listed->items.size();
    }

    locks::LockRecord lock_record(const std::string& name = "e1") {
        auto v = locks::FileStore(locks).read(name);
        BOOST_REQUIRE_MESSAGE(v.is_ok(), (v.is_ok() ? "" : v.status().message()));
        return v->record;
    }
    bool lock_written(const std::string& name = "e1") const {
        return std::filesystem::exists(locks + "/" + name + ".json");
    }

    template <typename F>
    CommandRun run(F command) {
        std::istringstream in;
        std::ostringstream out;
        std::ostringstream err;
        Context ctx{in, out, err, env, [this](const std::string& name) {
                        auto it = vars.find(name);
                        return it == vars.end() ? std::nullopt
                                                : std::optional<std::string>(it->second);
                    }};
        int code = command(ctx);
        return {code, out.str(), err.str()};
    }

    RunOptions run_options() const {
        RunOptions o;
        o.environment = "e1";
        o.config = config;
        o.report_dir = reports;
        o.holder = vars.count("CI") ? std::nullopt : std::optional<std::string>("local:test");
        o.no_wait = true;
        return o;
    }
    CommandRun envgate_run(RunOptions o) {
        return run([&](Context& ctx) { return run_run(o, ctx); });
    }
    CommandRun envgate_run() { return envgate_run(run_options()); }

    // The CI variables of pipeline `id` of project grp/app.
    void in_pipeline(int id) {
        vars["CI"] = "true";
        vars["GITLAB_CI"] = "true";
        vars["CI_PROJECT_PATH"] = "grp/app";
        vars["CI_PIPELINE_ID"] = std::to_string(id);
        vars["CI_PIPELINE_URL"] =
            "https://gitlab.example.com/grp/app/-/pipelines/" + std::to_string(id);
    }
    // A shell outside any pipeline (an operator's): no CI variables.
    void out_of_pipeline() {
        for (const char* name :
             {"CI", "GITLAB_CI", "CI_PROJECT_PATH", "CI_PIPELINE_ID", "CI_PIPELINE_URL"}) {
            vars.erase(name);
        }
    }
};

// `envgate lock ACTION e1 --holder HOLDER --no-wait` with the workspace's envgate.yml.
inline LockOptions lock_options(const EnvWorkspace& w, const char* action, const char* holder) {
    LockOptions o;
    o.action = action;
    o.env = "e1";
    o.config_path = w.config;
    o.holder = holder;
    o.no_wait = true;
    return o;
}

inline bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace envgate::test
