#include "runtime/capture_specializer.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/memory_types.h"
#include "framework/node_def_util.h"
#include "graph/graph.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"
#include "runtime/constant_folding.h"
#include "runtime/graph_view.h"

namespace towerflow {
namespace {

bool IsConstant(const NodeDef& n) { return n.op() == "Const" || n.op() == "HostConst"; }

bool PassesInputOn(const std::string& op) {
  return op == "Identity" || op == "Snapshot" || op == "StopGradient" || op == "PreventGradient";
}

// The node whose output `input` (a GraphDef input string) names, looking
// through nodes that pass their input on; -1 when unknown.
int SourceOf(const GraphView& view, const GraphDef& def, const std::string& input) {
  std::string name = input;
  for (int hops = 0; hops < 64; ++hops) {
    absl::StatusOr<TensorId> id = ParseTensorName(name);
    if (!id.ok() || id->IsControl()) return -1;
    const int p = view.Find(id->node);
    if (p < 0 || !PassesInputOn(def.node(p).op()) || def.node(p).input_size() == 0) return p;
    name = def.node(p).input(0);
  }
  return -1;
}

// The fed tensor's name on a _DeviceArg (for messages).
constexpr char kFeedAttr[] = "_feed";

// How messages name a feed: the fed tensor, else its node.
std::string FeedName(const NodeDef& arg) {
  auto it = arg.attr().find(kFeedAttr);
  return it != arg.attr().end() ? it->second.s() : arg.name();
}

absl::Status Refuse(const NodeDef& n, const std::string& why) {
  return absl::FailedPreconditionError(
      absl::StrCat("node '", n.name(), "' (", n.op(), ") ", why));
}

// _Arg -> _DeviceArg with its feed's shape, _Retval -> _DeviceRetval.
absl::Status UseSlots(absl::Span<const TensorShape> feed_shapes,
                      absl::Span<const std::string> feed_names, int num_fetches, GraphDef* def) {
  for (NodeDef& n : *def->mutable_node()) {
    if (n.op() != "_Arg" && n.op() != "_Retval") continue;
    int64_t index = 0;
    TW_RETURN_IF_ERROR(GetNodeAttr(n, "index", &index));
    const bool arg = n.op() == "_Arg";
    if (index < 0 || index >= (arg ? static_cast<int64_t>(feed_shapes.size()) : num_fetches)) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", n.name(), "' (", n.op(), ") has index ", index, " out of range"));
    }
    n.set_op(arg ? "_DeviceArg" : "_DeviceRetval");
    if (arg) {
      PartialTensorShape(feed_shapes[index]).AsProto(
          (*n.mutable_attr())["_output_shapes"].mutable_list()->add_shape());
      if (index < static_cast<int64_t>(feed_names.size())) {
        (*n.mutable_attr())[kFeedAttr].set_s(feed_names[index]);
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
Tensor ShapeTensor(const TensorShape& shape) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape({shape.dims()}));
  for (int d = 0; d < shape.dims(); ++d) t.data<T>()[d] = static_cast<T>(shape.dim_size(d));
  return t;
}

template <typename T>
Tensor Scalar(int64_t value) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape());
  t.data<T>()[0] = static_cast<T>(value);
  return t;
}

// The values of a Shape, Size, Rank or ShapeN node whose inputs' shapes
// are fully known; empty otherwise.
std::vector<Tensor> ShapeValues(const Node& node) {
  const std::string& op = node.type_string();
  if (op != "Shape" && op != "Size" && op != "Rank" && op != "ShapeN") return {};
  std::vector<TensorShape> shapes;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Node* in = node.input_node(i);
    const Edge* e = node.input_edge(i);
    if (in == nullptr || e == nullptr) return {};
    absl::StatusOr<TensorShape> shape = in->output_shape(e->src_output()).AsTensorShape();
    if (!shape.ok()) return {};
    shapes.push_back(*shape);
  }
  DataType out_type = DT_INT32;
  if (op != "Rank" && !node.GetAttr("out_type", &out_type).ok()) return {};
  const bool wide = out_type == DT_INT64;
  std::vector<Tensor> values;
  for (const TensorShape& s : shapes) {
    if (op == "Rank") {
      values.push_back(Scalar<int32_t>(s.dims()));
    } else if (op == "Size") {
      values.push_back(wide ? Scalar<int64_t>(s.num_elements()) : Scalar<int32_t>(s.num_elements()));
    } else {
      values.push_back(wide ? ShapeTensor<int64_t>(s) : ShapeTensor<int32_t>(s));
    }
  }
  return values;
}

