#include "runner/cmd_dashboard.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "runner/base/exit_status.h"
#include "runner/base/files.h"
#include "runner/base/utf8.h"
#include "runner/config/config.h"
#include "runner/connect/lock_status.h"
#include "runner/report/render.h"
#include "runner/status_metrics.h"
#include "runner/status_read.h"
#include "runner/status_render.h"

namespace envgate {
namespace {

namespace fs = std::filesystem;

struct FoundRun {
    RunReport report;
    std::string origin;
};

// The newest run of each environment (by finish time) among `files`; unreadable
// files become notes.
std::map<std::string, FoundRun> newest_runs(const std::vector<std::string>& files,
                                            std::vector<std::string>& notes) {
    std::map<std::string, FoundRun> newest;
    for (const auto& file : files) {
        auto text = read_file(file);
        auto run = text ? parse_run_json(*text, file) : Result<RunReport>(text.status());
        if (!run) {
            notes.push_back("skipped " + file + ": " + run.status().message());
            continue;
        }
        std::string env = run->environment;
        auto it = newest.find(env);
        if (it == newest.end() || it->second.report.finished < run->finished) {
            newest[env] = FoundRun{std::move(run).value(), file};
        }
    }
    return newest;
}

// The samples of `families` for `environment`, as the dashboard lists them: of a one-hot
// family only the sample that holds.
std::vector<Figure> figures_of(const std::vector<MetricFamily>& families,
                               const std::string& environment) {
    std::vector<Figure> out;
    for (const MetricFamily& f : families) {
        for (const MetricSample& sample : f.samples) {
            if (sample.labels.empty() || sample.labels.front().second != environment ||
                (f.one_hot && sample.value == 0)) {
                continue;
            }
            std::string labels;
            for (std::size_t i = 1; i < sample.labels.size(); ++i) {
                labels +=
                    (i > 1 ? ", " : "") + sample.labels[i].first + "=" + sample.labels[i].second;
            }
            out.push_back({f.name, labels, sample.value, f.help});
        }
    }
    return out;
}

// A gate's last-run figures read from its Job, when the card's last run ran that Job or
// one as new (a Job's times are whole seconds: two Jobs of the same second tie, and the
// figures may be the other's): the run table shows the gate's last run, to the
// millisecond, and a fact is shown once. A Job started after the run finished (a run
// still going) keeps its figures. (The page only: -o json keeps them all.)
void drop_figures_of_the_run_shown(DashboardLock& l, const std::vector<GateRuns>& gates) {
    std::set<std::string> shown;  // "gate=NAME"
    for (const auto& g : gates) {
        if (g.environment != l.lock.name) {
            continue;
        }
        for (const auto& run : g.runs) {
            for (const auto& step : l.last_run->steps) {
                if (step.name == run.gate &&
                    (step.job_name == run.job || run.started <= l.last_run->finished)) {
                    shown.insert("gate=" + run.gate);
                }
            }
        }
    }
    std::erase_if(l.figures, [&](const Figure& f) {
        std::string gate = f.labels.substr(0, f.labels.find(','));
        return f.name.starts_with("envgate_gate_last_run_") && shown.contains(gate);
    });
}

// `--output json`: what the page shows, for a script. Each lock is its `status --output
// json` entry, with the page's figures and the run.json document of its last run.
nlohmann::json render_dashboard_json(const DashboardModel& model, const std::string& path,
                                     const std::vector<LockStatus>& locks, TimePoint now) {
    nlohmann::json j = render_status_json(locks, now);
    j["schema"] = "envgate.dev/dashboard/v1";
    j["index"] = path;
    j["notes"] = model.notes;
    for (std::size_t i = 0; i < model.locks.size(); ++i) {
        const DashboardLock& l = model.locks[i];
        nlohmann::json figures = nlohmann::json::array();
        for (const Figure& f : l.figures) {
            figures.push_back({{"name", f.name}, {"labels", f.labels}, {"value", f.value}});
        }
        nlohmann::json& entry = j["locks"][i];
        entry["figures"] = std::move(figures);
        entry["last_run"] = l.last_run ? run_json_document(*l.last_run) : nlohmann::json(nullptr);
        entry["last_run_origin"] =
            l.last_run ? nlohmann::json(l.last_run_origin) : nlohmann::json(nullptr);
    }
    return j;
}

}  // namespace

std::vector<std::string> find_run_files(const std::string& dir) {
    std::vector<std::string> files;
    std::error_code ec;
    if (fs::is_regular_file(fs::path(dir) / "run.json", ec)) {
        files.push_back((fs::path(dir) / "run.json").string());
    }
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        fs::path candidate = entry.path() / "run.json";
        if (entry.is_directory(ec) && fs::is_regular_file(candidate, ec)) {
            files.push_back(candidate.string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

int run_dashboard(const DashboardOptions& o, Context& ctx) {
    auto config = load_config_or_say(o.config_path, ctx.err);
    if (!config) {
        return k_exit_usage;
    }
    DashboardModel model;
    std::vector<std::string> files;
    for (const auto& dir : o.runs) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) {
            ctx.err << "envgate dashboard: --runs " << dir << ": not a directory\n";
            return k_exit_usage;
        }
        auto found = find_run_files(dir);
        files.insert(files.end(), found.begin(), found.end());
    }
    auto runs = newest_runs(files, model.notes);
    auto budget = parse_bounded_duration("--timeout", o.timeout, std::chrono::milliseconds(100));
    if (!budget) {
        ctx.err << "envgate dashboard: " << budget.status().message() << "\n";
        return k_exit_usage;
    }
    int exit = k_exit_usage;
    // The figures of `envgate status --output prometheus`, the gates read the same way.
    auto read =
        read_status(*config, lock_names(*config, std::nullopt), ctx, exit,
                    {o.kubeconfig, std::nullopt, o.context, o.namespace_}, GateSource{}, *budget);
    if (!read) {
        return exit;
    }
    const std::vector<LockStatus>& locks = read->locks;
    const std::vector<GateRuns>& gates = read->gates;
    const TimePoint now = read->now;
    for (const auto& g : gates) {
        if (!g.error.empty()) {
            model.notes.push_back("the gates of " + g.environment + ": " + g.error);
        }
    }
    auto families = status_metric_families(locks, gates, now);
    for (const auto& s : locks) {
        DashboardLock l;
        l.lock = s.record;
        l.store = s.store;
        l.error = s.error;
        l.figures = figures_of(families, l.lock.name);
        if (auto it = runs.find(l.lock.name); it != runs.end()) {
            l.last_run = it->second.report;
            l.last_run_origin = it->second.origin;
        }
        model.locks.push_back(std::move(l));
    }
    model.refresh_seconds = o.refresh_seconds;
    for (const auto& note : model.notes) {
        ctx.err << "envgate dashboard: " << note << "\n";
    }
    std::string path = (fs::path(o.out_dir) / "index.html").string();
    DashboardModel page = model;  // -o json keeps every figure, for a script
    for (auto& l : page.locks) {
        if (l.last_run) {
            drop_figures_of_the_run_shown(l, gates);
        }
    }
    Status written = write_file_atomic(path, render_dashboard(page, now));
    if (!written.is_ok()) {
        ctx.err << "envgate dashboard: " << written.message() << "\n";
        return k_exit_infra;
    }
    if (o.output == "json") {
        ctx.out << dump_json(render_dashboard_json(model, path, locks, now), 2) << "\n";
        return k_exit_success;
    }
    ctx.out << "wrote " << path << " (" << model.locks.size() << " locks, " << runs.size()
            << " runs from " << files.size() << " run.json files)\n";
    return k_exit_success;
}

}  // namespace envgate
