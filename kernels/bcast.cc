#include "kernels/bcast.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace towerflow {
namespace {

std::string ShapeString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

}  // namespace

BCast::BCast(absl::Span<const int64_t> x, absl::Span<const int64_t> y) {
  const int rank = static_cast<int>(std::max(x.size(), y.size()));
  // Dimension i counted from the end, 1 when missing.
  const auto dim = [](absl::Span<const int64_t> s, int i) -> int64_t {
    return i < static_cast<int>(s.size()) ? s[s.size() - 1 - i] : 1;
  };
  Vec out(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t a = dim(x, i), b = dim(y, i);
    if (a < 0 || b < 0 || (a != b && a != 1 && b != 1)) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat("Incompatible shapes: ", ShapeString(x), " vs. ", ShapeString(y)));
      return;
    }
    out[rank - 1 - i] = a == 1 ? b : a;
  }
  absl::StatusOr<TensorShape> shape = TensorShape::FromDims(out);
  if (!shape.ok()) {
    status_ = shape.status();
    return;
  }
  output_shape_ = *std::move(shape);
  same_shape_ = std::equal(x.begin(), x.end(), y.begin(), y.end());

  // Collapse runs of dimensions with the same broadcast pattern; size-1
  // output dimensions are dropped (they change nothing).
  enum Kind { kNone = -1, kSame, kXBroadcast, kYBroadcast };
  Kind prev = kNone;
  for (int d = 0; d < rank; ++d) {
    const int i = rank - 1 - d;  // from the end
    const int64_t a = dim(x, i), b = dim(y, i), o = out[d];
    if (!same_shape_) {
      if (a == 1) grad_x_reduce_idx_.push_back(d);
      if (b == 1) grad_y_reduce_idx_.push_back(d);
    }
    if (o == 1) continue;
    const Kind kind = a == b ? kSame : (a == 1 ? kXBroadcast : kYBroadcast);
    if (kind == prev) {
      x_reshape_.back() *= a;
      y_reshape_.back() *= b;
      result_.back() *= o;
      if (kind == kXBroadcast) x_bcast_.back() *= o;
      if (kind == kYBroadcast) y_bcast_.back() *= o;
    } else {
      x_reshape_.push_back(a);
      y_reshape_.push_back(b);
      result_.push_back(o);
      x_bcast_.push_back(kind == kXBroadcast ? o : 1);
      y_bcast_.push_back(kind == kYBroadcast ? o : 1);
      prev = kind;
    }
  }
  if (result_.empty()) {  // every dimension is 1 (or a scalar)
    x_reshape_ = y_reshape_ = result_ = x_bcast_ = y_bcast_ = {1};
  }
}

BCastRows::BCastRows(const BCast& b) {
  const BCast::Vec& result = b.result_shape();
  const int outer = static_cast<int>(result.size()) - 1;
  outer_.assign(result.begin(), result.begin() + outer);
  x_stride_.assign(outer, 0);
  y_stride_.assign(outer, 0);
  row_length_ = result.back();
  x_step_ = b.x_reshape().back() != 1 ? 1 : 0;
  y_step_ = b.y_reshape().back() != 1 ? 1 : 0;
  int64_t xs = b.x_reshape().back(), ys = b.y_reshape().back();
  for (int i = outer - 1; i >= 0; --i) {
    if (b.x_reshape()[i] != 1) x_stride_[i] = xs;
    if (b.y_reshape()[i] != 1) y_stride_[i] = ys;
    xs *= b.x_reshape()[i];
    ys *= b.y_reshape()[i];
    rows_ *= outer_[i];
  }
}

BCastRows::Cursor BCastRows::At(int64_t row) const {
  Cursor c;
  c.rows_ = this;
  c.row_ = row;
  c.index_.assign(outer_.size(), 0);
  for (int i = static_cast<int>(outer_.size()) - 1; i >= 0; --i) {
    c.index_[i] = row % outer_[i];
    row /= outer_[i];
    c.x_ += c.index_[i] * x_stride_[i];
    c.y_ += c.index_[i] * y_stride_[i];
  }
  return c;
}

std::vector<int64_t> BroadcastIndices(absl::Span<const int64_t> in, const TensorShape& out) {
  const int r = out.dims(), off = r - static_cast<int>(in.size());
  std::vector<int64_t> idx(out.num_elements());
  std::vector<int64_t> pos(r, 0);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    int64_t flat = 0;
    for (int d = off; d < r; ++d) {
      const int64_t size = in[d - off];
      flat = flat * size + (size == 1 ? 0 : pos[d]);
    }
    idx[i] = flat;
    for (int d = r - 1; d >= 0; --d) {  // next position
      if (++pos[d] < out.dim_size(d)) break;
      pos[d] = 0;
    }
  }
  return idx;
}

