// Given a FileStore directory, then a crash mid-write (a torn temp file, or a stop
// before the rename) leaves the stored record intact and readable, the next write
// cleans up and succeeds, and a stored file that is not a record is reported.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

#include "locks/file_store.h"
#include "test/locks/store_factories.h"

using namespace envgate;
using namespace envgate::locks;

namespace {

LockRecord record_with_step(const std::string& step) {
    LockRecord r;
    r.name = "gstg";
    r.state = LockState::held;
    r.holder = Holder{"p1", "", "", "", "", std::nullopt, std::nullopt};
    r.step = step;
    return r;
}

std::size_t temp_files(const std::string& dir) {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        n += e.path().filename().string().starts_with(".gstg.json.tmp.") ? 1 : 0;
    }
    return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_file_store_suite)

BOOST_AUTO_TEST_CASE(a_torn_temp_file_is_ignored_and_removed_by_the_next_write) {
    test::TempDir dir;
    FileStore store(dir.path());
    std::string v1 = store.write("gstg", record_with_step("diff"), "").value();
    std::ofstream(dir.path() + "/.gstg.json.tmp.99999") << "{\"schema\": \"envgate.dev/lo";
    auto read = store.read("gstg");
    BOOST_REQUIRE(read.is_ok());
    BOOST_TEST(read->record.step == "diff");
    BOOST_TEST(store.list().value() == std::vector<std::string>{"gstg"});
    BOOST_TEST(store.write("gstg", record_with_step("deploy"), v1).is_ok());
    BOOST_TEST(temp_files(dir.path()) == 0u);
    BOOST_TEST(store.read("gstg")->record.step == "deploy");
}

BOOST_AUTO_TEST_CASE(a_crash_before_the_rename_keeps_the_old_record) {
    test::TempDir dir;
    FileStore good(dir.path());
    std::string v1 = good.write("gstg", record_with_step("diff"), "").value();
    FileStore crashing(dir.path(), [] { return false; });
    auto w = crashing.write("gstg", record_with_step("deploy"), v1);
    BOOST_TEST(!w.is_ok());
    BOOST_TEST(temp_files(dir.path()) == 1u);  // what a crash leaves behind
    auto read = good.read("gstg");
    BOOST_TEST(read->record.step == "diff");
    BOOST_TEST(read->version == v1);
    BOOST_TEST(good.write("gstg", record_with_step("qa"), v1).is_ok());
    BOOST_TEST(temp_files(dir.path()) == 0u);
}

BOOST_AUTO_TEST_CASE(a_file_that_is_not_a_record_is_an_error_naming_it) {
    test::TempDir dir;
    std::ofstream(dir.path() + "/gstg.json") << "not json";
    FileStore store(dir.path());
    auto read = store.read("gstg");
    BOOST_REQUIRE(!read.is_ok());
    BOOST_TEST(read.status().message().find("gstg.json") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(lock_names_must_be_dns_labels) {
    test::TempDir dir;
    FileStore store(dir.path());
    for (const char* bad : {"", "../etc", "Prod", "a/b", "-x"}) {
        BOOST_TEST_CONTEXT(bad) {
            BOOST_TEST(store.read(bad).status().code() == Code::invalid);
        }
    }
}

// Given a failure message, a step and a history entry holding bytes that are not UTF-8
// (a migration log's \377\376), then the write succeeds with U+FFFD in their place,
// the stored file is JSON that reads back, and no temp file is left beside it.
BOOST_AUTO_TEST_CASE(text_that_is_not_utf8_is_stored_replaced_and_no_temp_is_left) {
    test::TempDir dir;
    FileStore store(dir.path());
    LockRecord r = record_with_step("deploy \xff\xfe");
    r.state = LockState::failed;
    r.failure = Failure{"deploy", "StepFailed", "exit 1: \xff\xfe", {}};
    r.record("fail", "p1", {}, "log: \xfe");
    auto written = store.write("gstg", r, "");
    BOOST_REQUIRE_MESSAGE(written.is_ok(), (written.is_ok() ? "" : written.status().message()));
    BOOST_TEST(temp_files(dir.path()) == 0u);
    auto read = store.read("gstg");
    BOOST_REQUIRE_MESSAGE(read.is_ok(), (read.is_ok() ? "" : read.status().message()));
    BOOST_TEST(read->record.failure->message == "exit 1: \uFFFD\uFFFD");
    BOOST_TEST(read->record.step == "deploy \uFFFD\uFFFD");
    BOOST_TEST(read->record.history.back().why == "log: \uFFFD");
}

BOOST_AUTO_TEST_SUITE_END()
