#include "ops/gradients/grad_util.h"

#include "core/tensor_proto_util.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/spectral_ops.h"

namespace towerflow {
namespace grad_util {
namespace {

Output Int32Const(const Scope& scope, const std::vector<int64_t>& values) {
  std::vector<int32_t> v(values.begin(), values.end());
  return ops::Const(scope, MakeTensorProto<int32_t>(absl::MakeConstSpan(v),
                                                    TensorShape({static_cast<int64_t>(v.size())})));
}

}  // namespace

Output In(const Operation& op, int i) {
  const Edge* e = op.node()->input_edge(i);
  return e == nullptr ? Output() : Output(e->src(), e->src_output());
}

std::optional<std::vector<int64_t>> ConstInts(const Output& out) {
  if (!out.valid() || !out.node()->IsOp("Const")) return std::nullopt;
  const AttrValue* value = out.node()->FindAttr("value");
  if (value == nullptr) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> ints = TensorProtoAsInt64s(value->tensor());
  if (!ints.ok()) return std::nullopt;
  return *std::move(ints);
}

Output SumToShapeOf(const Scope& scope, const Output& grad, const Output& x, const Output& y) {
  const PartialTensorShape& sx = x.shape();
  const PartialTensorShape& sy = y.shape();
  if (sx.IsFullyDefined() && sy.IsFullyDefined()) {
    if (sx == sy) return grad;
    // The broadcast shape, right-aligned; reduce where x is missing or 1.
    const int rank = std::max(sx.dims(), sy.dims());
    std::vector<int64_t> axes;
    for (int i = 0; i < rank; ++i) {
      const int ix = i - (rank - sx.dims()), iy = i - (rank - sy.dims());
      const int64_t dx = ix >= 0 ? sx.dim_size(ix) : 1;
      const int64_t dy = iy >= 0 ? sy.dim_size(iy) : 1;
      if (ix < 0 || (dx == 1 && dy != 1)) axes.push_back(i);
    }
    Output reduced = axes.empty() ? grad : Output(ops::Sum(scope, grad, Int32Const(scope, axes)));
    if (static_cast<int>(axes.size()) == 0 && sx.dims() == rank) return reduced;
    return ops::Reshape(scope, reduced,
                        Int32Const(scope, {sx.dim_sizes().begin(), sx.dim_sizes().end()}));
  }
  Output shape_x = ops::Shape(scope, x);
  ops::BroadcastGradientArgs args(scope, shape_x, ops::Shape(scope, y));
  return ops::Reshape(scope, ops::Sum(scope, grad, args.r0), shape_x);
}

Output KeptDimsShape(const Scope& scope, const Output& x, const Output& axes) {
  const PartialTensorShape& sx = x.shape();
  std::optional<std::vector<int64_t>> const_axes = ConstInts(axes);
  Output shape = ops::Shape(scope, x);
  if (!sx.unknown_rank() && const_axes.has_value()) {
    const int rank = sx.dims();
    // kept = shape * keep + reduced, with constant 0/1 vectors.
    std::vector<int64_t> keep(rank, 1), reduced(rank, 0);
    for (int64_t a : *const_axes) {
      const int64_t c = a < 0 ? a + rank : a;
      if (c < 0 || c >= rank) continue;  // the forward op rejects it at run time
      keep[c] = 0;
      reduced[c] = 1;
    }
    if (sx.IsFullyDefined()) {
      std::vector<int64_t> kept(rank);
      for (int i = 0; i < rank; ++i) kept[i] = keep[i] ? sx.dim_size(i) : 1;
      return Int32Const(scope, kept);
    }
    return ops::Add(scope, ops::Mul(scope, shape, Int32Const(scope, keep)),
                    Int32Const(scope, reduced));
  }
  // Dynamic: mark reduced dims with a one-hot sum over the canonical axes.
  Output rank = ops::Size(scope, shape);
  Output canonical = CanonicalAxes(scope, ops::Reshape(scope, axes, {-1}), rank);
  Output marked = ops::Sum(scope, ops::OneHot(scope, canonical, rank, 1, 0), 0);
  Output is_reduced = ops::Greater(scope, marked, 0);
  return ops::SelectV2(scope, is_reduced, ops::OnesLike(scope, shape), shape);
}

Output CanonicalAxes(const Scope& scope, const Output& axes, const Output& rank) {
  Output axes32 = ops::Cast(scope, axes, DT_INT32);
  return ops::SelectV2(scope, ops::Less(scope, axes32, 0), ops::Add(scope, axes32, rank), axes32);
}

Output BroadcastReduced(const Scope& scope, const Output& grad, const Output& x,
                        const Output& axes) {
  Output kept = ops::Reshape(scope, grad, KeptDimsShape(scope, x, axes));
  if (x.shape().IsFullyDefined()) {
    const auto dims = x.shape().dim_sizes();
    return ops::BroadcastTo(scope, kept, Int32Const(scope, {dims.begin(), dims.end()}));
  }
  return ops::BroadcastTo(scope, kept, ops::Shape(scope, x));
}

Output ConjIfComplex(const Scope& scope, const Output& x) {
  const DataType t = x.type();
  return t == DT_COMPLEX64 || t == DT_COMPLEX128 ? ops::Conj(scope, x) : x;
}

bool IsZerosFill(const Output& out) { return out.valid() && out.node()->IsOp("ZerosLike"); }

}  // namespace grad_util
}  // namespace towerflow
