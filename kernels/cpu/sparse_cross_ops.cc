// Feature crosses: SparseCross (tf.feature_column.crossed_column,
// tf.sparse.cross_hashed in TF 1), SparseCrossV2 (tf.sparse.cross) and
// SparseCrossHashed (Keras's HashedCrossing). Each batch row crosses every
// feature of each input column with every feature of the others (the last
// column fastest), sparse columns first, as TF's kernels do; a string cross
// joins the features with a separator, a hashed one chains fingerprints
// with FingerprintCat64. TF's numbers to the bit, its quirks included: a
// sparse row's features are the consecutive entries naming that row (rows
// met out of order are not seen), and SparseCrossHashed hashes an int64
// sparse feature's low four bytes (TF's sizeof of the dtype enum), while
// its unsalted dense int64 features go in as they are.
#include <farmhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/string_hash.h"

namespace towerflow {
namespace {

enum class Cross { kV1, kV2, kHashed };

// One input column: a SparseTensor's values with each batch row's first
// entry and count, or a dense [batch, features] matrix.
struct Column {
  const Tensor* values = nullptr;
  bool dense = false;
  const int64_t* start = nullptr;  // [batch], sparse only
  const int64_t* count = nullptr;  // [batch], sparse only

  int64_t Count(int64_t b) const { return dense ? values->dim_size(1) : count[b]; }
  int64_t At(int64_t b, int64_t n) const {
    return dense ? b * values->dim_size(1) + n : start[b] + n;
  }
  bool strings() const { return values->dtype() == DT_STRING; }
  const std::string& String(int64_t b, int64_t n) const {
    return values->data<std::string>()[At(b, n)];
  }
  int64_t Int(int64_t b, int64_t n) const { return values->data<int64_t>()[At(b, n)]; }
};

// TF's ValidateInput, its checks and messages in its order; `internal` is
// SparseCross's internal_type (DT_INVALID for the others, which skip the
// type checks). TF prints the dtypes as their enum numbers.
absl::Status Validate(absl::Span<const Tensor* const> indices,
                      absl::Span<const Tensor* const> values,
                      absl::Span<const Tensor* const> shapes, absl::Span<const Tensor* const> dense,
                      DataType internal, int64_t* batch) {
  const bool strings_only = internal == DT_STRING;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i]->dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input indices should be a matrix but received shape ",
                       indices[i]->shape().DebugString(), " at position ", i));
    }
    if (indices[i]->dim_size(1) != 2) {
      return absl::InvalidArgumentError(absl::StrCat("Expected D2 of index to be 2 got ",
                                                     indices[i]->dim_size(1), " at position ", i));
    }
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (strings_only && values[i]->dtype() == DT_INT64) {
      return absl::InvalidArgumentError(absl::StrCat("Input values should be of internal type ",
                                                     static_cast<int>(internal), " but received ",
                                                     static_cast<int>(values[i]->dtype())));
    }
    if (values[i]->dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input values should be a vector but received shape ",
                       values[i]->shape().DebugString(), " at position ", i));
    }
    if (indices[i]->dim_size(0) != values[i]->dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat("Expected size of values to be ",
                                                     indices[i]->dim_size(0), " got ",
                                                     values[i]->dim_size(0), " at position ", i));
    }
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i]->dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input shapes should be a vector but received shape ",
                       shapes[i]->shape().DebugString(), " at position ", i));
    }
    if (shapes[i]->NumElements() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("shape should imply a 2D tensor, but got ",
                                                     shapes[i]->shape().DebugString(),
                                                     " at position ", i));
    }
  }
  for (size_t i = 0; i < dense.size(); ++i) {
    if (strings_only && dense[i]->dtype() == DT_INT64) {
      return absl::InvalidArgumentError(absl::StrCat("Dense inputs should be of internal type ",
                                                     static_cast<int>(internal), " but received ",
                                                     static_cast<int>(dense[i]->dtype())));
    }
    if (dense[i]->dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dense inputs should be a matrix but received shape ",
                       dense[i]->shape().DebugString(), " at position ", i));
    }
  }
  *batch = !shapes.empty()  ? shapes[0]->data<int64_t>()[0]
           : !dense.empty() ? dense[0]->dim_size(0)
                            : 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int64_t got = shapes[i]->data<int64_t>()[0];
    if (got != *batch) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected batch size ", *batch, " got ", got, " at position ", i));
    }
  }
  for (size_t i = 0; i < dense.size(); ++i) {
    if (dense[i]->dim_size(0) != *batch) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected batch size ", *batch, " got ", dense[i]->dim_size(0), " at dense tensor ", i));
    }
  }
  // TF would size its per-row tables by a negative batch.
  if (*batch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected a non-negative batch size, got ", *batch));
  }
  return absl::OkStatus();
}

