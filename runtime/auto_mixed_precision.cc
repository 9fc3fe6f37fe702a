#include "runtime/auto_mixed_precision.h"

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/attr_value_util.h"
#include "framework/kernel_registry.h"
#include "framework/node_def_util.h"
#include "graph/op_registry.h"

namespace towerflow {
namespace {

// TF's lists (grappler/optimizers/auto_mixed_precision_lists.h): TF 1.14's,
// with Log, Log1p, LogSoftmax and Softmax on the deny list as in TF 2.x, and
// the control-flow ops of while loops left out of the clear list.
const absl::flat_hash_set<std::string>& AllowList() {
  static const auto* ops = new absl::flat_hash_set<std::string>{"BatchMatMul",
                                                                "BatchMatMulV2",
                                                                "BlockLSTM",
                                                                "BlockLSTMV2",
                                                                "BlockLSTMGrad",
                                                                "BlockLSTMGradV2",
                                                                "Conv2D",
                                                                "Conv2DBackpropFilter",
                                                                "Conv2DBackpropInput",
                                                                "Conv3D",
                                                                "Conv3DBackpropFilter",
                                                                "Conv3DBackpropFilterV2",
                                                                "Conv3DBackpropInput",
                                                                "Conv3DBackpropInputV2",
                                                                "CudnnRNN",
                                                                "CudnnRNNBackprop",
                                                                "CudnnRNNBackpropV2",
                                                                "CudnnRNNBackpropV3",
                                                                "CudnnRNNV2",
                                                                "CudnnRNNV3",
                                                                "Einsum",
                                                                "GRUBlockCell",
                                                                "GRUBlockCellGrad",
                                                                "LSTMBlockCell",
                                                                "LSTMBlockCellGrad",
                                                                "MatMul"};
  return *ops;
}

const absl::flat_hash_set<std::string>& InferList() {
  static const auto* ops = new absl::flat_hash_set<std::string>{"Add",
                                                                "AddN",
                                                                "AddV2",
                                                                "AvgPool",
                                                                "AvgPool3D",
                                                                "AvgPool3DGrad",
                                                                "AvgPoolGrad",
                                                                "BiasAdd",
                                                                "BiasAddGrad",
                                                                "BiasAddV1",
                                                                "Elu",
                                                                "EluGrad",
                                                                "Erf",
                                                                "Erfc",
                                                                "FloorDiv",
                                                                "FusedBatchNormV2",
                                                                "FusedBatchNormGradV2",
                                                                "FusedBatchNormV3",
                                                                "FusedBatchNormGradV3",
                                                                "_FusedBatchNormEx",
                                                                "Inv",
                                                                "LeakyRelu",
                                                                "LeakyReluGrad",
                                                                "Mul",
                                                                "Prod",
                                                                "RealDiv",
                                                                "Reciprocal",
                                                                "Selu",
                                                                "SeluGrad",
                                                                "Sigmoid",
                                                                "SigmoidGrad",
                                                                "Softplus",
                                                                "SoftplusGrad",
                                                                "Softsign",
                                                                "SoftsignGrad",
                                                                "Sqrt",
                                                                "Sub",
                                                                "Tanh",
                                                                "TanhGrad"};
  return *ops;
}

const absl::flat_hash_set<std::string>& DenyList() {
  static const auto* ops =
      new absl::flat_hash_set<std::string>{"Exp",
                                           "Expm1",
                                           "L2Loss",
                                           "Log",
                                           "Log1p",
                                           "LogSoftmax",
                                           "Mean",
                                           "Pow",
                                           "SaveV2",
                                           "Softmax",
                                           "SoftmaxCrossEntropyWithLogits",
                                           "SparseSoftmaxCrossEntropyWithLogits",
                                           "Sum"};
  return *ops;
}

const absl::flat_hash_set<std::string>& ClearList() {
  static const auto* ops = new absl::flat_hash_set<std::string>{"Abs",
                                                                "ArgMax",
                                                                "ArgMin",
                                                                "BatchToSpace",
                                                                "BatchToSpaceND",
                                                                "BroadcastTo",
                                                                "Ceil",
                                                                "CheckNumerics",
                                                                "ClipByValue",
                                                                "Concat",
                                                                "ConcatV2",
                                                                "DepthToSpace",
                                                                "DynamicPartition",
                                                                "DynamicStitch",
                                                                "EnsureShape",
                                                                "Equal",
                                                                "ExpandDims",
                                                                "Fill",
                                                                "Floor",
                                                                "Gather",
                                                                "GatherNd",
                                                                "GatherV2",
                                                                "Greater",
                                                                "GreaterEqual",
                                                                "Identity",
                                                                "IdentityN",
                                                                "IsFinite",
                                                                "IsInf",
                                                                "IsNan",
                                                                "Less",
                                                                "LessEqual",
                                                                "Max",
                                                                "MaxPool",
                                                                "MaxPool3D",
                                                                "MaxPool3DGrad",
                                                                "MaxPool3DGradGrad",
                                                                "MaxPoolGrad",
                                                                "MaxPoolGradGrad",
                                                                "MaxPoolGradGradV2",
                                                                "MaxPoolGradV2",
                                                                "MaxPoolV2",
                                                                "Maximum",
                                                                "Min",
                                                                "Minimum",
                                                                "MirrorPad",
                                                                "MirrorPadGrad",
                                                                "Neg",
                                                                "NotEqual",
                                                                "OneHot",
                                                                "OnesLike",
                                                                "Pack",
                                                                "Pad",
                                                                "PadV2",
                                                                "PreventGradient",
                                                                "Rank",
                                                                "Relu",
                                                                "Relu6",
                                                                "Relu6Grad",
                                                                "ReluGrad",
                                                                "Reshape",
                                                                "ResizeNearestNeighbor",
                                                                "ResizeNearestNeighborGrad",
                                                                "Reverse",
                                                                "ReverseSequence",
                                                                "ReverseV2",
                                                                "Round",
                                                                "Select",
                                                                "SelectV2",
                                                                "Shape",
                                                                "ShapeN",
                                                                "Sign",
                                                                "Size",
                                                                "Slice",
                                                                "Snapshot",
                                                                "SpaceToBatch",
                                                                "SpaceToBatchND",
                                                                "SpaceToDepth",
                                                                "Split",
                                                                "SplitV",
                                                                "Squeeze",
                                                                "StopGradient",
                                                                "StridedSlice",
                                                                "StridedSliceGrad",
                                                                "Tile",
                                                                "TopK",
                                                                "TopKV2",
                                                                "Transpose",
                                                                "Where",
                                                                "ZerosLike"};
  return *ops;
}

// A Cast node `name` from `from` to `to`, without inputs or device.
NodeDef CastNode(const std::string& name, DataType from, DataType to) {
  NodeDef cast;
  cast.set_name(name);
  cast.set_op("Cast");
  SetAttrValue(from, &(*cast.mutable_attr())["SrcT"]);
  SetAttrValue(to, &(*cast.mutable_attr())["DstT"]);
  SetAttrValue(false, &(*cast.mutable_attr())["Truncate"]);
  return cast;
}

// Per flat input (or output) of `node`, the name of the type attr that
// types it ("" for fixed types and type lists).
std::vector<std::string> ArgTypeAttrs(
    const NodeDef& node, const google::protobuf::RepeatedPtrField<OpDef::ArgDef>& args) {
  std::vector<std::string> out;
  for (const OpDef::ArgDef& a : args) {
    int64_t count = 1;
    if (!a.number_attr().empty()) {
      auto it = node.attr().find(a.number_attr());
      count = it == node.attr().end() ? 0 : it->second.i();
    } else if (!a.type_list_attr().empty()) {
      auto it = node.attr().find(a.type_list_attr());
      count = it == node.attr().end() ? 0 : it->second.list().type_size();
    }
    for (int64_t i = 0; i < count; ++i)
      out.push_back(a.type_list_attr().empty() ? a.type_attr() : "");
  }
  return out;
}

struct Edge {
  int src, port, dst, input;
};

class Painter {
 public:
  Painter(const MixedPrecisionOptions& options, const std::string& device_type, GraphDef* def)
      : options_(options), device_type_(device_type), def_(def) {}

