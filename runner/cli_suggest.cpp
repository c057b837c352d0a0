#include "runner/cli_suggest.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <vector>

#include "runner/config/config_yaml.h"

namespace envgate {
namespace {

// The deepest command the parse recognised ("envgate lock", say).
const CLI::App* deepest(const CLI::App& app, std::string& path) {
    path = app.get_name();
    const CLI::App* at = &app;
    for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands()) {
        at = subs.front();
        path += " " + at->get_name();
    }
    return at;
}

std::vector<std::string> option_names(const CLI::App& app) {
    std::vector<std::string> out;
    for (const CLI::Option* opt : app.get_options()) {
        for (const std::string& name : opt->get_lnames()) {
            out.push_back("--" + name);
        }
    }
    return out;
}

std::vector<std::string> command_names(const CLI::App& app) {
    std::vector<std::string> out;
    for (const CLI::App* sub :
         app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
        out.push_back(sub->get_name());
    }
    return out;
}

}  // namespace

std::string suggest_for_parse_error(const CLI::App& app) {
    std::string path;
    const CLI::App* at = deepest(app, path);
    const bool has_commands = !command_names(*at).empty();
    std::string out;
    for (const std::string& arg : at->remaining(true)) {
        const bool option = arg.rfind("-", 0) == 0 && arg.size() > 1;
        if (!option && !has_commands) {
            continue;  // an extra value: CLI11's message says it best
        }
        const std::string word = option ? arg.substr(0, arg.find('=')) : arg;
        auto guess = did_you_mean(word, option ? option_names(*at) : command_names(*at));
        out += fmt::format("{}: unknown {} \"{}\"", path, option ? "option" : "command", word);
        out += guess ? fmt::format("; did you mean \"{}\"?\n", *guess) : "\n";
    }
    return out;
}

std::string parsed_command_path(const CLI::App& app) {
    std::string path;
    deepest(app, path);
    return path;
}

std::string help_pointer(const std::string& path) {
    if (path.find(' ') == std::string::npos) {
        return fmt::format("Run '{0} --help' for the commands, or '{0} help COMMAND' for one.\n",
                           path);
    }
    return fmt::format("Run '{} --help' for its usage and options.\n", path);
}

}  // namespace envgate
