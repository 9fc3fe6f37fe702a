// ParseExample and ParseExampleV2: a batch of serialized tf.Example protos
// into dense tensors ([batch] + dense_shape, a missing feature taking its
// default) and sparse ones (indices [n, 2], values [n], shape [batch,
// longest]), with TensorFlow's checks and messages; ParseSingleExample (one
// example, the keys as attrs, no batch dimension); SerializeTensor and
// ParseTensor (tf.io.serialize_tensor / parse_tensor).
#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/memory_limits.h"
#include "kernels/cpu/tensor_content.h"
#include "proto/example.pb.h"

namespace towerflow {
namespace {

// The values of `feature` as `dtype`, or nullopt-like failure when the
// feature holds another kind of list.
absl::Status CopyValues(const Feature& feature, DataType dtype, const std::string& key,
                        const std::string& example, std::vector<float>* floats,
                        std::vector<int64_t>* ints, std::vector<std::string>* strings) {
  const auto wrong = [&](absl::string_view want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Name: ", example, ", Feature: ", key, ".  Data types don't match. Expected type: ", want));
  };
  switch (dtype) {
    case DT_FLOAT:
      if (feature.kind_case() != Feature::kFloatList) return wrong("float");
      floats->assign(feature.float_list().value().begin(), feature.float_list().value().end());
      return absl::OkStatus();
    case DT_INT64:
      if (feature.kind_case() != Feature::kInt64List) return wrong("int64");
      ints->assign(feature.int64_list().value().begin(), feature.int64_list().value().end());
      return absl::OkStatus();
    default:
      if (feature.kind_case() != Feature::kBytesList) return wrong("string");
      strings->assign(feature.bytes_list().value().begin(), feature.bytes_list().value().end());
      return absl::OkStatus();
  }
}

size_t CountOf(DataType dtype, const std::vector<float>& f, const std::vector<int64_t>& i,
               const std::vector<std::string>& s) {
  return dtype == DT_FLOAT ? f.size() : dtype == DT_INT64 ? i.size() : s.size();
}

// Writes values [0, n) into `out` at element offset `at`.
void Put(Tensor* out, int64_t at, const std::vector<float>& f, const std::vector<int64_t>& i,
         const std::vector<std::string>& s) {
  switch (out->dtype()) {
    case DT_FLOAT:
      std::copy(f.begin(), f.end(), out->data<float>() + at);
      break;
    case DT_INT64:
      std::copy(i.begin(), i.end(), out->data<int64_t>() + at);
      break;
    default:
      std::copy(s.begin(), s.end(), out->data<std::string>() + at);
      break;
  }
}

void PutFrom(Tensor* out, int64_t at, const Tensor& from) {
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

// ParseExample (v1: keys as lists of scalars, serialized a vector),
// ParseExampleV2 (keys as vectors, serialized a vector or a scalar; ragged
// features are not supported) and ParseSingleExample (keys as attrs,
// serialized a scalar, no names input).
enum class ParseForm { kV1, kV2, kSingle };

class ParseExampleOp : public OpKernel {
 public:
  explicit ParseExampleOp(ParseForm form) : form_(form), v2_(form == ParseForm::kV2) {}

  absl::Status Init(const KernelConstruction& c) override {
    const char* op = v2_                           ? "ParseExampleV2"
                     : form_ == ParseForm::kSingle ? "ParseSingleExample"
                                                   : "ParseExample";
    TW_RETURN_IF_ERROR(c.GetAttr(form_ == ParseForm::kV1 ? "Nsparse" : "num_sparse", &num_sparse_));
    TW_RETURN_IF_ERROR(c.GetAttr("sparse_types", &sparse_types_));
    TW_RETURN_IF_ERROR(c.GetAttr("Tdense", &dense_types_));
    if (form_ == ParseForm::kSingle) {
      num_dense_ = static_cast<int64_t>(dense_types_.size());
      TW_RETURN_IF_ERROR(c.GetAttr("sparse_keys", &sparse_keys_));
      TW_RETURN_IF_ERROR(c.GetAttr("dense_keys", &dense_keys_));
      if (static_cast<int64_t>(sparse_keys_.size()) != num_sparse_ ||
          static_cast<int64_t>(dense_keys_.size()) != num_dense_) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": ", sparse_keys_.size(), " sparse_keys for num_sparse ", num_sparse_, " and ",
            dense_keys_.size(), " dense_keys for ", num_dense_, " Tdense types"));
      }
    } else if (v2_) {
      num_dense_ = static_cast<int64_t>(dense_types_.size());
      DataTypeVector ragged;
      TW_RETURN_IF_ERROR(c.GetAttr("ragged_value_types", &ragged));
      if (!ragged.empty()) {
        return absl::UnimplementedError(
            "ParseExampleV2: ragged features (tf.io.RaggedFeature) are not supported");
      }
    } else {
      TW_RETURN_IF_ERROR(c.GetAttr("Ndense", &num_dense_));
    }
    std::vector<PartialTensorShape> shapes;
    TW_RETURN_IF_ERROR(c.GetAttr("dense_shapes", &shapes));
    if (static_cast<int64_t>(shapes.size()) != num_dense_ ||
        static_cast<int64_t>(dense_types_.size()) != num_dense_ ||
        static_cast<int64_t>(sparse_types_.size()) != num_sparse_) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": Tdense and dense_shapes (and the sparse count and sparse_types) disagree"));
    }
    for (const PartialTensorShape& s : shapes) {
      absl::StatusOr<TensorShape> full = TensorShape::FromDims(s.dim_sizes());
      if (s.dims() < 0 || !full.ok()) {
        return absl::UnimplementedError(absl::StrCat(
            op, ": dense shape ", s.DebugString(),
            " is not fully defined (variable-length dense features are not supported)"));
      }
      dense_shapes_.push_back(*full);
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    const bool single = form_ == ParseForm::kSingle;
    if (single && serialized.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected serialized to be a scalar, got shape: ", serialized.shape().DebugString()));
    }
    const Tensor no_names(DT_STRING, TensorShape({0}));
    const Tensor& names = single ? no_names : ctx->input(1);
    // v2 takes a scalar: one example, outputs without the batch dimension.
    const bool scalar = single || (v2_ && serialized.dims() == 0);
    if (serialized.dims() != 1 && !scalar) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected serialized to be a ", v2_ ? "scalar or vector" : "vector",
                       ", got shape: ", serialized.shape().DebugString()));
    }
    const int64_t batch = serialized.NumElements();
    if (names.NumElements() != 0 && names.NumElements() != batch) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected len(names) == len(serialized), but got: ", names.NumElements(),
                       " vs. ", batch));
    }
    const int ns = static_cast<int>(num_sparse_), nd = static_cast<int>(num_dense_);
    std::vector<std::string> sparse_keys, dense_keys;
    int first_default = 0;
    if (single) {
      sparse_keys = sparse_keys_;
      dense_keys = dense_keys_;
      first_default = 1;
    } else if (v2_) {
      TW_RETURN_IF_ERROR(KeyVector(ctx->input(2), ns, "sparse_keys", &sparse_keys));
      TW_RETURN_IF_ERROR(KeyVector(ctx->input(3), nd, "dense_keys", &dense_keys));
      if (ctx->input(4).NumElements() != 0) {
        return absl::UnimplementedError(
            "ParseExampleV2: ragged features (ragged_keys) are not supported");
      }
      first_default = 5;
    } else {
      for (int i = 0; i < ns + nd; ++i) {
        const Tensor& key = ctx->input(2 + i);
        if (key.NumElements() != 1 || key.dtype() != DT_STRING) {
          return absl::InvalidArgumentError(absl::StrCat(i < ns ? "sparse" : "dense",
                                                         "_keys must be string scalars, got ",
                                                         key.shape().DebugString()));
        }
        (i < ns ? sparse_keys : dense_keys).push_back(*key.data<std::string>());
      }
      first_default = 2 + ns + nd;
    }
    std::vector<const Tensor*> defaults(nd);
    for (int i = 0; i < nd; ++i) {
      defaults[i] = &ctx->input(first_default + i);
      const int64_t n = defaults[i]->NumElements();
      if (n != 0 && n != dense_shapes_[i].num_elements()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dense_defaults[", i, "] has ", n, " elements; the dense shape ",
            dense_shapes_[i].DebugString(), " needs ", dense_shapes_[i].num_elements()));
      }
    }

    std::vector<Example> examples(batch);
    for (int64_t b = 0; b < batch; ++b) {
      if (!examples[b].ParseFromString(serialized.data<std::string>()[b])) {
        return absl::InvalidArgumentError(absl::StrCat("Could not parse example input, value: '",
                                                       serialized.data<std::string>()[b], "'"));
      }
    }
    const auto example_name = [&](int64_t b) {
      return names.NumElements() == 0 ? std::string("<unknown>") : names.data<std::string>()[b];
    };

    std::vector<float> f;
    std::vector<int64_t> ints;
    std::vector<std::string> s;
    for (int d = 0; d < nd; ++d) {
      std::vector<int64_t> dims;
      if (!scalar) dims.push_back(batch);
      for (int64_t dim : dense_shapes_[d].dim_sizes()) dims.push_back(dim);
      TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(dims));
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(3 * ns + d, out_shape));
      const int64_t per = dense_shapes_[d].num_elements();
      for (int64_t b = 0; b < batch; ++b) {
        const auto& features = examples[b].features().feature();
        auto it = features.find(dense_keys[d]);
        if (it == features.end()) {
          if (defaults[d]->NumElements() == 0) {
            return absl::InvalidArgumentError(absl::StrCat(
                "Name: ", example_name(b), ", Feature: ", dense_keys[d], " (data type: ",
                DataTypeString(dense_types_[d]), ") is required but could not be found."));
          }
          PutFrom(out, b * per, *defaults[d]);
          continue;
        }
        TW_RETURN_IF_ERROR(
            CopyValues(it->second, dense_types_[d], dense_keys[d], example_name(b), &f, &ints, &s));
        const size_t n = CountOf(dense_types_[d], f, ints, s);
        if (static_cast<int64_t>(n) != per) {
          return absl::InvalidArgumentError(
              absl::StrCat("Name: ", example_name(b), ", Key: ", dense_keys[d], ", Index: ", b,
                           ".  Number of values != expected.  values size: ", n,
                           " but output shape: ", dense_shapes_[d].DebugString()));
        }
        Put(out, b * per, f, ints, s);
      }
    }

    // Sparse indices are [example, position], or [position] for a scalar.
    const int64_t rank = scalar ? 1 : 2;
    for (int sp = 0; sp < ns; ++sp) {
      // Pass 1: counts; pass 2: fill.
      int64_t total = 0, longest = 0;
      std::vector<int64_t> counts(batch, 0);
      for (int64_t b = 0; b < batch; ++b) {
        const auto& features = examples[b].features().feature();
        auto it = features.find(sparse_keys[sp]);
        if (it == features.end()) continue;
        TW_RETURN_IF_ERROR(CopyValues(it->second, sparse_types_[sp], sparse_keys[sp],
                                      example_name(b), &f, &ints, &s));
        counts[b] = static_cast<int64_t>(CountOf(sparse_types_[sp], f, ints, s));
        total += counts[b];
        longest = std::max(longest, counts[b]);
      }
      TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(sp, TensorShape({total, rank})));
      TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(ns + sp, TensorShape({total})));
      TW_ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(2 * ns + sp, TensorShape({rank})));
      if (!scalar) shape->data<int64_t>()[0] = batch;
      shape->data<int64_t>()[rank - 1] = longest;
      int64_t at = 0;
      for (int64_t b = 0; b < batch; ++b) {
        if (counts[b] == 0) continue;
        const auto& features = examples[b].features().feature();
        TW_RETURN_IF_ERROR(CopyValues(features.at(sparse_keys[sp]), sparse_types_[sp],
                                      sparse_keys[sp], example_name(b), &f, &ints, &s));
        Put(values, at, f, ints, s);
        for (int64_t j = 0; j < counts[b]; ++j) {
          int64_t* index = indices->data<int64_t>() + rank * (at + j);
          if (!scalar) index[0] = b;
          index[rank - 1] = j;
        }
        at += counts[b];
      }
    }
    return absl::OkStatus();
  }

 private:
  // ParseExampleV2's keys: a string vector of `n` keys.
  static absl::Status KeyVector(const Tensor& t, int n, const char* what,
                                std::vector<std::string>* keys) {
    if (t.dtype() != DT_STRING || t.dims() != 1 || t.NumElements() != n) {
      return absl::InvalidArgumentError(absl::StrCat("Expected ", what, " to be a vector of ", n,
                                                     " strings, got ", DataTypeString(t.dtype()),
                                                     " ", t.shape().DebugString()));
    }
    keys->assign(t.data<std::string>(), t.data<std::string>() + n);
    return absl::OkStatus();
  }

  const ParseForm form_;
  const bool v2_;
  int64_t num_sparse_ = 0, num_dense_ = 0;
  std::vector<std::string> sparse_keys_, dense_keys_;  // ParseSingleExample's attrs
  DataTypeVector sparse_types_, dense_types_;
  std::vector<TensorShape> dense_shapes_;
};

