// What the tf.Example and tf.SequenceExample parsers share
// (kernels/cpu/example_parsing.h).
#include "kernels/cpu/example_parsing.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {
namespace example_parsing {
namespace {

// A Feature without a kind (`Feature()`) holds no values of any type.
bool HasKind(const Feature& f) { return f.kind_case() != Feature::KIND_NOT_SET; }

bool KindIs(const Feature& f, DataType dtype) {
  switch (f.kind_case()) {
    case Feature::kFloatList:
      return dtype == DT_FLOAT;
    case Feature::kInt64List:
      return dtype == DT_INT64;
    case Feature::kBytesList:
      return dtype == DT_STRING;
    default:
      return true;
  }
}

const char* KindName(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kFloatList:
      return "float";
    case Feature::kInt64List:
      return "int64";
    default:
      return "string";
  }
}

int64_t NumValues(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kFloatList:
      return f.float_list().value_size();
    case Feature::kInt64List:
      return f.int64_list().value_size();
    case Feature::kBytesList:
      return f.bytes_list().value_size();
    default:
      return 0;
  }
}

// Writes f's values (of out's dtype, checked) into `out` from element `at`.
void CopyValues(const Feature& f, Tensor* out, int64_t at) {
  switch (f.kind_case()) {
    case Feature::kFloatList:
      std::copy(f.float_list().value().begin(), f.float_list().value().end(),
                out->data<float>() + at);
      break;
    case Feature::kInt64List:
      std::copy(f.int64_list().value().begin(), f.int64_list().value().end(),
                out->data<int64_t>() + at);
      break;
    case Feature::kBytesList:
      std::copy(f.bytes_list().value().begin(), f.bytes_list().value().end(),
                out->data<std::string>() + at);
      break;
    default:
      break;
  }
}

// Elements [at, at + n) of `out` set to the scalar `pad`, or to zero.
void Pad(Tensor* out, int64_t at, int64_t n, const Tensor* pad) {
  switch (out->dtype()) {
    case DT_FLOAT:
      std::fill_n(out->data<float>() + at, n, pad ? *pad->data<float>() : 0.0f);
      break;
    case DT_INT64:
      std::fill_n(out->data<int64_t>() + at, n, pad ? *pad->data<int64_t>() : int64_t{0});
      break;
    default:
      std::fill_n(out->data<std::string>() + at, n, pad ? *pad->data<std::string>() : "");
      break;
  }
}

void CopyTensor(Tensor* out, int64_t at, const Tensor& from) {
  switch (out->dtype()) {
    case DT_FLOAT:
      std::copy_n(from.data<float>(), from.NumElements(), out->data<float>() + at);
      break;
    case DT_INT64:
      std::copy_n(from.data<int64_t>(), from.NumElements(), out->data<int64_t>() + at);
      break;
    default:
      std::copy_n(from.data<std::string>(), from.NumElements(), out->data<std::string>() + at);
      break;
  }
}

struct Where {
  Form form;
  const std::string& name;
  const std::string& key;
  int64_t index;

  std::string Prefix() const {
    if (form == Form::kSingle) return absl::StrCat("Key: ", key, ".  ");
    return absl::StrCat("Name: ", name, ", Key: ", key, ", Index: ", index, ".  ");
  }
};

absl::Status TypeError(const Where& w, DataType want, const Feature& f, bool dense) {
  const std::string expected = DataTypeString(want);
  switch (w.form) {
    case Form::kContext:
      return absl::InvalidArgumentError(
          absl::StrCat("Name: ", w.name, ", Context feature: ", w.key,
                       ".  Data types don't match. Expected type: ", expected));
    case Form::kFeatureList:
      return absl::InvalidArgumentError(
          absl::StrCat("Name: ", w.name, ", Feature list: ", w.key, ", Index: ", w.index,
                       ".  Data types don't match. Expected type: ", expected));
    default:
      return absl::InvalidArgumentError(
          dense && w.form == Form::kBatch
              ? absl::StrCat(w.Prefix(), "Data types don't match. Data type: ", KindName(f),
                             " but expected type: ", expected)
              : absl::StrCat(w.Prefix(), "Data types don't match. Expected type: ", expected,
                             ", Actual type: ", KindName(f)));
  }
}

