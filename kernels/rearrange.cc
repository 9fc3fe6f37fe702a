#include "kernels/rearrange.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "kernels/kernel_util.h"

namespace towerflow {

int64_t DimProduct(const TensorShape& s, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= s.dim_size(i);
  return n;
}

absl::Status ReadStridedSliceMasks(const KernelConstruction& c, StridedSliceSpec* spec) {
  TW_RETURN_IF_ERROR(c.GetAttr("begin_mask", &spec->begin_mask));
  TW_RETURN_IF_ERROR(c.GetAttr("end_mask", &spec->end_mask));
  TW_RETURN_IF_ERROR(c.GetAttr("ellipsis_mask", &spec->ellipsis_mask));
  TW_RETURN_IF_ERROR(c.GetAttr("new_axis_mask", &spec->new_axis_mask));
  return c.GetAttr("shrink_axis_mask", &spec->shrink_axis_mask);
}

absl::StatusOr<StridedSlicePlan> PlanStridedSlice(const TensorShape& in,
                                                  const StridedSliceSpec& masks,
                                                  const Tensor& begin, const Tensor& end,
                                                  const Tensor& strides) {
  StridedSliceSpec spec = masks;
  TW_ASSIGN_OR_RETURN(spec.begin, IntVector(begin, "begin"));
  TW_ASSIGN_OR_RETURN(spec.end, IntVector(end, "end"));
  TW_ASSIGN_OR_RETURN(spec.strides, IntVector(strides, "strides"));
  StridedSlicePlan plan;
  TW_ASSIGN_OR_RETURN(plan.slice, ComputeStridedSlice(in, spec));
  TW_ASSIGN_OR_RETURN(plan.final_shape, plan.slice.final.AsTensorShape());
  TW_ASSIGN_OR_RETURN(plan.processing, plan.slice.processing.AsTensorShape());
  return plan;
}

absl::StatusOr<TransposePlan> PlanTranspose(const TensorShape& in, const Tensor& perm_t) {
  TransposePlan plan;
  TW_ASSIGN_OR_RETURN(plan.perm, IntVector(perm_t, "perm"));
  const std::vector<int64_t>& perm = plan.perm;
  const int rank = in.dims();
  if (static_cast<int>(perm.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat("transpose expects a vector of size ", rank,
                                                   ". But input(1) is a vector of size ",
                                                   perm.size()));
  }
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> out_dims(rank);
  plan.identity = true;
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat(perm[i], " is out of range [0 .. ", rank, ")"));
    }
    seen[perm[i]] = true;
    out_dims[i] = in.dim_size(static_cast<int>(perm[i]));
    plan.identity = plan.identity && (perm[i] == i || in.dim_size(i) == 1);
  }
  // A repeat leaves some dim out: TF names the first.
  for (int i = 0; i < rank; ++i) {
    if (!seen[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat(i, " is missing from {", absl::StrJoin(perm, ","), "}."));
    }
  }
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(out_dims));
  return plan;
}

absl::StatusOr<SlicePlan> PlanSlice(const TensorShape& in, const Tensor& begin_t,
                                    const Tensor& size_t_) {
  SlicePlan plan;
  TW_ASSIGN_OR_RETURN(plan.begin, IntVector(begin_t, "begin"));
  TW_ASSIGN_OR_RETURN(plan.size, IntVector(size_t_, "size"));
  const int rank = in.dims();
  if (static_cast<int>(plan.begin.size()) != rank || static_cast<int>(plan.size.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected begin and size arguments to be 1-D tensors of size ", rank, ", but got shapes ",
        begin_t.shape().DebugString(), " and ", size_t_.shape().DebugString(), " instead."));
  }
  plan.end.resize(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = in.dim_size(i);
    int64_t& begin = plan.begin[i];
    int64_t& size = plan.size[i];
    if (size == -1) size = dim - begin;
    if (begin < 0 || begin > dim || size < 0 || size > dim - begin) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected begin[", i, "] in [0, ", dim, "] and size[", i, "] in [0, ", dim,
                       " - begin], but got begin ", begin, " and size ", size));
    }
    plan.end[i] = begin + size;
  }
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(plan.size));
  return plan;
}

