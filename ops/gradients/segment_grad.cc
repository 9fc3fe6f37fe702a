// Gradients of the segment reductions (kernels/cpu/segment_ops.cc), in the
// forms of TF's math_grad.py. data rows go to segments by ids; g has a row
// per segment. Max and Min share a window's gradient evenly among the rows
// that equal the result; Prod divides the product by each row, with TF's
// three cases for zeros (none, one: the product of the others, several:
// zero). ids and num_segments have no gradient.
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

// params gathered at max(ids, 0), rows of negative ids (dropped by the
// unsorted forward ops) zeroed. `keep` is ids >= 0 reshaped to broadcast
// over the gathered rows.
struct Gathered {
  Output values, keep;
};
Gathered GatherDropNegatives(const Scope& scope, const Output& params, const Output& ids) {
  const Output gathered =
      ops::GatherV2(scope, params, ops::Maximum(scope, ids, ops::ZerosLike(scope, ids)), 0);
  const Output ones = ops::Fill(
      scope,
      ops::Reshape(scope, ops::Sub(scope, ops::Rank(scope, gathered), ops::Rank(scope, ids)), {1}),
      1);
  const Output keep = ops::Reshape(scope, ops::GreaterEqual(scope, ids, ops::ZerosLike(scope, ids)),
                                   ops::ConcatV2(scope, {ops::Shape(scope, ids), ones}, 0));
  return {ops::SelectV2(scope, keep, gathered, ops::ZerosLike(scope, gathered)), keep};
}

// The segment sums of `x` by the forward op's ids (and num_segments).
Output SumBySegment(const Scope& scope, const Operation& op, const Output& x, bool sorted) {
  if (sorted) return ops::SegmentSum(scope, x, In(op, 1));
  return ops::UnsortedSegmentSum(scope, x, In(op, 1), In(op, 2));
}

// None for ids (and num_segments).
void NoIdGradients(const Operation& op, std::vector<Output>* grad_outputs) {
  for (int i = 1; i < op.num_inputs(); ++i) grad_outputs->push_back(NoGradient());
}

// y[s] = sum of data[i] with ids[i] = s: d(data)[i] = g[ids[i]] (0 where
// the id was negative).
TW_GRAD_FN(SegmentSumGrad) {
  const bool sorted = op.num_inputs() == 2;
  const Output g = grad_inputs[0], ids = In(op, 1);
  grad_outputs->push_back(sorted ? ops::GatherV2(scope, g, ids, 0)
                                 : GatherDropNegatives(scope, g, ids).values);
  NoIdGradients(op, grad_outputs);
  return scope.status();
}
// y[s] = mean of its rows: d(data)[i] = g[ids[i]] / count(ids[i]).
TW_GRAD_FN(SegmentMeanGrad) {
  const Output data = In(op, 0), ids = In(op, 1), g = grad_inputs[0];
  const Output ones_shape = ops::ConcatV2(
      scope,
      {ops::Shape(scope, ids),
       ops::Fill(scope, ops::Reshape(scope, ops::Sub(scope, ops::Rank(scope, data), 1), {1}), 1)},
      0);
  const Output ones =
      ops::Fill(scope, ones_shape, ops::Cast(scope, ops::Const(scope, 1), g.type()));
  const Output scaled = ops::Div(scope, g, ops::SegmentSum(scope, ones, ids));
  grad_outputs->push_back(ops::GatherV2(scope, scaled, ids, 0));
  NoIdGradients(op, grad_outputs);
  return scope.status();
}
// y[s] = max (min) of its rows: g[s] shared evenly among the rows equal to
// y[s].
TW_GRAD_FN(SegmentMinOrMaxGrad) {
  const bool sorted = op.num_inputs() == 2;
  const Output data = In(op, 0), ids = In(op, 1), g = grad_inputs[0];
  Output is_selected, gathered_grads;
  if (sorted) {
    is_selected = ops::Equal(scope, data, ops::GatherV2(scope, op.output(0), ids, 0));
  } else {
    const Gathered outputs = GatherDropNegatives(scope, op.output(0), ids);
    is_selected = ops::LogicalAnd(scope, ops::Equal(scope, data, outputs.values), outputs.keep);
  }
  const Output num_selected =
      SumBySegment(scope, op, ops::Cast(scope, is_selected, g.type()), sorted);
  const Output weighted = ops::Div(scope, g, num_selected);
  gathered_grads = sorted ? Output(ops::GatherV2(scope, weighted, ids, 0))
                          : GatherDropNegatives(scope, weighted, ids).values;
  grad_outputs->push_back(
      ops::SelectV2(scope, is_selected, gathered_grads, ops::ZerosLike(scope, gathered_grads)));
  NoIdGradients(op, grad_outputs);
  return scope.status();
}
// y[s] = product of its rows: d(data)[i] = g[s] y[s] / data[i] where no row
// of s is zero; where one is, that row gets g[s] times the product of the
// others and the rest 0; where several are, all 0.
TW_GRAD_FN(SegmentProdGrad) {
  const bool sorted = op.num_inputs() == 2;
  const Output data = In(op, 0), ids = In(op, 1);
  const Output zero = ops::ZerosLike(scope, data);
  const Output is_zero = ops::Equal(scope, data, zero);
  const Output num_zeros = SumBySegment(scope, op, ops::Cast(scope, is_zero, DT_INT32), sorted);
  const Output g = ops::SelectV2(scope, ops::Greater(scope, num_zeros, 1),
                                 ops::ZerosLike(scope, grad_inputs[0]), grad_inputs[0]);
  const Output non_zero_data = ops::SelectV2(scope, is_zero, ops::OnesLike(scope, data), data);
  const Output non_zero_prod =
      sorted ? Output(ops::SegmentProd(scope, non_zero_data, ids))
             : Output(ops::UnsortedSegmentProd(scope, non_zero_data, ids, In(op, 2)));
  const Output clipped = ops::Maximum(scope, ids, ops::ZerosLike(scope, ids));
  const Output gathered_prod = ops::GatherV2(scope, op.output(0), clipped, 0);
  const Output gathered_non_zero_prod = ops::GatherV2(scope, non_zero_prod, clipped, 0);
  const Output partial =
      ops::SelectV2(scope, is_zero, gathered_non_zero_prod,
                    ops::Div(scope, gathered_prod, sorted ? non_zero_data : data));
  const Output gathered_grad =
      sorted ? Output(ops::GatherV2(scope, g, ids, 0)) : GatherDropNegatives(scope, g, ids).values;
  grad_outputs->push_back(ops::Mul(scope, gathered_grad, partial));
  NoIdGradients(op, grad_outputs);
  return scope.status();
}