absl::Status CountError(const Where& w, DataType dtype, int64_t n, const TensorShape& shape) {
  if (w.form == Form::kContext || w.form == Form::kFeatureList) {
    return absl::InvalidArgumentError(
        absl::StrCat("Name: ", w.name, ", Key: ", w.key, ", Index: ", w.index,
                     ".  Number of values != expected.  values size: ", n,
                     " but output shape: ", shape.DebugString()));
  }
  return absl::InvalidArgumentError(absl::StrCat(w.Prefix(), "Number of ", DataTypeString(dtype),
                                                 " values != expected.  Values size: ", n,
                                                 " but output shape: ", shape.DebugString()));
}

absl::Status MissingError(const std::string& name, const std::string& key, DataType dtype) {
  return absl::InvalidArgumentError(absl::StrCat("Name: ", name, ", Feature: ", key,
                                                 " (data type: ", DataTypeString(dtype),
                                                 ") is required but could not be found."));
}

// Per example, the Features (rows) a sparse or ragged output takes values
// from: an Example's one feature, or a feature list's steps.
using Rows = std::vector<std::vector<const Feature*>>;

// [example,] [step,] position indices, values and the dense shape.
absl::Status WriteSparse(KernelContext* ctx, int indices_slot, int values_slot, int shape_slot,
                         const Rows& rows, bool batched, bool steps) {
  int64_t total = 0, longest = 0, most_steps = 0;
  for (const auto& example : rows) {
    most_steps = std::max(most_steps, static_cast<int64_t>(example.size()));
    for (const Feature* f : example) {
      total += NumValues(*f);
      longest = std::max(longest, NumValues(*f));
    }
  }
  const int64_t rank = int64_t{batched} + int64_t{steps} + 1;
  TW_ASSIGN_OR_RETURN(Tensor * indices,
                      ctx->allocate_output(indices_slot, TensorShape({total, rank})));
  TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(values_slot, TensorShape({total})));
  TW_ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(shape_slot, TensorShape({rank})));
  int64_t* dims = shape->data<int64_t>();
  if (batched) *dims++ = static_cast<int64_t>(rows.size());
  if (steps) *dims++ = most_steps;
  *dims = longest;
  int64_t at = 0;
  for (size_t b = 0; b < rows.size(); ++b) {
    for (size_t step = 0; step < rows[b].size(); ++step) {
      const Feature& f = *rows[b][step];
      CopyValues(f, values, at);
      for (int64_t j = 0, n = NumValues(f); j < n; ++j, ++at) {
        int64_t* index = indices->data<int64_t>() + rank * at;
        if (batched) *index++ = static_cast<int64_t>(b);
        if (steps) *index++ = static_cast<int64_t>(step);
        *index = j;
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
void FillSplits(Tensor* splits, const std::vector<int64_t>& counts) {
  T* out = splits->data<T>();
  if (splits->dims() == 0) {  // a scalar input's: TF's shape, no rows
    *out = 0;
    return;
  }
  out[0] = 0;
  for (size_t i = 0; i < counts.size(); ++i) out[i + 1] = out[i] + static_cast<T>(counts[i]);
}

absl::Status WriteSplits(KernelContext* ctx, int slot, DataType type,
                         const std::vector<int64_t>& counts, bool scalar) {
  TW_ASSIGN_OR_RETURN(
      Tensor * splits,
      ctx->allocate_output(
          slot, scalar ? TensorShape() : TensorShape({static_cast<int64_t>(counts.size()) + 1})));
  if (type == DT_INT32) {
    FillSplits<int32_t>(splits, counts);
  } else {
    FillSplits<int64_t>(splits, counts);
  }
  return absl::OkStatus();
}

// Ragged values with row splits per example (by values, or by steps then
// values for feature lists). A scalar input's splits are empty (Examples)
// or a scalar (SequenceExamples), as TF's.
absl::Status WriteRagged(KernelContext* ctx, int values_slot, int splits_slot, int inner_slot,
                         DataType split_type, const Rows& rows, bool batched, Form form) {
  int64_t total = 0;
  std::vector<int64_t> per_example, per_step;
  for (const auto& example : rows) {
    int64_t n = 0;
    for (const Feature* f : example) {
      n += NumValues(*f);
      per_step.push_back(NumValues(*f));
    }
    per_example.push_back(form == Form::kFeatureList ? static_cast<int64_t>(example.size()) : n);
    total += n;
  }
  TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(values_slot, TensorShape({total})));
  int64_t at = 0;
  for (const auto& example : rows) {
    for (const Feature* f : example) {
      CopyValues(*f, values, at);
      at += NumValues(*f);
    }
  }
  if (!batched && form != Form::kBatch && form != Form::kSingle) {
    TW_RETURN_IF_ERROR(WriteSplits(ctx, splits_slot, split_type, {}, /*scalar=*/true));
  } else if (!batched) {
    TW_ASSIGN_OR_RETURN(Tensor * splits, ctx->allocate_output(splits_slot, TensorShape({0})));
    (void)splits;
  } else {
    TW_RETURN_IF_ERROR(WriteSplits(ctx, splits_slot, split_type, per_example, false));
  }
  if (form == Form::kFeatureList) {
    TW_RETURN_IF_ERROR(WriteSplits(ctx, inner_slot, split_type, per_step, false));
  }
  return absl::OkStatus();
}

// Each example's feature `key`, or null where it has none.
std::vector<const Feature*> FeatureOf(const std::vector<const FeatureMap*>& maps,
                                      const std::string& key) {
  std::vector<const Feature*> out(maps.size(), nullptr);
  for (size_t b = 0; b < maps.size(); ++b) {
    if (maps[b] == nullptr) continue;
    auto it = maps[b]->find(key);
    if (it != maps[b]->end()) out[b] = &it->second;
  }
  return out;
}

// A dense feature of every example (`features[b]` null when missing):
// [batch] + shape, a missing one the default; or, for a variable-length
// shape [-1, ...], padded with the default to the most rows.
absl::Status WriteDense(KernelContext* ctx, int slot, const std::vector<const Feature*>& features,
                        const std::vector<std::string>& names, bool batched, Form form,
                        const std::string& key, DataType dtype, const PartialTensorShape& shape,
                        const Tensor& def) {
  const int64_t batch = static_cast<int64_t>(features.size());
  const bool variable = shape.dims() > 0 && shape.dim_size(0) < 0;
  TensorShape row;  // a variable-length feature's rows are its first dimension
  for (int i = variable ? 1 : 0; i < shape.dims(); ++i) row.AddDim(shape.dim_size(i));
  const int64_t stride = row.num_elements();
  int64_t most = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const Feature* f = features[b];
    if (f == nullptr || !HasKind(*f)) {
      if (!variable && def.NumElements() == 0) return MissingError(names[b], key, dtype);
      continue;
    }
    const Where where{form, names[b], key, b};
    if (!KindIs(*f, dtype)) return TypeError(where, dtype, *f, /*dense=*/true);
    const int64_t n = NumValues(*f);
    if (!variable) {
      if (n != stride) return CountError(where, dtype, n, row);
    } else if (stride == 0 ? n != 0 : n % stride != 0) {
      if (form == Form::kSingle) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Error while parsing feature with key ", key,
            ": number of elements should be divisible by ", stride, ", found ", n, " instead"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat(where.Prefix(), "Number of ", DataTypeString(dtype),
                       " values is not a multiple of stride length. Saw ", n,
                       " values but output shape is: ", shape.DebugString()));
    } else if (stride > 0) {
      most = std::max(most, n / stride);
    }
  }
  std::vector<int64_t> dims;
  if (batched) dims.push_back(batch);
  if (variable) dims.push_back(most);
  for (int64_t dim : row.dim_sizes()) dims.push_back(dim);
  TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(dims));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(slot, out_shape));
  const int64_t per = variable ? most * stride : stride;
  for (int64_t b = 0; b < batch; ++b) {
    const Feature* f = features[b];
    if (f != nullptr && HasKind(*f)) {
      CopyValues(*f, out, b * per);
      if (variable) Pad(out, b * per + NumValues(*f), per - NumValues(*f), &def);
    } else if (variable) {
      Pad(out, b * per, per, &def);
    } else {
      CopyTensor(out, b * per, def);
    }
  }
  return absl::OkStatus();
}

