// DecodeWav and EncodeWav on core/wav.h, with TF's semantics: DecodeWav's
// desired_channels repeats the file's last channel (or drops channels) and
// desired_samples pads with zeros (or cuts), as TF's kernel.
#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/wav.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

class DecodeWavOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("desired_channels", &desired_channels_));
    TW_RETURN_IF_ERROR(c.GetAttr("desired_samples", &desired_samples_));
    if (desired_channels_ < -1 || desired_samples_ < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("desired_channels and desired_samples must be -1 or non-negative, got ",
                       desired_channels_, " and ", desired_samples_));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& contents = ctx->input(0);
    if (contents.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("contents must be scalar, got shape ", contents.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(wav::Audio audio, wav::Decode(contents.data<std::string>()[0]));
    const int64_t channels = desired_channels_ == -1 ? audio.channels : desired_channels_;
    const int64_t samples = desired_samples_ == -1 ? audio.frames : desired_samples_;
    if (audio.sample_rate > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("sample_rate ", audio.sample_rate, " does not fit int32"));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({samples, channels})));
    float* dst = out->data<float>();
    for (int64_t s = 0; s < samples; ++s) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t source = std::min<int64_t>(c, audio.channels - 1);
        dst[s * channels + c] =
            s < audio.frames ? audio.samples[s * audio.channels + source] : 0.0f;
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * rate, ctx->allocate_output(1, TensorShape({})));
    *rate->data<int32_t>() = static_cast<int32_t>(audio.sample_rate);
    return absl::OkStatus();
  }

 private:
  int64_t desired_channels_ = -1, desired_samples_ = -1;
};

class EncodeWavOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& audio = ctx->input(0);
    const Tensor& rate = ctx->input(1);
    if (audio.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("audio must be 2-dimensional", audio.shape().DebugString()));
    }
    if (rate.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input sample_rate should be a scalar tensor, got ",
                       rate.shape().DebugString(), " instead."));
    }
    if (audio.NumElements() >= std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError("Cannot encode audio with >= max int32 elements");
    }
    TW_ASSIGN_OR_RETURN(std::string wav, wav::Encode(audio.data<float>(), *rate.data<int32_t>(),
                                                     audio.dim_size(1), audio.dim_size(0)));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({})));
    *out->data<std::string>() = std::move(wav);
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(audio_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("DecodeWav"), MakeFactory<DecodeWavOp>());
  RegisterKernel(cpu("EncodeWav"), MakeFactory<EncodeWavOp>());
}

}  // namespace
}  // namespace towerflow
