// Given the failed runs passes listed, then the gate's memory keeps a record of each
// (identity, one-line text, counts, time, whose reports keep its log tail) in the order
// they were listed, each once, the newest k_remembered_runs of them, through its JSON and
// its Job annotations; memory written before runs were remembered still decodes.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "gates/evaluate.h"
#include "gates/memory.h"
#include "gates/memory_json.h"
#include "test/gates/builders.h"

using namespace envgate::gates;

namespace {

// A counted container run `n` of pod `pod` (uid "<pod>-uid"), failed with `message`.
SeenRun container_run(const std::string& pod, int n, const std::string& message = "boom") {
    SeenRun run;
    run.key = pod + "-uid/migrations/" + std::to_string(n);
    run.number = n;
    run.failure =
        Failure{pod, "migrations", FailureKind::restart, "Error", 3, true, message, test::k_now};
    run.counts.attempt = n;
    run.counts.limit = 6;
    return run;
}

GateMemory with_runs() {
    GateMemory m;
    m.job_uid = "job-uid";
    m.failed_runs = {{"p-uid/migrations", 2}};
    std::vector<SeenRun> runs{container_run("p", 1), container_run("p", 2)};
    SeenRun deleted;
    deleted.key = "p-uid";
    deleted.failure = Failure{"p",  std::nullopt, FailureKind::pod, "Deleted", std::nullopt,
                              true, "",           test::k_now};
    deleted.counts.attempt = 1;
    deleted.counts.limit = 7;
    runs.push_back(deleted);
    Pod indexed = test::pod("p");
    indexed.completion_index = 3;
    remember_runs(m, runs, {&indexed});
    note_kept(m, "p-uid/migrations/1", "https://gitlab.example/jobs/101", true);
    note_kept(m, "p-uid/migrations/2", "https://gitlab.example/jobs/101", true);
    note_kept(m, "p-uid", "https://gitlab.example/jobs/101", false);
    return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_memory_runs)

// Given three runs a pass listed, then each is a record in that order, with its identity,
// text, counts, index and the job that saw it; listing them again adds none.
BOOST_AUTO_TEST_CASE(listed_runs_are_remembered_once_in_order) {
    GateMemory m = with_runs();
    BOOST_REQUIRE(m.runs.size() == 3U);
    BOOST_TEST(m.runs[0].key == "p-uid/migrations/1");
    BOOST_TEST(m.runs[1].key == "p-uid/migrations/2");
    BOOST_TEST(m.runs[2].key == "p-uid");
    BOOST_TEST(m.runs[0].pod == "p");
    BOOST_TEST((m.runs[0].container == std::optional<std::string>("migrations")));
    BOOST_TEST(m.runs[1].number == 2);
    BOOST_TEST(m.runs[2].number == 0);
    BOOST_TEST((m.runs[0].index == std::optional<int>(3)));
    BOOST_TEST(m.runs[0].text == "container migrations exited 3 (Error): boom");
    BOOST_TEST((m.runs[1].attempt == 2 && m.runs[1].limit == 6));
    BOOST_TEST((m.runs[2].attempt == 1 && m.runs[2].limit == 7));
    BOOST_TEST((m.runs[0].at == std::optional<envgate::TimePoint>(test::k_now)));
    BOOST_TEST(m.runs[2].seen_by == "https://gitlab.example/jobs/101");

    GateMemory again = m;
    remember_runs(again, {container_run("p", 2)}, {});
    BOOST_TEST((again == m));
}

// Given runs another process listed, then noting this job's runs leaves theirs alone.
BOOST_AUTO_TEST_CASE(only_the_runs_listed_name_this_job) {
    GateMemory m = with_runs();
    remember_runs(m, {container_run("q", 1)}, {});
    note_kept(m, "q-uid/migrations/1", "https://gitlab.example/jobs/102", true);
    BOOST_REQUIRE(m.runs.size() == 4U);
    BOOST_TEST(m.runs[0].seen_by == "https://gitlab.example/jobs/101");
    BOOST_TEST(m.runs[3].seen_by == "https://gitlab.example/jobs/102");
    BOOST_TEST((m.runs[0].tail_kept && !m.runs[2].tail_kept && m.runs[3].tail_kept));
}

// Given a memory with records, then it survives its JSON and its Job annotations, and
// `envgate explain` (memory_to_json) shows them.
BOOST_AUTO_TEST_CASE(remembered_runs_survive_json_and_annotations) {
    GateMemory m = with_runs();
    m.runs_forgotten = 4;
    auto back = decode_memory(encode_memory(m), "memory.json");
    BOOST_REQUIRE(back.is_ok());
    BOOST_TEST((*back == m));
    auto from = memory_from_annotations(memory_annotations(m));
    BOOST_REQUIRE(from.is_ok());
    BOOST_TEST((*from == m));
    nlohmann::json shown = memory_to_json(m);
    BOOST_TEST(shown["runs"].size() == 3U);
    BOOST_TEST(shown["runs"][0]["key"] == "p-uid/migrations/1");
    BOOST_TEST(shown["runs"][0]["seen_by"] == "https://gitlab.example/jobs/101");
    BOOST_TEST(shown["runs_forgotten"] == 4);
}

// Given memory written before runs were remembered (no "runs"), then it decodes as
// before, with no record and none forgotten.
BOOST_AUTO_TEST_CASE(memory_without_runs_still_decodes) {
    auto m = memory_from_annotations(
        {{"envgate.dev/observed-failures",
          R"({"job":{"uid":"job-uid","namespace":"gitlab","name":"mig"},"observed_failures":2,)"
          R"("restarts":2,"failed_pods":0,"attempts":2,"failed_runs":{"p-uid/migrations":2},)"
          R"("failures_seen":[],"pods_failed":[],"failure_recorded":false,"completed":false,)"
          R"("ended":null})"}});
    BOOST_REQUIRE(m.is_ok());
    BOOST_TEST(m->attempts == 2);
    BOOST_TEST(m->failed_runs.at("p-uid/migrations") == 2);
    BOOST_TEST(m->runs.empty());
    BOOST_TEST(m->runs_forgotten == 0);
    auto bad = decode_memory(R"({"runs":[{"pod":"p"}]})", "memory.json");
    BOOST_REQUIRE(!bad.is_ok());
    BOOST_TEST(bad.status().message() ==
               "memory.json: .runs[0].key: expected the run's key, got none");
}

// Given more runs than the memory keeps, each with a termination message of 4 KB, then
// it keeps the newest k_remembered_runs, counts the older ones, cuts each text, and its
// annotations stay far below the API's 256 KiB.
BOOST_AUTO_TEST_CASE(memory_keeps_the_newest_runs_within_the_annotation_limit) {
    GateMemory m;
    std::vector<SeenRun> runs;
    for (int n = 1; n <= k_remembered_runs + 10; ++n) {
        runs.push_back(container_run("p", n, std::string(4096, 'x') + "é"));
    }
    remember_runs(m, runs, {});
    BOOST_REQUIRE(m.runs.size() == static_cast<std::size_t>(k_remembered_runs));
    BOOST_TEST(m.runs_forgotten == 10);
    BOOST_TEST(m.runs.front().number == 11);
    BOOST_TEST(m.runs.back().number == k_remembered_runs + 10);
    BOOST_TEST(m.runs.front().text.size() <= k_remembered_text_bytes);
    BOOST_TEST(m.runs.front().text.substr(m.runs.front().text.size() - 3) == "…");
    // One more run drops one more.
    remember_runs(m, {container_run("p", k_remembered_runs + 11)}, {});
    BOOST_TEST(m.runs_forgotten == 11);
    BOOST_TEST(m.runs.front().number == 12);
    std::size_t bytes = 0;
    for (const auto& [k, v] : memory_annotations(m)) {
        bytes += k.size() + v.size();
    }
    BOOST_TEST(bytes < 64U * 1024U, bytes);
}

// Given a crash-looping pod evaluated twice, then the first verdict remembers its run
// (the words its line tells, its counts) and the second, on the same snapshot, nothing new.
BOOST_AUTO_TEST_CASE(evaluate_remembers_each_run_it_lists_once) {
    const Job j = test::job();
    const std::vector<Pod> pods{
        test::with_containers(test::pod("p"), {test::crashloop("migrations", 0, 3, "PG::X")})};
    Verdict v = evaluate(Gate::pre_migrations, j, pods, GateMemory{}, test::k_now);
    BOOST_REQUIRE(v.runs.size() == 1U);
    BOOST_REQUIRE(v.memory.runs.size() == 1U);
    BOOST_TEST(v.memory.runs[0].key == v.runs[0].key);
    BOOST_TEST(v.memory.runs[0].attempt == v.runs[0].counts.attempt);
    BOOST_TEST(v.memory.runs[0].text.find("PG::X") != std::string::npos, v.memory.runs[0].text);
    Verdict again = evaluate(Gate::pre_migrations, j, pods, v.memory, test::k_now);
    BOOST_TEST(again.runs.empty());
    BOOST_TEST((again.memory == v.memory));
}

// Given a memory with every field set (a last failure, an ended Job, records with and
// without container, index and time), then its two annotations are these bytes, and
// they decode back to it: the format old Jobs carry, pinned key by key.
BOOST_AUTO_TEST_CASE(annotations_are_pinned_to_the_byte) {
    GateMemory m = with_runs();
    m.job_namespace = "gitlab";
    m.job_name = "mig";
    m.observed_failures = 3;
    m.restarts = 2;
    m.failed_pods = 1;
    m.attempts = 3;
    m.failures_seen = {"p-uid/migrations/1"};
    m.pods_failed = {"p-uid"};
    m.runs_forgotten = 4;
    m.failure_recorded = true;
    m.completed = true;
    m.ended = EndedBy{"Failed", "BackoffLimitExceeded", "Job has reached the backoff limit"};
    m.last_failure =
        Failure{"p", "migrations", FailureKind::pod, "Error", -3, false, "boom", test::k_now};
    const auto annotations = memory_annotations(m);
    BOOST_TEST(
        annotations.at("envgate.dev/observed-failures") ==
        R"({"attempts":3,"completed":true,"ended":{"message":"Job has reached the backoff limit",)"
        R"("reason":"BackoffLimitExceeded","type":"Failed"},"failed_pods":1,)"
        R"("failed_runs":{"p-uid/migrations":2},"failure_recorded":true,)"
        R"("failures_seen":["p-uid/migrations/1"],"job":{"name":"mig","namespace":"gitlab",)"
        R"("uid":"job-uid"},"observed_failures":3,"pods_failed":["p-uid"],)"
        R"("restarts":2,"runs":[{"at":"2025-05-29T08:00:00.000000Z","attempt":1,)"
        R"("container":"migrations","counted":true,"index":3,"key":"p-uid/migrations/1",)"
        R"("limit":6,"pod":"p","run":1,"seen_by":"https://gitlab.example/jobs/101",)"
        R"("tail_kept":true,"text":"container migrations exited 3 (Error): boom"},)"
        R"({"at":"2025-05-29T08:00:00.000000Z","attempt":2,"container":"migrations",)"
        R"("counted":true,"index":3,"key":"p-uid/migrations/2","limit":6,)"
        R"("pod":"p","run":2,"seen_by":"https://gitlab.example/jobs/101",)"
        R"("tail_kept":true,"text":"container migrations exited 3 (Error): boom"},)"
        R"({"at":"2025-05-29T08:00:00.000000Z","attempt":1,"container":null,)"
        R"("counted":true,"index":3,"key":"p-uid","limit":7,"pod":"p","run":0,)"
        R"("seen_by":"https://gitlab.example/jobs/101","tail_kept":false,)"
        R"("text":"pod p was deleted (Deleted), no message"}],"runs_forgotten":4})");
    BOOST_TEST(annotations.at("envgate.dev/last-failure") ==
               R"({"at":"2025-05-29T08:00:00.000000Z","container":"migrations",)"
               R"("exit_code":-3,"exit_code_trusted":false,"kind":"pod","message":"boom",)"
               R"("pod":"p","reason":"Error"})");
    auto back = memory_from_annotations(annotations);
    BOOST_REQUIRE(back.is_ok());
    BOOST_TEST((*back == m));
    m.last_failure->container.reset();
    m.last_failure->exit_code.reset();
    m.last_failure->at.reset();
    BOOST_TEST(memory_annotations(m).at("envgate.dev/last-failure") ==
               R"({"at":null,"container":null,"exit_code":null,"exit_code_trusted":false,)"
               R"("kind":"pod","message":"boom","pod":"p","reason":"Error"})");
}

// Given a record or a last failure with a field of the wrong kind, then decoding names
// that field by its path, in these words.
BOOST_AUTO_TEST_CASE(bad_fields_are_named_by_path) {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"runs":[{"key":"k","run":-1}]})",
         R"(memory.json: .runs[0].run: expected a non-negative integer, got -1)"},
        {R"({"runs":[{"key":"k","index":"3"}]})",
         R"(memory.json: .runs[0].index: expected an integer, got string)"},
        {R"({"runs":[{"key":"k","container":3}]})",
         R"(memory.json: .runs[0].container: expected a string, got number)"},
        {R"({"runs":[{"key":"k","at":"yesterday"}]})",
         R"(memory.json: .runs[0].at: expected an RFC 3339 time, got "yesterday")"},
        {R"({"runs":[{"key":"k","counted":"yes"}]})",
         R"(memory.json: .runs[0].counted: expected a boolean, got string)"},
        {R"({"runs":[{"key":"","pod":3}]})",
         R"(memory.json: .runs[0].key: expected the run's key, got none)"},
        {R"({"runs":[{"pod":3}]})",
         R"(memory.json: .runs[0].key: expected the run's key, got none)"},
        {R"({"runs":[3]})", R"(memory.json: .runs[0]: expected an object, got number)"},
        {R"({"last_failure":{"pod":"p","kind":"node","reason":3}})",
         R"(memory.json: .last_failure.kind: expected "restart" or "pod", got "node")"},
        {R"({"last_failure":{"pod":3,"kind":"node"}})",
         R"(memory.json: .last_failure.pod: expected a string, got number)"},
        {R"({"last_failure":{"exit_code":"1"}})",
         R"(memory.json: .last_failure.exit_code: expected an integer, got string)"},
        {R"({"last_failure":{"exit_code_trusted":1}})",
         R"(memory.json: .last_failure.exit_code_trusted: expected a boolean, got number)"},
        {R"({"last_failure":{"at":3}})",
         R"(memory.json: .last_failure.at: expected a string, got number)"},
        {R"({"last_failure":[]})", R"(memory.json: .last_failure: expected an object, got array)"},
    };
    for (const auto& [text, want] : cases) {
        auto m = decode_memory(text, "memory.json");
        BOOST_REQUIRE_MESSAGE(!m.is_ok(), text);
        BOOST_TEST(m.status().message() == want, text);
    }
    auto signed_exit = decode_memory(R"({"last_failure":{"exit_code":-1}})", "memory.json");
    BOOST_REQUIRE(signed_exit.is_ok());
    BOOST_TEST(*signed_exit->last_failure->exit_code == -1);
    BOOST_TEST((signed_exit->last_failure->kind == FailureKind::restart));
}

BOOST_AUTO_TEST_SUITE_END()
