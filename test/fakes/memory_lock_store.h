// An in-memory LockStore for tests: versioned like a Lease (each write bumps the
// version), a map of waiter records for the queue, records every call, and fails on
// demand (`fail_next(Code::conflict)`).
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
            locks::Versioned v{free_record, "", {}};
            add_queue(name, v);
            return v;
        }
        locks::Versioned v = it->second;
        add_queue(name, v);
        return v;
    }

    Result<locks::Versioned> read_record(const std::string& name) override {
        std::lock_guard<std::mutex> guard(m_mutex);
        m_calls.push_back("read_record " + name);
        auto it = m_records.find(name);
        if (it == m_records.end()) {
            locks::LockRecord free_record;
            free_record.name = name;
            return locks::Versioned{free_record, "", ""};
        }
        return it->second;
    }

    Result<std::string> write_waiter(const std::string& name, const locks::Waiter& waiter,
                                     const std::string& version) override {
        std::lock_guard<std::mutex> guard(m_mutex);
        m_calls.push_back("write_waiter " + name + " " + waiter.who.id + " @" + version);
        auto& queue = m_queues[name];
        auto it = queue.find(waiter.who.id);
        if (version.empty() && it != queue.end()) {
            return Status(Code::conflict, "already queued");
        }
        if (!version.empty() && it == queue.end()) {
            return Status(Code::not_found, "not queued");
        }
        if (!version.empty() && it->second.version != version) {
            return Status(Code::conflict, "queue entry changed");
        }
        locks::Waiter stored = waiter;
        stored.legacy = false;
        stored.version = std::to_string(++m_counter);
        queue[waiter.who.id] = stored;
        return stored.version;
    }

    Status remove_waiter(const std::string& name, const std::string& id,
                         const std::string& version = {}) override {
        std::lock_guard<std::mutex> guard(m_mutex);
        m_calls.push_back("remove_waiter " + name + " " + id +
                          (version.empty() ? "" : " @" + version));
        auto& queue = m_queues[name];
        auto it = queue.find(id);
        if (it != queue.end() && !version.empty() && it->second.version != version) {
            return Status(Code::conflict, "queue entry changed");
        }
        queue.erase(id);
        return Status::ok();
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
        m_records[name] = locks::Versioned{locks::stored_form(record), next, next};
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
    // REQUIRES: m_mutex held.
    void add_queue(const std::string& name, locks::Versioned& v) {
        for (const auto& [id, w] : m_queues[name]) {
            v.record.waiters.push_back(w);
        }
        locks::sort_queue(v.record.waiters);
        v.token = std::to_string(m_counter);
    }

    std::mutex m_mutex;
    std::map<std::string, std::map<std::string, locks::Waiter>> m_queues;
    std::map<std::string, locks::Versioned> m_records;
    std::vector<Code> m_failures;
    std::vector<std::string> m_calls;
    long m_counter = 0;
};

}  // namespace envgate::test
