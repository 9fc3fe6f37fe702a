// Function calls and functional control flow (TensorFlow's
// core/ops/functional_ops.cc): PartitionedCall and StatefulPartitionedCall
// call the function `f` of the graph's library, If / StatelessIf call one of
// two, Case / StatelessCase one of N, While / StatelessWhile loop over `cond` and `body`. No kernel
// runs them: the session replaces each call with the function's body before it places the graph
// (graph/lower_functions.h), as TensorFlow's own lowering pass does, so the executor sees Switch,
// Merge, Enter and Exit.
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// The `output_shapes` attr when it is set (one per output), else `fallback`.
absl::Status OutputShapesOr(InferenceContext* c, absl::Status (*fallback)(InferenceContext*)) {
  std::vector<PartialTensorShape> shapes;
  TW_RETURN_IF_ERROR(c->GetAttr("output_shapes", &shapes));
  if (shapes.empty()) return fallback(c);
  if (static_cast<int>(shapes.size()) != c->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat("output_shapes has ", shapes.size(),
                                                   " shapes for ", c->num_outputs(), " outputs"));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return absl::OkStatus();
}

absl::Status IfShape(InferenceContext* c) { return OutputShapesOr(c, shape_fns::UnknownShape); }

// Without output_shapes, a loop variable keeps its input's shape.
absl::Status WhileShape(InferenceContext* c) {
  return OutputShapesOr(c, [](InferenceContext* c) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
    return absl::OkStatus();
  });
}

void RegisterCall(const char* name, bool stateful, const char* doc) {
  OpDefBuilder b(name, __FILE__);
  b.Input("args: Tin")
      .Output("output: Tout")
      .Attr("Tin: list(type) >= 0")
      .Attr("Tout: list(type) >= 0")
      .Attr("f: func")
      .Attr("config: string = ''")
      .Attr("config_proto: string = ''")
      .Attr("executor_type: string = ''");
  if (stateful) b.SetIsStateful();
  RegisterOp(b.Doc(doc).SetShapeFn(shape_fns::UnknownShape));
}

void RegisterIf(const char* name, bool stateful, const char* doc) {
  OpDefBuilder b(name, __FILE__);
  b.Input("cond: Tcond")
      .Input("input: Tin")
      .Output("output: Tout")
      .Attr("Tcond: type")
      .Attr("Tin: list(type) >= 0")
      .Attr("Tout: list(type) >= 0")
      .Attr("then_branch: func")
      .Attr("else_branch: func")
      .Attr("output_shapes: list(shape) = []");
  if (stateful) b.SetIsStateful();
  RegisterOp(b.Doc(doc).SetShapeFn(IfShape));
}

void RegisterCase(const char* name, bool stateful, const char* doc) {
  OpDefBuilder b(name, __FILE__);
  b.Input("branch_index: int32")
      .Input("input: Tin")
      .Output("output: Tout")
      .Attr("Tin: list(type) >= 0")
      .Attr("Tout: list(type) >= 0")
      .Attr("branches: list(func) >= 1")
      .Attr("output_shapes: list(shape) = []");
  if (stateful) b.SetIsStateful();
  RegisterOp(b.Doc(doc).SetShapeFn(IfShape));
}

void RegisterWhile(const char* name, bool stateful, const char* doc) {
  OpDefBuilder b(name, __FILE__);
  b.Input("input: T")
      .Output("output: T")
      .Attr("T: list(type) >= 0")
      .Attr("cond: func")
      .Attr("body: func")
      .Attr("output_shapes: list(shape) = []")
      .Attr("parallel_iterations: int = 10");
  if (stateful) b.SetIsStateful();
  RegisterOp(b.Doc(doc).SetShapeFn(WhileShape));
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCall("PartitionedCall", false, "Returns f(args); f has no side effects.");
  RegisterCall("StatefulPartitionedCall", true, "Returns f(args).");
  RegisterIf("If", true,
             "then_branch(input) when cond is true, else else_branch(input). A cond that is not "
             "a bool is true when it is a non-zero number or a non-empty string (a scalar), or "
             "a non-empty tensor.");
  RegisterIf("StatelessIf", false, "If whose branches have no side effects.");
  RegisterCase("Case", true,
               "branches[branch_index](input); an index out of [0, len(branches)) runs the "
               "last branch.");
  RegisterCase("StatelessCase", false, "Case whose branches have no side effects.");
  RegisterWhile("While", true,
                "output = input; while (cond(output)) output = body(output). cond's result "
                "converts to a bool as If's cond does.");
  RegisterWhile("StatelessWhile", false, "While whose cond and body have no side effects.");
  return true;
}();

TW_REGISTER_OP("ToBool")
    .Input("input: T")
    .Output("output: bool")
    .Attr("T: type")
    .Doc("A scalar's truth (non-zero, non-empty string), or a tensor's non-emptiness.")
    .SetShapeFn(shape_fns::ScalarShape);

// tf.__internal__.execute_fn_for_device's branch index: the node's device
// type's place in device_names, or len(device_names).
TW_REGISTER_OP("DeviceIndex")
    .Output("index: int32")
    .Attr("device_names: list(string)")
    .SetIsStateful()
    .Doc("The index of the device the op runs on in device_names (their count if absent).")
    .SetShapeFn(shape_fns::ScalarShape);

}  // namespace
}  // namespace towerflow
