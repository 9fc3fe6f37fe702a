// The checkpoint ops of TensorFlow's Saver: SaveV2, RestoreV2 and
// MergeV2Checkpoints in TF's V2 format (framework/tensor_bundle.h), and the
// string ops its graphs name files with (ShardedFilename, StringJoin; TF 2's
// StaticRegexFullMatch is in text_ops.cc), and StringToHashBucketFast
// (FarmHash's).
#include <farmhash.h>
#include <unistd.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_bundle.h"

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

// StringToHashBucketFast(input) with attr num_buckets: FarmHash's
// Fingerprint64 of each string modulo num_buckets (TF's, so the buckets of
// a vocabulary's out-of-vocabulary strings agree with TF's).
class StringToHashBucketFastOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("num_buckets", &buckets_));
    if (buckets_ < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_buckets must be at least 1, got ", buckets_));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const std::string* s = in.data<std::string>();
    int64_t* y = out->data<int64_t>();
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      y[i] = static_cast<int64_t>(util::Fingerprint64(s[i].data(), s[i].size()) %
                                  static_cast<uint64_t>(buckets_));
    }
    return absl::OkStatus();
  }

 private:
  int64_t buckets_ = 1;
};

TW_REGISTER_KERNELS(io_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("SaveV2"), MakeFactory<SaveV2Op>());
  RegisterKernel(cpu("RestoreV2"), MakeFactory<RestoreV2Op>());
  RegisterKernel(cpu("MergeV2Checkpoints"), MakeFactory<MergeV2CheckpointsOp>());
  RegisterKernel(cpu("ShardedFilename"), MakeFactory<ShardedFilenameOp>());
  RegisterKernel(cpu("StringJoin"), MakeFactory<StringJoinOp>());
  RegisterKernel(cpu("StringToHashBucketFast"), MakeFactory<StringToHashBucketFastOp>());
}

}  // namespace
}  // namespace towerflow
