// The labelled corpus (test/fixtures/lint, see its README): every manifest linted
// alone, findings compared with the `# expect:` labels by file, line and check.
// Prints precision and recall per check; fails below 0.95 / 0.9, or when a check
// has no label in the corpus at all (it would be untested).
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "runner/lint/lint.h"

namespace fs = std::filesystem;
using namespace envgate;
using namespace envgate::lint;

namespace {

using Label = std::tuple<std::string, int, std::string>;  // file, line, check

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void inline_labels(const std::string& file, const std::string& text, std::set<Label>& out) {
    static const std::regex k_marker("# expect: ([a-z0-9, -]+)$");
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, k_marker)) {
            continue;
        }
        std::stringstream ids(m[1].str());
        std::string id;
        while (std::getline(ids, id, ',')) {
            id.erase(0, id.find_first_not_of(' '));
            id.erase(id.find_last_not_of(' ') + 1);
            out.insert({file, n, id});
        }
    }
}

void sidecar_labels(const std::string& file, const fs::path& expect, std::set<Label>& out) {
    std::istringstream lines(slurp(expect));
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        std::istringstream fields(line);
        int n = 0;
        std::string id;
        fields >> n >> id;
        out.insert({file, n, id});
    }
}

struct Counts {
    int tp = 0, fp = 0, fn = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(lint_corpus)

// Given the labelled corpus, then each check's precision is >= 0.95 and recall >= 0.9.
BOOST_AUTO_TEST_CASE(precision_and_recall_per_check_meet_the_goal) {
    std::set<Label> expected, found;
    int files = 0;
    for (const auto& entry : fs::directory_iterator(fs::path(ENVGATE_FIXTURES) / "lint")) {
        const fs::path& p = entry.path();
        std::string ext = p.extension().string();
        if (ext != ".yaml" && ext != ".yml" && ext != ".json") {
            continue;
        }
        ++files;
        std::string name = p.filename().string();
        std::string text = slurp(p);
        inline_labels(name, text, expected);
        if (fs::path side = fs::path(p).replace_extension(".expect"); fs::exists(side)) {
            sidecar_labels(name, side, expected);
        }
        Linter linter(LintSettings{}, ReadLimits{});
        Status s = linter.add(name, text);
        BOOST_TEST(s.is_ok(), name << ": " << s.message());
        for (const Finding& f : linter.finish().findings) {
            found.insert({name, f.loc.pos.line, f.check});
        }
    }
    BOOST_TEST(files >= 60);
    std::map<std::string, Counts> by_check;
    for (const Check* c : all_checks()) {
        by_check[c->id];
    }
    for (const Label& l : found) {
        bool hit = expected.contains(l);
        ++(hit ? by_check[std::get<2>(l)].tp : by_check[std::get<2>(l)].fp);
        if (!hit) {
            BOOST_TEST_MESSAGE("unexpected: " << std::get<0>(l) << ":" << std::get<1>(l) << " "
                                              << std::get<2>(l));
        }
    }
    for (const Label& l : expected) {
        if (!found.contains(l)) {
            ++by_check[std::get<2>(l)].fn;
            BOOST_TEST_MESSAGE("missed: " << std::get<0>(l) << ":" << std::get<1>(l) << " "
                                          << std::get<2>(l));
        }
    }
    BOOST_TEST_MESSAGE(files << " manifests, " << expected.size() << " labels");
    for (const auto& [id, c] : by_check) {
        BOOST_TEST_CONTEXT(id) {
            BOOST_TEST(find_check(id) != nullptr);  // a label naming no check is a typo
            BOOST_TEST(c.tp + c.fn > 0);            // every check has labelled cases
            double precision = c.tp + c.fp == 0 ? 1.0 : double(c.tp) / (c.tp + c.fp);
            double recall = c.tp + c.fn == 0 ? 0.0 : double(c.tp) / (c.tp + c.fn);
            std::cout << "lint corpus: " << id << ": precision " << precision << " recall "
                      << recall << " (tp " << c.tp << ", fp " << c.fp << ", fn " << c.fn << ")\n";
            BOOST_TEST(precision >= 0.95);
            BOOST_TEST(recall >= 0.9);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