absl::StatusOr<std::vector<bool>> PlanReverse(const TensorShape& in, const Tensor& axis) {
  if (axis.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'axis' must be 1-D, not ", axis.shape().DebugString()));
  }
  std::vector<bool> flip(std::max(in.dims(), 1), false);
  for (int64_t i = 0; i < axis.NumElements(); ++i) {
    const int64_t a = IntAt(axis, i);
    if (a < -in.dims() || a >= in.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("'axis'[", i, "] = ", a,
                                                     " is out of valid range [", -in.dims(), ", ",
                                                     in.dims() - 1, "]"));
    }
    const int64_t canonical = a < 0 ? a + in.dims() : a;
    if (flip[canonical]) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", canonical, " specified more than once"));
    }
    flip[canonical] = true;
  }
  return flip;
}

absl::StatusOr<MirrorPlan> PlanMirrorPad(const TensorShape& given, const Tensor& paddings,
                                         bool reflect, bool given_is_padded) {
  const int rank = given.dims();
  if (paddings.dims() != 2 || paddings.dim_size(0) != rank || paddings.dim_size(1) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("The first dimension of paddings must be the rank of inputs[", rank,
                     ", 2], got ", paddings.shape().DebugString()));
  }
  std::vector<int64_t> small(rank), big(rank);
  MirrorPlan plan;
  for (int d = 0; d < rank; ++d) {
    const int64_t before = IntAt(paddings, 2 * d), after = IntAt(paddings, 2 * d + 1);
    const int64_t dim = given.dim_size(d);
    if (before < 0 || after < 0 || before > dim || after > dim) {
      return absl::InvalidArgumentError(
          absl::StrCat("Paddings must be non-negative and at most the dimension size: ", before,
                       " ", after, " for dimension ", d, " of size ", dim));
    }
    small[d] = given_is_padded ? dim - before - after : dim;
    big[d] = given_is_padded ? dim : dim + before + after;
    if (small[d] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Paddings ", before, " ", after, " exceed dimension ", d, " of size ", dim));
    }
    const int64_t most = reflect ? small[d] - 1 : small[d];
    if (before > most || after > most) {
      return absl::InvalidArgumentError(absl::StrCat(
          "paddings must be less than", reflect ? "" : " or equal to", " the dimension size: ",
          before, ", ", after, " not less than", reflect ? "" : " or equal to", " ", small[d]));
    }
    std::vector<int64_t> map(big[d]);
    for (int64_t j = 0; j < big[d]; ++j) {
      int64_t i = j - before;
      if (i < 0) i = reflect ? -i : -i - 1;
      if (i >= small[d]) i = reflect ? 2 * small[d] - 2 - i : 2 * small[d] - 1 - i;
      map[j] = i;
    }
    plan.map.push_back(std::move(map));
    plan.before.push_back(before);
  }
  TW_ASSIGN_OR_RETURN(plan.small, TensorShape::FromDims(small));
  TW_ASSIGN_OR_RETURN(plan.big, TensorShape::FromDims(big));
  return plan;
}

absl::StatusOr<bool> ReadMirrorReflect(const KernelConstruction& c) {
  std::string mode;
  TW_RETURN_IF_ERROR(c.GetAttr("mode", &mode));
  return mode == "REFLECT";
}

absl::StatusOr<PackPlan> PlanPack(absl::Span<const Tensor* const> values, int64_t axis) {
  const Tensor& v0 = *values[0];
  PackPlan plan;
  TW_ASSIGN_OR_RETURN(plan.axis, CanonicalAxis(axis, v0.dims() + 1, "Pack axis"));
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i]->shape() != v0.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shapes of all inputs must match: values[0].shape = ", v0.shape().DebugString(),
          " != values[", i, "].shape = ", values[i]->shape().DebugString()));
    }
  }
  std::vector<int64_t> dims(v0.shape().dim_sizes().begin(), v0.shape().dim_sizes().end());
  dims.insert(dims.begin() + plan.axis, static_cast<int64_t>(values.size()));
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(dims));
  plan.outer = DimProduct(v0.shape(), 0, plan.axis);
  plan.inner = DimProduct(v0.shape(), plan.axis, v0.dims());
  return plan;
}

