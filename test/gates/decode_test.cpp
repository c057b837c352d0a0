// Given Kubernetes JSON that is malformed or of the wrong shape, then decoding returns an
// Invalid status naming the input and the JSON path; given gate memory, then it survives
// a round trip through JSON and through the Job's two annotations.
#include <boost/test/unit_test.hpp>
#include <string>

#include "gates/decode.h"
#include "gates/decode_json.h"
#include "gates/failures.h"
#include "gates/memory_json.h"
#include "test/gates/builders.h"

using namespace envgate;
using namespace envgate::gates;

namespace {

struct DecodeCase {
    const char* name;
    const char* input;
    const char* want;  // the error message must start with this
};

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_decode_suite)

BOOST_AUTO_TEST_CASE(job_errors_name_the_file_and_json_path) {
    const DecodeCase cases[] = {
        {"wrong_type_in_a_condition",
         R"({"status":{"conditions":[{"type":"Failed","status":"True"},{"status":1}]}})",
         "job.json: .status.conditions[1].status: expected a string, got number"},
        {"not_json", "{\"metadata\": ", "job.json: not valid JSON: "},
        {"array_instead_of_object", "[]", "job.json: .: expected an object, got array"},
        {"another_kind", R"({"kind":"Pod"})", "job.json: .kind: expected \"Job\", got \"Pod\""},
        {"negative_backoff_limit", R"({"spec":{"backoffLimit":-1}})",
         "job.json: .spec.backoffLimit: expected a non-negative integer, got -1"},
        {"fractional_backoff_limit", R"({"spec":{"backoffLimit":1.5}})",
         "job.json: .spec.backoffLimit: expected an integer, got number"},
        {"huge_failed_count", R"({"status":{"failed":1099511627776}})",
         "job.json: .status.failed: out of the int32 range"},
        {"bad_time",
         R"({"status":{"conditions":[{"type":"Failed","lastTransitionTime":"yesterday"}]}})",
         "job.json: .status.conditions[0].lastTransitionTime: expected an RFC 3339 time"},
        {"selector_label_not_a_string", R"({"spec":{"selector":{"matchLabels":{"a":true}}}})",
         "job.json: .spec.selector.matchLabels.a: expected a string, got boolean"},
        {"uncounted_not_a_list", R"({"status":{"uncountedTerminatedPods":{"failed":"x"}}})",
         "job.json: .status.uncountedTerminatedPods.failed: expected an array, got string"},
    };
    for (const DecodeCase& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            auto r = decode_job(c.input, "job.json");
            BOOST_REQUIRE(!r.is_ok());
            BOOST_TEST((r.status().code() == Code::invalid));
            BOOST_TEST(r.status().message().starts_with(c.want), r.status().message());
        }
    }
}

BOOST_AUTO_TEST_CASE(pod_errors_name_the_file_and_json_path) {
    const DecodeCase cases[] = {
        {"label_not_a_string", R"([{"metadata":{"labels":{"a":1}}}])",
         "pods.json: [0].metadata.labels.a: expected a string, got number"},
        {"items_not_a_list", R"({"kind":"PodList","items":{}})",
         "pods.json: .items: expected an array, got object"},
        {"restart_count_wrong_type",
         R"({"items":[{},{"status":{"containerStatuses":[{"restartCount":"2"}]}}]})",
         "pods.json: .items[1].status.containerStatuses[0].restartCount: expected an integer, "
         "got string"},
        {"exit_code_wrong_type",
         R"([{"status":{"initContainerStatuses":[{"lastState":{"terminated":{"exitCode":null,
             "reason":7}}}]}}])",
         "pods.json: [0].status.initContainerStatuses[0].lastState.terminated.reason: expected a "
         "string, got number"},
        {"a_string", R"("pods")",
         "pods.json: .: expected a PodList or an array of pods, got string"},
        {"a_job_list", R"({"kind":"JobList","items":[]})",
         "pods.json: .kind: expected \"PodList\", got \"JobList\""},
    };
    for (const DecodeCase& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            auto r = decode_pods(c.input, "pods.json");
            BOOST_REQUIRE(!r.is_ok());
            BOOST_TEST(r.status().message().starts_with(c.want), r.status().message());
        }
    }
}