// SerializeTensor: the tensor's TensorProto bytes (numbers as
// tensor_content, strings as string_val, as TF writes them); ParseTensor:
// back, checked against out_type, with TF's decoding rules and messages.
class SerializeTensorOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<std::string>() = AsProtoTensorContent(ctx->input(0)).SerializeAsString();
    return absl::OkStatus();
  }
};

class ParseTensorOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("out_type", &type_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    if (serialized.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected `serialized` to be a scalar, got shape: ", serialized.shape().DebugString()));
    }
    const std::string& bytes = *serialized.data<std::string>();
    TensorProto proto;
    if (!proto.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Could not parse `serialized` as TensorProto, base64: ", absl::Base64Escape(bytes)));
    }
    // A few bytes may declare a huge shape: the session's limits first.
    absl::StatusOr<TensorShape> shape = TensorShape::FromProto(proto.tensor_shape());
    if (shape.ok() && proto.dtype() != DT_INVALID && TensorElementSize(proto.dtype()) > 0) {
      TW_RETURN_IF_ERROR(CheckTensorBytes(proto.dtype(), *shape, ctx->device()->memory_limits()));
      TW_RETURN_IF_ERROR(CheckHostBudget(
          shape->num_elements() * static_cast<int64_t>(TensorElementSize(proto.dtype())),
          ctx->device()->memory_limits(), "a parsed tensor"));
    }
    absl::StatusOr<Tensor> parsed = Tensor::FromProto(proto);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot parse tensor from proto: ", parsed.status().message()));
    }
    if (parsed->dtype() != type_) {
      return absl::InvalidArgumentError(absl::StrCat("Type mismatch between parsed tensor (",
                                                     DataTypeString(parsed->dtype()),
                                                     ") and dtype (", DataTypeString(type_), ")"));
    }
    TW_RETURN_IF_ERROR(ctx->set_output(0, *std::move(parsed)));
    return absl::OkStatus();
  }

 private:
  DataType type_ = DT_INVALID;
};

TW_REGISTER_KERNELS(parsing_ops) {
  RegisterKernel(KernelDefBuilder("SerializeTensor").Device(kDeviceCpu),
                 MakeFactory<SerializeTensorOp>());
  RegisterKernel(KernelDefBuilder("ParseTensor").Device(kDeviceCpu), MakeFactory<ParseTensorOp>());
  RegisterKernel(KernelDefBuilder("ParseExample").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseExampleOp>(ParseForm::kV1); });
  RegisterKernel(KernelDefBuilder("ParseExampleV2").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseExampleOp>(ParseForm::kV2); });
  RegisterKernel(KernelDefBuilder("ParseSingleExample").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseExampleOp>(ParseForm::kSingle); });
}

}  // namespace
}  // namespace towerflow