namespace {

absl::Status CheckMatMulSizes(int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  if (m > kMaxInt || n > kMaxInt || k > kMaxInt) {
    return absl::InvalidArgumentError(
        absl::StrCat("MatMul dimensions [", m, ", ", k, "] x [", k, ", ", n, "] exceed 2^31 - 1"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MatMulDims> PlanMatMul(const TensorShape& a, const TensorShape& b, bool transpose_a,
                                      bool transpose_b) {
  if (a.dims() != 2 || b.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("In[0] and In[1] must be matrices: ", a.DebugString(), " ", b.DebugString()));
  }
  MatMulDims d;
  d.m = a.dim_size(transpose_a ? 1 : 0);
  d.k = a.dim_size(transpose_a ? 0 : 1);
  d.n = b.dim_size(transpose_b ? 0 : 1);
  if (d.k != b.dim_size(transpose_b ? 1 : 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Matrix size-incompatible: In[0]: ", a.DebugString(), ", In[1]: ", b.DebugString()));
  }
  TW_RETURN_IF_ERROR(CheckMatMulSizes(d.m, d.n, d.k));
  return d;
}

absl::Status CheckBroadcastTo(const BCast& b, const TensorShape& in, const TensorShape& shape) {
  if (!b.ok() || b.output_shape() != shape) {
    return absl::InvalidArgumentError(absl::StrCat("Unable to broadcast tensor of shape ",
                                                   in.DebugString(), " to tensor of shape ",
                                                   shape.DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<SelectCondition> PlanSelect(const TensorShape& condition, const TensorShape& t,
                                           const TensorShape& e) {
  if (t != e) {
    return absl::InvalidArgumentError(
        absl::StrCat("'then' and 'else' must have the same size.  but received: ", t.DebugString(),
                     " vs. ", e.DebugString()));
  }
  if (condition == t) return SelectCondition::kSame;
  if (condition.dims() == 1 && t.dims() >= 1 && condition.dim_size(0) == t.dim_size(0)) {
    return SelectCondition::kRows;
  }
  if (condition.dims() == 0) return SelectCondition::kScalar;
  return absl::InvalidArgumentError(absl::StrCat(
      "'condition' must be a scalar, a vector of size ", t.dims() > 0 ? t.dim_size(0) : 0,
      ", or have the shape of 'then' ", t.DebugString(), "; got ", condition.DebugString()));
}

absl::StatusOr<TensorShape> SelectV2Shape(const TensorShape& condition, const TensorShape& t,
                                          const TensorShape& e) {
  const BCast te(t, e);
  TW_RETURN_IF_ERROR(te.status());
  const BCast all(condition, te.output_shape());
  TW_RETURN_IF_ERROR(all.status());
  return all.output_shape();
}

absl::StatusOr<BatchMatMulPlan> PlanBatchMatMul(const TensorShape& x, const TensorShape& y,
                                                bool adj_x, bool adj_y) {
  if (x.dims() < 2 || y.dims() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("In[0] and In[1] need rank >= 2: ", x.DebugString(), " ", y.DebugString()));
  }
  const int rx = x.dims(), ry = y.dims();
  BatchMatMulPlan plan;
  plan.m = x.dim_size(rx - (adj_x ? 1 : 2));
  plan.k = x.dim_size(rx - (adj_x ? 2 : 1));
  plan.n = y.dim_size(ry - (adj_y ? 2 : 1));
  if (plan.k != y.dim_size(ry - (adj_y ? 1 : 2))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Matrix size-incompatible: In[0]: ", x.DebugString(), ", In[1]: ", y.DebugString()));
  }
  TW_RETURN_IF_ERROR(CheckMatMulSizes(plan.m, plan.n, plan.k));
  const auto xb = x.dim_sizes().subspan(0, rx - 2);
  const auto yb = y.dim_sizes().subspan(0, ry - 2);
  const BCast batch(xb, yb);
  TW_RETURN_IF_ERROR(batch.status());
  std::vector<int64_t> dims(batch.output_shape().dim_sizes().begin(),
                            batch.output_shape().dim_sizes().end());
  dims.push_back(plan.m);
  dims.push_back(plan.n);
  TW_ASSIGN_OR_RETURN(plan.out_shape, TensorShape::FromDims(dims));
  plan.x_index = BroadcastIndices(xb, batch.output_shape());
  plan.y_index = BroadcastIndices(yb, batch.output_shape());
  return plan;
}

}  // namespace towerflow