BOOST_AUTO_TEST_CASE(pod_list_and_pod_array_decode_alike) {
    const char* pod = R"({"metadata":{"name":"p","uid":"u","deletionTimestamp":null},
        "status":{"phase":"Running","containerStatuses":[{"name":"c","restartCount":3,
        "state":{"waiting":{"reason":"CrashLoopBackOff"}},
        "lastState":{"terminated":{"exitCode":2,"finishedAt":"2025-05-29T07:00:00Z"}}}]}})";
    auto list = decode_pods(std::string(R"({"kind":"PodList","items":[)") + pod + "]}", "a");
    auto array = decode_pods(std::string("[") + pod + "]", "b");
    BOOST_REQUIRE(list.is_ok());
    BOOST_REQUIRE(array.is_ok());
    BOOST_REQUIRE(list->size() == 1u);
    BOOST_REQUIRE(array->size() == 1u);
    const Pod& p = list->front();
    BOOST_TEST(p.name == "p");
    BOOST_TEST(!p.deletion_timestamp);
    BOOST_REQUIRE(p.containers.size() == 1u);
    BOOST_TEST(p.containers[0].restart_count == 3);
    BOOST_TEST(p.containers[0].last_state.terminated->exit_code == 2);
    BOOST_TEST(array->front().containers[0].state.waiting->reason == "CrashLoopBackOff");
}

BOOST_AUTO_TEST_CASE(single_pod_from_parsed_json_checks_kind_and_shape) {
    auto ok = decode_pod_json(nlohmann::json::parse(R"({"kind":"Pod","metadata":{"name":"p"}})"),
                              "watch event");
    BOOST_REQUIRE(ok.is_ok());
    BOOST_TEST(ok->name == "p");
    auto wrong = decode_pod_json(nlohmann::json::parse(R"({"kind":"Job"})"), "watch event");
    BOOST_REQUIRE(!wrong.is_ok());
    BOOST_TEST(wrong.status().message() == "watch event: .kind: expected \"Pod\", got \"Job\"");
    auto number = decode_pod_json(nlohmann::json(3), "watch event");
    BOOST_REQUIRE(!number.is_ok());
    BOOST_TEST(number.status().message() == "watch event: .: expected an object, got number");
}

BOOST_AUTO_TEST_CASE(memory_survives_json_and_annotations) {
    GateMemory m;
    m.job_uid = "u";
    m.job_namespace = "gitlab";
    m.job_name = "mig";
    m.observed_failures = 3;
    m.restarts = 2;
    m.failed_pods = 1;
    m.attempts = 2;
    m.failed_runs = {{"pod-uid/migrations", 2}};
    m.failure_recorded = true;
    m.last_failure = Failure{"p", "migrations", FailureKind::pod, "TerminationByKubelet",
                             137, false,        "low on memory",  test::k_now};
    auto back = decode_memory(encode_memory(m), "memory.json");
    BOOST_REQUIRE(back.is_ok());
    BOOST_TEST((*back == m));

    auto annotations = memory_annotations(m);
    BOOST_TEST(annotations.size() == 2u);
    BOOST_TEST(annotations.count("envgate.dev/observed-failures") == 1u);
    BOOST_TEST(annotations.count("envgate.dev/last-failure") == 1u);
    auto from = memory_from_annotations(annotations);
    BOOST_REQUIRE(from.is_ok());
    BOOST_TEST((*from == m));

    GateMemory empty;
    BOOST_TEST(memory_annotations(empty).size() == 1u);
    BOOST_TEST((*memory_from_annotations({}) == empty));
}

BOOST_AUTO_TEST_CASE(bad_memory_names_its_source) {
    auto r = memory_from_annotations({{"envgate.dev/last-failure", R"({"kind":"node"})"}});
    BOOST_REQUIRE(!r.is_ok());
    BOOST_TEST(r.status().message() ==
               "annotation envgate.dev/last-failure: .kind: expected \"restart\" or \"pod\", got "
               "\"node\"");
    auto m = decode_memory(R"({"failed_runs":{"a/b":"2"}})", "memory.json");
    BOOST_REQUIRE(!m.is_ok());
    BOOST_TEST(m.status().message() ==
               "memory.json: .failed_runs.a/b: expected an integer, got string");
}

BOOST_AUTO_TEST_CASE(shell_quote_leaves_plain_names_and_quotes_the_rest) {
    BOOST_TEST(shell_quote("gitlab-migrations-3f2a1.pre") == "gitlab-migrations-3f2a1.pre");
    BOOST_TEST(shell_quote("Migrate") == "'Migrate'");
    BOOST_TEST(shell_quote("a b") == "'a b'");
    BOOST_TEST(shell_quote("it's") == "'it'\\''s'");
    BOOST_TEST(shell_quote("$(rm -rf)") == "'$(rm -rf)'");
    BOOST_TEST(shell_quote("") == "''");
}

BOOST_AUTO_TEST_SUITE_END()
