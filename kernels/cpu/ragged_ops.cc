// RaggedTensorToTensor (tf.RaggedTensor.to_tensor): a ragged tensor given as
// flat values and one row partition per ragged dimension — ROW_SPLITS each,
// or FIRST_DIM_SIZE then VALUE_ROWIDS each — written into a dense tensor
// filled with default_value (broadcast to a value's shape). A dimension of
// `shape` that is -1 (or a shape of -1) is as long as the longest row; a
// given one cuts longer rows, as TF's. As in TF, splits whose last entry is
// below the number of values use the first values only.
//
// Each level's partition becomes, for each of its children, the row it is
// in and its place there; a value's coordinates are then found by walking
// from it up through the levels.
//
// RaggedGather (tf.gather of a RaggedTensor): see its kernel.
//
// RaggedTensorToSparse (tf.RaggedTensor.to_sparse): the same tensor as a
// SparseTensor: one index per element of the values, [row, place in each
// ragged dimension..., index in the values' inner dimensions], in row-major
// order, and the dense shape with each ragged dimension as long as its
// longest row; TF's checks and messages for the splits.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// Copies `n` elements of `src` from `from` to `dst` at `to` (plain bytes or
// strings; the kernels register no other dtypes).
void CopyBlock(const Tensor& src, int64_t from, Tensor* dst, int64_t to, int64_t n) {
  if (src.dtype() == DT_STRING) {
    std::copy_n(src.data<std::string>() + from, n, dst->data<std::string>() + to);
    return;
  }
  const size_t size = TensorElementSize(src.dtype());
  std::memcpy(static_cast<char*>(dst->raw_data()) + to * size,
              static_cast<const char*>(src.raw_data()) + from * size, n * size);
}

// One ragged dimension: for each child, its row and its place in the row.
struct Level {
  int64_t rows = 0;
  std::vector<int64_t> row, place;
  int64_t longest = 0;
};

absl::StatusOr<Level> FromSplits(const Tensor& splits, int64_t children_available) {
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> s, IntVector(splits, "row_splits"));
  if (s.empty() || s[0] != 0)
    return absl::InvalidArgumentError(
        "Invalid first partition input. Tensor requires at least one element.");
  Level level;
  level.rows = static_cast<int64_t>(s.size()) - 1;
  for (int64_t r = 0; r < level.rows; ++r) {
    if (s[r + 1] < s[r]) return absl::InvalidArgumentError("Invalid row split size.");
  }
  const int64_t children = s.back();
  if (children > children_available) {
    return absl::InvalidArgumentError(absl::StrCat("row_splits end at ", children,
                                                   " but the next level has only ",
                                                   children_available, " elements"));
  }
  level.row.resize(children);
  level.place.resize(children);
  for (int64_t r = 0; r < level.rows; ++r) {
    level.longest = std::max(level.longest, s[r + 1] - s[r]);
    for (int64_t j = s[r]; j < s[r + 1]; ++j) {
      level.row[j] = r;
      level.place[j] = j - s[r];
    }
  }
  return level;
}

absl::StatusOr<Level> FromRowIds(const Tensor& ids, int64_t rows, int64_t children_available) {
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> id, IntVector(ids, "value_rowids"));
  if (static_cast<int64_t>(id.size()) != children_available) {
    return absl::InvalidArgumentError(absl::StrCat("value_rowids has ", id.size(),
                                                   " entries but the next level has ",
                                                   children_available, " elements"));
  }
  Level level;
  level.rows = rows;
  level.row = id;
  level.place.resize(id.size());
  for (size_t j = 0; j < id.size(); ++j) {
    if (id[j] < 0 || id[j] >= rows || (j > 0 && id[j] < id[j - 1])) {
      return absl::InvalidArgumentError(absl::StrCat("value_rowids must be sorted and in [0, ",
                                                     rows, "): entry ", j, " is ", id[j]));
    }
    level.place[j] = j > 0 && id[j] == id[j - 1] ? level.place[j - 1] + 1 : 0;
    level.longest = std::max(level.longest, level.place[j] + 1);
  }
  return level;
}

class RaggedTensorToTensorOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("row_partition_types", &types_));
    if (types_.empty()) return absl::InvalidArgumentError("No row_partition_types given");
    for (size_t i = 0; i < types_.size(); ++i) {
      const std::string& t = types_[i];
      const bool ok = t == "ROW_SPLITS"       ? types_[0] == "ROW_SPLITS"
                      : t == "FIRST_DIM_SIZE" ? i == 0 && types_.size() > 1
                      : t == "VALUE_ROWIDS"   ? i > 0 && types_[0] == "FIRST_DIM_SIZE"
                                              : false;
      if (!ok) {
        return absl::InvalidArgumentError(
            t == "ROW_SPLITS" || t == "FIRST_DIM_SIZE" || t == "VALUE_ROWIDS"
                ? absl::StrCat("Invalid row_partition_types: ", t, " at ", i)
                : absl::StrCat("Cannot handle type ", t));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& values = ctx->input(1);
    const Tensor& fill = ctx->input(2);
    if (values.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("values must be at least a vector, got shape ",
                                                     values.shape().DebugString()));
    }
    const bool first_dim_size = types_[0] == "FIRST_DIM_SIZE";
    const int ragged = static_cast<int>(types_.size()) - (first_dim_size ? 1 : 0);
    if (ctx->num_inputs() != 3 + static_cast<int>(types_.size())) {
      return absl::InvalidArgumentError(absl::StrCat(types_.size(), " row_partition_types but ",
                                                     ctx->num_inputs() - 3,
                                                     " row_partition_tensors"));
    }
    // The levels, top down; each level's children are the next one's rows.
    std::vector<Level> levels(ragged);
    int64_t rows = 0;
    if (first_dim_size) {
      TW_ASSIGN_OR_RETURN(rows, IntScalar(ctx->input(3), "first_dim_size"));
      if (rows < 0) return absl::InvalidArgumentError("first_dim_size must be non-negative");
    }
    // Children available at each level: the next level's rows, or values.
    // For splits they follow from the splits, so go top down and check.
    for (int k = 0; k < ragged; ++k) {
      const Tensor& partition = ctx->input(3 + k + (first_dim_size ? 1 : 0));
      if (first_dim_size) {
        // The rows of the next level are this one's children: only the last
        // level's count is fixed, by the values.
        const int64_t available = k + 1 < ragged ? partition.NumElements() : values.dim_size(0);
        TW_ASSIGN_OR_RETURN(levels[k], FromRowIds(partition, rows, available));
        rows = static_cast<int64_t>(levels[k].row.size());
      } else {
        const int64_t available =
            k + 1 < ragged ? std::max<int64_t>(ctx->input(3 + k + 1).NumElements() - 1, 0)
                           : values.dim_size(0);
        TW_ASSIGN_OR_RETURN(levels[k], FromSplits(partition, available));
      }
    }
    // The dense shape: rows, each ragged dimension's longest row, a value's.
    std::vector<int64_t> dims = {levels[0].rows};
    for (const Level& l : levels) dims.push_back(l.longest);
    for (int d = 1; d < values.dims(); ++d) dims.push_back(values.dim_size(d));
    const Tensor& shape = ctx->input(0);
    if (shape.dims() == 1) {
      TW_ASSIGN_OR_RETURN(std::vector<int64_t> given, IntVector(shape, "shape"));
      if (given.size() != dims.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "shape has ", given.size(), " dimensions, but the ragged tensor has ", dims.size()));
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        if (given[d] < -1) {
          return absl::InvalidArgumentError(absl::StrCat("shape[", d, "] = ", given[d], " < -1"));
        }
        if (given[d] == -1) continue;
        if (static_cast<int>(d) > ragged && given[d] != dims[d]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "shape[", d, "] = ", given[d], " but the values' dimension is ", dims[d]));
        }
        dims[d] = given[d];
      }
    } else if (shape.NumElements() != 1 || IntAt(shape, 0) != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape must be a vector or the scalar -1, got shape ", shape.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    // A value's block, and default_value broadcast to it.
    int64_t block = 1;
    for (int d = 1; d < values.dims(); ++d) block *= values.dim_size(d);
    TW_ASSIGN_OR_RETURN(Tensor fill_block, BroadcastFill(ctx, fill, values));
    const int64_t blocks = out_shape.num_elements() / std::max<int64_t>(block, 1);
    for (int64_t b = 0; b < blocks && block > 0; ++b)
      CopyBlock(fill_block, 0, out, b * block, block);
    // Each value's place.
    std::vector<int64_t> stride(ragged + 1, 1);
    for (int d = ragged - 1; d >= 0; --d) stride[d] = stride[d + 1] * dims[d + 1];
    const int64_t used = static_cast<int64_t>(levels.back().row.size());
    for (int64_t v = 0; v < used; ++v) {
      int64_t at = 0, child = v;
      bool inside = true;
      for (int k = ragged - 1; k >= 0 && inside; --k) {
        // A row past the children the level above uses (splits ending
        // early) is not in the tensor.
        if (child >= static_cast<int64_t>(levels[k].place.size())) {
          inside = false;
          break;
        }
        const int64_t place = levels[k].place[child];
        inside = place < dims[k + 1];
        at += place * stride[k + 1];
        child = levels[k].row[child];
      }
      if (!inside || child >= dims[0]) continue;
      at += child * stride[0];
      CopyBlock(values, v * block, out, at * block, block);
    }
    return absl::OkStatus();
  }

 private:
  // default_value as one value's block: its shape must broadcast to it.
  static absl::StatusOr<Tensor> BroadcastFill(KernelContext* ctx, const Tensor& fill,
                                              const Tensor& values) {
    const TensorShape inner(values.shape().dim_sizes().subspan(1));
    TW_ASSIGN_OR_RETURN(Tensor block, ctx->allocate_temp(values.dtype(), inner));
    const int offset = inner.dims() - fill.dims();
    bool ok = offset >= 0;
    for (int d = 0; ok && d < fill.dims(); ++d) {
      ok = fill.dim_size(d) == 1 || fill.dim_size(d) == inner.dim_size(d + offset);
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "default_value.shape=", fill.shape().DebugString(), " and rt_input.flat_values.shape=",
          values.shape().DebugString(), " are incompatible: default_value.rank = ", fill.dims(),
          " must be less than or equal to "
          "rt_input.flat_values.rank - 1 = ",
          inner.dims(),
          " and each dimension must be 1 "
          "or equal"));
    }
    for (int64_t i = 0; i < inner.num_elements(); ++i) {
      int64_t rest = i, src = 0, stride = 1;
      for (int d = inner.dims() - 1; d >= 0; --d) {
        const int64_t coord = rest % inner.dim_size(d);
        rest /= inner.dim_size(d);
        const int fd = d - offset;
        if (fd < 0) continue;
        if (fill.dim_size(fd) != 1) src += coord * stride;
        stride *= fill.dim_size(fd);
      }
      CopyBlock(fill, src, &block, i, 1);
    }
    return block;
  }

  std::vector<std::string> types_;
};

class RaggedTensorToSparseOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int ragged_rank = ctx->num_inputs() - 1;
    const Tensor& values = ctx->input(ragged_rank);
    // Each level's splits, checked as TF checks them.
    std::vector<std::vector<int64_t>> splits(ragged_rank);
    for (int k = 0; k < ragged_rank; ++k) {
      TW_ASSIGN_OR_RETURN(splits[k],
                          IntVector(ctx->input(k), absl::StrCat("rt_nested_splits[", k, "]")));
      const std::vector<int64_t>& s = splits[k];
      if (s.empty()) return absl::InvalidArgumentError("ragged splits may not be empty.");
      if (s[0] != 0) return absl::InvalidArgumentError("First value of ragged splits must be 0.");
      for (size_t i = 1; i < s.size(); ++i) {
        if (s[i] < s[i - 1]) {
          return absl::InvalidArgumentError(
              absl::StrCat("Ragged splits should be non decreasing, but we got ", s[i - 1],
                           " followed by ", s[i]));
        }
      }
      const int64_t children = k + 1 < ragged_rank
                                   ? static_cast<int64_t>(ctx->input(k + 1).NumElements()) - 1
                                   : (values.dims() > 0 ? values.dim_size(0) : -1);
      if (s.back() != children) {
        return absl::InvalidArgumentError(
            "Final value of ragged splits must match the length the corresponding ragged "
            "values.");
      }
    }
    // The ragged coordinates of each row of `values`, level by level.
    const int64_t width = ragged_rank + 1;
    std::vector<int64_t> coords(static_cast<size_t>(splits[0].size() - 1));
    for (size_t r = 0; r < coords.size(); ++r) coords[r] = static_cast<int64_t>(r);
    std::vector<int64_t> dense_shape = {static_cast<int64_t>(coords.size())};
    for (int k = 0; k < ragged_rank; ++k) {
      const std::vector<int64_t>& s = splits[k];
      const int64_t have = k + 1;  // coordinates per row so far
      std::vector<int64_t> next(static_cast<size_t>(s.back() * (have + 1)));
      int64_t longest = 0;
      for (size_t r = 0; r + 1 < s.size(); ++r) {
        longest = std::max(longest, s[r + 1] - s[r]);
        for (int64_t j = s[r]; j < s[r + 1]; ++j) {
          std::copy_n(coords.begin() + static_cast<int64_t>(r) * have, have,
                      next.begin() + j * (have + 1));
          next[j * (have + 1) + have] = j - s[r];
        }
      }
      coords = std::move(next);
      dense_shape.push_back(longest);
    }
    int64_t inner = 1;
    for (int d = 1; d < values.dims(); ++d) {
      inner *= values.dim_size(d);
      dense_shape.push_back(values.dim_size(d));
    }
    const int64_t rank = width + std::max(values.dims() - 1, 0);
    const int64_t n = values.NumElements();
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({n, rank})));
    int64_t* out = indices->data<int64_t>();
    for (int64_t i = 0; i < n; ++i, out += rank) {
      const int64_t row = inner == 0 ? 0 : i / inner;
      std::copy_n(coords.begin() + row * width, width, out);
      int64_t rest = inner == 0 ? 0 : i % inner;
      for (int d = values.dims() - 1; d >= 1; --d) {
        out[width + d - 1] = rest % values.dim_size(d);
        rest /= values.dim_size(d);
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor flat, values.Reshaped(TensorShape({n})));
    TW_RETURN_IF_ERROR(ctx->set_output(1, flat));
    TW_ASSIGN_OR_RETURN(
        Tensor * shape,
        ctx->allocate_output(2, TensorShape({static_cast<int64_t>(dense_shape.size())})));
    std::copy(dense_shape.begin(), dense_shape.end(), shape->data<int64_t>());
    return absl::OkStatus();
  }
};