namespace {

// The pieces of `in` along `a` with the given sizes (squeezed: Unpack's).
absl::StatusOr<SplitPlan> PiecesOf(const TensorShape& in, int a, std::vector<int64_t> sizes,
                                   bool squeeze) {
  SplitPlan plan;
  plan.axis = a;
  plan.outer = DimProduct(in, 0, a);
  plan.inner = DimProduct(in, a + 1, in.dims());
  for (int64_t size : sizes) {
    std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
    if (squeeze) {
      dims.erase(dims.begin() + a);
    } else {
      dims[a] = size;
    }
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    plan.shapes.push_back(std::move(shape));
  }
  plan.sizes = std::move(sizes);
  return plan;
}

}  // namespace

absl::StatusOr<SplitPlan> PlanSplit(const TensorShape& in, const Tensor& split_dim, int num) {
  TW_ASSIGN_OR_RETURN(int64_t axis, IntScalar(split_dim, "split_dim"));
  TW_ASSIGN_OR_RETURN(int a, CanonicalAxis(axis, in.dims(), "split_dim"));
  if (in.dim_size(a) % num != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Number of ways to split should evenly divide the split dimension, but got split_dim ", a,
        " (size = ", in.dim_size(a), ") and num_split ", num));
  }
  return PiecesOf(in, a, std::vector<int64_t>(num, in.dim_size(a) / num), false);
}

absl::StatusOr<SplitPlan> PlanSplitV(const TensorShape& in, const Tensor& size_splits,
                                     const Tensor& split_dim, int num) {
  TW_ASSIGN_OR_RETURN(int64_t axis, IntScalar(split_dim, "split_dim"));
  TW_ASSIGN_OR_RETURN(int a, CanonicalAxis(axis, in.dims(), "split_dim"));
  if (size_splits.dims() != 1 || size_splits.NumElements() != num) {
    return absl::InvalidArgumentError(
        absl::StrCat("size_splits must be a vector of num_split = ", num, " elements, got shape ",
                     size_splits.shape().DebugString()));
  }
  std::vector<int64_t> sizes(num);
  int unknown = -1;
  int64_t known = 0;
  for (int i = 0; i < num; ++i) {
    sizes[i] =
        size_splits.dtype() == DT_INT8 ? size_splits.data<int8_t>()[i] : IntAt(size_splits, i);
    if (sizes[i] == -1 && unknown == -1) {
      unknown = i;
    } else if (sizes[i] < 0 || sizes[i] > in.dim_size(a)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Split size ", i, " = ", sizes[i], " is invalid for dimension of size ", in.dim_size(a)));
    } else {
      known += sizes[i];
    }
  }
  if (unknown != -1 && known <= in.dim_size(a)) sizes[unknown] = in.dim_size(a) - known;
  if ((unknown == -1 && known != in.dim_size(a)) || known > in.dim_size(a)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Determined shape must either match input shape along split_dim exactly if fully "
        "specified, or be less than the size of the input along split_dim if not fully "
        "specified.  Got: ",
        known));
  }
  return PiecesOf(in, a, std::move(sizes), false);
}

absl::StatusOr<SplitPlan> PlanUnpack(const TensorShape& in, int64_t axis, int num) {
  if (in.dims() == 0) return absl::InvalidArgumentError("Unpack needs a tensor of rank >= 1");
  TW_ASSIGN_OR_RETURN(int a, CanonicalAxis(axis, in.dims(), "Unpack axis"));
  if (in.dim_size(a) != num) {
    return absl::InvalidArgumentError(absl::StrCat("Input shape axis ", a, " must equal ", num,
                                                   ", got shape ", in.DebugString()));
  }
  return PiecesOf(in, a, std::vector<int64_t>(num, 1), true);
}