  absl::Status Run() {
    TW_RETURN_IF_ERROR(Index());
    PaintAllow();
    PaintDeny();
    PaintBetweenAllow();
    PaintClearNextToAllow();
    return Rewrite();
  }

 private:
  bool On(const absl::flat_hash_set<std::string>& list, int n) const {
    return list.contains(def_->node(n).op());
  }
  bool Float32(int n) const { return float32_[n]; }
  bool Candidate(int n) const { return candidate_[n]; }

  absl::Status Index() {
    const int n = def_->node_size();
    std::map<std::string, int> index;
    for (int i = 0; i < n; ++i) index[def_->node(i).name()] = i;
    in_attrs_.resize(n);
    out_attrs_.resize(n);
    float32_.assign(n, false);
    candidate_.assign(n, false);
    in_edges_.resize(n);
    out_edges_.resize(n);
    for (int i = 0; i < n; ++i) {
      const NodeDef& node = def_->node(i);
      const OpRegistrationData* op = OpRegistry::Global()->Find(node.op());
      if (op != nullptr) {
        in_attrs_[i] = ArgTypeAttrs(node, op->op_def.input_arg());
        out_attrs_[i] = ArgTypeAttrs(node, op->op_def.output_arg());
      }
      auto t = node.attr().find("T");
      float32_[i] = t != node.attr().end() && t->second.value_case() == AttrValue::kType &&
                    t->second.type() == DT_FLOAT;
      if (float32_[i] &&
          (On(AllowList(), i) || On(InferList(), i) || On(DenyList(), i) || On(ClearList(), i))) {
        NodeDef changed = node;
        (*changed.mutable_attr())["T"].set_type(options_.dtype);
        candidate_[i] = FindKernelDef(device_type_, changed).ok();
      }
    }
    for (int i = 0; i < n; ++i) {
      const NodeDef& node = def_->node(i);
      for (int k = 0; k < node.input_size(); ++k) {
        TW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(node.input(k)));
        if (id.IsControl()) continue;
        auto src = index.find(id.node);
        if (src == index.end()) continue;
        const Edge e{src->second, id.index, i, k};
        edges_.push_back(e);
        if (TypedByT(e)) {
          out_edges_[e.src].push_back(e);
          in_edges_[e.dst].push_back(e);
        }
      }
    }
    return absl::OkStatus();
  }