// A sparse or ragged feature's rows: each example's feature, type checked.
absl::Status FeatureRows(const std::vector<const Feature*>& features,
                         const std::vector<std::string>& names, Form form, const std::string& key,
                         DataType dtype, Rows* rows) {
  rows->assign(features.size(), {});
  for (size_t b = 0; b < features.size(); ++b) {
    const Feature* f = features[b];
    if (f == nullptr) continue;
    if (!KindIs(*f, dtype)) {
      return TypeError(Where{form, names[b], key, static_cast<int64_t>(b)}, dtype, *f, false);
    }
    (*rows)[b].push_back(f);
  }
  return absl::OkStatus();
}

// Each example's steps of feature list `key`, their types checked
// (`present[b]`: whether example b has the list).
absl::Status StepRows(const std::vector<const FeatureListMap*>& maps,
                      const std::vector<std::string>& names, const std::string& key, DataType dtype,
                      Rows* rows, std::vector<bool>* present = nullptr) {
  rows->assign(maps.size(), {});
  if (present != nullptr) present->assign(maps.size(), false);
  for (size_t b = 0; b < maps.size(); ++b) {
    if (maps[b] == nullptr) continue;
    auto it = maps[b]->find(key);
    if (it == maps[b]->end()) continue;
    if (present != nullptr) (*present)[b] = true;
    const FeatureList& list = it->second;
    for (int step = 0; step < list.feature_size(); ++step) {
      const Feature& f = list.feature(step);
      if (!KindIs(f, dtype)) {
        return TypeError(Where{Form::kFeatureList, names[b], key, step}, dtype, f, false);
      }
      (*rows)[b].push_back(&f);
    }
  }
  return absl::OkStatus();
}