// RaggedGather (tf.gather of a RaggedTensor's rows): rows `indices` of the
// ragged tensor `params` (PARAMS_RAGGED_RANK nested splits over dense
// values), as a ragged tensor whose outer dimensions are indices' (uniform
// splits for all but its last) and whose inner ones are params'. TF's
// checks, in its order, and messages; splits whose end points past the next
// level's rows are refused (TF reads past them).
class RaggedGatherOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int ragged = ctx->num_inputs() - 2;
    const Tensor& values = ctx->input(ragged);
    const Tensor& indices_t = ctx->input(ragged + 1);
    std::vector<std::vector<int64_t>> splits(ragged);
    for (int k = 0; k < ragged; ++k) {
      TW_ASSIGN_OR_RETURN(splits[k], IntVector(ctx->input(k), "params_nested_splits"));
    }
    const int64_t num_params = static_cast<int64_t>(splits[0].size()) - 1;
    std::vector<int64_t> indices(indices_t.NumElements());  // of any rank
    for (size_t i = 0; i < indices.size(); ++i) {
      indices[i] = indices_t.dtype() == DT_INT32 ? indices_t.data<int32_t>()[i]
                                                 : indices_t.data<int64_t>()[i];
    }
    for (size_t i = 0; i < indices.size(); ++i) {
      if (indices[i] < 0 || indices[i] >= num_params) {
        return absl::InvalidArgumentError(
            absl::StrCat("indices", IndexString(indices_t.shape(), static_cast<int64_t>(i)), " = ",
                         indices[i], " is not in [0, ", num_params, ")"));
      }
    }
    if (values.dims() == 0) return absl::InvalidArgumentError("params.rank must be nonzero");
    for (int k = 0; k < ragged; ++k) {
      const std::vector<int64_t>& s = splits[k];
      // The rows of the next level (its splits' rows, or the values).
      const int64_t children =
          k + 1 < ragged ? static_cast<int64_t>(splits[k + 1].size()) - 1 : values.dim_size(0);
      if (s.empty()) return absl::InvalidArgumentError("Ragged splits may not be empty");
      if (s[0] < 0) return absl::InvalidArgumentError("Ragged splits must be non-negative");
      if (s.back() > children) {
        return absl::InvalidArgumentError("Ragged splits must not point past values");
      }
      for (size_t i = 1; i < s.size(); ++i) {
        if (s[i - 1] > s[i]) return absl::InvalidArgumentError("Ragged splits must be sorted");
      }
    }
    const int outer = std::max(indices_t.dims() - 1, 0);
    const int num_splits = indices_t.dims() - 1 + ragged;
    if (num_splits != ctx->num_outputs() - 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "OUTPUT_RAGGED_RANK is ", ctx->num_outputs() - 1, " but indices of rank ",
          indices_t.dims(), " gathered from ", ragged, " ragged dimensions give ", num_splits));
    }
    // Sizes first (the allocator refuses outputs past the memory limits,
    // where TF's vectors would throw): indices' own dimensions but the last
    // give uniform splits; each gathered level as many entries as the rows
    // the gathered rows span there.
    const auto too_large = [&] {
      return absl::InvalidArgumentError(absl::StrCat(
          "RaggedGather of indices ", indices_t.shape().DebugString(), " is too large"));
    };
    std::vector<int64_t> rows(num_splits, 0);  // each output's rows
    int64_t uniform = 1;
    for (int d = 0; d < outer; ++d) {
      if (uniform >
          std::numeric_limits<int64_t>::max() / std::max<int64_t>(indices_t.dim_size(d), 1)) {
        return too_large();
      }
      uniform *= indices_t.dim_size(d);
      rows[d] = uniform;
    }
    int64_t num_values = 0;
    for (const int64_t index : indices) {
      int64_t start = index, limit = index + 1;
      for (int k = 0; k < ragged; ++k) {
        const int o = k + indices_t.dims() - 1;
        if (o >= 0) {
          if (rows[o] > std::numeric_limits<int64_t>::max() - (limit - start)) return too_large();
          rows[o] += limit - start;
        }
        start = splits[k][start];
        limit = splits[k][limit];
      }
      if (num_values > std::numeric_limits<int64_t>::max() - (limit - start)) return too_large();
      num_values += limit - start;
    }
    std::vector<Tensor*> out(num_splits);
    for (int i = 0; i < num_splits; ++i) {
      if (rows[i] == std::numeric_limits<int64_t>::max()) return too_large();
      TW_ASSIGN_OR_RETURN(out[i], ctx->allocate_output(i, TensorShape({rows[i] + 1})));
    }
    std::vector<int64_t> dims(values.shape().dim_sizes().begin(), values.shape().dim_sizes().end());
    dims[0] = num_values;
    TW_ASSIGN_OR_RETURN(const TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out_values, ctx->allocate_output(num_splits, shape));

    // Then the splits and values, as TF's kernel writes them.
    const bool splits32 = ctx->input(0).dtype() == DT_INT32;
    std::vector<int64_t> filled(num_splits, 0), last(num_splits, 0);
    const auto put = [&](int i, int64_t v) {
      if (splits32) {
        out[i]->data<int32_t>()[filled[i]++] = static_cast<int32_t>(v);
      } else {
        out[i]->data<int64_t>()[filled[i]++] = v;
      }
      last[i] = v;
    };
    for (int i = 0; i < num_splits; ++i) put(i, 0);
    for (int d = 0; d < outer; ++d) {
      const int64_t length = indices_t.dim_size(d + 1);
      if (length != 0 && rows[d] > std::numeric_limits<int64_t>::max() / length) return too_large();
      for (int64_t i = 1; i <= rows[d]; ++i) put(d, i * length);
    }
    const int64_t row = values.dim_size(0) == 0 ? 0 : values.NumElements() / values.dim_size(0);
    int64_t at = 0;
    for (const int64_t index : indices) {
      int64_t start = index, limit = index + 1;
      for (int k = 0; k < ragged; ++k) {
        const std::vector<int64_t>& s = splits[k];
        const int o = k + indices_t.dims() - 1;
        if (o >= 0) {
          const int64_t delta = last[o] - s[start];
          for (int64_t j = start; j < limit; ++j) put(o, s[j + 1] + delta);
        }
        start = s[start];
        limit = s[limit];
      }
      CopyBlock(values, start * row, out_values, at, (limit - start) * row);
      at += (limit - start) * row;
    }
    return absl::OkStatus();
  }

 private:
  // "[i, j, ...]": the coordinates of flat element `i` of `shape`.
  static std::string IndexString(const TensorShape& shape, int64_t i) {
    std::vector<int64_t> coords(shape.dims());
    for (int d = shape.dims() - 1; d >= 0; --d) {
      coords[d] = i % shape.dim_size(d);
      i /= shape.dim_size(d);
    }
    return absl::StrCat("[", absl::StrJoin(coords, ","), "]");
  }
};

}  // namespace

TW_REGISTER_KERNELS(ragged_ops) {
  RegisterKernel(KernelDefBuilder("RaggedTensorToSparse").Device(kDeviceCpu),
                 MakeFactory<RaggedTensorToSparseOp>());
  // Every dtype whose elements are plain bytes, and strings.
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT8, DT_INT16, DT_INT32,
                     DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_BOOL, DT_STRING}) {
    RegisterKernel(
        KernelDefBuilder("RaggedTensorToTensor").Device(kDeviceCpu).TypeConstraint("T", t),
        MakeFactory<RaggedTensorToTensorOp>());
    RegisterKernel(KernelDefBuilder("RaggedGather").Device(kDeviceCpu).TypeConstraint("Tvalues", t),
                   MakeFactory<RaggedGatherOp>());
  }
}

}  // namespace towerflow
