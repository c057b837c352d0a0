// Faults kubesim injects on request (fail the next N matching requests with a code,
// reset connections, delay responses) and the per verb/resource request counters the
// API-cost benchmark reads.
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kubesim {

struct FaultRule {
    std::string action;  // "fail", "reset", "delay"
    std::string verb = "*";
    std::string resource = "*";
    int code = 500;
    int count = 1;  // requests left to affect; negative: unlimited
    int retry_after = 0;
    int delay_ms = 0;

    static FaultRule from_json(const std::string& action, const nlohmann::json& body);
    nlohmann::json to_json() const;
};

class Faults {
  public:
    void add(const FaultRule& rule);
    void clear();
    nlohmann::json rules() const;
    // The rules that apply to this request (at most one per action), each used up once.
    std::vector<FaultRule> take(const std::string& verb, const std::string& resource);
    void count(const std::string& verb, const std::string& resource);
    nlohmann::json counters() const;
    void reset_counters();

  private:
    mutable std::mutex m_mutex;
    std::vector<FaultRule> m_rules;
    std::map<std::string, uint64_t> m_counters;  // "verb resource"
};

// The reason the API server gives with an HTTP `code`.
std::string reason_for_code(int code);

}  // namespace kubesim
