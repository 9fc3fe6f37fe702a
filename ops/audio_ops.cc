// Audio: DecodeWav and EncodeWav (16-bit PCM WAV, core/wav.h; kernels in
// kernels/cpu/audio_ops.cc), as tf.audio's.
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"

namespace towerflow {
namespace {

TW_REGISTER_OP("DecodeWav")
    .Input("contents: string")
    .Output("audio: float")
    .Output("sample_rate: int32")
    .Attr("desired_channels: int = -1")
    .Attr("desired_samples: int = -1")
    .Doc("The samples of a 16-bit PCM WAV as floats in [-1, 1), [samples, channels].")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape contents;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &contents));
      int64_t channels = -1, samples = -1;
      TW_RETURN_IF_ERROR(c->GetAttr("desired_channels", &channels));
      TW_RETURN_IF_ERROR(c->GetAttr("desired_samples", &samples));
      c->set_output(0,
                    PartialTensorShape({samples < 0 ? -1 : samples, channels < 0 ? -1 : channels}));
      c->set_output(1, PartialTensorShape({}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("EncodeWav")
    .Input("audio: float")
    .Input("sample_rate: int32")
    .Output("contents: string")
    .Doc("[samples, channels] floats as a 16-bit PCM WAV.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape audio, rate;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &audio));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &rate));
      c->set_output(0, PartialTensorShape({}));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