// y = sparse_segment_sum(data, indices, ids) (mean, sqrt_n, and the
// WithNumSegments forms): the matching SparseSegment*Grad op adds each
// segment's gradient, scaled as the forward scaled it, back to the rows
// indices picked (TF's _SparseSegment*Grad; sparse_gradient's IndexedSlices
// form comes out dense here, the same numbers).
template <typename GradOp>
TW_GRAD_FN(SparseSegmentGrad) {
  const Output rows = ops::StridedSlice(scope, ops::Shape(scope, In(op, 0)), {0}, {1}, {1},
                                        ops::StridedSlice::ShrinkAxisMask(1));
  grad_outputs->push_back(GradOp(scope, grad_inputs[0], In(op, 1), In(op, 2), rows));
  NoIdGradients(op, grad_outputs);
  return scope.status();
}

TW_REGISTER_GRADIENT("SegmentSum", SegmentSumGrad);
TW_REGISTER_GRADIENT("UnsortedSegmentSum", SegmentSumGrad);
TW_REGISTER_GRADIENT("SegmentMean", SegmentMeanGrad);
TW_REGISTER_GRADIENT("SegmentMax", SegmentMinOrMaxGrad);
TW_REGISTER_GRADIENT("SegmentMin", SegmentMinOrMaxGrad);
TW_REGISTER_GRADIENT("UnsortedSegmentMax", SegmentMinOrMaxGrad);
TW_REGISTER_GRADIENT("UnsortedSegmentMin", SegmentMinOrMaxGrad);
TW_REGISTER_GRADIENT("SegmentProd", SegmentProdGrad);
TW_REGISTER_GRADIENT("UnsortedSegmentProd", SegmentProdGrad);
TW_REGISTER_GRADIENT("SparseSegmentSum", SparseSegmentGrad<ops::SparseSegmentSumGrad>);
TW_REGISTER_GRADIENT("SparseSegmentSumWithNumSegments",
                     SparseSegmentGrad<ops::SparseSegmentSumGrad>);
TW_REGISTER_GRADIENT("SparseSegmentMean", SparseSegmentGrad<ops::SparseSegmentMeanGrad>);
TW_REGISTER_GRADIENT("SparseSegmentMeanWithNumSegments",
                     SparseSegmentGrad<ops::SparseSegmentMeanGrad>);
TW_REGISTER_GRADIENT("SparseSegmentSqrtN", SparseSegmentGrad<ops::SparseSegmentSqrtNGrad>);
TW_REGISTER_GRADIENT("SparseSegmentSqrtNWithNumSegments",
                     SparseSegmentGrad<ops::SparseSegmentSqrtNGrad>);

}  // namespace
}  // namespace towerflow
