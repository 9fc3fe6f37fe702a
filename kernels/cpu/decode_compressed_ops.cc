// DecodeCompressed (tf.io.decode_compressed: each string inflated from
// ZLIB or GZIP, or passed through) and DecodeJSONExample
// (tf.io.decode_json_example: a tf.Example in protobuf's JSON mapping to
// its binary form), with TF's outputs and messages.
//
// Where TF differs from what it should do, Towerflow refuses: a stream cut
// short is DataLoss (TF returns what it inflated), and the inflated bytes
// meet the session's host memory budget before they are held.
#include <zlib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/memory_limits.h"
#include "google/protobuf/util/json_util.h"
#include "proto/example.pb.h"

namespace towerflow {
namespace {

// `in` inflated (a GZIP member or a ZLIB stream; bytes after its end are
// ignored, as TF's); an empty input is an empty output.
absl::StatusOr<std::string> Inflate(const std::string& in, bool gzip, const MemoryLimits& limits) {
  std::string out;
  if (in.empty()) return out;
  z_stream z{};
  if (inflateInit2(&z, gzip ? 16 + MAX_WBITS : MAX_WBITS) != Z_OK) {
    return absl::InternalError("inflateInit2 failed");
  }
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  constexpr size_t kChunk = 256 << 10;
  int ret = Z_OK;
  absl::Status status;
  while (ret != Z_STREAM_END) {
    status = CheckHostBudget(kChunk, limits, "an inflated string");
    if (!status.ok()) break;
    const size_t had = out.size();
    out.resize(had + kChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + had);
    z.avail_out = static_cast<uInt>(kChunk);
    ret = inflate(&z, Z_NO_FLUSH);
    out.resize(had + kChunk - z.avail_out);
    if (ret == Z_BUF_ERROR || (ret == Z_OK && z.avail_in == 0 && z.avail_out > 0)) {
      status =
          absl::DataLossError(absl::StrCat("the ", gzip ? "GZIP" : "ZLIB", " stream ends after ",
                                           in.size(), " bytes, before its end marker"));
      break;
    }
    if (ret != Z_OK && ret != Z_STREAM_END) {
      status = absl::DataLossError(absl::StrCat("inflate() failed with error ", ret, ": ",
                                                z.msg != nullptr ? z.msg : "(no message)"));
      break;
    }
  }
  inflateEnd(&z);
  if (!status.ok()) return status;
  return out;
}

class DecodeCompressedOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string type;
    TW_RETURN_IF_ERROR(c.GetAttr("compression_type", &type));
    if (type == "ZLIB" || type == "GZIP") {
      compression_ = type;
    } else if (type == "ZSTD") {
      return absl::UnimplementedError(
          "DecodeCompressed: ZSTD is not supported (ZLIB, GZIP or no compression)");
    } else if (!type.empty()) {
      return absl::InvalidArgumentError("Only ZLIB, ZSTD, GZIP or NONE are supported compressions");
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& bytes = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, bytes.shape()));
    for (int64_t i = 0; i < bytes.NumElements(); ++i) {
      const std::string& in = bytes.data<std::string>()[i];
      if (compression_.empty()) {
        out->data<std::string>()[i] = in;
        continue;
      }
      TW_ASSIGN_OR_RETURN(out->data<std::string>()[i],
                          Inflate(in, compression_ == "GZIP", ctx->device()->memory_limits()));
    }
    return absl::OkStatus();
  }

 private:
  std::string compression_;  // empty: none
};

class DecodeJsonExampleOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& json = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, json.shape()));
    google::protobuf::util::JsonParseOptions options;
    for (int64_t i = 0; i < json.NumElements(); ++i) {
      Example example;
      const auto parsed = google::protobuf::util::JsonStringToMessage(json.data<std::string>()[i],
                                                                      &example, options);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Error while parsing JSON: ",
                         std::string(parsed.message().data(), parsed.message().size())));
      }
      out->data<std::string>()[i] = example.SerializeAsString();
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(decode_compressed_ops) {
  RegisterKernel(KernelDefBuilder("DecodeCompressed").Device(kDeviceCpu),
                 MakeFactory<DecodeCompressedOp>());
  RegisterKernel(KernelDefBuilder("DecodeJSONExample").Device(kDeviceCpu),
                 MakeFactory<DecodeJsonExampleOp>());
}

}  // namespace
}  // namespace towerflow