// A check, when the step is recorded, that `input` (a GraphDef input
// string) has `shape`: the shape a folded node took for it.
NodeDef AssertShape(const std::string& name, const std::string& input, DataType dtype,
                    const TensorShape& shape, const std::string& device) {
  NodeDef n;
  n.set_name(name);
  n.set_op("_AssertShape");
  n.set_device(device);
  n.add_input(input);
  (*n.mutable_attr())["T"].set_type(dtype);
  shape.AsProto((*n.mutable_attr())["shape"].mutable_shape());
  (*n.mutable_attr())["_tensor"].set_s(input);  // for the kernel's message
  return n;
}

// Replaces shape-reading nodes whose inputs' shapes build-time inference
// knows by constants, each input checked by an _AssertShape when the step
// is recorded: a shape function's mistake stops the recording instead of
// baking a wrong shape in. Whether any was.
absl::StatusOr<bool> MaterializeShapes(const Device& device, GraphDef* def) {
  Graph graph;
  graph.set_allow_internal_names(true);
  TW_RETURN_IF_ERROR(ImportGraphDef(*def, &graph));
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < def->node_size(); ++i) index[def->node(i).name()] = i;
  std::vector<std::pair<int, std::vector<Tensor>>> found;
  for (const Node* node : graph.nodes()) {
    std::vector<Tensor> values = ShapeValues(*node);
    if (!values.empty()) found.emplace_back(index.at(node->name()), std::move(values));
  }
  std::vector<NodeDef> checks;
  for (const auto& [i, values] : found) {
    const NodeDef& node = def->node(i);
    const Node* graph_node = graph.FindNode(node.name());
    for (int k = 0; k < graph_node->num_inputs(); ++k) {
      const Edge* e = graph_node->input_edge(k);
      absl::StatusOr<TensorShape> known = e->src()->output_shape(e->src_output()).AsTensorShape();
      if (!known.ok()) continue;
      checks.push_back(AssertShape(absl::StrCat(node.name(), "/_assert_shape_", k), node.input(k),
                                   graph_node->input_type(k), *known, node.device()));
    }
  }
  for (const auto& [i, values] : found) {
    TW_RETURN_IF_ERROR(ReplaceWithConstants(device, i, values, def));
  }
  for (NodeDef& check : checks) *def->add_node() = std::move(check);
  return !found.empty();
}

// A constant sent from host to device memory (or back) within the
// partition becomes a constant where it is received. Whether any did.
absl::StatusOr<bool> CollapseConstantTransfers(const Device& device, GraphDef* def) {
  TW_ASSIGN_OR_RETURN(const GraphView view, GraphView::Build(*def));
  absl::flat_hash_map<std::string, int> sends;  // tensor_name -> _Send
  for (int i = 0; i < def->node_size(); ++i) {
    const NodeDef& n = def->node(i);
    std::string tensor_name;
    if ((n.op() == "_Send" || n.op() == "_HostSend") &&
        GetNodeAttr(n, "tensor_name", &tensor_name).ok()) {
      sends[tensor_name] = i;
    }
  }
  std::set<int> dropped;
  for (int i = 0; i < def->node_size(); ++i) {
    const NodeDef& recv = def->node(i);
    std::string tensor_name;
    if ((recv.op() != "_Recv" && recv.op() != "_HostRecv") ||
        !GetNodeAttr(recv, "tensor_name", &tensor_name).ok()) {
      continue;
    }
    auto s = sends.find(tensor_name);
    if (s == sends.end() || def->node(s->second).input_size() == 0) continue;
    const int source = SourceOf(view, *def, def->node(s->second).input(0));
    if (source < 0 || !IsConstant(def->node(source))) continue;
    const TensorProto* proto = nullptr;
    TW_RETURN_IF_ERROR(GetNodeAttr(def->node(source), "value", &proto));
    TW_ASSIGN_OR_RETURN(Tensor value, Tensor::FromProto(*proto));
    TW_RETURN_IF_ERROR(ReplaceWithConstants(device, i, {value}, def));
    dropped.insert(s->second);
  }
  if (dropped.empty()) return false;
  GraphDef out;
  for (int i = 0; i < def->node_size(); ++i) {
    if (dropped.count(i) == 0) *out.add_node() = std::move(*def->mutable_node(i));
  }
  def->mutable_node()->Swap(out.mutable_node());
  return true;
}