template <Cross kCross>
class SparseCrossOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("N", &n_));
    TW_RETURN_IF_ERROR(c.GetAttr("dense_types", &dense_types_));
    if constexpr (kCross == Cross::kV1) {
      TW_RETURN_IF_ERROR(c.GetAttr("num_buckets", &buckets_));
      int64_t key = 0;
      TW_RETURN_IF_ERROR(c.GetAttr("hash_key", &key));
      key_ = static_cast<uint64_t>(key);
      TW_RETURN_IF_ERROR(c.GetAttr("internal_type", &internal_));
      DataType out;
      TW_RETURN_IF_ERROR(c.GetAttr("out_type", &out));
      hashed_ = out == DT_INT64;  // TF picks its kernel by out_type alone
    }
    hashed_ = hashed_ || kCross == Cross::kHashed;
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const int64_t n = n_, m = static_cast<int64_t>(dense_types_.size());
    std::vector<const Tensor*> indices, values, shapes, dense;
    for (int64_t i = 0; i < n; ++i) {
      indices.push_back(&ctx->input(i));
      values.push_back(&ctx->input(n + i));
      shapes.push_back(&ctx->input(2 * n + i));
    }
    for (int64_t i = 0; i < m; ++i) dense.push_back(&ctx->input(3 * n + i));
    int64_t batch = 0;
    TW_RETURN_IF_ERROR(Validate(indices, values, shapes, dense,
                                kCross == Cross::kV1 ? internal_ : DT_INVALID, &batch));
    const int extra = static_cast<int>(3 * n + m);
    std::string separator = "_X_";
    int64_t buckets = buckets_;
    bool strong = false;
    uint64_t salt[2] = {0, 0};
    if constexpr (kCross == Cross::kV2) {
      const Tensor& sep = ctx->input(extra);
      if (sep.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input separator should be a scalar. Received: ", sep.DebugString()));
      }
      separator = *sep.data<std::string>();
    }
    if constexpr (kCross == Cross::kHashed) {
      const Tensor& buckets_t = ctx->input(extra);
      const Tensor& strong_t = ctx->input(extra + 1);
      const Tensor& salt_t = ctx->input(extra + 2);
      if (buckets_t.dims() != 0 || strong_t.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("num_buckets and strong_hash must be scalars, got shapes ",
                         buckets_t.shape().DebugString(), " and ", strong_t.shape().DebugString()));
      }
      buckets = *buckets_t.data<int64_t>();
      strong = *strong_t.data<bool>();
      if (salt_t.NumElements() != 2) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Input \"salt\" must have length 2 but has length ", salt_t.NumElements()));
      }
      salt[0] = static_cast<uint64_t>(salt_t.data<int64_t>()[0]);
      salt[1] = static_cast<uint64_t>(salt_t.data<int64_t>()[1]);
    }

    // Each sparse column's rows: the run of consecutive entries naming
    // that row, where the previous row's run ended (TF's walk). The tables
    // (each sparse column's starts and counts, then where each row's
    // crosses start in the output) are a tensor, so the session's memory
    // limits see them.
    TW_ASSIGN_OR_RETURN(Tensor table,
                        ctx->allocate_temp(DT_INT64, TensorShape({2 * n + 1, batch + 1})));
    int64_t* tables = table.data<int64_t>();
    std::vector<Column> columns(n + m);
    for (int64_t i = 0; i < n; ++i) {
      int64_t* start = tables + 2 * i * (batch + 1);
      int64_t* count = start + batch + 1;
      const int64_t* idx = indices[i]->data<int64_t>();
      const int64_t rows = indices[i]->dim_size(0);
      int64_t row = 0;
      for (int64_t b = 0; b < batch; ++b) {
        start[b] = row;
        while (row < rows && idx[2 * row] == b) ++row;
        count[b] = row - start[b];
      }
      columns[i] = {values[i], false, start, count};
    }
    for (int64_t i = 0; i < m; ++i) columns[n + i] = {dense[i], true};

    int64_t* first = tables + 2 * n * (batch + 1);
    first[0] = 0;
    int64_t widest = 0;
    for (int64_t b = 0; b < batch; ++b) {
      int64_t crosses = 1;
      for (const Column& c : columns) crosses = MultiplyWithoutOverflow(crosses, c.Count(b));
      if (crosses < 0 || crosses > std::numeric_limits<int64_t>::max() - first[b]) {
        return absl::InvalidArgumentError(
            absl::StrCat("The feature crosses of rows 0 to ", b, " are more than fit in int64"));
      }
      widest = std::max(widest, crosses);
      first[b + 1] = first[b] + crosses;
    }
    const int64_t total = first[batch];
    TW_ASSIGN_OR_RETURN(Tensor * out_indices, ctx->allocate_output(0, TensorShape({total, 2})));
    TW_ASSIGN_OR_RETURN(Tensor * out_values, ctx->allocate_output(1, TensorShape({total})));
    TW_ASSIGN_OR_RETURN(Tensor * out_shape, ctx->allocate_output(2, TensorShape({2})));
    out_shape->data<int64_t>()[0] = batch;
    out_shape->data<int64_t>()[1] = widest;

    int64_t* idx = out_indices->data<int64_t>();
    std::vector<int64_t> pick(columns.size());
    for (int64_t b = 0; b < batch; ++b) {
      std::fill(pick.begin(), pick.end(), 0);
      for (int64_t k = 0; k < first[b + 1] - first[b]; ++k) {
        const int64_t at = first[b] + k;
        idx[2 * at] = b;
        idx[2 * at + 1] = k;
        if (hashed_) {
          out_values->data<int64_t>()[at] = Hash(columns, b, pick, buckets, strong, salt);
        } else {
          out_values->data<std::string>()[at] = Join(columns, b, pick, separator);
        }
        // The next combination, the last column fastest.
        for (int64_t c = static_cast<int64_t>(columns.size()) - 1; c >= 0; --c) {
          if (++pick[c] < columns[c].Count(b)) break;
          pick[c] = 0;
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  static std::string Join(const std::vector<Column>& columns, int64_t b,
                          const std::vector<int64_t>& pick, const std::string& separator) {
    std::string out;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out += separator;
      if (columns[c].strings()) {
        out += columns[c].String(b, pick[c]);
      } else {
        out += std::to_string(columns[c].Int(b, pick[c]));
      }
    }
    return out;
  }

  // A feature's fingerprint, as TF's column classes give it.
  uint64_t Feature(const Column& c, int64_t b, int64_t n, bool strong,
                   const uint64_t salt[2]) const {
    if (c.strings()) {
      const std::string& s = c.String(b, n);
      return strong ? SipHash24(salt[0], salt[1], s) : util::Fingerprint64(s.data(), s.size());
    }
    const int64_t v = c.Int(b, n);
    if (kCross != Cross::kHashed || (c.dense && !strong)) return static_cast<uint64_t>(v);
    char low[4];  // TF hashes sizeof(DataType) bytes of the value
    std::memcpy(low, &v, sizeof(low));
    return strong ? SipHash24(salt[0], salt[1], absl::string_view(low, sizeof(low)))
                  : util::Fingerprint64(low, sizeof(low));
  }

  int64_t Hash(const std::vector<Column>& columns, int64_t b, const std::vector<int64_t>& pick,
               int64_t buckets, bool strong, const uint64_t salt[2]) const {
    // V1 starts from its hash_key; SparseCrossHashed from the first feature.
    size_t c = 0;
    uint64_t h = key_;
    if (kCross == Cross::kHashed && !columns.empty()) {
      h = Feature(columns[0], b, pick[0], strong, salt);
      c = 1;
    }
    for (; c < columns.size(); ++c) {
      h = FingerprintCat64(h, Feature(columns[c], b, pick[c], strong, salt));
    }
    const uint64_t modulus = buckets > 0
                                 ? static_cast<uint64_t>(buckets)
                                 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    return static_cast<int64_t>(h % modulus);
  }

  int64_t n_ = 0;
  DataTypeVector dense_types_;
  int64_t buckets_ = 0;
  uint64_t key_ = 0;
  DataType internal_ = DT_INVALID;
  bool hashed_ = false;
};

TW_REGISTER_KERNELS(sparse_cross_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("SparseCross"), MakeFactory<SparseCrossOp<Cross::kV1>>());
  RegisterKernel(cpu("SparseCrossV2"), MakeFactory<SparseCrossOp<Cross::kV2>>());
  RegisterKernel(cpu("SparseCrossHashed"), MakeFactory<SparseCrossOp<Cross::kHashed>>());
}

}  // namespace
}  // namespace towerflow