// A dense feature list: [batch, most steps] + shape, zero-padded, and the
// steps of each example at `lengths_slot` (when the op has it).
absl::Status WriteListDense(KernelContext* ctx, int slot, int lengths_slot,
                            const std::vector<const FeatureListMap*>& maps,
                            const std::vector<std::string>& names, bool batched,
                            const std::string& key, DataType dtype, const PartialTensorShape& shape,
                            bool may_be_missing) {
  const int64_t batch = static_cast<int64_t>(maps.size());
  TensorShape row;
  for (int64_t dim : shape.dim_sizes()) row.AddDim(dim);
  Rows rows;
  std::vector<bool> present;
  TW_RETURN_IF_ERROR(StepRows(maps, names, key, dtype, &rows, &present));
  int64_t most = 0;
  for (int64_t b = 0; b < batch; ++b) {
    if (!present[b] && !may_be_missing) {
      return absl::InvalidArgumentError(
          absl::StrCat("Name: ", names[b], ", Feature list '", key,
                       "' is required but could not be found.  Did you mean to include it in "
                       "feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?"));
    }
    for (size_t step = 0; step < rows[b].size(); ++step) {
      const int64_t n = NumValues(*rows[b][step]);
      if (n != row.num_elements()) {
        return CountError(Where{Form::kFeatureList, names[b], key, static_cast<int64_t>(step)},
                          dtype, n, row);
      }
    }
    most = std::max(most, static_cast<int64_t>(rows[b].size()));
  }
  std::vector<int64_t> dims;
  if (batched) dims.push_back(batch);
  dims.push_back(most);
  for (int64_t dim : row.dim_sizes()) dims.push_back(dim);
  TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(dims));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(slot, out_shape));
  const int64_t stride = row.num_elements(), per = most * stride;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t steps = static_cast<int64_t>(rows[b].size());
    for (int64_t step = 0; step < steps; ++step) {
      CopyValues(*rows[b][step], out, b * per + step * stride);
    }
    Pad(out, b * per + steps * stride, per - steps * stride, nullptr);
  }
  if (lengths_slot < 0) return absl::OkStatus();
  TW_ASSIGN_OR_RETURN(
      Tensor * lengths,
      ctx->allocate_output(lengths_slot, batched ? TensorShape({batch}) : TensorShape()));
  for (int64_t b = 0; b < batch; ++b) {
    lengths->data<int64_t>()[b] = static_cast<int64_t>(rows[b].size());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseFeatureMaps(KernelContext* ctx, const std::vector<const FeatureMap*>& maps,
                              const std::vector<std::string>& names, bool batched, Form form,
                              const FeatureConfig& config, const Slots& slots) {
  for (size_t d = 0; d < config.dense_keys.size(); ++d) {
    TW_RETURN_IF_ERROR(WriteDense(ctx, slots.dense + static_cast<int>(d),
                                  FeatureOf(maps, config.dense_keys[d]), names, batched, form,
                                  config.dense_keys[d], config.dense_types[d],
                                  config.dense_shapes[d], *config.dense_defaults[d]));
  }
  const int num_sparse = static_cast<int>(config.sparse_keys.size());
  for (int sp = 0; sp < num_sparse; ++sp) {
    Rows rows;
    TW_RETURN_IF_ERROR(FeatureRows(FeatureOf(maps, config.sparse_keys[sp]), names, form,
                                   config.sparse_keys[sp], config.sparse_types[sp], &rows));
    TW_RETURN_IF_ERROR(WriteSparse(ctx, slots.sparse + sp, slots.sparse + num_sparse + sp,
                                   slots.sparse + 2 * num_sparse + sp, rows, batched, false));
  }
  const int num_ragged = static_cast<int>(config.ragged_keys.size());
  for (int r = 0; r < num_ragged; ++r) {
    Rows rows;
    TW_RETURN_IF_ERROR(FeatureRows(FeatureOf(maps, config.ragged_keys[r]), names, form,
                                   config.ragged_keys[r], config.ragged_value_types[r], &rows));
    TW_RETURN_IF_ERROR(WriteRagged(ctx, slots.ragged + r, slots.ragged + num_ragged + r, -1,
                                   config.ragged_split_types[r], rows, batched, form));
  }
  return absl::OkStatus();
}

absl::Status ParseFeatureLists(KernelContext* ctx, const std::vector<const FeatureListMap*>& maps,
                               const std::vector<std::string>& names, bool batched,
                               const FeatureConfig& config, const Slots& slots) {
  for (size_t d = 0; d < config.dense_keys.size(); ++d) {
    const std::string& key = config.dense_keys[d];
    const int i = static_cast<int>(d);
    TW_RETURN_IF_ERROR(
        WriteListDense(ctx, slots.dense + i, slots.dense_lengths < 0 ? -1 : slots.dense_lengths + i,
                       maps, names, batched, key, config.dense_types[d], config.dense_shapes[d],
                       config.missing_assumed_empty.contains(key)));
  }
  const int num_sparse = static_cast<int>(config.sparse_keys.size());
  for (int sp = 0; sp < num_sparse; ++sp) {
    Rows rows;
    TW_RETURN_IF_ERROR(
        StepRows(maps, names, config.sparse_keys[sp], config.sparse_types[sp], &rows));
    TW_RETURN_IF_ERROR(WriteSparse(ctx, slots.sparse + sp, slots.sparse + num_sparse + sp,
                                   slots.sparse + 2 * num_sparse + sp, rows, batched, true));
  }

  const int num_ragged = static_cast<int>(config.ragged_keys.size());
  for (int r = 0; r < num_ragged; ++r) {
    Rows rows;
    TW_RETURN_IF_ERROR(
        StepRows(maps, names, config.ragged_keys[r], config.ragged_value_types[r], &rows));
    TW_RETURN_IF_ERROR(WriteRagged(ctx, slots.ragged + r, slots.ragged + num_ragged + r,
                                   slots.ragged + 2 * num_ragged + r, config.ragged_split_types[r],
                                   rows, batched, Form::kFeatureList));
  }
  return absl::OkStatus();
}

absl::Status CheckDenseShapes(const std::vector<PartialTensorShape>& shapes, bool variable_ok) {
  for (size_t i = 0; i < shapes.size(); ++i) {
    const PartialTensorShape& s = shapes[i];
    bool inner_known = s.dims() >= 0;
    for (int d = 1; inner_known && d < s.dims(); ++d) inner_known = s.dim_size(d) >= 0;
    if (!variable_ok) {
      if (!s.IsFullyDefined()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Shape ", s.DebugString(), " is not fully defined"));
      }
    } else if (!inner_known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dense_shapes[", i, "] has unknown rank or unknown inner dimensions: ", s.DebugString()));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDefaults(const FeatureConfig& config) {
  for (size_t d = 0; d < config.dense_defaults.size(); ++d) {
    const PartialTensorShape& s = config.dense_shapes[d];
    const Tensor& def = *config.dense_defaults[d];
    if (def.dtype() != config.dense_types[d]) {
      return absl::InvalidArgumentError(absl::StrCat("dense_defaults[", d, "] is ",
                                                     DataTypeString(def.dtype()), ", expected ",
                                                     DataTypeString(config.dense_types[d])));
    }
    if (s.dims() > 0 && s.dim_size(0) < 0) {
      if (def.NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dense_shape[", d, "] is a variable length shape: ", s.DebugString(),
            ", therefore def_value[", d, "] must contain a single element (the padding element)."));
      }
    } else if (def.NumElements() != 0 && def.NumElements() != s.num_elements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dense_defaults[", d, "] has ", def.NumElements(), " elements; the dense shape ",
          s.DebugString(), " needs ", s.num_elements()));
    }
  }
  return absl::OkStatus();
}

