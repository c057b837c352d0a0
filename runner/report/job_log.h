// The job log as GitLab renders it (spec/reports.md "The job log"): collapsible
// sections, one coloured line per verdict change, commands alone on their own
// line, and every secret replaced by [MASKED] before anything is written.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "runner/base/secrets.h"
#include "runner/base/vocab/time.h"

namespace envgate {

enum class Tone { plain, running, retrying, failing, failed, succeeded };

// The tone of a gate state name ("retrying" -> Tone::retrying; unknown -> plain).
Tone tone_for_state(const std::string& state);

struct LogSettings {
    bool colour = false;
    bool sections = true;              // GitLab's collapsible-section markers; off outside CI
    std::vector<std::string> secrets;  // values never to print
};

// Decides colour from the environment: off with NO_COLOR, on in CI (GitLab renders
// SGR), else on only when `is_tty`. Section markers only in CI (a terminal would show
// them as noise; the header line is printed either way). Secrets: the values of the
// variables runner/base/secrets.h names (ENVGATE_SECRET_VARS, GitLab's credentials).
template <typename Getenv>
LogSettings log_settings_from(Getenv getenv, bool is_tty) {
    LogSettings s;
    s.colour = !getenv("NO_COLOR") && (getenv("CI") || is_tty);
    s.sections = getenv("CI") || getenv("GITLAB_CI");
    auto lookup = [&getenv](const std::string& name) -> std::optional<std::string> {
        return getenv(name);
    };
    for (const std::string& name : secret_variable_names(lookup)) {
        if (auto v = getenv(name); v && !v->empty()) {
            s.secrets.push_back(*v);  // envgate never prints them; a step's output might
        }
    }
    return s;
}

class JobLog {
  public:
    JobLog(std::ostream& out, Clock& clock, LogSettings settings);

    // Adds a value to mask from now on (e.g. a token read from a kubeconfig), for
    // every output of the process (runner/base/secrets.h).
    void add_secret(const std::string& value);

    void section_start(const std::string& name, const std::string& header, bool collapsed = false);
    void section_end(const std::string& name);
    // One line of envgate's, which may quote what a pod wrote: control characters
    // are stripped and further lines indented, so no one can forge a line of ours.
    void line(Tone tone, const std::string& text);
    // A line of a step's own output (diff, deploy, qa), as the step printed it, masked.
    void output(const std::string& text);
    // A command to copy: alone on its line, indented, never coloured.
    void command(const std::string& text);

    // `text` with every secret replaced by [MASKED] (mask_secrets).
    std::string mask(std::string text) const;

  private:
    static std::string section_name(const std::string& name);
    std::string clean(const std::string& text) const;
    std::ostream& m_out;
    Clock& m_clock;
    LogSettings m_settings;
};

}  // namespace envgate
