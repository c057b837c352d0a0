// What `envgate run` (and `envgate gate` through it) asks of the upgrade as the command
// line gave it: declared once, for the command's options and the upgrade's settings.
#pragma once

#include <optional>
#include <string>

namespace envgate {

struct UpgradeChoices {
    std::optional<std::string> holder;  // --holder outside CI
    bool no_wait = false;
    // One gate or step of the upgrade, as one job of a split pipeline. `diff` (or the
    // first of the run order) takes the lock as a whole run does; any other needs the
    // pipeline to hold it already (or a person to have unlocked this pipeline's failure)
    // and never waits. Success keeps the lock held for `hold_for`, the gap until the
    // next job re-enters it; a failure or a cancel applies the failure policy at once.
    std::optional<std::string> only;
    // `envgate gate`: the --only gate's Job manifest instead of the config's (a gate the
    // config does not name runs from `manifest`).
    std::optional<std::string> manifest;
    // false (`envgate gate`): the --only entry never takes the lock, even when it comes
    // first; the pipeline must hold it already.
    bool may_take_lock = true;
};

}  // namespace envgate
