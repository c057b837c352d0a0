// Every label and annotation key envgate writes on, or reads from, objects in a cluster:
// one list, so that what a person selects with `kubectl get -l` and what envgate writes
// cannot drift apart, and a new key is seen beside the others. Documented for users in
// docs/ (labels on Jobs) and locks/README.md (the Lease store).
#pragma once

namespace envgate {

// Labels on every Job a gate creates.
inline constexpr const char* k_label_environment = "envgate.dev/environment";
inline constexpr const char* k_label_gate = "envgate.dev/gate";
inline constexpr const char* k_label_spec_hash = "envgate.dev/spec-hash";
inline constexpr const char* k_label_pipeline = "envgate.dev/pipeline";
// The fencing token of the lock hold that created the Job (`envgate run` only).
inline constexpr const char* k_label_fence = "envgate.dev/fence";
// On a Job created after an unlock: the unlock's sequence number.
inline constexpr const char* k_label_unlock = "envgate.dev/unlock";

// Annotations on a gate's Job: what the gate remembers of its runs, and the last failure.
inline constexpr const char* k_observed_failures_annotation = "envgate.dev/observed-failures";
inline constexpr const char* k_last_failure_annotation = "envgate.dev/last-failure";

// The Lease store: a lock's Lease (`envgate-<lock>`) and one Lease per waiter.
inline constexpr const char* k_lease_prefix = "envgate-";
inline constexpr const char* k_lock_label = "envgate.dev/lock";
inline constexpr const char* k_record_annotation = "envgate.dev/record";
inline constexpr const char* k_lock_name_label = "envgate.dev/lock-name";
inline constexpr const char* k_waiter_label = "envgate.dev/waiter";       // value "true"
inline constexpr const char* k_waiter_annotation = "envgate.dev/waiter";  // the waiter's JSON

// On a user's manifest: the lint checks it silences ("<id>[,<id>...]" or "all").
inline constexpr const char* k_ignore_annotation = "envgate.dev/lint-ignore";

}  // namespace envgate
