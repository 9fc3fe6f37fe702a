// Running sums, products and log-sum-exps along an axis: Cumsum, Cumprod,
// CumulativeLogsumexp (kernels/cpu/scan_ops.cc).
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status CumulativeShape(InferenceContext* c) {
  PartialTensorShape axis;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &axis));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

TW_REGISTER_OP("Cumsum")
    .Input("x: T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Doc("Running sums along axis (exclusive: without the element itself; reverse: from the end).")
    .SetShapeFn(CumulativeShape);

TW_REGISTER_OP("Cumprod")
    .Input("x: T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Doc("Running products along axis, as Cumsum.")
    .SetShapeFn(CumulativeShape);

TW_REGISTER_OP("CumulativeLogsumexp")
    .Input("x: T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Doc("Running log(sum(exp(x))) along axis, as Cumsum (exclusive starts at -inf).")
    .SetShapeFn(CumulativeShape);

}  // namespace
}  // namespace towerflow
