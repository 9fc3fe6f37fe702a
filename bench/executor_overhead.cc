// The executor's cost per node: a Session::Run over a chain of 10,000
// trivial ops, reported per node ("ns_per_node"). See bench/README.md.
//
//   Identity chain: cheap kernels, run inline by the calling thread.
//   AddV2 chain:    scalar adds, kernels marked expensive (pool dispatch
//                   avoided for a chain, see Note [Executor scheduling]).
//   NoOp fan-in:    10,000 independent NoOps joined by control edges.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "core/tensor_proto_util.h"
#include "framework/attr_value_util.h"
#include "runtime/session.h"

namespace towerflow {
namespace {

constexpr int kNodes = 10000;

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  return n;
}

GraphDef Chain(const std::string& op) {
  GraphDef g;
  NodeDef* c = AddNode(&g, "n0", "Const");
  SetAttrValue(DT_FLOAT, &(*c->mutable_attr())["dtype"]);
  *(*c->mutable_attr())["value"].mutable_tensor() = MakeScalarTensorProto<float>(1.0f);
  for (int i = 1; i < kNodes; ++i) {
    NodeDef* n = AddNode(&g, absl::StrCat("n", i), op);
    n->add_input(absl::StrCat("n", i - 1));
    if (op == "AddV2") n->add_input("n0");
    SetAttrValue(DT_FLOAT, &(*n->mutable_attr())["T"]);
  }
  return g;
}

GraphDef FanIn() {
  GraphDef g;
  NodeDef* join = AddNode(&g, "join", "NoOp");
  for (int i = 1; i < kNodes; ++i) {
    AddNode(&g, absl::StrCat("n", i), "NoOp");
    join->add_input(absl::StrCat("^n", i));
  }
  return g;
}

void RunGraph(benchmark::State& state, const GraphDef& g, const std::vector<std::string>& fetch,
              const std::vector<std::string>& targets) {
  SessionOptions opts;
  auto session = NewSession(opts);
  if (!session.ok() || !(*session)->Create(g).ok()) {
    state.SkipWithError("session setup failed");
    return;
  }
  std::vector<Tensor> out;
  if (!(*session)->Run({}, fetch, targets, &out).ok()) {  // builds and caches the executor
    state.SkipWithError("first run failed");
    return;
  }
  const int64_t start = absl::GetCurrentTimeNanos();
  for (auto _ : state) {
    absl::Status s = (*session)->Run({}, fetch, targets, &out);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  const double ns = static_cast<double>(absl::GetCurrentTimeNanos() - start);
  state.counters["ns_per_node"] = ns / (static_cast<double>(state.iterations()) * kNodes);
}

void BM_IdentityChain(benchmark::State& state) {
  RunGraph(state, Chain("Identity"), {absl::StrCat("n", kNodes - 1)}, {});
}
void BM_AddV2Chain(benchmark::State& state) {
  RunGraph(state, Chain("AddV2"), {absl::StrCat("n", kNodes - 1)}, {});
}
void BM_NoOpFanIn(benchmark::State& state) { RunGraph(state, FanIn(), {}, {"join"}); }

BENCHMARK(BM_IdentityChain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AddV2Chain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NoOpFanIn)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace towerflow

BENCHMARK_MAIN();
