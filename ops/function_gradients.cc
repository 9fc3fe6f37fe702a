#include "ops/function_gradients.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/types.h"
#include "graph/control_flow.h"
#include "graph/graph_io.h"
#include "graph/lower_functions.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/functional_ops.h"

namespace towerflow {
namespace {

// The dtypes a gradient flows through, as TF's IsTrainable: numbers and
// lists (a list's gradient is a list; a resource input also gets one: the
// gradient of its reads, as ReadVariableOp passes it).
bool IsDifferentiable(DataType dtype) {
  return DataTypeIsFloating(dtype) || DataTypeIsComplex(dtype) || dtype == DT_VARIANT;
}

std::string Describe(const Node& call) {
  return absl::StrCat(call.type_string(), " '", call.name(), "'");
}

}  // namespace

absl::Status CheckCallOutsideLoops(const Graph& graph, const Node& call) {
  if (!HasControlFlow(graph)) return absl::OkStatus();
  absl::StatusOr<ControlFlowInfo> info = BuildControlFlowInfo(graph);
  if (info.ok() && info->frame_of[call.id()] == 0) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat("Cannot differentiate the function call ",
                                               Describe(call),
                                               " inside a while loop's body here; "
                                               "differentiate the loop with AddSymbolicGradients"));
}

namespace {

// In a loop body, the second run may not hold a loop of its own.
absl::Status CheckNoLoop(const GraphDef& lowered, const Node& call) {
  for (const NodeDef& node : lowered.node()) {
    if (node.op() != "Enter" && node.op() != "RefEnter") continue;
    return absl::UnimplementedError(
        absl::StrCat("Cannot differentiate the function call ", Describe(call),
                     " inside a while loop's body: it runs a while loop itself (Enter '",
                     node.name(), "'), which would nest in the backward loop"));
  }
  return absl::OkStatus();
}

// The stateful ops a second run of a body may repeat: reads, and checks.
bool RepeatableStatefulOp(absl::string_view op) {
  return op == "ReadVariableOp" || op == "ResourceGather" || op == "VarHandleOp" ||
         op == "VarIsInitializedOp" || op == "Assert";
}

// `lowered` is the call's lowered form: every node must give the same
// values when run again.
absl::Status CheckRepeatable(const Graph& graph, const GraphDef& lowered, const Node& call) {
  for (const NodeDef& node : lowered.node()) {
    absl::StatusOr<const OpRegistrationData*> op = graph.LookUpOp(node.op());
    if (!op.ok() || !(*op)->op_def.is_stateful() || RepeatableStatefulOp(node.op())) continue;
    return absl::UnimplementedError(absl::StrCat(
        "Cannot differentiate the function call ", Describe(call), ": its body runs ", node.op(),
        " (as '", node.name(),
        "'), a stateful op, and the gradient runs the body again (Note [Gradients of function "
        "calls] in ops/function_gradients.h)"));
  }
  return absl::OkStatus();
}

// The function a call runs by name; "" for If, Case and While, whose
// functions are branches.
absl::StatusOr<NameAttrList> CalledFunction(const Node& call) {
  NameAttrList f;
  if (call.type_string() == "PartitionedCall" || call.type_string() == "StatefulPartitionedCall") {
    auto it = call.def().attr().find("f");
    if (it == call.def().attr().end() || !it->second.has_func()) {
      return absl::InvalidArgumentError(absl::StrCat(Describe(call), " has no function attr 'f'"));
    }
    return it->second.func();
  }
  if (!IsCallOp(call.type_string())) {
    f.set_name(call.type_string());
    for (const auto& [name, value] : call.def().attr()) {
      if (!name.empty() && name[0] != '_') (*f.mutable_attr())[name] = value;
    }
  }
  return f;
}

// The gradient function the library names for `function`; "" when none.
std::string GradientFunctionOf(const Graph& graph, const std::string& function) {
  for (const GradientDef& g : graph.library().gradient()) {
    if (g.function_name() == function) return g.gradient_func();
  }
  return "";
}

// TF 1's GradientDef: grad_f(inputs..., dL/d outputs...) -> dL/d inputs,
// with f's attrs.
absl::Status CallGradientFunction(const Scope& scope, const NameAttrList& f,
                                  const std::string& grad_func, const std::vector<Output>& args,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Gradient>* grad_outputs) {
  std::vector<Output> inputs = args;
  inputs.insert(inputs.end(), grad_inputs.begin(), grad_inputs.end());
  std::vector<DataType> types;
  for (const Output& a : args) types.push_back(a.type());
  NameAttrList grad_f = f;
  grad_f.set_name(grad_func);
  const ops::PartitionedCall grad(scope.WithOpName("gradient_function"), inputs, types, grad_f);
  TW_RETURN_IF_ERROR(scope.status());
  grad_outputs->assign(args.size(), Gradient());
  for (size_t i = 0; i < args.size(); ++i) {
    if (IsDifferentiable(args[i].type())) (*grad_outputs)[i] = grad.output[i];
  }
  return absl::OkStatus();
}

}  // namespace

