// kubesim's control API under /kubesim/v1/ (what `kubesim ctl` calls): pod
// disruptions, fault rules, closing watches, compaction and request counters.
#pragma once

#include "test/kubesim/http_util.h"

namespace kubesim {

void handle_control(Context& ctx, Poco::Net::HTTPServerRequest& request,
                    Poco::Net::HTTPServerResponse& response);

}  // namespace kubesim
