// Given Job manifests as people write them (YAML, JSON, helm template output),
// then rendering expands only allowed variables, names the Job after a hash of
// its rendered spec, labels it, and reports bad input with file:line:column.
#include <boost/test/unit_test.hpp>
#include <map>
#include <vector>

#include "runner/gating/manifest.h"

using namespace envgate;

namespace {

const char* k_job = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: gitlab-migrations-pre
  labels: {app: migrations}
spec:
  backoffLimit: 6
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: migrations
          image: "registry.example.com/gitlab-toolbox:${CI_COMMIT_SHORT_SHA}"
          command: ["sh", "-c", "echo $$HOME; db-migrate"]
          env:
            - {name: SKIP_POST_DEPLOYMENT_MIGRATIONS, value: "true"}
            - name: ENV
              value: ${ENVGATE_ENV}
)";

Getenv env_of(std::map<std::string, std::string> vars) {
    return [vars](const std::string& k) -> std::optional<std::string> {
        auto it = vars.find(k);
        return it == vars.end() ? std::nullopt : std::optional(it->second);
    };
}

// Nine levels of nine aliases each: 9^9 (387 million) nodes for any walk that expands them.
std::string alias_bomb() {
    std::string out =
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  a0: &a0 [lol]\n";
    for (int i = 1; i <= 9; ++i) {
        std::string prev = "*a" + std::to_string(i - 1);
        out += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
        for (int j = 0; j < 9; ++j) {
            out += (j ? ", " : "") + prev;
        }
        out += "]\n";
    }
    return out;
}

ManifestInput input(const std::string& text) {
    return {text, "jobs/pre.yaml", "gprd", "pre-migrations", "gitlab", "1234"};
}

// ENVGATE_ENV comes from the input, not from the process.
const Getenv k_env = env_of({{"CI_COMMIT_SHORT_SHA", "abc123"}, {"ENVGATE_ENV", "wrong"}});

}  // namespace

BOOST_AUTO_TEST_SUITE(manifest_suite)

BOOST_AUTO_TEST_CASE(renders_names_and_labels_the_job) {
    auto r = render_job_manifest(input(k_job), k_env);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.status().message()));
    const auto& job = r->object;
    BOOST_TEST(r->name == "gitlab-migrations-pre-" + r->spec_hash);
    BOOST_TEST(r->spec_hash.size() == 8u);
    BOOST_TEST(job["metadata"]["name"] == r->name);
    BOOST_TEST(job["metadata"]["namespace"] == "gitlab");
    BOOST_TEST(job["metadata"]["labels"]["app"] == "migrations");
    BOOST_TEST(job["metadata"]["labels"]["envgate.dev/environment"] == "gprd");
    BOOST_TEST(job["metadata"]["labels"]["envgate.dev/gate"] == "pre-migrations");
    BOOST_TEST(job["metadata"]["labels"]["envgate.dev/spec-hash"] == r->spec_hash);
    BOOST_TEST(job["metadata"]["labels"]["envgate.dev/pipeline"] == "1234");
    const auto& c = job["spec"]["template"]["spec"]["containers"][0];
    BOOST_TEST(c["image"] == "registry.example.com/gitlab-toolbox:abc123");
    BOOST_TEST(c["command"][2] == "echo $HOME; db-migrate");
    BOOST_TEST(c["env"][0]["value"] == "true");  // quoted: stays a string
    BOOST_TEST(c["env"][1]["value"] == "gprd");
    BOOST_TEST(job["spec"]["backoffLimit"] == 6);  // plain: a number
}

BOOST_AUTO_TEST_CASE(same_spec_same_name_changed_spec_new_name) {
    auto a = render_job_manifest(input(k_job), k_env);
    auto b = render_job_manifest(input(k_job), k_env);
    auto other_image =
        render_job_manifest(input(k_job), env_of({{"CI_COMMIT_SHORT_SHA", "def456"}}));
    ManifestInput other_env = input(k_job);
    other_env.environment = "gstg";
    auto c = render_job_manifest(other_env, k_env);
    BOOST_REQUIRE(a.is_ok() && b.is_ok() && other_image.is_ok() && c.is_ok());
    BOOST_TEST(a->name == b->name);
    BOOST_TEST(a->name != other_image->name);
    BOOST_TEST(a->name != c->name);
}

BOOST_AUTO_TEST_CASE(json_and_multi_document_helm_output_are_accepted) {
    std::string helm =
        "---\n# Source: gitlab/templates/sa.yaml\napiVersion: v1\nkind: "
        "ServiceAccount\nmetadata: {name: sa}\n---\n" +
        std::string(k_job);
    auto r = render_job_manifest(input(helm), k_env);
    BOOST_REQUIRE(r.is_ok());
    std::string json_text =
        R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"mig-","namespace":"gitlab"},
            "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"m","image":"x"}]}}}})";
    auto j = render_job_manifest(input(json_text), k_env);
    BOOST_REQUIRE_MESSAGE(j.is_ok(), (j.is_ok() ? std::string() : j.status().message()));
    BOOST_TEST(j->name == "mig-" + j->spec_hash);
    BOOST_TEST(j->namespace_ == "gitlab");
}

BOOST_AUTO_TEST_CASE(long_names_are_cut_to_fit_the_job_name_label) {
    std::string text = k_job;
    text.replace(text.find("gitlab-migrations-pre"), 21, std::string(70, 'a'));
    auto r = render_job_manifest(input(text), k_env);
    BOOST_REQUIRE(r.is_ok());
    BOOST_TEST(r->name.size() == 63u);
}

