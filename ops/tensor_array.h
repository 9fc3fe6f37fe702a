// TensorFlow 1.x's tf.TensorArray, tf.map_fn and tf.scan in the graph DSL,
// over the TensorArray V3 ops (kernels/cpu/tensor_array_ops.cc).
//
//   // The squares of the rows of x, one loop iteration per row.
//   TW_ASSIGN_OR_RETURN(Output y, ops::MapFn(s, x, DT_FLOAT,
//       [](const Scope& b, const Output& row) -> absl::StatusOr<Output> {
//         return ops::Square(b, row);
//       }));
//
//   // Running sums of x's rows.
//   TW_ASSIGN_OR_RETURN(Output sums, ops::Scan(s, x, ops::ZerosLike(s, row0),
//       [](const Scope& b, const Output& acc, const Output& row) -> absl::StatusOr<Output> {
//         return ops::AddV2(b, acc, row);
//       }));
//
// A TensorArray is a value, as in Python: Write and Scatter return the
// array with its new flow, which later reads must use (the flow orders
// them). In a WhileLoop, carry flow() as a loop variable and rebuild the
// array in the body with WithFlow. Everything differentiates
// (ops/gradients/tensor_array_grad.cc), through loops too.
#ifndef TOWERFLOW_OPS_TENSOR_ARRAY_H_
#define TOWERFLOW_OPS_TENSOR_ARRAY_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "core/tensor_shape.h"
#include "core/types.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace ops {

struct TensorArrayOptions {
  bool dynamic_size = false;
  bool clear_after_read = true;
  // Python's infer_shape: the first write fixes every element's shape.
  bool infer_shape = true;
  PartialTensorShape element_shape;  // unknown: inferred from the writes
  std::string name;                  // tensor_array_name; empty: the node's
};

class TensorArray {
 public:
  using Options = TensorArrayOptions;

  // A new array of `size` (an int32 scalar) `dtype` elements.
  TensorArray(const Scope& scope, DataType dtype, Input size, const Options& options = {});

  DataType dtype() const { return dtype_; }
  Output handle() const { return handle_; }
  Output flow() const { return flow_; }
  // This array with `flow` (a loop variable's value inside a loop body).
  TensorArray WithFlow(const Output& flow) const;

  TensorArray Write(const Scope& scope, Input index, Input value) const;
  // The element at `index`, with the element shape the writes built so far
  // tell (TF's Python TensorArray does the same).
  Output Read(const Scope& scope, Input index) const;
  // value's rows at `indices`; Unstack scatters every row in order.
  TensorArray Scatter(const Scope& scope, Input indices, Input value) const;
  TensorArray Unstack(const Scope& scope, const Output& value) const;
  // The elements at `indices` stacked; Stack gathers them all.
  Output Gather(const Scope& scope, Input indices) const;
  Output Stack(const Scope& scope) const;
  // value split along dimension 0 into `lengths` (int64) pieces, and the
  // concatenation of every element.
  TensorArray Split(const Scope& scope, Input value, Input lengths) const;
  Output Concat(const Scope& scope) const;
  Output Size(const Scope& scope) const;
  Operation Close(const Scope& scope) const;

 private:
  // This array knowing that an element of shape `written` was written.
  TensorArray WithElementShape(const PartialTensorShape& written) const;

  DataType dtype_;
  PartialTensorShape element_shape_;  // what the writes so far tell
  bool infer_shape_ = true;
  Output handle_, flow_;
};

using MapFnBody = std::function<absl::StatusOr<Output>(const Scope&, const Output& row)>;
using ScanBody =
    std::function<absl::StatusOr<Output>(const Scope&, const Output& acc, const Output& row)>;

// tf.map_fn: fn applied to each row of `elems` (along dimension 0) in a
// while loop; the results, of `dtype`, stacked. Under name scope "map".
absl::StatusOr<Output> MapFn(const Scope& scope, const Output& elems, DataType dtype,
                             const MapFnBody& fn, int parallel_iterations = 10);

// tf.scan: acc_i = fn(acc_{i-1}, elems[i]) from acc_{-1} = `initializer`;
// the acc_i stacked. Under name scope "scan".
absl::StatusOr<Output> Scan(const Scope& scope, const Output& elems, const Output& initializer,
                            const ScanBody& fn, int parallel_iterations = 10);

}  // namespace ops
}  // namespace towerflow

#endif  // TOWERFLOW_OPS_TENSOR_ARRAY_H_
