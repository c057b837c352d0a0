// A directory with envgate.yml (file lock store, environments gstg and gprd, gstg
// held after a failure) and the lock commands run in-process on it, for the tests of
// `envgate lock`, `unlock` and `status`.
#pragma once

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "locks/file_store.h"
#include "runner/cmd_lock.h"
#include "runner/cmd_status.h"
#include "runner/cmd_unlock.h"
#include "test/fakes/fake_env.h"
#include "test/locks/store_factories.h"

namespace envgate::test {

inline const TimePoint k_t0 = *parse_rfc3339("2026-05-01T10:00:00Z");

struct Run {
    int code;
    std::string out;
    std::string err;
};

// A directory with envgate.yml (file store) and a failed lock gstg.
struct Workspace {
    test::TempDir dir;
    std::string config = dir.path() + "/envgate.yml";
    std::string locks = dir.path() + "/locks";

    Workspace() {
        std::ofstream(config)
            << "version: 1\n"
               "defaults:\n"
               "  namespace: gitlab\n"
               "  lock: { store: file, path: locks, local_unlock: true }\n"
               "  unlockers: [ \"alice\", \"@sre-oncall\", \"@gitlab-org/sre\" ]\n"
               "environments:\n"
               "  - name: gstg\n"
               "  - name: gprd\n";
        locks::LockRecord r;
        r.name = "gstg";
        r.state = locks::LockState::failed;
        r.holder = locks::Holder{};
        r.holder->id = "grp/app#7";
        r.acquired_at = k_t0;
        r.renewed_at = k_t0;
        r.failure = locks::Failure{"deploy", "MigrationsJobFailed", "backoffLimit", k_t0};
        r.record("acquire", "grp/app#7", k_t0, "was free");
        BOOST_REQUIRE(locks::FileStore(locks).write("gstg", r, "").is_ok());
    }

    locks::LockState state() { return locks::FileStore(locks).read("gstg")->record.state; }

    Run unlock(const std::map<std::string, std::string>& env,
               const std::string& reason = "migrations fixed by hand") {
        UnlockOptions o;
        o.env = "gstg";
        o.reason = reason;
        o.config_path = config;
        return run([&](Context& ctx) { return run_unlock(o, ctx); }, env);
    }

    // `envgate lock ACTION ENV --holder HOLDER --no-wait -o OUTPUT`.
    Run lock(const char* action, const std::string& env, const std::string& holder,
             const std::string& output = "text") {
        LockOptions o;
        o.action = action;
        o.env = env;
        o.config_path = config;
        o.holder = holder;
        o.no_wait = true;
        o.output = output;
        return run([&](Context& ctx) { return run_lock(o, ctx); }, {{"USER", "sre"}});
    }

    Run status(const std::string& output) {
        StatusOptions o;
        o.output = output;
        o.config_path = config;
        return run([&](Context& ctx) { return run_status(o, ctx); }, {{"USER", "sre"}});
    }

    template <typename F>
    Run run(F command, const std::map<std::string, std::string>& env) {
        std::istringstream in;
        std::ostringstream out;
        std::ostringstream err;
        test::FakeEnv fake(k_t0 + std::chrono::hours(1));
        fake.gitlab_factory = make_gitlab_members;  // the real client, to a server of the test's
        fake.real_kube = true;  // the Lease store's kubeconfig and server are the test's too
        Context ctx{in, out, err, fake, [env](const std::string& name) {
                        auto it = env.find(name);
                        return it == env.end() ? std::nullopt
                                               : std::optional<std::string>(it->second);
                    }};
        int code = command(ctx);
        return {code, out.str(), err.str()};
    }
};

inline bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace envgate::test