bool IsShapeRead(const std::string& op) {
  return op == "Shape" || op == "ShapeN" || op == "Size" || op == "Rank";
}

// Whether the values of node `i` in host memory are the same on every step
// of the recorded shapes: constants; reads of shapes (every shape is fixed
// by the feeds' and variables' shapes, since capturable kernels' output
// shapes depend on nothing else); variable handles; and stateless nodes
// whose inputs are all such host values. `memo`: -1 unknown, 0 no, 1 yes.
bool IsStaticHostValue(const Device& device, const GraphView& view, const GraphDef& def, int i,
                       std::vector<int>* memo) {
  if ((*memo)[i] >= 0) return (*memo)[i] == 1;
  (*memo)[i] = 0;  // a cycle (none in a root frame) is not static
  const NodeDef& n = def.node(i);
  bool is_static = IsConstant(n) || IsShapeRead(n.op()) || n.op() == "VarHandleOp";
  if (!is_static && !PassesInputOn(n.op())) {
    const OpRegistrationData* reg = OpRegistry::Global()->Find(n.op());
    MemoryTypeVector inputs;
    is_static = reg != nullptr && !reg->op_def.is_stateful() && n.op()[0] != '_' &&
                MemoryTypesForNode(device, n, reg->op_def, &inputs, nullptr).ok();
    int k = 0;
    for (const std::string& in : n.input()) {
      if (!is_static) break;
      if (!in.empty() && in[0] == '^') continue;
      const int source = SourceOf(view, def, in);
      is_static = inputs[k++] == MemoryType::kHost && source >= 0 &&
                  IsStaticHostValue(device, view, def, source, memo);
    }
  } else if (PassesInputOn(n.op())) {
    const int source = n.input_size() > 0 ? SourceOf(view, def, n.input(0)) : -1;
    is_static = source >= 0 && IsStaticHostValue(device, view, def, source, memo);
  }
  (*memo)[i] = is_static ? 1 : 0;
  return is_static;
}

// Whether input `input` of `n` is one its kernel only copies to the device.
bool IsCopiedHostInput(const KernelDef& kernel, const NodeDef& n, const OpDef& op_def,
                       int input) {
  if (kernel.copied_host_inputs.empty()) return false;
  NameRangeMap inputs, outputs;
  if (!NameRangesForNode(n, op_def, &inputs, &outputs).ok()) return false;
  for (const std::string& name : kernel.copied_host_inputs) {
    auto it = inputs.find(name);
    if (it != inputs.end() && input >= it->second.first && input < it->second.second) return true;
  }
  return false;
}

