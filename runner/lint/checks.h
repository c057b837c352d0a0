// The checks, one object each, defined in runner/lint/checks_*.cpp and listed in
// documentation order by all_checks() (registry.cpp).
#pragma once

#include "runner/lint/check.h"

namespace envgate::lint {

extern const Check k_migrate_in_start_command;
extern const Check k_migrate_in_init_container;
extern const Check k_migrate_on_start_flag;
extern const Check k_stretched_startup;
extern const Check k_migration_job_backoff_limit;
extern const Check k_migration_job_parallel;
extern const Check k_migration_job_no_deadline;
extern const Check k_migration_job_evidence_deleted;
extern const Check k_migration_job_no_pod_failure_policy;

}  // namespace envgate::lint
