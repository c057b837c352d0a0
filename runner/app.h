// The process entry: builds the real Clock, environment and streams, then runs the CLI.
#pragma once

namespace envgate {

int run_main(int argc, char** argv);

}  // namespace envgate