absl::StatusOr<TilePlan> PlanTile(const TensorShape& in, const Tensor& multiples_t) {
  TilePlan plan;
  TW_ASSIGN_OR_RETURN(plan.multiples, IntVector(multiples_t, "multiples"));
  const std::vector<int64_t>& multiples = plan.multiples;
  const int rank = in.dims();
  if (static_cast<int>(multiples.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected multiples argument to be a vector of length ", rank,
                     " but got length ", multiples.size()));
  }
  std::vector<int64_t> out_dims(rank);
  for (int i = 0; i < rank; ++i) {
    if (multiples[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected multiples[", i, "] >= 0, but got ", multiples[i]));
    }
    out_dims[i] = in.dim_size(i) * multiples[i];
    if (in.dim_size(i) != 0 && out_dims[i] / in.dim_size(i) != multiples[i]) {
      return absl::InvalidArgumentError("Tile: output dimension overflows int64");
    }
  }
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(out_dims));
  return plan;
}

absl::StatusOr<PadPlan> PlanPad(const TensorShape& in, const Tensor& paddings,
                                const Tensor* constant) {
  const int rank = in.dims();
  if (paddings.dims() != 2 || paddings.dim_size(0) != rank || paddings.dim_size(1) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("The first dimension of paddings must be the rank of inputs[", rank,
                     ", 2], got ", paddings.shape().DebugString()));
  }
  PadPlan plan;
  std::vector<int64_t> out_dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t before = IntAt(paddings, 2 * i), after = IntAt(paddings, 2 * i + 1);
    if (before < 0 || after < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Paddings must be non-negative: ", before, " ", after));
    }
    const int64_t limit = std::numeric_limits<int64_t>::max() - in.dim_size(i);
    if (before > limit || after > limit - before) {
      return absl::InvalidArgumentError("Padded dimension size overflows int64");
    }
    out_dims[i] = in.dim_size(i) + before + after;
    plan.before.push_back(before);
  }
  if (constant != nullptr && constant->NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("constant_values must be a scalar, got shape ",
                                                   constant->shape().DebugString()));
  }
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(out_dims));
  return plan;
}

int64_t GatherIndex(const Tensor& indices, int64_t i) {
  return indices.dtype() == DT_INT16 ? indices.data<int16_t>()[i] : IntAt(indices, i);
}

absl::StatusOr<GatherPlan> PlanGather(const TensorShape& params, const Tensor& indices,
                                      int64_t axis, int64_t batch_dims) {
  if (params.dims() == 0) {
    return absl::InvalidArgumentError("params must be at least 1 dimensional");
  }
  GatherPlan plan;
  TW_ASSIGN_OR_RETURN(plan.axis, CanonicalAxis(axis, params.dims(), "Gather axis"));
  const int a = plan.axis;
  const int rank = indices.dims();
  if (batch_dims < 0) batch_dims += rank;
  if (batch_dims < 0 || batch_dims > rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_dims must be in [-", rank, ", ", rank, "], got ", batch_dims));
  }
  const int b = static_cast<int>(batch_dims);
  if (b > a) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_dims (", b, ") must be <= axis (", a, ")"));
  }
  for (int i = 0; i < b; ++i) {
    if (params.dim_size(i) != indices.dim_size(i)) {
      return absl::InvalidArgumentError(absl::StrCat("params.shape[", i, "]: ", params.dim_size(i),
                                                     " should be equal to indices.shape[", i,
                                                     "]: ", indices.dim_size(i)));
    }
  }
  std::vector<int64_t> dims(params.dim_sizes().begin(), params.dim_sizes().begin() + a);
  for (int i = b; i < rank; ++i) dims.push_back(indices.dim_size(i));
  for (int i = a + 1; i < params.dims(); ++i) dims.push_back(params.dim_size(i));
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(dims));
  plan.outer = DimProduct(params, 0, a);
  plan.limit = params.dim_size(a);
  plan.inner = DimProduct(params, a + 1, params.dims());
  plan.batch = DimProduct(params, 0, b);
  plan.batch_indices = plan.batch == 0 ? 0 : indices.NumElements() / plan.batch;
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    const int64_t idx = GatherIndex(indices, i);
    if (idx < 0 || idx >= plan.limit) {
      return absl::InvalidArgumentError(
          absl::StrCat("indices[", i, "] = ", idx, " is not in [0, ", plan.limit, ")"));
    }
  }
  return plan;
}

