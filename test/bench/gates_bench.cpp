// Micro-benchmarks of the gate verdict: evaluate on Jobs with 1, 10 and 100 pods, and
// decode + evaluate of a 100-pod PodList as the API returns it. Figures: RESULTS.md.
#include <benchmark/benchmark.h>

#include <string>

#include "gates/decode.h"
#include "gates/evaluate.h"
#include "test/gates/builders.h"

using namespace envgate::gates;
using namespace envgate::gates::test;

namespace {

// One crash-looping pod and `n - 1` evicted ones: every pod is read and counted.
std::vector<Pod> pods_of(int n) {
    std::vector<Pod> pods;
    pods.push_back(with_containers(pod("p0"), {crashloop("migrations", 2)}, {running("proxy")}));
    for (int i = 1; i < n; ++i) {
        Pod p = with_containers(pod("p" + std::to_string(i), "Failed"),
                                {terminated("migrations", term(137, "ContainerStatusUnknown"))},
                                {terminated("configure", term(0, "Completed"))});
        pods.push_back(
            disrupted(p, "TerminationByKubelet", "The node was low on resource: memory."));
    }
    return pods;
}

void bm_evaluate(benchmark::State& state) {
    std::optional<Job> j = job("OnFailure", 200);
    std::vector<Pod> pods = pods_of(static_cast<int>(state.range(0)));
    GateMemory memory = evaluate(Gate::pre_migrations, j, pods, {}, k_now).memory;
    for (auto _ : state) {
        Verdict v = evaluate(Gate::pre_migrations, j, pods, memory, k_now);
        benchmark::DoNotOptimize(v);
    }
}
BENCHMARK(bm_evaluate)->Arg(1)->Arg(10)->Arg(100)->Unit(benchmark::kMicrosecond);

std::string pod_json(int i) {
    std::string n = std::to_string(i);
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"mig-)" + n +
           R"(","namespace":"gitlab","uid":"uid-)" + n +
           R"(","labels":{"batch.kubernetes.io/controller-uid":"job-uid","batch.kubernetes.io/job-name":"mig"},
    "finalizers":["batch.kubernetes.io/job-tracking"],
    "ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"mig","uid":"job-uid","controller":true}]},
    "status":{"phase":"Failed","reason":"Evicted","message":"The node was low on resource: memory.",
    "conditions":[{"type":"DisruptionTarget","status":"True","reason":"TerminationByKubelet",
    "message":"The node was low on resource: memory.","lastTransitionTime":"2025-05-29T07:30:02Z"}],
    "initContainerStatuses":[{"name":"configure","restartCount":0,"state":{"terminated":{"exitCode":0,
    "reason":"Completed","finishedAt":"2025-05-29T07:12:42Z"}}}],
    "containerStatuses":[{"name":"migrations","restartCount":0,"state":{"terminated":{"exitCode":137,
    "reason":"ContainerStatusUnknown","message":"The container could not be located"}}}]}})";
}

void bm_decode_and_evaluate_100_pods(benchmark::State& state) {
    std::string list = R"({"apiVersion":"v1","kind":"PodList","items":[)";
    for (int i = 0; i < 100; ++i) {
        list += (i == 0 ? "" : ",") + pod_json(i);
    }
    list += "]}";
    std::optional<Job> j = job("Never", 200);
    for (auto _ : state) {
        auto pods = decode_pods(list, "pods.json");
        Verdict v = evaluate(Gate::pre_migrations, j, *pods, {}, k_now);
        benchmark::DoNotOptimize(v);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(list.size()));
}
BENCHMARK(bm_decode_and_evaluate_100_pods)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