absl::Status KeyVector(const Tensor& t, int64_t n, const char* what,
                       std::vector<std::string>* keys) {
  if (t.dtype() != DT_STRING || t.dims() != 1 || t.NumElements() != n) {
    return absl::InvalidArgumentError(absl::StrCat("Expected ", what, " to be a vector of ", n,
                                                   " strings, got ", DataTypeString(t.dtype()), " ",
                                                   t.shape().DebugString()));
  }
  keys->assign(t.data<std::string>(), t.data<std::string>() + n);
  return absl::OkStatus();
}

absl::Status KeyScalars(const KernelContext& ctx, int first, int64_t n, const char* what,
                        std::vector<std::string>* keys) {
  keys->clear();
  for (int i = 0; i < n; ++i) {
    const Tensor& key = ctx.input(first + i);
    if (key.NumElements() != 1 || key.dtype() != DT_STRING) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be string scalars, got ", key.shape().DebugString()));
    }
    keys->push_back(*key.data<std::string>());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ExampleNames(const Tensor& names, int64_t batch,
                                                      const char* what) {
  if (names.NumElements() != 0 && names.NumElements() != batch) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected len(", what, ") == len(serialized), but got: ", names.NumElements(),
                     " vs. ", batch));
  }
  std::vector<std::string> out(batch, "<unknown>");
  if (names.NumElements() != 0)
    out.assign(names.data<std::string>(), names.data<std::string>() + batch);
  return out;
}

std::vector<const Tensor*> Defaults(const KernelContext& ctx, int first, size_t n) {
  std::vector<const Tensor*> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = &ctx.input(first + static_cast<int>(i));
  return out;
}

}  // namespace example_parsing
}  // namespace towerflow