absl::StatusOr<ConcatPlan> PlanConcat(absl::Span<const Tensor* const> values,
                                      const Tensor& axis_t) {
  TW_ASSIGN_OR_RETURN(int64_t axis, IntScalar(axis_t, "axis"));
  const Tensor& v0 = *values[0];
  const int rank = v0.dims();
  if (rank == 0) {
    return absl::InvalidArgumentError("Can't concatenate scalars (use tf.stack instead)");
  }
  ConcatPlan plan;
  TW_ASSIGN_OR_RETURN(
      plan.axis,
      CanonicalAxis(
          axis, rank,
          "ConcatOp : Expected concatenating dimensions in the range [-rank, rank), got"));
  const int a = plan.axis;
  int64_t total = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const Tensor& v = *values[i];
    if (v.dims() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConcatOp : Ranks of all input tensors should match: shape[0] = ",
          v0.shape().DebugString(), " vs. shape[", i, "] = ", v.shape().DebugString()));
    }
    for (int d = 0; d < rank; ++d) {
      if (d != a && v.dim_size(d) != v0.dim_size(d)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ConcatOp : Dimension ", d, " in both shapes must be equal: shape[0] = ",
            v0.shape().DebugString(), " vs. shape[", i, "] = ", v.shape().DebugString()));
      }
    }
    total += v.dim_size(a);
  }
  std::vector<int64_t> dims(v0.shape().dim_sizes().begin(), v0.shape().dim_sizes().end());
  dims[a] = total;
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(dims));
  plan.outer = DimProduct(plan.shape, 0, a);
  return plan;
}

namespace {

// Whether `shape` starts with `prefix`.
bool StartsWith(const TensorShape& shape, const TensorShape& prefix) {
  if (shape.dims() < prefix.dims()) return false;
  for (int i = 0; i < prefix.dims(); ++i) {
    if (shape.dim_size(i) != prefix.dim_size(i)) return false;
  }
  return true;
}

// shape[from:] with `lead` in front.
absl::StatusOr<TensorShape> WithLeadingDim(int64_t lead, const TensorShape& shape, int from) {
  std::vector<int64_t> dims{lead};
  for (int i = from; i < shape.dims(); ++i) dims.push_back(shape.dim_size(i));
  return TensorShape::FromDims(dims);
}

}  // namespace

absl::StatusOr<PartitionPlan> PlanDynamicPartition(const TensorShape& data,
                                                   const Tensor& partitions,
                                                   int64_t num_partitions) {
  if (!StartsWith(data, partitions.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data.shape must start with partitions.shape, got data.shape = ", data.DebugString(),
        ", partitions.shape = ", partitions.shape().DebugString()));
  }
  const int64_t n = partitions.NumElements();
  const int32_t* p = partitions.data<int32_t>();
  PartitionPlan plan;
  plan.starts.assign(num_partitions + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= num_partitions) {
      return absl::InvalidArgumentError(
          absl::StrCat("partitions[", i, "] = ", p[i], " is not in [0, ", num_partitions, ")"));
    }
    ++plan.starts[p[i] + 1];
  }
  for (int64_t k = 0; k < num_partitions; ++k) {
    TW_ASSIGN_OR_RETURN(TensorShape shape,
                        WithLeadingDim(plan.starts[k + 1], data, partitions.dims()));
    plan.shapes.push_back(std::move(shape));
    plan.starts[k + 1] += plan.starts[k];
  }
  plan.row = DimProduct(data, partitions.dims(), data.dims());
  plan.rows.resize(n);
  std::vector<int64_t> next(plan.starts.begin(), plan.starts.end() - 1);
  for (int64_t i = 0; i < n; ++i) plan.rows[next[p[i]]++] = i;
  return plan;
}

