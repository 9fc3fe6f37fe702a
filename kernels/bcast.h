// NumPy/TensorFlow broadcasting of two shapes, prepared for Eigen.
//
// Shapes are aligned at their last dimension; a dimension broadcasts when it
// is 1 (or missing). BCast computes the output shape and, for the kernels, a
// collapsed description where runs of adjacent dimensions that broadcast
// the same way are merged, so [8,1,5,7] + [1,3,1,1] becomes a rank-3
// problem: x reshaped [8,1,35] broadcast by [1,3,1], y reshaped [1,3,1]
// broadcast by [8,1,35].
//
//   BCast b(x.shape(), y.shape());
//   if (!b.ok()) return b.status();        // "Incompatible shapes: [2] vs. [3]"
//   b.output_shape();                       // [8,3,5,7]
//   b.x_reshape(), b.x_bcast(), b.y_reshape(), b.y_bcast(), b.result_shape()
//   b.grad_x_reduce_idx();                  // output dims x's gradient sums over
//
// grad_*_reduce_idx follow TensorFlow's BroadcastGradientArgs: equal shapes
// give none; otherwise every output dimension where the input is 1 or
// missing (including dimensions where the output is 1), ascending.
#ifndef TOWERFLOW_KERNELS_BCAST_H_
#define TOWERFLOW_KERNELS_BCAST_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor_shape.h"

namespace towerflow {

class BCast {
 public:
  using Vec = std::vector<int64_t>;

  BCast(absl::Span<const int64_t> x, absl::Span<const int64_t> y);
  BCast(const TensorShape& x, const TensorShape& y) : BCast(x.dim_sizes(), y.dim_sizes()) {}

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

  const TensorShape& output_shape() const { return output_shape_; }
  // Collapsed, all of the same length (at least 1).
  const Vec& x_reshape() const { return x_reshape_; }
  const Vec& x_bcast() const { return x_bcast_; }
  const Vec& y_reshape() const { return y_reshape_; }
  const Vec& y_bcast() const { return y_bcast_; }
  const Vec& result_shape() const { return result_; }
  const Vec& grad_x_reduce_idx() const { return grad_x_reduce_idx_; }
  const Vec& grad_y_reduce_idx() const { return grad_y_reduce_idx_; }

  // True when neither input needs broadcasting (same element layout).
  bool IsTrivial() const { return same_shape_; }

 private:
  absl::Status status_;
  bool same_shape_ = false;
  TensorShape output_shape_;
  Vec x_reshape_, x_bcast_, y_reshape_, y_bcast_, result_;
  Vec grad_x_reduce_idx_, grad_y_reduce_idx_;
};

// A broadcast as rows of its collapsed result's last dimension: in each
// row, x and y each give either a run of that dimension or one element
// repeated (BCast merged the dimensions that broadcast alike, so a row
// never mixes the two). The CPU's binary elementwise kernels walk them
// (Note [Broadcasting by rows] in kernels/cpu/cwise_ops.h; BroadcastTo and
// Tile stay on Eigen, bench/README.md says why); a shard of rows starts at
// any row.
//
//   const BCastRows rows(b);  // b.ok(), output not empty
//   for (BCastRows::Cursor c = rows.At(first); c.row() < last; c.Next())
//     ... x[c.x() + j * rows.x_step()], y[c.y() + j * rows.y_step()], j < rows.row_length()
class BCastRows {
 public:
  explicit BCastRows(const BCast& b);

  int64_t rows() const { return rows_; }
  int64_t row_length() const { return row_length_; }
  // 1 where a row is a run of x (y), 0 where it repeats one element.
  int64_t x_step() const { return x_step_; }
  int64_t y_step() const { return y_step_; }

  // A row and the offsets of its first elements in x and y.
  class Cursor {
   public:
    int64_t row() const { return row_; }
    int64_t x() const { return x_; }
    int64_t y() const { return y_; }
    // The next row: an odometer over the outer dimensions.
    void Next() {
      ++row_;
      for (int i = static_cast<int>(index_.size()) - 1; i >= 0; --i) {
        x_ += rows_->x_stride_[i];
        y_ += rows_->y_stride_[i];
        if (++index_[i] < rows_->outer_[i]) return;
        x_ -= index_[i] * rows_->x_stride_[i];
        y_ -= index_[i] * rows_->y_stride_[i];
        index_[i] = 0;
      }
    }

   private:
    friend class BCastRows;
    const BCastRows* rows_;
    int64_t row_ = 0, x_ = 0, y_ = 0;
    BCast::Vec index_;  // over the outer dimensions
  };
  Cursor At(int64_t row) const;

 private:
  BCast::Vec outer_;                // the result's dimensions but the last
  BCast::Vec x_stride_, y_stride_;  // per outer dimension, 0 where broadcast
  int64_t rows_ = 1, row_length_ = 1, x_step_ = 0, y_step_ = 0;
};

// For each position (row-major) of `out`, the flat index into `in` (dims
// that broadcast to out's, aligned at the end) that it reads: the batch
// matrices of BatchMatMulV2.
std::vector<int64_t> BroadcastIndices(absl::Span<const int64_t> in, const TensorShape& out);

// MatMul of a [m, k] ([k, m] with transpose_a) and b [k, n] ([n, k]):
// InvalidArgument naming both shapes unless they are matrices with one k
// and sizes up to 2^31 - 1 (BLAS's and cuBLAS's ints).
struct MatMulDims {
  int64_t m = 0, n = 0, k = 0;
};
absl::StatusOr<MatMulDims> PlanMatMul(const TensorShape& a, const TensorShape& b, bool transpose_a,
                                      bool transpose_b);

// BroadcastTo's check: InvalidArgument unless `b` (the broadcast of `in`
// and `shape`) succeeded and gives `shape` itself.
absl::Status CheckBroadcastTo(const BCast& b, const TensorShape& in, const TensorShape& shape);

// BatchMatMul(V2) of x [..., m, k] ([..., k, m] with adj_x) and y [..., k,
// n] ([..., n, k] with adj_y): the product's sizes, the output shape (the
// broadcast batch dims, then [m, n]) and, per output matrix, the x and y
// matrices it multiplies. InvalidArgument naming both shapes for a rank
// below 2, unequal k, batch dims that do not broadcast, or a size over
// 2^31 - 1 (BLAS's and cuBLAS's ints).
struct BatchMatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  TensorShape out_shape;
  std::vector<int64_t> x_index, y_index;
};
absl::StatusOr<BatchMatMulPlan> PlanBatchMatMul(const TensorShape& x, const TensorShape& y,
                                                bool adj_x, bool adj_y);

// Select(condition, t, e)'s condition: t's shape, a vector over t's first
// dimension (one choice per row), or a scalar. InvalidArgument unless t and
// e have one shape and the condition is one of these.
enum class SelectCondition { kSame, kRows, kScalar };
absl::StatusOr<SelectCondition> PlanSelect(const TensorShape& condition, const TensorShape& t,
                                           const TensorShape& e);

// SelectV2's output shape: condition, t and e broadcast together (t with e,
// then the condition with that); InvalidArgument when they do not.
absl::StatusOr<TensorShape> SelectV2Shape(const TensorShape& condition, const TensorShape& t,
                                          const TensorShape& e);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_BCAST_H_
