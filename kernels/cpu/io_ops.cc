// The checkpoint ops of TensorFlow's Saver: SaveV2, RestoreV2 and
// MergeV2Checkpoints in TF's V2 format (framework/tensor_bundle.h), and the
// string ops its graphs name files with (ShardedFilename, StringJoin; TF 2's
// StaticRegexFullMatch is in text_ops.cc), and StringToHashBucketFast
// (FarmHash's), StringToHashBucketStrong (SipHash-2-4) and the deprecated
// StringToHashBucket (TF's Hash64); and Fingerprint (tf.fingerprint,
// FarmHash's too).
#include <farmhash.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_bundle.h"
#include "kernels/cpu/string_hash.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

absl::StatusOr<std::string> ScalarString(const Tensor& t, absl::string_view what) {
  if (t.dtype() != DT_STRING || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a string scalar, got ",
                                                   DataTypeString(t.dtype()), " ",
                                                   t.shape().DebugString()));
  }
  return *t.data<std::string>();
}

// The prefix, names and shape_and_slices inputs shared by SaveV2 and
// RestoreV2, checked against the number of tensors.
struct SaveRestoreArgs {
  std::string prefix;
  absl::Span<const std::string> names;
};

absl::StatusOr<SaveRestoreArgs> GetArgs(KernelContext* ctx, int64_t num_tensors) {
  SaveRestoreArgs args;
  TW_ASSIGN_OR_RETURN(args.prefix, ScalarString(ctx->input(0), "prefix"));
  const Tensor& names = ctx->input(1);
  const Tensor& slices = ctx->input(2);
  if (names.dims() != 1 || slices.dims() != 1 || names.NumElements() != num_tensors ||
      slices.NumElements() != num_tensors) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor_names ", names.shape().DebugString(), " and shape_and_slices ",
        slices.shape().DebugString(), " must both be vectors of the ", num_tensors, " tensors"));
  }
  args.names = names.span<std::string>();
  for (int64_t i = 0; i < num_tensors; ++i) {
    const std::string& slice = slices.data<std::string>()[i];
    if (!slice.empty()) {
      return absl::UnimplementedError(
          absl::StrCat("tensor '", args.names[i], "' has shape_and_slices \"", slice,
                       "\": saving or restoring slices (partitioned variables) is not supported"));
    }
  }
  return args;
}

class SaveV2Op : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(SaveRestoreArgs args, GetArgs(ctx, ctx->num_inputs() - 3));
    TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleWriter> writer, BundleWriter::Create(args.prefix));
    for (size_t i = 0; i < args.names.size(); ++i) {
      TW_RETURN_IF_ERROR(writer->Add(args.names[i], ctx->input(3 + static_cast<int>(i))));
    }
    return writer->Finish();
  }
};

class RestoreV2Op : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(SaveRestoreArgs args, GetArgs(ctx, ctx->num_outputs()));
    TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(args.prefix));
    // Every tensor is read and checked before any output is set.
    std::vector<Tensor> values;
    for (size_t i = 0; i < args.names.size(); ++i) {
      TW_ASSIGN_OR_RETURN(Tensor t, reader->Read(args.names[i]));
      const DataType want = ctx->output_type(static_cast<int>(i));
      if (t.dtype() != want) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor '", args.names[i], "' of checkpoint ", args.prefix, " is ",
            DataTypeString(t.dtype()), ", but dtypes[", i, "] is ", DataTypeString(want)));
      }
      values.push_back(std::move(t));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      TW_RETURN_IF_ERROR(ctx->set_output(static_cast<int>(i), std::move(values[i])));
    }
    return absl::OkStatus();
  }
};