absl::StatusOr<StitchPlan> PlanDynamicStitch(absl::Span<const Tensor* const> indices,
                                             absl::Span<const Tensor* const> data) {
  const int n = static_cast<int>(indices.size());
  const TensorShape& data0 = data[0]->shape();
  const TensorShape& indices0 = indices[0]->shape();
  if (!StartsWith(data0, indices0)) {
    return absl::InvalidArgumentError(absl::StrCat("data[0].shape ", data0.DebugString(),
                                                   " must start with indices[0].shape ",
                                                   indices0.DebugString()));
  }
  int64_t max_index = -1;
  for (int m = 0; m < n; ++m) {
    const TensorShape& ishape = indices[m]->shape();
    const TensorShape& dshape = data[m]->shape();
    // data[m] = indices[m].shape + the row shape data[0] has.
    bool ok = StartsWith(dshape, ishape) &&
              dshape.dims() - ishape.dims() == data0.dims() - indices0.dims();
    for (int d = 0; ok && d < data0.dims() - indices0.dims(); ++d) {
      ok = dshape.dim_size(ishape.dims() + d) == data0.dim_size(indices0.dims() + d);
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("data[", m, "].shape = ", dshape.DebugString(),
                       " does not start with indices[", m, "].shape = ", ishape.DebugString(),
                       " followed by the row shape of data[0] ", data0.DebugString()));
    }
    const int32_t* idx = indices[m]->data<int32_t>();
    for (int64_t i = 0; i < indices[m]->NumElements(); ++i) {
      if (idx[i] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("indices[", m, "][", i, "] = ", idx[i], " is negative"));
      }
      max_index = std::max<int64_t>(max_index, idx[i]);
    }
  }
  StitchPlan plan;
  TW_ASSIGN_OR_RETURN(plan.shape, WithLeadingDim(max_index + 1, data0, indices0.dims()));
  plan.row = DimProduct(data0, indices0.dims(), data0.dims());
  // Every (index, m, i), sorted by index, writer order kept: the last of
  // each index's run writes its row. Sized by the indices, not by the
  // largest index, which may be huge.
  struct Write {
    int64_t index;
    int m;
    int64_t i;
  };
  std::vector<Write> writes;
  for (int m = 0; m < n; ++m) {
    const int32_t* idx = indices[m]->data<int32_t>();
    for (int64_t i = 0; i < indices[m]->NumElements(); ++i) writes.push_back({idx[i], m, i});
  }
  std::stable_sort(writes.begin(), writes.end(),
                   [](const Write& a, const Write& b) { return a.index < b.index; });
  plan.src.resize(n);
  plan.dst.resize(n);
  for (size_t k = 0; k < writes.size(); ++k) {
    if (k + 1 < writes.size() && writes[k + 1].index == writes[k].index) continue;
    plan.src[writes[k].m].push_back(writes[k].i);
    plan.dst[writes[k].m].push_back(writes[k].index);
  }
  return plan;
}

absl::StatusOr<TopKPlan> PlanTopK(const TensorShape& input, const Tensor& k) {
  TopKPlan plan;
  TW_ASSIGN_OR_RETURN(plan.k, IntScalar(k, "k"));
  if (plan.k < 0) return absl::InvalidArgumentError(absl::StrCat("Need k >= 0, got ", plan.k));
  if (input.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be >= 1-D, got shape ", input.DebugString()));
  }
  plan.n = input.dim_size(input.dims() - 1);
  if (plan.n < plan.k) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must have at least k columns. Had ", plan.n, ", needed ", plan.k));
  }
  plan.rows = DimProduct(input, 0, input.dims() - 1);
  std::vector<int64_t> dims(input.dim_sizes().begin(), input.dim_sizes().end());
  dims.back() = plan.k;
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(dims));
  return plan;
}

}  // namespace towerflow