bool IsFunctionCall(const Graph& graph, const Node& node) {
  return IsCallOp(node.type_string()) || graph.op_registry()->Find(node.type_string()) == nullptr;
}

absl::Status FunctionCallGradient(const Scope& scope, const Operation& op,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Gradient>* grad_outputs,
                                  const SubgraphGradientFn& body, bool in_loop_body) {
  Graph* graph = scope.graph();
  const Node& call = *op.node();
  // The call's inputs, each through an Identity: the xs of the second run.
  std::vector<Output> args;
  for (int i = 0; i < call.num_inputs(); ++i) {
    const Edge* e = call.input_edge(i);
    args.push_back(ops::Identity(scope.WithOpName("input_", i), Output(e->src(), e->src_output())));
  }
  TW_RETURN_IF_ERROR(scope.status());

  TW_ASSIGN_OR_RETURN(const NameAttrList f, CalledFunction(call));
  const std::string grad_func = f.name().empty() ? "" : GradientFunctionOf(*graph, f.name());
  if (!grad_func.empty()) {
    return CallGradientFunction(scope, f, grad_func, args, grad_inputs, grad_outputs);
  }

  // The call again, on the identities, lowered; its results keep its name.
  const std::string name = scope.GetUniqueNameForOp("again");
  NodeDef again = call.def();
  again.set_name(name);
  again.clear_input();
  for (const Output& a : args) again.add_input(a.name());
  GraphDef lowered;
  *lowered.add_node() = std::move(again);
  TW_RETURN_IF_ERROR(LowerFunctionCalls(*graph, &lowered));
  lowered.clear_library();
  TW_RETURN_IF_ERROR(CheckRepeatable(*graph, lowered, call));
  if (in_loop_body) TW_RETURN_IF_ERROR(CheckNoLoop(lowered, call));
  TW_RETURN_IF_ERROR(ImportGraphDef(lowered, graph));
  Node* results = graph->FindNode(name);
  if (results == nullptr || results->num_outputs() != call.num_outputs()) {
    return absl::InternalError(
        absl::StrCat("The lowered form of ", Describe(call), " lost the call's results"));
  }

  std::vector<Output> ys, grad_ys;
  for (int k = 0; k < call.num_outputs(); ++k) {
    if (!IsDifferentiable(call.output_type(k))) continue;
    ys.emplace_back(results, k);
    grad_ys.push_back(grad_inputs[k]);
  }
  std::vector<Output> xs;
  std::vector<int> x_inputs;
  for (int i = 0; i < call.num_inputs(); ++i) {
    if (!IsDifferentiable(args[i].type()) && args[i].type() != DT_RESOURCE) continue;
    xs.push_back(args[i]);
    x_inputs.push_back(i);
  }
  grad_outputs->assign(call.num_inputs(), Gradient());
  if (ys.empty() || xs.empty()) return absl::OkStatus();
  TW_ASSIGN_OR_RETURN(const std::vector<Gradient> grads, body(scope, ys, xs, grad_ys));
  for (size_t j = 0; j < xs.size(); ++j) (*grad_outputs)[x_inputs[j]] = std::move(grads[j]);
  return absl::OkStatus();
}

}  // namespace towerflow