// The first node of `def` that a recording cannot hold, as FailedPrecondition.
absl::Status CheckCapturable(const Device& device, const GraphDef& def, CapturePlan* plan) {
  TW_ASSIGN_OR_RETURN(const GraphView view, GraphView::Build(def));
  std::vector<int> memo(def.node_size(), -1);
  for (const NodeDef& n : def.node()) {
    if (IsTransferOp(n.op())) {
      std::string tensor;
      if (!GetNodeAttr(n, "tensor_name", &tensor).ok()) tensor = "a value";
      return Refuse(n, absl::StrCat("copies ", tensor,
                                    " between host and device memory within the step, which "
                                    "the host would have to wait for"));
    }
    if (IsControlFlowOp(n.op())) return Refuse(n, "is control flow, which a recording cannot hold");
    const OpRegistrationData* reg = OpRegistry::Global()->Find(n.op());
    if (reg == nullptr) return Refuse(n, "is of an unregistered op");
    TW_ASSIGN_OR_RETURN(const KernelDef* kernel, FindKernelDef(device.device_type(), n));
    if (!kernel->capturable) {
      return Refuse(n, absl::StrCat("has no kernel on ", device.device_type(),
                                    " declared capturable (KernelDef::capturable)"));
    }
    MemoryTypeVector inputs, outputs;
    TW_RETURN_IF_ERROR(MemoryTypesForNode(device, n, reg->op_def, &inputs, &outputs));
    if (n.op() == "_DeviceArg" && outputs[0] == MemoryType::kHost) {
      // Fed through a host slot, if only copied host inputs read it (below).
      int64_t index = 0;
      TW_RETURN_IF_ERROR(GetNodeAttr(n, "index", &index));
      plan->feed_on_host[index] = true;
    }
    DataTypeVector in_types, out_types;
    TW_RETURN_IF_ERROR(InOutTypesForNode(n, reg->op_def, &in_types, &out_types));
    DataType var_dtype = DT_INVALID;
    if (std::find(in_types.begin(), in_types.end(), DT_RESOURCE) != in_types.end() &&
        GetNodeAttr(n, "dtype", &var_dtype).ok() && var_dtype == DT_INT32 &&
        device.has_device_memory()) {
      return Refuse(n, "uses an int32 resource variable, whose value lives in host memory on "
                       "this device: the host would update it once, while recording");
    }
    int k = 0;
    for (const std::string& in : n.input()) {
      if (!in.empty() && in[0] == '^') continue;
      const int input = k++;
      // Nodes that pass a buffer on are judged by where it goes.
      if (inputs[input] != MemoryType::kHost || PassesInputOn(n.op())) continue;
      const int source = SourceOf(view, def, in);
      if (source >= 0 && IsStaticHostValue(device, view, def, source, &memo)) continue;
      const bool host_feed = source >= 0 && def.node(source).op() == "_DeviceArg";
      if (host_feed && IsCopiedHostInput(*kernel, n, reg->op_def, input)) continue;
      if (host_feed) {
        return Refuse(n, absl::StrCat("reads the host-memory feed '", FeedName(def.node(source)),
                                      "' (input ", input,
                                      ") on the host, for more than copying it to the device"));
      }
      if (n.op() == "_DeviceRetval") {
        return Refuse(n, absl::StrCat("fetches '", in,
                                      "', a host value that changes from step to step"));
      }
      return Refuse(n, absl::StrCat("reads input ", input, " ('", in,
                                    "') on the host, and its value is not known before the "
                                    "step runs: it depends on the step's data or state"));
    }
    if (n.op() == "_DeviceRetval") {
      int64_t index = 0;
      TW_RETURN_IF_ERROR(GetNodeAttr(n, "index", &index));
      plan->fetch_on_host[index] = inputs[0] == MemoryType::kHost;
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsTransferOp(const std::string& op) {
  return op == "_Send" || op == "_Recv" || op == "_HostSend" || op == "_HostRecv";
}

bool IsControlFlowOp(const std::string& op) {
  static const auto* const kOps = new std::set<std::string>{
      "Switch", "RefSwitch", "Merge",         "RefMerge",         "Enter",    "RefEnter",
      "Exit",   "RefExit",   "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger"};
  return kOps->count(op) > 0;
}

absl::StatusOr<CapturePlan> SpecializeForCapture(const GraphDef& partition,
                                                 absl::Span<const TensorShape> feed_shapes,
                                                 absl::Span<const std::string> feed_names,
                                                 int num_fetches, Device* device, Device* host,
                                                 ThreadPool* pool) {
  CapturePlan plan;
  plan.graph = partition;
  plan.fetch_on_host.assign(num_fetches, false);
  plan.feed_on_host.assign(feed_shapes.size(), false);
  TW_RETURN_IF_ERROR(UseSlots(feed_shapes, feed_names, num_fetches, &plan.graph));
  // Each round may expose more: a folded shape makes a Reshape's output
  // shape known, whose Shape then folds.
  for (int round = 0; round < 8; ++round) {
    TW_ASSIGN_OR_RETURN(const bool shapes, MaterializeShapes(*device, &plan.graph));
    bool folded = false;
    FoldOptions fold;
    fold.evaluator = host;
    fold.exact_only = true;
    TW_RETURN_IF_ERROR(FoldConstants(device, pool, &plan.graph, &folded, fold));
    TW_ASSIGN_OR_RETURN(const bool collapsed, CollapseConstantTransfers(*device, &plan.graph));
    if (!shapes && !folded && !collapsed) break;
  }
  TW_RETURN_IF_ERROR(CheckCapturable(*device, plan.graph, &plan));
  return plan;
}

}  // namespace towerflow
