// migrate-in-start-command and migrate-in-init-container: a schema migration on the
// start-up path of every replica of a long-running workload.
#include <fmt/format.h>

#include "runner/lint/check.h"
#include "runner/lint/checks.h"
#include "runner/lint/sites.h"

namespace envgate::lint {
namespace {

void report_sites(const Workload& w, const Objects& all, bool init, Emitter& out) {
    if (!w.long_running()) {
        return;  // a Job that runs the migration is the fix, not the problem
    }
    for (const Container& c : w.containers) {
        if (c.init != init) {
            continue;
        }
        for (const MigrationSite& s : migration_sites(c, w, all)) {
            std::string via = s.via.empty() ? "" : " (" + s.via + ")";
            std::string message =
                init ? fmt::format(
                           "init container \"{}\" runs `{}`{}: every pod start and "
                           "every replica migrates before it can be Ready",
                           c.name, s.what, via)
                     : fmt::format(
                           "container \"{}\" runs `{}` as part of its start-up{}: "
                           "the migration races in every replica and holds the rollout",
                           c.name, s.what, via);
            out.report(s.loc, std::move(message), c.name + "|" + s.what + "|" + s.via);
        }
    }
}

void run_start_command(const Workload& w, const Objects& all, const LintSettings&, Emitter& out) {
    report_sites(w, all, false, out);
}

void run_init_container(const Workload& w, const Objects& all, const LintSettings&, Emitter& out) {
    report_sites(w, all, true, out);
}

}  // namespace

const Check k_migrate_in_start_command = {
    "migrate-in-start-command",
    Severity::error,
    true,
    "An application container's command runs a database migration before or beside the service",
    "Every replica races for the same DDL, the rollout hangs on the slowest lock, and probes "
    "get stretched to hide it",
    "Run the migration once, as a Job before the rollout (an envgate gate), and let the "
    "service only check the schema version it needs",
    "The container's command, arguments or `sh -c` string starts a migration tool "
    "(`rails db:migrate`, `manage.py migrate`, `alembic upgrade`, `flyway migrate`, "
    "`php artisan migrate`, `dotnet ef database update`, golang-migrate's `migrate ... up`, "
    "`./migrate && ./service`, and the like), or an entrypoint script mounted from a ConfigMap "
    "in the same input does.\n\n"
    "A Pod is `Running` as soon as its process starts; it only takes traffic once it is ready. "
    "A migration inside start-up sits between the two: the schema change becomes part of the "
    "bootstrap of every instance. With three replicas, three pods check the schema version, "
    "wait for the same locks and try the same DDL; one wins, one waits, one times out. From "
    "outside the release \"hangs\": new pods never turn ready, `kubectl rollout status` waits "
    "until `ProgressDeadlineExceeded`, and an HPA seeing unchanged load may add even more "
    "starting pods to the race. Small tables hide this for a long time; it surfaces the day a "
    "backfill takes minutes.\n\n"
    "Decouple the two: schema changes that must precede the new version run once, as their "
    "own step with their own logs, retry rules and a clear end (a Kubernetes Job run as an "
    "envgate gate). The service starts fast and refuses, with a clear error, to run on a "
    "schema older than it needs. Heavy data backfills leave the release path entirely "
    "(expand, deploy, backfill, contract).",
    run_start_command,
};

const Check k_migrate_in_init_container = {
    "migrate-in-init-container",
    Severity::error,
    true,
    "An initContainer of a long-running workload runs a database migration",
    "Init containers re-run on every pod start and in every replica: the migration is still "
    "tied to each pod's lifecycle, just moved to another part of the manifest",
    "Move the migration to a Job that runs once before the rollout (an envgate gate); keep "
    "init containers for waiting on dependencies",
    "An init container of a Deployment, StatefulSet, DaemonSet, ReplicaSet or Pod runs a "
    "migration tool, directly or through a ConfigMap script.\n\n"
    "Moving the migration into an initContainer looks tidier: the application knows no SQL "
    "and its entrypoint is clean. But an init container must finish before the main "
    "container starts, the pod cannot be Ready until it has, and it runs again whenever the "
    "pod is recreated. The schema change is still on the bootstrap path of each instance; "
    "every replica and every restart migrates, or races to. Nothing about the failure modes "
    "of `migrate-in-start-command` has changed.\n\n"
    "Run the migration as a Job, once, before the new pods start (an envgate gate); an init "
    "container may wait for the schema version instead of producing it.",
    run_init_container,
};

}  // namespace envgate::lint
