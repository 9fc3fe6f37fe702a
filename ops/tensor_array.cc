#include "ops/tensor_array.h"

#include <vector>

#include "core/status_macros.h"
#include "ops/const_op.h"
#include "ops/control_flow.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"

namespace towerflow {
namespace ops {
namespace {

// The static shape of the tensor that feeds input `i` of `op`.
PartialTensorShape InputShape(const Operation& op, int i) {
  const Edge* e = op.node() == nullptr ? nullptr : op.node()->input_edge(i);
  return e == nullptr ? PartialTensorShape() : e->src()->output_shape(e->src_output());
}

// `shape` without its first dimension (unknown for an unknown rank).
PartialTensorShape Rows(const PartialTensorShape& shape) {
  if (shape.unknown_rank() || shape.dims() == 0) return PartialTensorShape();
  return PartialTensorShape(
      std::vector<int64_t>(shape.dim_sizes().begin() + 1, shape.dim_sizes().end()));
}

}  // namespace

TensorArray::TensorArray(const Scope& scope, DataType dtype, Input size, const Options& options)
    : dtype_(dtype), element_shape_(options.element_shape), infer_shape_(options.infer_shape) {
  auto attrs = TensorArrayV3::DynamicSize(options.dynamic_size)
                   .ClearAfterRead(options.clear_after_read)
                   .IdenticalElementShapes(options.infer_shape)
                   .ElementShape(options.element_shape);
  if (!options.name.empty()) attrs = attrs.TensorArrayName(options.name);
  const TensorArrayV3 ta(scope, size, dtype, attrs);
  handle_ = ta.handle;
  flow_ = ta.flow;
}

TensorArray TensorArray::WithFlow(const Output& flow) const {
  TensorArray ta = *this;
  ta.flow_ = flow;
  return ta;
}

TensorArray TensorArray::WithElementShape(const PartialTensorShape& written) const {
  TensorArray ta = *this;
  if (infer_shape_) {
    absl::StatusOr<PartialTensorShape> merged = element_shape_.MergeWith(written);
    if (merged.ok()) ta.element_shape_ = *std::move(merged);
  }
  return ta;
}

TensorArray TensorArray::Write(const Scope& scope, Input index, Input value) const {
  const TensorArrayWriteV3 write(scope, handle_, index, value, flow_);
  return WithElementShape(InputShape(write.operation, 2)).WithFlow(write);
}

Output TensorArray::Read(const Scope& scope, Input index) const {
  const Output value = TensorArrayReadV3(scope, handle_, index, flow_, dtype_);
  // What the kernel cannot see at build time, as TF's Python class.
  if (value.node() != nullptr) scope.graph()->SetOutputShape(value.node(), 0, element_shape_);
  return value;
}

TensorArray TensorArray::Scatter(const Scope& scope, Input indices, Input value) const {
  const TensorArrayScatterV3 scatter(scope, handle_, indices, value, flow_);
  return WithElementShape(Rows(InputShape(scatter.operation, 2))).WithFlow(scatter);
}

TensorArray TensorArray::Unstack(const Scope& scope, const Output& value) const {
  const Scope s = scope.NewSubScope("unstack");
  const Output rows =
      StridedSlice(s, Shape(s, value), {0}, {1}, {1}, StridedSlice::ShrinkAxisMask(1));
  return Scatter(s, Range(s, 0, rows, 1), value);
}

Output TensorArray::Gather(const Scope& scope, Input indices) const {
  return TensorArrayGatherV3(scope, handle_, indices, flow_, dtype_,
                             TensorArrayGatherV3::ElementShape(element_shape_));
}

Output TensorArray::Stack(const Scope& scope) const {
  const Scope s = scope.NewSubScope("stack");
  return Gather(s, Range(s, 0, Size(s), 1));
}

TensorArray TensorArray::Split(const Scope& scope, Input value, Input lengths) const {
  return WithFlow(TensorArraySplitV3(scope, handle_, value, lengths, flow_));
}

Output TensorArray::Concat(const Scope& scope) const {
  return TensorArrayConcatV3(scope, handle_, flow_, dtype_).value;
}

Output TensorArray::Size(const Scope& scope) const {
  return TensorArraySizeV3(scope, handle_, flow_);
}

Operation TensorArray::Close(const Scope& scope) const {
  return TensorArrayCloseV3(scope, handle_).operation;
}

namespace {

// Runs `step(scope, i, row, carried)` for i in [0, rows) over `elems`'s
// rows, writing each result to an output array; `carried` (optional, for
// Scan) is the previous result. Returns the stacked results.
using Step =
    std::function<absl::StatusOr<Output>(const Scope&, const Output& row, const Output& carried)>;
absl::StatusOr<Output> LoopOverRows(const Scope& s, const Output& elems, DataType dtype,
                                    const Output* initializer, const Step& step,
                                    int parallel_iterations) {
  const Output rows =
      StridedSlice(s, Shape(s, elems), {0}, {1}, {1}, StridedSlice::ShrinkAxisMask(1));
  const TensorArray in = TensorArray(s.NewSubScope("elems"), elems.type(), rows).Unstack(s, elems);
  const TensorArray out(s.NewSubScope("results"), dtype, rows);
  std::vector<Output> vars = {Const(s, 0), out.flow()};
  if (initializer != nullptr) vars.push_back(*initializer);
  WhileLoopOptions options;
  options.parallel_iterations = parallel_iterations;
  TW_ASSIGN_OR_RETURN(
      std::vector<Output> final_vars,
      WhileLoop(
          s, vars,
          [rows](const Scope& c, const std::vector<Output>& v) -> absl::StatusOr<Output> {
            return Less(c, v[0], rows);
          },
          [&](const Scope& b, const std::vector<Output>& v) -> absl::StatusOr<std::vector<Output>> {
            const Output row = in.Read(b, v[0]);
            TW_ASSIGN_OR_RETURN(Output result,
                                step(b, row, initializer != nullptr ? v[2] : Output()));
            std::vector<Output> next = {AddV2(b, v[0], 1),
                                        out.WithFlow(v[1]).Write(b, v[0], result).flow()};
            if (initializer != nullptr) next.push_back(result);
            return next;
          },
          options));
  return out.WithFlow(final_vars[1]).Stack(s);
}

}  // namespace

absl::StatusOr<Output> MapFn(const Scope& scope, const Output& elems, DataType dtype,
                             const MapFnBody& fn, int parallel_iterations) {
  const Scope s = scope.NewSubScope("map");
  return LoopOverRows(
      s, elems, dtype, nullptr,
      [&fn](const Scope& b, const Output& row, const Output&) { return fn(b, row); },
      parallel_iterations);
}

absl::StatusOr<Output> Scan(const Scope& scope, const Output& elems, const Output& initializer,
                            const ScanBody& fn, int parallel_iterations) {
  const Scope s = scope.NewSubScope("scan");
  return LoopOverRows(
      s, elems, initializer.type(), &initializer,
      [&fn](const Scope& b, const Output& row, const Output& acc) { return fn(b, acc, row); },
      parallel_iterations);
}

}  // namespace ops
}  // namespace towerflow