BOOST_AUTO_TEST_CASE(bad_manifests_name_file_line_and_field) {
    struct Case {
        const char* name;
        std::string text;
        const char* want;
    };
    std::string job = k_job;
    const Case cases[] = {
        {"variable outside the allow-list",
         std::string(job).replace(job.find("${ENVGATE_ENV}"), 14, "${HOME}"),
         "jobs/pre.yaml:18:22: spec.template.spec.containers[0].env[1].value: ${HOME} is not "
         "expanded"},
        {"allowed variable not set",
         std::string(job).replace(job.find("${ENVGATE_ENV}"), 14, "${ENVGATE_UNSET}"),
         "${ENVGATE_UNSET} is not set"},
        {"not yaml", "kind: Job\n  bad: [", "jobs/pre.yaml:2:"},
        {"no job", "apiVersion: v1\nkind: ConfigMap\n", "no document with kind: Job"},
        {"two jobs", job + "---\n" + job, "more than one Job"},
        {"wrong api version", "apiVersion: batch/v2\nkind: Job\nmetadata: {name: x}\nspec: {}\n",
         "apiVersion: \"batch/v2\" is not batch/v1"},
        {"no name", "apiVersion: batch/v1\nkind: Job\nspec: {}\n", "the Job needs a name"},
        {"unterminated", std::string(job).replace(job.find("${ENVGATE_ENV}"), 14, "${CI_X"),
         "unterminated ${"},
        {"labels a string",
         "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x, labels: app}\n"
         "spec: {}\n",
         "jobs/pre.yaml:3:29: metadata.labels: must be a map"},
        {"labels a list",
         "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\n  labels: [a, b]\n"
         "spec: {}\n",
         "jobs/pre.yaml:5:11: metadata.labels: must be a map"},
        {"alias bomb", alias_bomb(), "nodes once aliases are expanded"},
        {"a lone comma (yaml-cpp 0.7 loops on it)", ",", "more than 200000 YAML nodes"},
        {"nested too deep",
         "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: " + std::string(200, '[') +
             std::string(200, ']') + "\n",
         "nested more than 64 levels"},
        {"not UTF-8",
         std::string("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {a: b") + '\xff' +
             "}\n",
         "not valid UTF-8"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            auto r = render_job_manifest(input(c.text), k_env);
            BOOST_REQUIRE(!r.is_ok());
            BOOST_TEST(r.status().code() == Code::invalid);
            BOOST_TEST(r.status().message().find(c.want) != std::string::npos,
                       r.status().message());
        }
    }
}

// A manifest with `metadata.namespace: NS` (line 4, column 14), the rest as people write it.
std::string job_in_namespace(const std::string& ns) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  namespace: " + ns +
           "\n  name: migrate\nspec:\n  template: {spec: {containers: []}}\n";
}

// Given the environment's namespace "gitlab" (or none, as `envgate gate --manifest` without
// a config), then the Job runs in it, and a manifest naming another is refused naming both
// namespaces, the file and the line: the lock held guards that namespace only.
BOOST_AUTO_TEST_CASE(a_job_runs_only_in_its_environments_namespace) {
    struct Case {
        std::string name;
        std::string manifest_namespace;  // "" writes no metadata.namespace
        std::string environment_namespace;
        std::string want_namespace;  // "" when refused
    };
    const Getenv env = env_of({{"CI_COMMIT_SHORT_SHA", "abc123"}, {"CI_TARGET", "prod-ns"}});
    const std::vector<Case> cases = {
        {"names none", "", "gitlab", "gitlab"},
        {"names the same", "gitlab", "gitlab", "gitlab"},
        {"names it through ENVGATE_NAMESPACE", "${ENVGATE_NAMESPACE}", "gitlab", "gitlab"},
        {"names another", "prod-ns", "gitlab", ""},
        {"names another through a variable", "${CI_TARGET}", "gitlab", ""},
        {"no environment namespace, names one", "prod-ns", "", "prod-ns"},
        {"no environment namespace, names none", "", "", "default"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            ManifestInput in =
                input(c.manifest_namespace.empty() ? std::string(k_job)
                                                   : job_in_namespace(c.manifest_namespace));
            in.namespace_ = c.environment_namespace;
            auto r = render_job_manifest(in, env);
            Status checked = check_manifest_namespace(in, env);
            if (c.want_namespace.empty()) {
                BOOST_REQUIRE(!r.is_ok());
                BOOST_TEST(r.status().code() == Code::invalid);
                BOOST_TEST(r.status().message() ==
                           "jobs/pre.yaml:4:14: metadata.namespace: \"prod-ns\" is not the "
                           "namespace of environment \"gprd\" (\"gitlab\"): a gate's Job runs "
                           "only in its environment's namespace; leave metadata.namespace out or "
                           "write ${ENVGATE_NAMESPACE}");
                BOOST_TEST(checked.message() == r.status().message());
            } else {
                BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
                BOOST_TEST(r->namespace_ == c.want_namespace);
                BOOST_TEST(r->object["metadata"]["namespace"] == c.want_namespace);
                BOOST_TEST(checked.is_ok(), checked.message());
            }
        }
    }
}

// Given what `config check` sees (no pipeline variables), then a namespace it cannot know
// and a manifest that does not parse are left to `run` and `gate`, which render them.
BOOST_AUTO_TEST_CASE(config_check_leaves_what_it_cannot_know_to_the_run) {
    const Getenv none = env_of({});
    BOOST_TEST(check_manifest_namespace(input(job_in_namespace("${CI_TARGET}")), none).is_ok());
    BOOST_TEST(check_manifest_namespace(input("kind: [Job"), none).is_ok());
    Status literal = check_manifest_namespace(input(job_in_namespace("prod-ns")), none);
    BOOST_TEST(literal.code() == Code::invalid);
    BOOST_TEST(literal.message().starts_with("jobs/pre.yaml:4:14: metadata.namespace:"));
}

BOOST_AUTO_TEST_SUITE_END()