class MergeV2CheckpointsOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("delete_old_dirs", &delete_old_dirs_));
    return c.GetAttr("allow_missing_files", &allow_missing_files_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& sources = ctx->input(0);
    if (sources.dims() != 1 || sources.dtype() != DT_STRING) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint_prefixes must be a string vector, got ", sources.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(std::string destination, ScalarString(ctx->input(1), "destination_prefix"));
    std::vector<std::string> prefixes;
    for (const std::string& p : sources.span<std::string>()) {
      if (allow_missing_files_ && ::access(BundleIndexPath(p).c_str(), F_OK) != 0) continue;
      prefixes.push_back(p);
    }
    TW_RETURN_IF_ERROR(MergeBundles(prefixes, destination));
    if (delete_old_dirs_) {
      // TF removes each source's directory when it is now empty (the
      // sharded saver's "<prefix>_temp_<id>/"); a directory that still
      // holds something stays.
      for (const std::string& p : prefixes) {
        const size_t slash = p.rfind('/');
        if (slash != std::string::npos && slash > 0) ::rmdir(p.substr(0, slash).c_str());
      }
    }
    return absl::OkStatus();
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

class ShardedFilenameOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::string basename, ScalarString(ctx->input(0), "basename"));
    const Tensor& shard = ctx->input(1);
    const Tensor& num_shards = ctx->input(2);
    if (shard.NumElements() != 1 || num_shards.NumElements() != 1) {
      return absl::InvalidArgumentError("shard and num_shards must be scalars");
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<std::string>() = absl::StrFormat("%s-%05d-of-%05d", basename, *shard.data<int32_t>(),
                                                *num_shards.data<int32_t>());
    return absl::OkStatus();
  }
};

// Joins its inputs elementwise; scalars broadcast against the others, which
// must share one shape.
class StringJoinOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("separator", &separator_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TensorShape shape;
    bool have_shape = false;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() == 0) continue;
      if (have_shape && t.shape() != shape) {
        return absl::InvalidArgumentError(
            absl::StrCat("StringJoin inputs must be scalars or of one shape: ", shape.DebugString(),
                         " vs. ", t.shape().DebugString()));
      }
      shape = t.shape();
      have_shape = true;
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    std::vector<absl::string_view> parts(ctx->num_inputs());
    for (int64_t e = 0; e < out->NumElements(); ++e) {
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const Tensor& t = ctx->input(i);
        parts[i] = t.data<std::string>()[t.dims() == 0 ? 0 : e];
      }
      out->data<std::string>()[e] = absl::StrJoin(parts, separator_);
    }
    return absl::OkStatus();
  }

 private:
  std::string separator_;
};

// TF's Hash64 (tensorflow/core/lib/hash): MurmurHash64A with its seed
// 0xDECAFCAFFE, the hash of the deprecated StringToHashBucket.
uint64_t TfHash64(absl::string_view s) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ull;
  constexpr int r = 47;
  uint64_t h = 0xDECAFCAFFEull ^ (static_cast<uint64_t>(s.size()) * m);
  const size_t whole = s.size() / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t k = LoadLittle64(s.data() + i);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  if (whole < s.size()) {
    for (size_t i = s.size(); i-- > whole;) {
      h ^= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * (i - whole));
    }
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

// The StringToHashBucket ops: each string's hash modulo num_buckets. Fast:
// FarmHash's Fingerprint64 (TF's, so the buckets of a vocabulary's
// out-of-vocabulary strings agree with TF's); Strong: SipHash-2-4 under the
// key attr; Legacy: TF's Hash64.
enum class BucketHash { kFast, kStrong, kLegacy };

