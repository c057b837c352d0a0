// Small helpers shared by the Job controller's files (controller.cpp,
// controller_steps.cpp): object names, scaled durations, new conditions.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

#include "test/kubesim/store.h"

namespace kubesim::controller_util {

inline std::chrono::microseconds scaled(std::chrono::seconds s, double scale) {
    return std::chrono::microseconds(
        static_cast<int64_t>(static_cast<double>(s.count()) * scale * 1e6));
}

inline std::string uid_of(const json& obj) {
    return obj["metadata"].value("uid", "");
}
inline std::string name_of(const json& obj) {
    return obj["metadata"].value("name", "");
}

inline json failure_condition(const std::string& type, const std::string& reason,
                              const std::string& message) {
    std::string now = now_rfc3339();
    return {{"type", type},       {"status", "True"},     {"reason", reason},
            {"message", message}, {"lastProbeTime", now}, {"lastTransitionTime", now}};
}

inline bool in_list(const json& list, const std::string& uid) {
    return std::find(list.begin(), list.end(), json(uid)) != list.end();
}

}  // namespace kubesim::controller_util
