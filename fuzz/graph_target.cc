// GraphDef bytes (binary, else text) -> import -> Session::Create -> Run.
//
// Every Placeholder is fed a small tensor of its dtype and attr shape
// (unknown dimensions 1, unknown rank a scalar; none past 4096 elements).
// First runs initialize: each Assign and AssignVariableOp as a target, one
// by one (TF 1.x graphs without an `init` op are run so). Then one run fetches the outputs of the
// nodes nothing consumes and runs the nodes without outputs as targets (what a user would run); a
// second fetches every output of every node (which a loop's inner tensors refuse). Both run under
// FuzzSessionOptions(); the first error is the result.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "framework/node_def_util.h"
#include "fuzz/fuzz_target.h"
#include "graph/graph.h"
#include "graph/graph_io.h"
#include "proto/graph.pb.h"

namespace towerflow {
namespace fuzz {
namespace {

constexpr int64_t kMaxFeedElements = 4096;
constexpr size_t kMaxFetches = 4096;
constexpr size_t kMaxAssigns = 64;

// A feed for `node`, a Placeholder: nullopt when its dtype or shape cannot
// be fed (the run then reports the missing feed).
std::optional<Tensor> FeedFor(const Node& node) {
  DataType dtype;
  if (!GetNodeAttr(node.def(), "dtype", &dtype).ok()) return std::nullopt;
  std::vector<int64_t> dims;
  PartialTensorShape shape;
  if (GetNodeAttr(node.def(), "shape", &shape).ok() && !shape.unknown_rank()) {
    for (int i = 0; i < shape.dims(); ++i)
      dims.push_back(shape.dim_size(i) < 0 ? 1 : shape.dim_size(i));
  }
  absl::StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  if (!s.ok() || s->num_elements() > kMaxFeedElements) return std::nullopt;
  absl::StatusOr<Tensor> t = Tensor::Allocate(CpuAllocator(), dtype, *s);
  if (!t.ok()) return std::nullopt;
  if (dtype != DT_STRING && dtype != DT_RESOURCE) std::memset(t->raw_data(), 0, t->TotalBytes());
  return *std::move(t);
}

absl::Status RunGraph(absl::string_view input) {
  GraphDef graph_def;
  if (!graph_def.ParseFromArray(input.data(), static_cast<int>(input.size()))) {
    graph_def.Clear();
    TW_RETURN_IF_ERROR(ParseTextProto(input, &graph_def));
  }
  SessionOptions options = FuzzSessionOptions();
  // Graphs placed on other jobs' devices (TF's partition graphs) run here.
  options.allow_soft_placement = true;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TW_RETURN_IF_ERROR(session->Create(graph_def));
  Graph graph;
  TW_RETURN_IF_ERROR(ImportGraphDef(graph_def, &graph));

  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> assigns, sinks, targets, everything;
  for (const Node* node : graph.nodes()) {
    if (node->IsOp("Assign") || node->IsOp("AssignVariableOp")) assigns.push_back(node->name());
    if (node->IsOp("Placeholder")) {
      if (std::optional<Tensor> t = FeedFor(*node)) feeds.emplace_back(node->name(), *t);
    }
    if (node->num_outputs() == 0) targets.push_back(node->name());
    const bool consumed = !node->out_edges().empty();
    for (int i = 0; i < node->num_outputs() && everything.size() < kMaxFetches; ++i) {
      everything.push_back(absl::StrCat(node->name(), ":", i));
      if (!consumed) sinks.push_back(everything.back());
    }
  }
  // One step past its deadline ends the input: the next would likely run
  // into the same loop, and an input must take seconds, not minutes.
  absl::Status status = absl::OkStatus();
  bool timed_out = false;
  auto run = [&](const std::vector<std::string>& fetches,
                 const std::vector<std::string>& run_targets) {
    if (timed_out || (fetches.empty() && run_targets.empty())) return;
    std::vector<Tensor> outputs;
    const absl::Status s = session->Run(feeds, fetches, run_targets, &outputs);
    for (const Tensor& t : outputs) t.SummarizeValue(16);
    timed_out = absl::IsDeadlineExceeded(s);
    status.Update(s);
  };
  for (size_t i = 0; i < assigns.size() && i < kMaxAssigns; ++i) run({}, {assigns[i]});
  run(sinks, targets);
  run(everything, {});
  status.Update(session->Close());
  return status;
}

std::optional<std::string> MutateGraph(const std::string& input, MutationContext& ctx) {
  return MutateProto(input, GraphDef::default_instance(), ProtoFormat::kBinaryOrText, ctx);
}

std::vector<std::string> GraphSeeds() {
  std::vector<std::string> seeds = ReferenceFiles({
      "tf/graphs/mnist_deep_cnn_before.pbtxt",
      "tf/graphs/mnist_deep_cnn_after.pbtxt",
      "tf/graphs/vr_gesture_softmax_regression.pbtxt",
      "tf/graphs/mnist_partition_graph.pb",
  });
  // Small graphs of the ops whose sizes come from their inputs.
  seeds.push_back(R"pb(
    node {
      name: "dims"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape { dim { size: 2 } }
            int_val: [ 2, 3 ]
          }
        }
      }
    }
    node {
      name: "x"
      op: "Fill"
      input: [ "dims", "one" ]
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "one"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
      attr {
        key: "value"
        value { tensor { dtype: DT_FLOAT float_val: 1 } }
      }
    }
    node {
      name: "axis"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value { tensor { dtype: DT_INT32 int_val: 1 } }
      }
    }
    node {
      name: "sum"
      op: "Sum"
      input: [ "x", "axis" ]
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "Tidx"
        value { type: DT_INT32 }
      }
    }
    node {
      name: "r"
      op: "Reshape"
      input: [ "x", "dims" ]
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "p"
      op: "Print"
      input: [ "sum", "x" ]
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "U"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "summarize"
        value { i: 3 }
      }
    }
    node {
      name: "range"
      op: "Range"
      input: [ "axis", "axis", "axis" ]
      attr {
        key: "Tidx"
        value { type: DT_INT32 }
      }
    }
  )pb");
  return seeds;
}

}  // namespace

TW_FUZZ_TARGET_WITH_MUTATOR(graph, RunGraph, GraphSeeds, MutateGraph)

}  // namespace fuzz
}  // namespace towerflow