template <BucketHash kHash>
class StringToHashBucketOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("num_buckets", &buckets_));
    if (buckets_ < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_buckets must be at least 1, got ", buckets_));
    }
    if constexpr (kHash == BucketHash::kStrong) {
      TW_RETURN_IF_ERROR(c.GetAttr("key", &key_));
      if (key_.size() != 2) return absl::InvalidArgumentError("Key must have 2 elements");
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const std::string* s = in.data<std::string>();
    int64_t* y = out->data<int64_t>();
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      uint64_t hash;
      if constexpr (kHash == BucketHash::kFast) {
        hash = util::Fingerprint64(s[i].data(), s[i].size());
      } else if constexpr (kHash == BucketHash::kStrong) {
        hash = SipHash24(static_cast<uint64_t>(key_[0]), static_cast<uint64_t>(key_[1]), s[i]);
      } else {
        hash = TfHash64(s[i]);
      }
      y[i] = static_cast<int64_t>(hash % static_cast<uint64_t>(buckets_));
    }
    return absl::OkStatus();
  }

 private:
  int64_t buckets_ = 1;
  std::vector<int64_t> key_;
};

// Fingerprint: per slice along dimension 0, Fingerprint64 of its bytes; of
// a slice of several strings, Fingerprint64 of their fingerprints' bytes
// (TF's), stored little-endian.
class FingerprintOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& method = ctx->input(1);
    if (method.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("`method` should be a scalar string: ", method.shape().DebugString()));
    }
    const std::string& name = method.data<std::string>()[0];
    if (name != "farmhash64") {
      return absl::InvalidArgumentError(absl::StrCat("Unsupported fingerprint method: ", name));
    }
    if (data.dims() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("`data` should have at least one dimension: ", data.shape().DebugString()));
    }
    const int64_t rows = data.dim_size(0);
    const int64_t per_row = rows == 0 ? 0 : data.NumElements() / rows;
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({rows, 8})));
    uint8_t* o = out->data<uint8_t>();
    const auto store = [](uint64_t v, uint8_t* to) {
      for (int b = 0; b < 8; ++b) to[b] = static_cast<uint8_t>(v >> (8 * b));
    };
    if (data.dtype() == DT_STRING) {
      const std::string* s = data.data<std::string>();
      std::string joined(static_cast<size_t>(per_row) * 8, '\0');
      for (int64_t r = 0; r < rows; ++r) {
        if (per_row == 1) {
          store(util::Fingerprint64(s[r].data(), s[r].size()), o + r * 8);
          continue;
        }
        for (int64_t k = 0; k < per_row; ++k) {
          const std::string& one = s[r * per_row + k];
          store(util::Fingerprint64(one.data(), one.size()),
                reinterpret_cast<uint8_t*>(joined.data()) + k * 8);
        }
        store(util::Fingerprint64(joined.data(), joined.size()), o + r * 8);
      }
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(const size_t elem, PlainElementSize("Fingerprint", data.dtype()));
    const char* bytes = static_cast<const char*>(data.raw_data());
    const size_t row_bytes = static_cast<size_t>(per_row) * elem;
    for (int64_t r = 0; r < rows; ++r) {
      store(util::Fingerprint64(bytes + r * row_bytes, row_bytes), o + r * 8);
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(io_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("SaveV2"), MakeFactory<SaveV2Op>());
  RegisterKernel(cpu("RestoreV2"), MakeFactory<RestoreV2Op>());
  RegisterKernel(cpu("MergeV2Checkpoints"), MakeFactory<MergeV2CheckpointsOp>());
  RegisterKernel(cpu("ShardedFilename"), MakeFactory<ShardedFilenameOp>());
  RegisterKernel(cpu("StringJoin"), MakeFactory<StringJoinOp>());
  RegisterKernel(cpu("Fingerprint"), MakeFactory<FingerprintOp>());
  RegisterKernel(cpu("StringToHashBucketFast"),
                 MakeFactory<StringToHashBucketOp<BucketHash::kFast>>());
  RegisterKernel(cpu("StringToHashBucketStrong"),
                 MakeFactory<StringToHashBucketOp<BucketHash::kStrong>>());
  RegisterKernel(cpu("StringToHashBucket"),
                 MakeFactory<StringToHashBucketOp<BucketHash::kLegacy>>());
}

}  // namespace
}  // namespace towerflow
