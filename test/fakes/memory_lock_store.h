// An in-memory LockStore for tests: versioned like a Lease (each write bumps the
// version), records every call, and fails on demand (`fail_next(Code::conflict)`).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "locks/lock_store.h"

namespace envgate::test {

class MemoryLockStore : public locks::LockStore {
  public:
    Result<locks::Versioned> read(const std::string& name) override {
        std::lock_guard<std::mutex> guard(m_mutex);
        m_calls.push_back("read " + name);
        auto it = m_records.find(name);
        if (it == m_records.end()) {
            locks::LockRecord free_record;
            free_record.name = name;
            return locks::Versioned{free_record, ""};
        }
        return it->second;
    }

    Result<std::string> write(const std::string& name, const locks::LockRecord& record,
                              const std::string& version) override {
        std::lock_guard<std::mutex> guard(m_mutex);
        m_calls.push_back("write " + name + " @" + version);
        if (!m_failures.empty()) {
            Code code = m_failures.front();
            m_failures.erase(m_failures.begin());
            return Status(code, "injected failure");
        }
        auto it = m_records.find(name);
        std::string stored = it == m_records.end() ? "" : it->second.version;
        if (stored != version) {
            return Status(Code::conflict, "version " + stored + " is stored, not " + version);
        }
        std::string next = std::to_string(++m_counter);
        m_records[name] = locks::Versioned{record, next};
        return next;
    }

    Result<std::vector<std::string>> list() override {
        std::lock_guard<std::mutex> guard(m_mutex);
        std::vector<std::string> names;
        for (const auto& [name, v] : m_records) {
            names.push_back(name);
        }
        return names;
    }

    std::string describe() const override { return "memory store"; }

    // The next write fails with `code` (before any version check).
    void fail_next(Code code) {
        std::lock_guard<std::mutex> guard(m_mutex);
        m_failures.push_back(code);
    }
    std::vector<std::string> calls() {
        std::lock_guard<std::mutex> guard(m_mutex);
        return m_calls;
    }

  private:
    std::mutex m_mutex;
    std::map<std::string, locks::Versioned> m_records;
    std::vector<Code> m_failures;
    std::vector<std::string> m_calls;
    long m_counter = 0;
};

}  // namespace envgate::test
