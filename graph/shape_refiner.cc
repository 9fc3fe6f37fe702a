// Build-time shape inference for one node (declared in graph/graph.h).
//
// Besides running the op's shape function, this tracks shape-valued tensors:
// the output of Shape(x) *is* x's shape, so a Reshape or Fill fed by it (or by
// a Pack/ConcatV2 of such pieces and constants) gets a known output shape.
// TensorFlow's ShapeRefiner does the same ("constant partial shapes").
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "graph/graph.h"

namespace towerflow {
namespace {

// The value of `in` read as a shape, if known.
std::optional<PartialTensorShape> InputAsShape(const InferenceContext::InputInfo& in) {
  if (in.tensor_as_shape.has_value()) return in.tensor_as_shape;
  if (in.tensor == nullptr) return std::nullopt;
  absl::StatusOr<TensorShape> shape = TensorProtoShape(*in.tensor);
  // Only short vectors can be shapes; longer constants are not decoded.
  if (!shape.ok() || shape->dims() != 1 || shape->dim_size(0) > kMaxTensorRank) {
    return std::nullopt;
  }
  absl::StatusOr<std::vector<int64_t>> v = TensorProtoAsInt64s(*in.tensor);
  if (!v.ok()) return std::nullopt;
  absl::StatusOr<PartialTensorShape> s = PartialTensorShape::FromDims(*v);
  if (!s.ok()) return std::nullopt;
  return *s;
}

// The value of output 0 of `node` as a shape, when the inputs make it known.
std::optional<PartialTensorShape> OutputAsShape(
    const Node& node, const std::vector<InferenceContext::InputInfo>& inputs) {
  if (node.num_outputs() == 0 || !DataTypeIsInteger(node.output_type(0))) {
    return std::nullopt;
  }
  const std::string& op = node.type_string();
  if (op == "Shape") {
    if (inputs[0].shape.unknown_rank()) return std::nullopt;
    return inputs[0].shape;
  }
  if (op == "Const" || op == "HostConst") {
    const AttrValue* value = node.FindAttr("value");
    if (value == nullptr) return std::nullopt;
    InferenceContext::InputInfo info;
    info.tensor = &value->tensor();
    return InputAsShape(info);
  }
  if (op == "Identity" || op == "StopGradient" || op == "Cast") {
    return InputAsShape(inputs[0]);
  }
  if (op == "Pack") {
    int64_t axis = 0;
    if (!node.GetAttr("axis", &axis).ok() || axis != 0) return std::nullopt;
    std::vector<int64_t> dims;
    for (const auto& in : inputs) {
      int64_t d = -1;
      if (in.tensor != nullptr) {
        absl::StatusOr<std::vector<int64_t>> v = TensorProtoAsInt64s(*in.tensor);
        if (!v.ok() || v->size() != 1 || (*v)[0] < -1) return std::nullopt;
        d = (*v)[0];
      }
      dims.push_back(d);
    }
    absl::StatusOr<PartialTensorShape> s = PartialTensorShape::FromDims(dims);
    if (!s.ok()) return std::nullopt;
    return *s;
  }
  if (op == "ConcatV2") {
    // The last input is the axis; it must be a constant 0.
    const auto& axis = inputs.back();
    if (axis.tensor == nullptr) return std::nullopt;
    absl::StatusOr<std::vector<int64_t>> a = TensorProtoAsInt64s(*axis.tensor);
    if (!a.ok() || a->size() != 1 || (*a)[0] != 0) return std::nullopt;
    PartialTensorShape result = PartialTensorShape::Scalar();
    for (size_t i = 0; i + 1 < inputs.size(); ++i) {
      std::optional<PartialTensorShape> piece = InputAsShape(inputs[i]);
      if (!piece.has_value()) {
        const PartialTensorShape& s = inputs[i].shape;
        if (s.dims() != 1 || s.dim_size(0) < 0 || s.dim_size(0) > kMaxTensorRank) {
          return std::nullopt;
        }
        piece = PartialTensorShape::UnknownDims(static_cast<int>(s.dim_size(0)));
      }
      result = result.Concatenate(*piece);
    }
    if (!result.IsValid()) return std::nullopt;
    return result;
  }
  return std::nullopt;
}

std::string InputShapesString(const std::vector<InferenceContext::InputInfo>& inputs) {
  return absl::StrJoin(
      inputs, ", ", [](std::string* out, const auto& in) { out->append(in.shape.DebugString()); });
}

// The VarHandleOp behind output `index` of `n`, through the ops that pass a
// handle on unchanged (Identity, and the control-flow ops a variable read
// in a Cond or a while loop goes through); null when there is none.
const Node* HandleSource(const Node* n, int index) {
  constexpr int kMaxHops = 64;
  for (int hop = 0; n != nullptr && hop < kMaxHops; ++hop) {
    if (n->IsOp("VarHandleOp")) return index == 0 ? n : nullptr;
    const std::string& op = n->type_string();
    const bool forwards = op == "Identity" || op == "Enter" || op == "Exit" ||
                          op == "NextIteration" || op == "Merge" || op == "Switch";
    if (!forwards || (index != 0 && op != "Switch")) return nullptr;
    const Edge* in = n->input_edge(0);
    if (in == nullptr) return nullptr;
    n = in->src();
    index = in->src_output();
  }
  return nullptr;
}

}  // namespace

absl::Status RefineNodeShapes(const Graph& graph, Node* node) {
  std::vector<InferenceContext::InputInfo> inputs(node->num_inputs());
  for (const Edge* e : node->in_edges()) {
    if (e->IsControlEdge()) continue;
    const int i = e->dst_input();
    const Node* src = e->src();
    inputs[i].shape = src->output_shape(e->src_output());
    if (e->src_output() == 0) {
      if (src->IsOp("Const") || src->IsOp("HostConst")) {
        const AttrValue* value = src->FindAttr("value");
        if (value != nullptr && value->has_tensor()) inputs[i].tensor = &value->tensor();
      }
      inputs[i].tensor_as_shape = src->output_as_shape();
    }
    if (src->output_type(e->src_output()) == DT_RESOURCE) {
      if (const Node* handle = HandleSource(src, e->src_output())) {
        PartialTensorShape shape;
        DataType dtype;
        if (handle->GetAttr("shape", &shape).ok() && handle->GetAttr("dtype", &dtype).ok()) {
          inputs[i].handle_shape = shape;
          inputs[i].handle_dtype = dtype;
        }
      }
    }
  }
  NameRangeMap in_ranges;
  const std::string context =
      absl::StrCat("Node '", node->name(), "' (op '", node->type_string(), "')");
  TW_RETURN_IF_ERROR(AddErrorContext(
      NameRangesForNode(node->def(), node->op_def(), &in_ranges, nullptr), context));
  InferenceContext c(node->def(), node->op_def(), graph.versions().producer(), inputs,
                     node->input_types(), node->output_types(), std::move(in_ranges));
  absl::Status status = node->op_registration().shape_fn(&c);
  std::vector<PartialTensorShape> outputs = c.TakeOutputs();
  for (size_t i = 0; status.ok() && i < outputs.size(); ++i) {
    if (!outputs[i].IsValid()) {
      status = absl::InvalidArgumentError(
          absl::StrCat("output ", i, " would have an invalid shape ", outputs[i].DebugString()));
    }
  }
  if (!status.ok()) {
    const std::string shapes =
        inputs.empty() ? "" : absl::StrCat(" with input shapes ", InputShapesString(inputs));
    return absl::Status(status.code(), absl::StrCat(context, shapes, ": ", status.message()));
  }
  node->output_shapes_ = std::move(outputs);
  node->output_as_shape_ = OutputAsShape(*node, inputs);
  return absl::OkStatus();
}

}  // namespace towerflow
