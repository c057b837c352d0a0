#include "runner/cmd_explain.h"

#include <ostream>

#include "runner/exit_status.h"

namespace envgate {

int run_explain(const ExplainOptions&, Context& ctx) {
    ctx.err << "envgate explain: not built yet\n";
    return k_exit_usage;
}

}  // namespace envgate
