// kubesim throughput: GET requests per second over kept-alive connections, watch
// events delivered per second to several watchers while one writer updates a Lease,
// and the wall time for N one-pod Jobs to complete at --time-scale 0.01.
//   kubesim_bench [--seconds S] [--jobs N] [--clients C] [--watchers W]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "test/kubesim/sim_process.h"

using kubesim::SimClient;
using kubesim::testing::SimProcess;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

const std::string k_leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
const std::string k_jobs = "/apis/batch/v1/namespaces/default/jobs";

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

json lease(const std::string& name) {
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", name}}},
            {"spec", {{"holderIdentity", "bench"}, {"leaseDurationSeconds", 30}}}};
}

void bench_get(const SimProcess& sim, int clients, double secs) {
    SimClient setup = sim.client();
    (void)setup.request("POST", k_leases, lease("bench-get").dump());
    std::atomic<long> done{0};
    std::atomic<long> errors{0};
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < clients; ++i) {
        threads.emplace_back([&] {
            SimClient c = sim.client();
            while (seconds_since(start) < secs) {
                auto r = c.request("GET", k_leases + "/bench-get");
                (r.is_ok() && r->code == 200 ? done : errors)++;
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    double elapsed = seconds_since(start);
    std::printf("GET lease: %ld requests in %.2f s with %d clients = %.0f GET/s (%ld errors)\n",
                done.load(), elapsed, clients, static_cast<double>(done.load()) / elapsed,
                errors.load());
}

void bench_watch(const SimProcess& sim, int watchers, double secs) {
    SimClient c = sim.client();
    json created = json::parse(c.request("POST", k_leases, lease("bench-watch").dump())->body);
    std::string rv = created["metadata"]["resourceVersion"];
    std::atomic<long> received{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < watchers; ++i) {
        threads.emplace_back([&] {
            SimClient w = sim.client();
            (void)w.stream(k_leases + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv,
                           [&](const std::string& line) {
                               if (line.find("\"MODIFIED\"") != std::string::npos) {
                                   ++received;
                               }
                               return !stop.load();
                           });
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    long writes = 0;
    auto start = Clock::now();
    while (seconds_since(start) < secs) {
        json patch = {{"metadata", {{"annotations", {{"n", std::to_string(writes)}}}}}};
        auto r = c.request("PATCH", k_leases + "/bench-watch", patch.dump(),
                           "application/merge-patch+json");
        writes += r.is_ok() && r->code == 200;
    }
    double elapsed = seconds_since(start);
    long want = writes * watchers;
    kubesim::testing::wait_until([&] { return received.load() >= want; }, std::chrono::seconds(10));
    double total = seconds_since(start);
    stop = true;
    (void)c.request("POST", "/kubesim/v1/watches/close");
    for (auto& t : threads) {
        t.join();
    }
    std::printf(
        "watch: %ld updates in %.2f s (%.0f writes/s), %d watchers received %ld of %ld "
        "events = %.0f events/s delivered\n",
        writes, elapsed, static_cast<double>(writes) / elapsed, watchers, received.load(), want,
        static_cast<double>(received.load()) / total);
}

void bench_jobs(const SimProcess& sim, int jobs) {
    SimClient c = sim.client();
    std::string rv = json::parse(c.request("GET", k_jobs)->body)["metadata"]["resourceVersion"];
    std::atomic<int> complete{0};
    std::thread watcher([&] {
        SimClient w = sim.client();
        (void)w.stream(
            k_jobs + "?watch=1&timeoutSeconds=300&resourceVersion=" + rv,
            [&](const std::string& line) {
                json ev = json::parse(line);
                for (const auto& cond : ev["object"]["status"].value("conditions", json::array())) {
                    if (cond["type"] == "Complete" && ev["type"] == "MODIFIED") {
                        ++complete;
                        break;
                    }
                }
                return complete.load() < jobs;
            });
    });
    auto start = Clock::now();
    for (int i = 0; i < jobs; ++i) {
        json job = {{"apiVersion", "batch/v1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "bench-" + std::to_string(i)}}},
                    {"spec",
                     {{"template",
                       {{"spec",
                         {{"restartPolicy", "Never"},
                          {"containers",
                           {{{"name", "c"}, {"image", "busybox"}, {"command", {"true"}}}}}}}}}}}};
        (void)c.request("POST", k_jobs, job.dump());
    }
    double created = seconds_since(start);
    watcher.join();
    std::printf("jobs: %d one-pod Jobs created in %.2f s, all Complete after %.2f s\n", jobs,
                created, seconds_since(start));
}

}  // namespace

int main(int argc, char** argv) {
    double secs = 3;
    int jobs = 200;
    int clients = 4;
    int watchers = 4;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--seconds") {
            secs = std::stod(argv[i + 1]);
        } else if (a == "--jobs") {
            jobs = std::stoi(argv[i + 1]);
        } else if (a == "--clients") {
            clients = std::stoi(argv[i + 1]);
        } else if (a == "--watchers") {
            watchers = std::stoi(argv[i + 1]);
        }
    }
    SimProcess sim({"--time-scale", "0.01"});
    std::printf("kubesim on 127.0.0.1:%d, %u cores\n", sim.port(),
                std::thread::hardware_concurrency());
    bench_get(sim, clients, secs);
    bench_watch(sim, watchers, secs);
    bench_jobs(sim, jobs);
    return 0;
}
