// SIGTERM/SIGINT (a cancelled GitLab job) as a value commands poll: the handler
// only stores the signal number; the waiting loops notice it, apply the failure
// policy, write reports and exit 128+N.
#pragma once

namespace envgate {

// Installs the handlers for SIGTERM and SIGINT (idempotent).
void install_signal_handlers();

// The number of the first SIGTERM/SIGINT received since start, or 0.
int pending_signal();

// For tests: pretend `signal_number` arrived (0 clears).
void set_pending_signal(int signal_number);

}  // namespace envgate
