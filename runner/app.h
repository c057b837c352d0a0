// The process entry: builds the real Env (clock, signals, connections, stores, step
// processes, GitLab) and the streams, then runs the CLI.
#pragma once

namespace envgate {

int run_main(int argc, char** argv);

}  // namespace envgate