  // Whether the tensor of `e` is "T" at both of its ends, between two nodes
  // whose T is float32: the edges the colouring walks.
  bool TypedByT(const Edge& e) const {
    return Float32(e.src) && Float32(e.dst) && OutputIsT(e.src, e.port) && InputIsT(e.dst, e.input);
  }
  bool OutputIsT(int n, int port) const {
    return port < static_cast<int>(out_attrs_[n].size()) && out_attrs_[n][port] == "T";
  }
  bool InputIsT(int n, int input) const {
    return input < static_cast<int>(in_attrs_[n].size()) && in_attrs_[n][input] == "T";
  }

  // Depth-first from `roots` along inputs and/or outputs, entering a node
  // when `enter` says so; `visit` sees each node entered (roots included).
  void Walk(const std::vector<int>& roots, bool inputs, bool outputs,
            const std::function<bool(int)>& enter, const std::function<void(int)>& visit) const {
    std::vector<bool> seen(def_->node_size(), false);
    std::vector<int> stack = roots;
    for (int r : roots) seen[r] = true;
    while (!stack.empty()) {
      const int n = stack.back();
      stack.pop_back();
      visit(n);
      const auto push = [&](int next) {
        if (!seen[next] && enter(next)) {
          seen[next] = true;
          stack.push_back(next);
        }
      };
      if (inputs) {
        for (const Edge& e : in_edges_[n]) push(e.src);
      }
      if (outputs) {
        for (const Edge& e : out_edges_[n]) push(e.dst);
      }
    }
  }

  void PaintAllow() {
    allow_.assign(def_->node_size(), false);
    deny_.assign(def_->node_size(), false);
    for (int i = 0; i < def_->node_size(); ++i) allow_[i] = Candidate(i) && On(AllowList(), i);
  }

  // Deny-list nodes, and forward from them the infer- and deny-list nodes
  // they reach through clear- and infer-list nodes (those included).
  void PaintDeny() {
    std::vector<bool> upstream(def_->node_size(), false);
    for (int i = 0; i < def_->node_size(); ++i) {
      if (!Float32(i) || !(On(DenyList(), i) || On(InferList(), i))) continue;
      Walk(
          {i}, /*inputs=*/true, /*outputs=*/false,
          [&](int n) { return !upstream[n] && On(ClearList(), n); },
          [&](int n) { upstream[n] = true; });
    }
    for (int i = 0; i < def_->node_size(); ++i) {
      if (!Float32(i) || deny_[i] || !On(DenyList(), i)) continue;
      Walk(
          {i}, false, true, [&](int n) { return !deny_[n] && upstream[n]; },
          [&](int n) { deny_[n] = true; });
    }
  }

