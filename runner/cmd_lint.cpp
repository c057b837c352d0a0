// run_lint: gathers the inputs (folders walked in sorted order, YAML and JSON files
// only), reads each within the reader's limits, runs the checks over all of them,
// renders, writes the Code Quality report, and picks the exit status.
#include "runner/cmd_lint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "runner/base/exit_status.h"
#include "runner/base/files.h"
#include "runner/config/config.h"
#include "runner/config/glob.h"
#include "runner/lint/lint.h"
#include "runner/lint/render.h"

namespace envgate {
namespace {

namespace fs = std::filesystem;

bool manifest_file(const fs::path& p) {
    std::string ext = p.extension().string();
    return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// The files `path` names: itself, or the manifests below a folder (hidden folders
// such as .git skipped), sorted so output order does not depend on the file system.
Result<std::vector<std::string>> expand_path(const std::string& path) {
    std::error_code ec;
    if (path == "-" || !fs::is_directory(path, ec)) {
        return std::vector<std::string>{path};
    }
    std::vector<std::string> out;
    fs::recursive_directory_iterator it(path, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        const fs::path& p = it->path();
        if (it->is_directory(ec) && p.filename().string().starts_with(".")) {
            it.disable_recursion_pending();
        } else if (it->is_regular_file(ec) && manifest_file(p)) {
            out.push_back(p.lexically_normal().string());
        }
    }
    if (ec) {
        return Status(Code::io, path + ": cannot list the folder: " + ec.message());
    }
    std::sort(out.begin(), out.end());
    return out;
}

bool excluded(const std::string& file, const lint::LintSettings& s) {
    std::string rel = file.starts_with("./") ? file.substr(2) : file;
    return std::any_of(s.exclude_paths.begin(), s.exclude_paths.end(),
                       [&](const std::string& g) { return glob_match(g, rel); });
}

// How a file is named in findings: relative to the working directory when it is below
// it, so Code Quality paths are repository paths however the command was called.
std::string display_name(const std::string& file) {
    std::error_code ec;
    fs::path p(file);
    fs::path cwd = fs::current_path(ec);
    if (!p.is_absolute() || ec) {
        return file;
    }
    fs::path rel = p.lexically_relative(cwd);
    return rel.empty() || rel.begin()->string() == ".." ? file : rel.string();
}

Result<std::string> read_input(const std::string& file, const lint::ReadLimits& limits,
                               Context& ctx) {
    if (file == "-") {
        return lint::read_source(ctx.in, "-", limits);
    }
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    if (!ec && size > limits.max_source_bytes) {
        return Status(Code::invalid, file + ": larger than " +
                                         std::to_string(limits.max_source_bytes >> 20) +
                                         " MiB; split the input");
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        return Status(Code::not_found,
                      file + ": cannot read: " + (ec ? ec.message() : std::string("no such file")));
    }
    return lint::read_source(in, file, limits);
}

Result<lint::LintSettings> settings_for(const LintOptions& o) {
    std::string path = o.config;
    std::error_code ec;
    if (path.empty()) {
        if (!fs::exists("envgate.yml", ec)) {
            return lint::LintSettings{};
        }
        path = "envgate.yml";
    }
    TRY_ASSIGN(Config config, load_config(path));
    return config.lint;
}

}  // namespace

int run_lint(const LintOptions& o, Context& ctx) {
    if (o.list_checks) {
        ctx.out << lint::render_checks_markdown();
        return k_exit_success;
    }
    if (o.paths.empty()) {
        ctx.err << "envgate lint: give the manifests to lint: files, folders, or - for stdin\n";
        return k_exit_usage;
    }
    std::optional<lint::Severity> fail_on = lint::parse_severity(o.fail_on);
    if (!fail_on && o.fail_on != "never") {
        ctx.err << "envgate lint: --fail-on " << o.fail_on
                << ": expected info, warning, error, critical or never\n";
        return k_exit_usage;
    }
    auto settings = settings_for(o);
    if (!settings) {
        ctx.err << settings.status().message() << "\n";
        return k_exit_usage;
    }
    lint::ReadLimits limits;
    lint::Linter linter(*settings, limits);
    bool unreadable = false;
    auto fail = [&](const Status& s) {
        ctx.err << "envgate lint: " << s.message() << "\n";
        unreadable = true;
    };
    for (const std::string& path : o.paths) {
        auto files = expand_path(path);
        if (!files) {
            fail(files.status());
            continue;
        }
        for (const std::string& file : *files) {
            if (excluded(file, *settings)) {
                continue;
            }
            auto text = read_input(file, limits, ctx);
            Status added = text ? linter.add(file == "-" ? o.stdin_name : display_name(file), *text)
                                : text.status();
            if (!added.is_ok()) {
                fail(added);
            }
        }
    }
    lint::LintReport report = linter.finish();
    ctx.out << (o.output == "json" ? lint::render_json(report) : lint::render_text(report));
    if (!o.codequality.empty()) {
        if (Status w = write_file_atomic(o.codequality, lint::render_codequality(report));
            !w.is_ok()) {
            fail(w);
        }
    }
    if (unreadable) {
        return k_exit_usage;
    }
    bool failing =
        fail_on && std::any_of(report.findings.begin(), report.findings.end(),
                               [&](const lint::Finding& f) { return f.severity >= *fail_on; });
    return failing ? k_exit_failed : k_exit_success;
}

}  // namespace envgate
