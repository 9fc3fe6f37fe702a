// Gradients of the matrix ops over the last two dimensions (ops/
// matrix_ops.cc), as TF's array_grad.py: reading a band and writing one
// are each other's adjoints. V2 packs LEFT_LEFT; V3 says how in `align`.
#include <string>

#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"
#include "ops/ops.h"

namespace towerflow {
namespace {

using grad_util::In;

std::string AlignOf(const Scope& scope, const Operation& op) {
  if (op.node()->FindAttr("align") == nullptr) return "LEFT_LEFT";  // V2
  return grad_util::Attr<std::string>(scope, op, "align");
}
Output Zero(const Scope& scope, const Output& like) {
  return ops::Cast(scope, ops::Const(scope, 0), like.type());
}

// y = matrix_diag(d): dd = the diagonal of g.
TW_GRAD_FN(MatrixDiagGrad) {
  grad_outputs->push_back(ops::MatrixDiagPart(scope, grad_inputs[0]));
  return scope.status();
}
// y = matrix_diag(d, k, rows, cols, pad): dd = g's band k.
TW_GRAD_FN(MatrixDiagV2Grad) {
  const Output g = grad_inputs[0];
  grad_outputs->push_back(ops::MatrixDiagPartV3(scope, g, In(op, 1), Zero(scope, g),
                                                ops::MatrixDiagPartV3::Align(AlignOf(scope, op))));
  for (int i = 1; i < 5; ++i) grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = diag_part(x): dx = zeros with g on the diagonal.
TW_GRAD_FN(MatrixDiagPartGrad) {
  grad_outputs->push_back(
      ops::MatrixSetDiag(scope, ops::ZerosLike(scope, In(op, 0)), grad_inputs[0]));
  return scope.status();
}
TW_GRAD_FN(MatrixDiagPartV2Grad) {
  grad_outputs->push_back(ops::MatrixSetDiagV3(scope, ops::ZerosLike(scope, In(op, 0)),
                                               grad_inputs[0], In(op, 1),
                                               ops::MatrixSetDiagV3::Align(AlignOf(scope, op))));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = set_diag(x, d): dx = g with zeros on the band, dd = g's band.
TW_GRAD_FN(MatrixSetDiagGrad) {
  const Output g = grad_inputs[0];
  grad_outputs->push_back(ops::MatrixSetDiag(scope, g, ops::ZerosLike(scope, In(op, 1))));
  grad_outputs->push_back(ops::MatrixDiagPart(scope, g));
  return scope.status();
}
TW_GRAD_FN(MatrixSetDiagV2Grad) {
  const Output g = grad_inputs[0], k = In(op, 2);
  const std::string align = AlignOf(scope, op);
  grad_outputs->push_back(ops::MatrixSetDiagV3(scope, g, ops::ZerosLike(scope, In(op, 1)), k,
                                               ops::MatrixSetDiagV3::Align(align)));
  grad_outputs->push_back(
      ops::MatrixDiagPartV3(scope, g, k, Zero(scope, g), ops::MatrixDiagPartV3::Align(align)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = band_part(x, lower, upper): dx = the same band of g.
TW_GRAD_FN(MatrixBandPartGrad) {
  grad_outputs->push_back(ops::MatrixBandPart(scope, grad_inputs[0], In(op, 1), In(op, 2)));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
TW_GRAD_FN(DiagGrad) {
  grad_outputs->push_back(ops::DiagPart(scope, grad_inputs[0]));
  return scope.status();
}
TW_GRAD_FN(DiagPartGrad) {
  grad_outputs->push_back(ops::Diag(scope, grad_inputs[0]));
  return scope.status();
}

TW_REGISTER_GRADIENT("MatrixDiag", MatrixDiagGrad);
TW_REGISTER_GRADIENT("MatrixDiagV2", MatrixDiagV2Grad);
TW_REGISTER_GRADIENT("MatrixDiagV3", MatrixDiagV2Grad);
TW_REGISTER_GRADIENT("MatrixDiagPart", MatrixDiagPartGrad);
TW_REGISTER_GRADIENT("MatrixDiagPartV2", MatrixDiagPartV2Grad);
TW_REGISTER_GRADIENT("MatrixDiagPartV3", MatrixDiagPartV2Grad);
TW_REGISTER_GRADIENT("MatrixSetDiag", MatrixSetDiagGrad);
TW_REGISTER_GRADIENT("MatrixSetDiagV2", MatrixSetDiagV2Grad);
TW_REGISTER_GRADIENT("MatrixSetDiagV3", MatrixSetDiagV2Grad);
TW_REGISTER_GRADIENT("MatrixBandPart", MatrixBandPartGrad);
TW_REGISTER_GRADIENT("Diag", DiagGrad);
TW_REGISTER_GRADIENT("DiagPart", DiagPartGrad);

}  // namespace
}  // namespace towerflow
