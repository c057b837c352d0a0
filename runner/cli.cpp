#include "runner/cli.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <ostream>

#include "runner/base/exit_status.h"
#include "runner/base/utf8.h"
#include "runner/cli_suggest.h"
#include "runner/cmd_completion.h"
#include "runner/cmd_config.h"
#include "runner/cmd_dashboard.h"
#include "runner/cmd_explain.h"
#include "runner/cmd_gate.h"
#include "runner/cmd_generate.h"
#include "runner/cmd_lint.h"
#include "runner/cmd_lock.h"
#include "runner/cmd_status.h"
#include "runner/cmd_unlock.h"
#include "runner/cmd_version.h"
#include "runner/config/config_yaml.h"
#include "runner/run/run.h"

namespace envgate {
namespace {

using Handler = std::function<int(Context&)>;

// One row of the command table: the subcommand's name, its one-line help, and a
// function that declares its options on `app` and returns the handler to run.
struct Command {
    const char* name;
    const char* help;
    Handler (*define)(CLI::App& app);
};

// --kubeconfig, --context and -n/--namespace of the commands that read or write locks:
// named as kubectl names them.
void add_store_options(CLI::App& app, std::optional<std::string>& kubeconfig,
                       std::optional<std::string>& context,
                       std::optional<std::string>& namespace_) {
    app.add_option("--kubeconfig", kubeconfig,
                   "kubeconfig of the Lease store's cluster (default: $KUBECONFIG)");
    app.add_option("--context", context,
                   "kubeconfig context of the Lease store (default: the environment's)");
    app.add_option("-n,--namespace", namespace_,
                   "namespace of the Leases (default: the config's lock.namespace)");
}

// --gate of `explain` and `gate`: a built-in gate's name or one envgate.yml adds.
void add_gate_option(CLI::App& app, std::string& gate) {
    app.add_option("--gate", gate,
                   "pre-migrations | post-migrations | batched-migrations-check | a gate "
                   "envgate.yml adds")
        ->required();
}

// `envgate gate` and `envgate run`: a long job log, then one document a script reads.
void add_report_output_option(CLI::App& app, std::string& output) {
    app.add_option("-o,--output", output,
                   "text | json (the job log goes to stderr; stdout gets the run's report, "
                   "run.json's document)")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
}

void add_output_option(CLI::App& app, std::string& output) {
    app.add_option("-o,--output", output,
                   "text | json (the action, its message and the lock record read back)")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
}

// `envgate help CMD [SUB]`: the same text and exit status as `envgate CMD [SUB] --help`;
// an unknown command is a usage error with the closest name.
int run_help(const CLI::App& root, const std::vector<std::string>& words, Context& ctx) {
    const CLI::App* at = &root;
    std::string path = root.get_name();
    for (const std::string& word : words) {
        std::vector<std::string> names;
        const CLI::App* next = nullptr;
        for (const CLI::App* sub :
             at->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
            names.push_back(sub->get_name());
            next = sub->get_name() == word ? sub : next;
        }
        if (next == nullptr) {
            // "config chek": the words typed, each guess in their place.
            std::string typed = path.substr(root.get_name().size()) + " ";
            typed.erase(0, 1);
            auto guess = did_you_mean(word, names);
            ctx.err << root.get_name() << " help: unknown command \"" << typed << word << "\""
                    << (guess ? "; did you mean \"" + typed + *guess + "\"?" : std::string())
                    << "\n"
                    << help_pointer(path);
            return k_exit_usage;
        }
        at = next;
        path += " " + word;
    }
    std::vector<std::string> args = words;
    args.emplace_back("--help");
    return run_cli(args, ctx);
}

Handler define_explain(CLI::App& app) {
    auto o = std::make_shared<ExplainOptions>();
    add_gate_option(app, o->gate);
    app.add_option("--config", o->config_path,
                   "envgate.yml, for the gates it adds (default: ./envgate.yml if present)");
    app.add_option("--job", o->job_path, "the Job as JSON (kubectl get job -o json)");
    app.add_flag("--job-deleted", o->job_deleted,
                 "the Job is gone: what a pass that finds it deleted reports (with --memory)");
    app.add_option("--pods", o->pods_path, "its pods: a PodList or a JSON array of pods");
    app.add_option("--memory", o->memory_path, "the \"memory\" object of the previous call");
    app.add_option("--now", o->now, "evaluate at this RFC 3339 time (default: now)");
    return [o](Context& ctx) { return run_explain(*o, ctx); };
}

Handler define_config(CLI::App& app) {
    auto o = std::make_shared<ConfigCheckOptions>();
    app.require_subcommand(1);
    CLI::App* check = app.add_subcommand(
        "check",
        "Validate the config and print every environment's effective settings. Exit 0 when "
        "valid; otherwise exit 2 with every error found, one per line, in file order, as "
        "FILE:LINE:COLUMN: FIELD: MESSAGE. Only reads the file: no lock, no cluster.");
    check->add_option("--config", o->config_path, "the config file")->capture_default_str();
    check->add_option("-o,--output", o->output, "text (commented YAML) | json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    return [o](Context& ctx) { return run_config_check(*o, ctx); };
}

Handler define_generate(CLI::App& app) {
    auto o = std::make_shared<GenerateOptions>();
    app.add_option("--config", o->config_path, "the config file")->capture_default_str();
    app.add_option("--base", o->base,
                   "diff from this commit (default $CI_COMMIT_BEFORE_SHA; empty or all zeros: "
                   "the merge base with the default branch, else every environment)");
    app.add_option("--head", o->head, "diff to this commit (default $CI_COMMIT_SHA, else HEAD)");
    app.add_option("--out", o->out_path, "the child pipeline file to write")->capture_default_str();
    app.add_option("--repo", o->repo_dir, "the git repository")->capture_default_str();
    app.add_option("--default-branch", o->default_branch,
                   "for the merge base, and the branch that deploys (default "
                   "$CI_DEFAULT_BRANCH, else main)");
    app.add_option("--env", o->environments, "only this environment (repeatable)");
    app.add_option("--mode", o->mode,
                   "auto (merge-request, diff only, when CI_PIPELINE_SOURCE=merge_request_event "
                   "or on a branch that envgate.yml ci.deploy_branches does not let deploy, by "
                   "default any but the default branch) | deploy | merge-request")
        ->capture_default_str();
    app.add_option("--jobs", o->jobs,
                   "split: lock, diff, gates and steps as separate jobs | run: one `envgate run` "
                   "job per environment")
        ->capture_default_str();
    return [o](Context& ctx) { return run_generate(*o, ctx); };
}

Handler define_gate(CLI::App& app) {
    auto o = std::make_shared<GateOptions>();
    app.add_option("--env", o->environment,
                   "the environment (its namespace and context come "
                   "from the config)")
        ->required();
    add_gate_option(app, o->gate);
    app.add_option("--manifest", o->manifest,
                   "the Job manifest (YAML or JSON; - reads stdin); default: the config's");
    app.add_option("--config", o->config, "envgate.yml (optional with --manifest)")
        ->capture_default_str();
    app.add_option("-n,--namespace", o->namespace_, "namespace of the Job (default: the config's)");
    app.add_option("--timeout", o->timeout,
                   "fail the gate after this long (default: the "
                   "config's, else 1h)");
    app.add_option("--poll-interval", o->poll_interval, "poll this often if watching fails")
        ->capture_default_str();
    app.add_option("--progress-interval", o->progress_interval,
                   "print a progress line when a gate was quiet this long")
        ->capture_default_str();
    app.add_option("--on-cancel", o->on_cancel, "leave | delete the Job when cancelled")
        ->capture_default_str();
    app.add_option("--kubeconfig", o->kubeconfig, "kubeconfig file (default: $KUBECONFIG)");
    app.add_option("--context", o->context, "kubeconfig context (default: the environment's)");
    app.add_option("--report-dir", o->report_dir, "where the reports go")->capture_default_str();
    add_report_output_option(app, o->output);
    return [o](Context& ctx) { return run_gate(*o, ctx); };
}

Handler define_lock(CLI::App& app) {
    auto o = std::make_shared<LockOptions>();
    app.add_option("action", o->action, "acquire | release | fail | verify")
        ->required()
        ->check(CLI::IsMember({"acquire", "release", "fail", "verify"}));
    app.add_option("env", o->env, "the environment (or qa, the global QA lock)")->required();
    app.add_option("--config", o->config_path, "envgate.yml to read")->capture_default_str();
    app.add_option("--holder", o->holder, "holder id (default: the pipeline, or local:USER@HOST)");
    app.add_option("--hold-for", o->hold_for, "acquire: lease between jobs (default hold_for)");
    app.add_option("--wait-timeout", o->wait_timeout, "acquire: give up after this (exit 3)");
    app.add_flag("--no-wait", o->no_wait, "acquire: exit 3 at once if the lock is not free");
    app.add_option("--step", o->step, "acquire: the step it is in; fail: the step that failed");
    app.add_option("--reason", o->reason, "fail: reason, e.g. MigrationsJobFailed");
    app.add_option("--message", o->message, "fail: what went wrong");
    add_store_options(app, o->kubeconfig, o->context, o->namespace_);
    add_output_option(app, o->output);
    return [o](Context& ctx) { return run_lock(*o, ctx); };
}

Handler define_unlock(CLI::App& app) {
    auto o = std::make_shared<UnlockOptions>();
    app.add_option("env", o->env, "the environment (or qa)")->required();
    app.add_option("--reason", o->reason, "why (kept in the lock history)")->required();
    app.add_option("--expect-holder", o->expect_holder, "refuse if another holder has it now");
    app.add_option("--config", o->config_path, "envgate.yml to read")->capture_default_str();
    add_store_options(app, o->kubeconfig, o->context, o->namespace_);
    add_output_option(app, o->output);
    return [o](Context& ctx) { return run_unlock(*o, ctx); };
}

Handler define_status(CLI::App& app) {
    auto o = std::make_shared<StatusOptions>();
    app.add_option("env", o->env, "one environment (default: every lock)");
    app.add_option("-o,--output", o->output, "text | json | prometheus")
        ->check(CLI::IsMember({"text", "json", "prometheus"}))
        ->capture_default_str();
    app.add_option("--textfile", o->textfile,
                   "with --output prometheus: replace this .prom file atomically (for a "
                   "node-exporter textfile collector) instead of printing");
    app.add_option("--config", o->config_path, "envgate.yml to read")->capture_default_str();
    add_store_options(app, o->kubeconfig, o->context, o->namespace_);
    app.add_option("--timeout", o->timeout,
                   "give up on the locks (and gates) not read by then: they show as unknown, "
                   "exit 4")
        ->capture_default_str();
    app.add_flag("--wide", o->wide,
                 "text: one line per value, never wrapped (default: wrap at spaces to $COLUMNS "
                 "or the terminal's width; no wrapping when not a terminal)");
    return [o](Context& ctx) { return run_status(*o, ctx); };
}

Handler define_run(CLI::App& app) {
    auto o = std::make_shared<RunOptions>();
    app.add_option("--env", o->environment, "the environment to upgrade")->required();
    app.add_option("--config", o->config, "envgate.yml")->capture_default_str();
    app.add_option("--report-dir", o->report_dir, "where the reports go")->capture_default_str();
    app.add_option("--holder", o->holder, "lock holder id outside CI (default local:USER@HOST)");
    app.add_option("--wait-timeout", o->wait_timeout, "give up waiting for the lock (exit 3)");
    app.add_flag("--no-wait", o->no_wait, "exit 3 at once if the lock is not free");
    app.add_option("--on-cancel", o->on_cancel, "leave | delete a running gate Job when cancelled")
        ->capture_default_str();
    app.add_option("--kubeconfig", o->kubeconfig, "kubeconfig file (default: $KUBECONFIG)");
    app.add_option("--context", o->context, "kubeconfig context (default: the environment's)");
    app.add_option("-n,--namespace", o->namespace_,
                   "namespace of the gates' Jobs and steps (default: the config's)");
    app.add_option("--poll-interval", o->poll_interval, "poll this often if watching fails")
        ->capture_default_str();
    app.add_option("--progress-interval", o->progress_interval,
                   "print a progress line when a gate was quiet this long")
        ->capture_default_str();
    app.add_option("--only", o->only,
                   "run only this gate or step, as one job of a pipeline that holds the lock "
                   "across its jobs: diff (or the first) takes the lock, the others need the "
                   "pipeline to hold it; on success the lock stays held (hold_for) for the next "
                   "job, on failure the failure policy applies");
    add_report_output_option(app, o->output);
    return [o](Context& ctx) { return run_run(*o, ctx); };
}

Handler define_dashboard(CLI::App& app) {
    auto o = std::make_shared<DashboardOptions>();
    app.add_option("--out", o->out_dir, "write DIR/index.html here")->required();
    app.add_option("--config", o->config_path, "envgate.yml to read")->capture_default_str();
    app.add_option("--runs", o->runs,
                   "report dirs to take each environment's last run from (each holds a "
                   "run.json, or sub-folders that do; repeatable)");
    app.add_option("--refresh", o->refresh_seconds,
                   "make the page reload itself every SECONDS (for a page regenerated on a "
                   "schedule); 0: never")
        ->check(CLI::Range(0, 86400))
        ->capture_default_str();
    add_store_options(app, o->kubeconfig, o->context, o->namespace_);
    app.add_option("-o,--output", o->output,
                   "text | json (json: what the page shows, as one document: each lock's "
                   "status entry, its figures and its last run)")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    app.add_option("--timeout", o->timeout,
                   "give up on the locks (and gates) not read by then: they show as unknown")
        ->capture_default_str();
    return [o](Context& ctx) { return run_dashboard(*o, ctx); };
}

Handler define_lint(CLI::App& app) {
    auto o = std::make_shared<LintOptions>();
    app.add_option("paths", o->paths,
                   "manifests: files, folders (searched for .yaml, .yml, .json) or - for stdin");
    app.add_option("-o,--output", o->output, "text | json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    app.add_option("--codequality", o->codequality,
                   "also write GitLab's Code Quality report (JSON) to this file");
    app.add_option("--fail-on", o->fail_on,
                   "exit 1 on a finding at or above: info | warning | error | critical | never")
        ->capture_default_str();
    app.add_option("--config", o->config,
                   "envgate.yml with a lint: section (default: ./envgate.yml if present)");
    app.add_option("--stdin-name", o->stdin_name, "the path to report stdin's findings at")
        ->capture_default_str();
    app.add_flag("--list-checks", o->list_checks,
                 "print every check (id, severity, why, fix) as Markdown and exit");
    return [o](Context& ctx) { return run_lint(*o, ctx); };
}

Handler define_version(CLI::App& app) {
    auto o = std::make_shared<VersionOptions>();
    app.add_option("-o,--output", o->output, "text | json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    return [o](Context& ctx) { return run_version(*o, ctx); };
}

Handler define_completion(CLI::App& app) {
    auto o = std::make_shared<CompletionOptions>();
    app.add_option("shell", o->shell, "bash | zsh | fish")
        ->required()
        ->check(CLI::IsMember(completion_shells()));
    app.footer(
        "Load it in the running shell:\n"
        "  bash: source <(envgate completion bash)    (or save it in "
        "~/.local/share/bash-completion/completions/envgate)\n"
        "  zsh:  source <(envgate completion zsh)     (after compinit; or save it as _envgate "
        "in $fpath)\n"
        "  fish: envgate completion fish | source     (or save it as "
        "~/.config/fish/completions/envgate.fish)\n"
        "It completes commands, options, -o values, environment names from envgate.yml "
        "(--config) and kubeconfig contexts ($KUBECONFIG, else ~/.kube/config).");
    return [o](Context& ctx) { return run_completion(*o, ctx); };
}

Handler define_help(CLI::App& app) {
    auto o = std::make_shared<std::vector<std::string>>();
    app.add_option("command", *o, "the command (and subcommand), as in: envgate help config check");
    const CLI::App* root = app.get_parent();
    return [o, root](Context& ctx) { return run_help(*root, *o, ctx); };
}

const Command k_commands[] = {
    {"config", "Check envgate.yml and show the settings it resolves to", define_config},
    {"explain", "Print the gate verdict of a saved Job and its pods as JSON", define_explain},
    {"run", "Upgrade one environment: lock, steps and gates in order, reports, failure policy",
     define_run},
    {"gate", "Launch a gate's migration Job and block on it with exact retry accounting",
     define_gate},
    {"generate", "Write the child pipeline for the environments a change touches", define_generate},
    {"lock", "Acquire, release, fail or verify an environment's lock across jobs", define_lock},
    {"status", "Show every lock: state, holder, step, failure, waiters, history", define_status},
    {"unlock", "Manually unlock a held or failed lock, recording who and why", define_unlock},
    {"dashboard", "Write a static HTML page of every lock and each environment's last run",
     define_dashboard},
    {"lint", "Find database migrations hidden in application start-up in Kubernetes manifests",
     define_lint},
    {"version", "Print the version, git commit, build type and library versions", define_version},
    {"completion", "Print the shell completion script for bash, zsh or fish", define_completion},
    {"help", "Show the usage and options of a command: envgate help CMD (as envgate CMD --help)",
     define_help},
};

// The first option whose value is stored as text in a lock record (a holder, a
// reason, a message) and is not UTF-8, as "--holder"; "" when there is none. Such a
// value is refused rather than stored altered: a holder id must read back as written.
std::string option_not_utf8(const CLI::App& app) {
    for (const char* name : {"--holder", "--expect-holder", "--reason", "--message", "--step"}) {
        const CLI::Option* opt = app.get_option_no_throw(name);
        for (const std::string& value : opt ? opt->results() : std::vector<std::string>{}) {
            if (!is_valid_utf8(value)) {
                return name;
            }
        }
    }
    for (const CLI::App* sub : app.get_subcommands()) {
        if (std::string found = option_not_utf8(*sub); !found.empty()) {
            return found;
        }
    }
    return "";
}

}  // namespace

int run_cli(const std::vector<std::string>& args, Context& ctx) {
    CLI::App app{"envgate: locked, gated deploys of Kubernetes environments from GitLab CI",
                 "envgate"};
    app.set_version_flag("--version", "envgate " + build_info().version);
    app.require_subcommand(1);
    Handler chosen;
    for (const Command& c : k_commands) {
        CLI::App* sub = app.add_subcommand(c.name, c.help);
        Handler h = c.define(*sub);
        sub->callback([&chosen, h] { chosen = h; });
    }
    if (!args.empty() && args[0] == "__complete") {  // what the completion scripts ask
        std::vector<std::string> words(args.begin() + 1, args.end());
        for (const std::string& c :
             complete_words(app, words, file_completion_sources(), ctx.getenv)) {
            ctx.out << c << "\n";
        }
        return k_exit_success;
    }
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        ctx.out << app.help();
        return k_exit_success;
    } catch (const CLI::CallForAllHelp&) {
        ctx.out << app.help("", CLI::AppFormatMode::All);
        return k_exit_success;
    } catch (const CLI::CallForVersion&) {
        ctx.out << app.version() << "\n";
        return k_exit_success;
    } catch (const CLI::ParseError& e) {
        // An argument the parse could not place explains the failure by itself: CLI11's
        // own message would be a consequence ("A subcommand is required").
        std::string unknown = suggest_for_parse_error(app);
        std::string path = parsed_command_path(app);
        ctx.err << (unknown.empty() ? path + ": " + e.what() + "\n" : unknown)
                << help_pointer(path);
        return k_exit_usage;
    }
    if (!chosen) {
        ctx.err << "envgate: no command given\n";
        return k_exit_usage;
    }
    if (std::string bad = option_not_utf8(app); !bad.empty()) {
        ctx.err << "envgate: " << bad << ": the value is not valid UTF-8 text\n";
        return k_exit_usage;
    }
    try {
        int code = chosen(ctx);
        // A job cancelled while an API call gave up (or a plugin was killed) ends as
        // cancelled: 128+N, as every waiting loop reports it.
        if (int sig = ctx.pending_signal(); sig != 0 && code != k_exit_success && code < 128) {
            return exit_for_signal(sig);
        }
        return code;
    } catch (const std::exception& e) {  // the last resort: a message and exit 1, never abort()
        ctx.err << "envgate: internal error: " << e.what() << "\n";
    } catch (...) {
        ctx.err << "envgate: internal error\n";
    }
    return k_exit_failed;
}

}  // namespace envgate