  // Infer- and clear-list nodes both downstream and upstream of changed nodes.
  void PaintBetweenAllow() {
    std::vector<int> roots;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (allow_[i]) roots.push_back(i);
    }
    std::vector<bool> downstream(def_->node_size(), false);
    Walk(
        roots, false, true,
        [&](int n) {
          return !allow_[n] && !deny_[n] && Candidate(n) &&
                 (On(InferList(), n) || On(ClearList(), n));
        },
        [&](int n) { downstream[n] = true; });
    Walk(
        roots, true, false, [&](int n) { return downstream[n]; }, [&](int n) { allow_[n] = true; });
  }

  // Clear-list nodes connected to changed nodes through clear-list nodes.
  void PaintClearNextToAllow() {
    std::vector<int> roots;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (allow_[i]) roots.push_back(i);
    }
    Walk(
        roots, true, true,
        [&](int n) { return !allow_[n] && !deny_[n] && Candidate(n) && On(ClearList(), n); },
        [&](int n) { allow_[n] = true; });
  }

  // The Cast of output `port` of node `src` to `to`, made once.
  std::string CastOf(int src, int port, DataType to, std::vector<NodeDef>* added) {
    const std::string what = to == DT_FLOAT  ? "CastToFp32"
                             : to == DT_HALF ? "CastToFp16"
                                             : "CastToBf16";
    const std::string name =
        absl::StrCat(def_->node(src).name(), "-", port, "-", what, "-AutoMixedPrecision");
    if (made_.insert(name).second) {
      NodeDef cast = CastNode(name, to == DT_FLOAT ? options_.dtype : DT_FLOAT, to);
      cast.set_device(def_->node(src).device());
      cast.add_input(TensorIdString(def_->node(src).name(), port));
      added->push_back(std::move(cast));
    }
    return name;
  }

  absl::Status Rewrite() {
    std::vector<NodeDef> added;
    for (const Edge& e : edges_) {
      const bool src_low = allow_[e.src] && OutputIsT(e.src, e.port);
      const bool dst_low = allow_[e.dst] && InputIsT(e.dst, e.input);
      if (src_low == dst_low) continue;
      const std::string cast = CastOf(e.src, e.port, src_low ? DT_FLOAT : options_.dtype, &added);
      def_->mutable_node(e.dst)->set_input(e.input, cast);
    }
    for (int i = 0; i < def_->node_size(); ++i) {
      if (allow_[i]) (*def_->mutable_node(i)->mutable_attr())["T"].set_type(options_.dtype);
    }
    for (NodeDef& n : added) *def_->add_node() = std::move(n);
    return absl::OkStatus();
  }

  const MixedPrecisionOptions& options_;
  const std::string& device_type_;
  GraphDef* def_;
  std::vector<std::vector<std::string>> in_attrs_, out_attrs_;
  std::vector<bool> float32_, candidate_, allow_, deny_;
  std::vector<Edge> edges_;
  std::vector<std::vector<Edge>> in_edges_, out_edges_;
  absl::flat_hash_set<std::string> made_;
};

// Whether `device_type` can cast between float and `dtype` both ways (the
// casts the rewrite inserts run on the partition's device).
bool CastsBothWays(const std::string& device_type, DataType dtype) {
  for (const auto& [from, to] : {std::pair(DT_FLOAT, dtype), std::pair(dtype, DT_FLOAT)}) {
    if (!FindKernelDef(device_type, CastNode("cast", from, to)).ok()) return false;
  }
  return true;
}

}  // namespace

absl::Status AutoMixedPrecision(const MixedPrecisionOptions& options,
                                const std::string& device_type, GraphDef* partition) {
  if (options.dtype != DT_HALF && options.dtype != DT_BFLOAT16) return absl::OkStatus();
  if (options.device_types.count(device_type) == 0) return absl::OkStatus();
  if (!CastsBothWays(device_type, options.dtype)) return absl::OkStatus();
  return Painter(options, device_type, partition).Run();
}

}  // namespace towerflow
