// Where a container runs a migration: its exec line (command, then args, with the
// image's entrypoint standing in for a missing command when the image is a known
// migration tool), or an entrypoint script it runs out of a ConfigMap in the input.
#pragma once

#include <string>
#include <vector>

#include "runner/lint/model.h"

namespace envgate::lint {

struct MigrationSite {
    Location loc;      // the exact argument, or the script line in the ConfigMap
    std::string what;  // "rails db:migrate"
    std::string via;   // "" or "script /scripts/entrypoint.sh from ConfigMap/web-scripts"
};

// Every migration container `c` of `w` runs, in order.
std::vector<MigrationSite> migration_sites(const Container& c, const Workload& w,
                                           const Objects& all);

// True when `w` is a migration Job: a Job or CronJob one of whose containers runs a
// migration, or whose name says it is one.
bool is_migration_job(const Workload& w, const Objects& all);

}  // namespace envgate::lint
