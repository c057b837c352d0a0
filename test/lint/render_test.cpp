// The renderers: text lines at file:line:col, Code Quality fields, fingerprints that
// survive unrelated edits, severity raised for replicas, suppressions honoured.
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/lint/render.h"

using namespace envgate;
using namespace envgate::lint;

namespace {

const char* k_deployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: REPLICAS
  template:
    spec:
      containers:
        - name: app
          command: ["sh", "-c", "./migrate && ./service"]
)";

LintReport lint_text(const std::string& text, LintSettings settings = {}) {
    Linter linter(std::move(settings), {});
    Status s = linter.add("k8s/web.yaml", text);
    BOOST_TEST(s.is_ok(), s.message());
    return linter.finish();
}

std::string with_replicas(int n) {
    std::string t = k_deployment;
    return t.replace(t.find("REPLICAS"), 8, std::to_string(n));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lint_render)

// Given a migrating Deployment, then the text line names position, severity, check.
BOOST_AUTO_TEST_CASE(text_names_position_severity_and_check) {
    std::string out = render_text(lint_text(with_replicas(1)));
    BOOST_TEST(
        out.starts_with("k8s/web.yaml:11:33: error migrate-in-start-command: Deployment/web: "
                        "container \"app\" runs `./migrate`"),
        out);
    BOOST_TEST(out.find("  fix: Run the migration once") != std::string::npos, out);
    BOOST_TEST(out.find("docs/lint.md#migrate-in-start-command") != std::string::npos);
    BOOST_TEST(out.find("envgate lint: 1 finding (1 error) in 1 workload") != std::string::npos,
               out);
}

// Given replicas: 3, then the same finding is one severity higher and says why.
BOOST_AUTO_TEST_CASE(replicas_raise_the_severity) {
    LintReport r = lint_text(with_replicas(3));
    BOOST_REQUIRE(r.findings.size() == 1u);
    BOOST_TEST(std::string(severity_name(r.findings[0].severity)) == "critical");
    BOOST_TEST(r.findings[0].message.ends_with("; 3 replicas run it at once"));
}

// Given lines inserted above the finding, then its fingerprint does not change;
// given another container name, then it does.
BOOST_AUTO_TEST_CASE(fingerprints_survive_unrelated_edits) {
    LintReport before = lint_text(with_replicas(1));
    std::string moved =
        "# a comment\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n" +
        with_replicas(1);
    LintReport after = lint_text(moved);
    BOOST_REQUIRE(before.findings.size() == 1u);
    BOOST_REQUIRE(after.findings.size() == 1u);
    BOOST_TEST(before.findings[0].loc.pos.line != after.findings[0].loc.pos.line);
    BOOST_TEST(fingerprint(before.findings[0]) == fingerprint(after.findings[0]));
    std::string renamed = with_replicas(1);
    renamed.replace(renamed.find("name: app"), 9, "name: api");
    BOOST_TEST(fingerprint(lint_text(renamed).findings[0]) != fingerprint(before.findings[0]));
}

// Given findings, then each Code Quality issue has GitLab's required fields.
BOOST_AUTO_TEST_CASE(codequality_has_the_documented_fields) {
    auto issues = nlohmann::json::parse(render_codequality(lint_text(with_replicas(2))));
    BOOST_REQUIRE(issues.is_array());
    BOOST_REQUIRE(issues.size() == 1u);
    const auto& i = issues[0];
    BOOST_TEST(i["check_name"] == "migrate-in-start-command");
    BOOST_TEST(i["severity"] == "critical");
    BOOST_TEST(i["location"]["path"] == "k8s/web.yaml");
    BOOST_TEST(i["location"]["lines"]["begin"] == 11);
    BOOST_TEST(i["fingerprint"].get<std::string>().size() == 32u);
    BOOST_TEST(i["description"].get<std::string>().find("Fix: ") != std::string::npos);
}

// Given the ignore annotation or a disabled check, then no finding.
BOOST_AUTO_TEST_CASE(suppressions_silence_findings) {
    std::string annotated = with_replicas(1);
    annotated.replace(
        annotated.find("  name: web\n"), 12,
        "  name: web\n  annotations:\n    envgate.dev/lint-ignore: \"stretched-startup, "
        "migrate-in-start-command\"\n");
    BOOST_TEST(lint_text(annotated).findings.empty());
    LintSettings off;
    off.disabled.insert("migrate-in-start-command");
    BOOST_TEST(lint_text(with_replicas(1), off).findings.empty());
    BOOST_TEST(render_text(lint_text(with_replicas(1), off)) ==
               "envgate lint: no findings in 1 workload in 1 document from 1 input\n");
}

// Given JSON output, then findings and a summary, each with its fix and docs link.
BOOST_AUTO_TEST_CASE(json_output_lists_findings_and_summary) {
    auto j = nlohmann::json::parse(render_json(lint_text(with_replicas(1))));
    BOOST_TEST(j["summary"]["findings"] == 1);
    BOOST_TEST(j["findings"][0]["line"] == 11);
    BOOST_TEST(j["findings"][0]["docs"] == "docs/lint.md#migrate-in-start-command");
}

// Given a manifest with bytes that are not UTF-8 in a finding (found by lint_fuzz),
// then JSON and Code Quality output replace them instead of throwing.
BOOST_AUTO_TEST_CASE(invalid_utf8_in_a_finding_is_replaced_not_thrown) {
    std::string text = with_replicas(1);
    text.replace(text.find("name: app"), 9, "name: \"a\xff\"");
    LintReport r = lint_text(text);
    BOOST_REQUIRE(r.findings.size() == 1u);
    auto issues = nlohmann::json::parse(render_codequality(r));
    BOOST_TEST(issues[0]["description"].get<std::string>().find("\xEF\xBF\xBD") !=
               std::string::npos);
    BOOST_TEST(nlohmann::json::parse(render_json(r))["summary"]["findings"] == 1);
}

BOOST_AUTO_TEST_SUITE_END()
