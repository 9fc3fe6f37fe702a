// Gradients of TensorFlow 1.x's control flow (TF's control_flow_grad.py) for
// conditionals: a Switch's gradient is a Merge of its two outputs'
// gradients, and a Merge's is a Switch of its gradient back to the input
// that was taken. The gradient of the untaken side is dead, as the forward
// values were, so only the taken branch's backward ops run.
//
// A while loop is differentiated as a whole by the gradient builder (the
// backward loop, with each iteration's forward values kept on stacks: Note
// [While-loop gradients] in ops/while_gradients.h), so Enter, Exit and
// NextIteration have no gradient functions of their own: reaching one means
// the loop is not one the builder recognised. Function calls and TF 2's
// functional If, Case and While are differentiated by the builder's library
// (Note [Gradients of function calls] in ops/function_gradients.h).
#include "absl/strings/str_cat.h"
#include "graph/control_flow.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

// dL/d data = Merge(dL/d output_false, dL/d output_true): one of the two is
// dead (the engine's zeros for an output without gradient are ZerosLike of
// that output, dead with it), so the Merge forwards the live one.
TW_GRAD_FN(SwitchGrad) {
  const ops::Merge merge(scope, {grad_inputs[0], grad_inputs[1]});
  grad_outputs->push_back(merge.output);
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// dL/d input i = dL/d output where value_index == i, dead elsewhere.
TW_GRAD_FN(MergeGrad) {
  for (const Edge* e : op.node()->in_edges()) {
    if (!e->IsControlEdge() && IsNextIteration(*e->src())) {
      return absl::UnimplementedError(
          absl::StrCat("The gradient reached the while loop's Merge '", op.name(),
                       "' from inside the loop; a loop is differentiated from its Exits"));
    }
  }
  const Output index = op.output(1);
  for (int i = 0; i < op.num_inputs(); ++i) {
    const Output taken = ops::Equal(scope, index, i);
    grad_outputs->push_back(ops::Switch(scope, grad_inputs[0], taken).output_true);
  }
  return scope.status();
}

TW_GRAD_FN(LoopGrad) {
  return absl::UnimplementedError(
      absl::StrCat("The gradient reached ", op.node()->type_string(), " '", op.name(),
                   "' on its own; while loops are differentiated as a whole, from their Exits"));
}

TW_REGISTER_GRADIENT("Switch", SwitchGrad);
TW_REGISTER_GRADIENT("RefSwitch", SwitchGrad);
TW_REGISTER_GRADIENT("Merge", MergeGrad);
TW_REGISTER_GRADIENT("RefMerge", MergeGrad);
TW_REGISTER_GRADIENT("Enter", LoopGrad);
TW_REGISTER_GRADIENT("RefEnter", LoopGrad);
TW_REGISTER_GRADIENT("Exit", LoopGrad);
TW_REGISTER_GRADIENT("RefExit", LoopGrad);
TW_REGISTER_GRADIENT("NextIteration", LoopGrad);
TW_REGISTER_GRADIENT("RefNextIteration", LoopGrad);
TW_REGISTER_NO_GRADIENT("LoopCond");
TW_REGISTER_NO_GRADIENT("ControlTrigger");
TW_REGISTER_NO_GRADIENT("ToBool");
TW_REGISTER_NO_GRADIENT("StackV2");
TW_REGISTER_NO_GRADIENT("StackPushV2");
TW_REGISTER_NO_GRADIENT("StackPopV2");
TW_REGISTER_NO_GRADIENT("StackCloseV2");

}  // namespace
}  // namespace towerflow
