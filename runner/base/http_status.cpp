#include "runner/base/http_status.h"

namespace envgate {

Code code_for_http_status(int http_status) {
    switch (http_status) {
        case 401:
            return Code::unauthorized;
        case 403:
            return Code::forbidden;
        case 404:
            return Code::not_found;
        default:
            break;
    }
    return http_status == 429 || http_status >= 500 ? Code::transient : Code::failed;
}

}  // namespace envgate
