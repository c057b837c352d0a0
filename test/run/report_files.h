// The report folder of a run or a gate as CI reads it (junit.xml, envgate.env,
// run.json): what test/e2e/lib.sh's check_reports checks after a scenario, for the unit
// cases that took those scenarios over (test/run/README.md).
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace envgate::test {

class ReportFiles {
  public:
    explicit ReportFiles(std::string dir) : m_dir(std::move(dir)) {}

    std::string junit() const { return read("junit.xml"); }
    std::string dotenv() const { return read("envgate.env"); }
    nlohmann::json run_json() const { return nlohmann::json::parse(read("run.json")); }

    // The junit testcases, in order: {classname, name}.
    std::vector<std::pair<std::string, std::string>> testcases() const {
        const std::string xml = junit();
        static const std::regex testcase("<testcase classname=\"([^\"]*)\" name=\"([^\"]*)\"");
        std::vector<std::pair<std::string, std::string>> out;
        for (auto it = std::sregex_iterator(xml.begin(), xml.end(), testcase);
             it != std::sregex_iterator(); ++it) {
            out.emplace_back((*it)[1].str(), (*it)[2].str());
        }
        return out;
    }
    // How often `text` occurs in junit.xml.
    std::size_t junit_count(const std::string& text) const {
        const std::string xml = junit();
        std::size_t n = 0;
        for (auto at = xml.find(text); at != std::string::npos; at = xml.find(text, at + 1)) {
            ++n;
        }
        return n;
    }
    // The element that follows testcase `name`'s opening tag: "failure", "skipped" or
    // "" (a passed testcase closes at once).
    std::string testcase_outcome(const std::string& name) const {
        const std::string xml = junit();
        const auto at = xml.find("name=\"" + name + "\"");
        if (at == std::string::npos) {
            return "(no testcase " + name + ")";
        }
        const auto open = xml.find('>', at);
        if (open != std::string::npos && open > 0 && xml[open - 1] == '/') {
            return "";
        }
        const auto next = xml.find('<', open);
        for (const char* what : {"failure", "skipped"}) {
            if (xml.compare(next + 1, std::char_traits<char>::length(what), what) == 0) {
                return what;
            }
        }
        return "";
    }
    bool dotenv_has_line(const std::string& line) const {
        const std::string env = "\n" + dotenv();
        return env.find("\n" + line + "\n") != std::string::npos;
    }
    std::string path(const std::string& file) const { return m_dir + "/" + file; }

  private:
    std::string read(const std::string& file) const {
        std::ifstream in(path(file), std::ios::binary);
        BOOST_REQUIRE_MESSAGE(in.good(), "no " + path(file));
        return {std::istreambuf_iterator<char>(in), {}};
    }
    std::string m_dir;
};

// lib.sh's check_reports DIR ENV RESULT [TYPE]: junit.xml is well-formed XML (xmllint,
// as CI's parser would refuse it), every testcase has classname envgate.ENV, envgate.env
// says ENVGATE_RESULT=RESULT and, given `failure_type`, exactly one failure has it.
inline void check_reports(const ReportFiles& reports, const std::string& environment,
                          const std::string& result, const std::string& failure_type = "") {
    const std::string lint = "xmllint --noout '" + reports.path("junit.xml") + "'";
    BOOST_TEST(std::system(lint.c_str()) == 0, lint);
    const auto cases = reports.testcases();
    BOOST_TEST(!cases.empty());
    for (const auto& [classname, name] : cases) {
        BOOST_TEST(classname == "envgate." + environment, name);
    }
    BOOST_TEST(reports.dotenv_has_line("ENVGATE_RESULT=" + result), reports.dotenv());
    if (!failure_type.empty()) {
        BOOST_TEST(reports.junit_count("<failure type=\"" + failure_type + "\"") == 1U,
                   reports.junit());
    }
}

}  // namespace envgate::test
