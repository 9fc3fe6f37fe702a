// ops::Const: a constant from a C++ literal or a TensorProto.
//
//   Output a = ops::Const(s, 3.0f);                       // float scalar
//   Output b = ops::Const(s, {{1, 2}, {3, 4}});            // int32 [2,2]
//   Output c = ops::Const(s, {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
//   Output d = ops::Const(s.WithOpName("zeros"), MakeFilledTensorProto(0.f, {784, 10}));
//
// Hand-written (not generated) because its value attr comes from literals.
#ifndef TOWERFLOW_OPS_CONST_OP_H_
#define TOWERFLOW_OPS_CONST_OP_H_

#include "core/tensor_shape.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace ops {

// A Const node holding `value`; an invalid literal is a (sticky) scope error.
Output Const(const Scope& scope, const Input::Initializer& value);

// `value`'s elements laid out as `shape`; InvalidArgument (in the scope) when
// the element counts differ.
Output Const(const Scope& scope, const Input::Initializer& value, const TensorShape& shape);

}  // namespace ops
}  // namespace towerflow

#endif  // TOWERFLOW_OPS_CONST_OP_H_
