// Audio: DecodeWav and EncodeWav (16-bit PCM WAV, core/wav.h), and the
// speech front end AudioSpectrogram and Mfcc (kernels in
// kernels/cpu/audio_ops.cc), as tf.audio's and TF's speech-commands graphs'.
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

TW_REGISTER_OP("AudioSpectrogram")
    .Input("input: float")
    .Output("spectrogram: float")
    .Attr("window_size: int")
    .Attr("stride: int")
    .Attr("magnitude_squared: bool = false")
    .Doc("Per channel of [samples, channels], the Hann-windowed FFT magnitudes of each window.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape input;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &input));
      int64_t window = 0, stride = 0;
      TW_RETURN_IF_ERROR(c->GetAttr("window_size", &window));
      TW_RETURN_IF_ERROR(c->GetAttr("stride", &stride));
      int64_t fft = 1;  // the next power of two, for windows the kernel takes
      while (fft < window && fft < (int64_t{1} << 24)) fft *= 2;
      const int64_t samples = input.dim_size(0);
      int64_t frames = -1;
      if (samples >= 0 && stride > 0)
        frames = samples < window ? 0 : 1 + (samples - window) / stride;
      c->set_output(0, PartialTensorShape({input.dim_size(1), frames, 1 + fft / 2}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("Mfcc")
    .Input("spectrogram: float")
    .Input("sample_rate: int32")
    .Output("output: float")
    .Attr("upper_frequency_limit: float = 4000")
    .Attr("lower_frequency_limit: float = 20")
    .Attr("filterbank_channel_count: int = 40")
    .Attr("dct_coefficient_count: int = 13")
    .Doc("Mel-frequency cepstral coefficients of each frame of a squared-magnitude spectrogram.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape spectrogram, rate;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 3, &spectrogram));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &rate));
      int64_t coefficients = 0;
      TW_RETURN_IF_ERROR(c->GetAttr("dct_coefficient_count", &coefficients));
      c->set_output(
          0, PartialTensorShape({spectrogram.dim_size(0), spectrogram.dim_size(1), coefficients}));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
