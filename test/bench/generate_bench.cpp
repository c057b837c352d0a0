// The phases of `envgate generate`, timed apart (generate_bench.py runs it next to
// the end-to-end command): the libgit2 diff of base..head, matching the changed
// paths against every environment's globs (make_plan), and rendering the child
// pipeline YAML. Prints one "name value" line per figure, medians of --runs runs.
//
//   generate_bench --config envgate.yml --repo DIR --base SHA --head SHA [--runs 7]
//   generate_bench --config envgate.yml --all [--runs 7]   (every environment changed)
//   generate_bench --config envgate.yml --repo DIR --base SHA --head SHA --list
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runner/config/config.h"
#include "runner/generate/git_diff.h"
#include "runner/generate/plan.h"
#include "runner/generate/render_child.h"

namespace envgate {
namespace {

struct Args {
    std::string config;
    std::string repo = ".";
    std::string base;
    std::string head = "HEAD";
    bool all = false;
    bool list = false;  // print the affected environments, one a line, and nothing else
    int runs = 7;
};

bool parse(int argc, char** argv, Args& args) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        bool has_value = i + 1 < argc;
        if (a == "--all") {
            args.all = true;
        } else if (a == "--list") {
            args.list = true;
        } else if (a == "--config" && has_value) {
            args.config = argv[++i];
        } else if (a == "--repo" && has_value) {
            args.repo = argv[++i];
        } else if (a == "--base" && has_value) {
            args.base = argv[++i];
        } else if (a == "--head" && has_value) {
            args.head = argv[++i];
        } else if (a == "--runs" && has_value) {
            args.runs = std::max(1, std::stoi(argv[++i]));
        } else {
            return false;
        }
    }
    return !args.config.empty() && (args.all || !args.base.empty());
}

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Sample {
    double diff_ms = 0;
    double match_ms = 0;
    double render_ms = 0;
    std::size_t paths = 0;
    std::size_t environments = 0;
    std::size_t yaml_bytes = 0;
};

Result<Sample> run_once(const Args& args, const Config& config) {
    Sample s;
    PlanRequest request;
    request.config_path = args.config;
    auto t0 = std::chrono::steady_clock::now();
    if (args.all) {
        request.all_environments = true;
    } else {
        DiffRequest diff{args.repo, args.base, args.head, "main"};
        TRY_ASSIGN(ChangeSet change, diff_changed_paths(diff));
        request.changed_paths = std::move(change.paths);
        request.base = change.base;
        request.head = change.head;
    }
    s.diff_ms = ms_since(t0);
    s.paths = request.changed_paths.size();
    auto t1 = std::chrono::steady_clock::now();
    TRY_ASSIGN(Plan plan, make_plan(config, request));
    s.match_ms = ms_since(t1);
    s.environments = plan.environments.size();
    auto t2 = std::chrono::steady_clock::now();
    std::string yaml = render_child_pipeline(plan);
    s.render_ms = ms_since(t2);
    s.yaml_bytes = yaml.size();
    return s;
}

// Detection alone as one process, timed from outside like the peer pipeline: load
// the config, diff, match, print the affected environments.
int list_environments(const Args& args, const Config& config) {
    DiffRequest diff{args.repo, args.base, args.head, "main"};
    auto change = diff_changed_paths(diff);
    if (!change) {
        std::fprintf(stderr, "generate_bench: %s\n", change.status().message().c_str());
        return 1;
    }
    PlanRequest request;
    request.changed_paths = std::move(change->paths);
    request.all_environments = change->all_environments;
    auto plan = make_plan(config, request);
    if (!plan) {
        std::fprintf(stderr, "generate_bench: %s\n", plan.status().message().c_str());
        return 1;
    }
    std::string out;
    for (const auto& env : plan->environments) {
        out += env.name + "\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}

int run(const Args& args) {
    auto config = load_config(args.config);
    if (!config) {
        std::fprintf(stderr, "generate_bench: %s\n", config.status().message().c_str());
        return 1;
    }
    if (args.list) {
        return list_environments(args, *config);
    }
    std::vector<double> diff, match, render, total;
    Sample last;
    for (int i = 0; i < args.runs; ++i) {
        auto s = run_once(args, *config);
        if (!s) {
            std::fprintf(stderr, "generate_bench: %s\n", s.status().message().c_str());
            return 1;
        }
        diff.push_back(s->diff_ms);
        match.push_back(s->match_ms);
        render.push_back(s->render_ms);
        total.push_back(s->diff_ms + s->match_ms + s->render_ms);
        last = *s;
    }
    std::printf("changed_paths %zu\nenvironments %zu\nyaml_bytes %zu\n", last.paths,
                last.environments, last.yaml_bytes);
    std::printf("diff_ms %.2f\nmatch_ms %.2f\nrender_ms %.2f\ntotal_ms %.2f\n", median(diff),
                median(match), median(render), median(total));
    return 0;
}

}  // namespace
}  // namespace envgate

int main(int argc, char** argv) {
    envgate::Args args;
    if (!envgate::parse(argc, argv, args)) {
        std::fprintf(stderr,
                     "usage: generate_bench --config FILE (--all | --repo DIR --base SHA "
                     "[--head SHA]) [--runs N | --list]\n");
        return 2;
    }
    return envgate::run(args);
}
