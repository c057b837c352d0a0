#include "runner/base/vocab/status.h"

#include <ostream>

namespace envgate {

const char* code_name(Code code) {
    switch (code) {
        case Code::ok:
            return "OK";
        case Code::invalid:
            return "Invalid";
        case Code::not_found:
            return "NotFound";
        case Code::conflict:
            return "Conflict";
        case Code::already_exists:
            return "AlreadyExists";
        case Code::gone:
            return "Gone";
        case Code::unauthorized:
            return "Unauthorized";
        case Code::forbidden:
            return "Forbidden";
        case Code::transient:
            return "Transient";
        case Code::timeout:
            return "Timeout";
        case Code::cancelled:
            return "Cancelled";
        case Code::failed:
            return "Failed";
        case Code::io:
            return "IO";
    }
    return "Unknown";
}

std::ostream& operator<<(std::ostream& out, Code code) {
    return out << code_name(code);
}

}  // namespace envgate
