// DecodeWav and EncodeWav on core/wav.h, with TF's semantics: DecodeWav's
// desired_channels repeats the file's last channel (or drops channels) and
// desired_samples pads with zeros (or cuts), as TF's kernel.
//
// AudioSpectrogram and Mfcc, TF's speech front end (its spectrogram.cc,
// mfcc_mel_filterbank.cc, mfcc_dct.cc), in double as TF's:
// - each window of window_size samples (every stride) times the periodic
//   Hann window 0.5 - 0.5 cos(2 pi i / window_size), zero-padded to the next
//   power of two, through a real FFT (Eigen's; TF's is Ooura's, the same
//   transform); |X_k|^2 for k in [0, fft / 2], or its square root;
// - Mfcc: per frame, sqrt of each bin weighted into triangular mel bands
//   (mel = 1127 log(1 + f / 700), channel_count + 1 centres spaced evenly
//   between the limits, DC excluded as HTK), log(max(band, 1e-12)), then a
//   DCT-II with sqrt(2 / channels) scaling.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/wav.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "unsupported/Eigen/FFT"

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

class AudioSpectrogramOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("window_size", &window_));
    TW_RETURN_IF_ERROR(c.GetAttr("stride", &stride_));
    TW_RETURN_IF_ERROR(c.GetAttr("magnitude_squared", &squared_));
    if (window_ <= 1) {
      return absl::InvalidArgumentError(absl::StrCat("window_size must be > 1, got ", window_));
    }
    if (stride_ <= 0)
      return absl::InvalidArgumentError(absl::StrCat("stride must be > 0, got ", stride_));
    // TF's window is an int32; a window past 2^24 samples (17 minutes at
    // 16 kHz) is refused before its Hann table is made.
    if (window_ > (int64_t{1} << 24)) {
      return absl::InvalidArgumentError(
          absl::StrCat("window_size ", window_, " is too large (at most 2^24)"));
    }
    fft_ = 1;
    while (fft_ < window_) fft_ *= 2;
    hann_.resize(window_);
    const double pi = std::atan(1) * 4;
    for (int64_t i = 0; i < window_; ++i) {
      hann_[i] =
          0.5 - 0.5 * std::cos((2 * pi * static_cast<double>(i)) / static_cast<double>(window_));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    if (input.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 2-dimensional", input.shape().DebugString()));
    }
    const int64_t samples = input.dim_size(0), channels = input.dim_size(1);
    const int64_t frames = samples < window_ ? 0 : 1 + (samples - window_) / stride_;
    const int64_t bins = 1 + fft_ / 2;
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, TensorShape({channels, frames, bins})));
    if (out->NumElements() == 0) return absl::OkStatus();
    const float* x = input.data<float>();
    float* y = out->data<float>();
    ctx->intra_op_pool()->ParallelFor(
        channels * frames, fft_ * 20, [&](int64_t begin, int64_t end) {
          Eigen::FFT<double> fft;
          std::vector<double> frame(fft_, 0.0);
          std::vector<std::complex<double>> spectrum;
          for (int64_t r = begin; r < end; ++r) {
            const int64_t c = r / frames, f = r % frames;
            for (int64_t i = 0; i < window_; ++i) {
              frame[i] = static_cast<double>(x[(f * stride_ + i) * channels + c]) * hann_[i];
            }
            fft.fwd(spectrum, frame);
            float* row = y + r * bins;
            for (int64_t k = 0; k < bins; ++k) {
              const double re = spectrum[k].real(), im = spectrum[k].imag();
              const float power = static_cast<float>(re * re + im * im);
              row[k] = squared_ ? power : std::sqrt(power);
            }
          }
        });
    return absl::OkStatus();
  }

 private:
  int64_t window_ = 0, stride_ = 0, fft_ = 1;
  bool squared_ = false;
  std::vector<double> hann_;
};

class MfccOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("upper_frequency_limit", &upper_));
    TW_RETURN_IF_ERROR(c.GetAttr("lower_frequency_limit", &lower_));
    TW_RETURN_IF_ERROR(c.GetAttr("filterbank_channel_count", &bands_));
    TW_RETURN_IF_ERROR(c.GetAttr("dct_coefficient_count", &coefficients_));
    // The filterbank and the DCT table are sized by these attrs.
    if (bands_ > (int64_t{1} << 16) || coefficients_ > (int64_t{1} << 16)) {
      return absl::InvalidArgumentError(absl::StrCat("filterbank_channel_count ", bands_,
                                                     " and dct_coefficient_count ", coefficients_,
                                                     " must be at most 65536"));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& spectrogram = ctx->input(0);
    const Tensor& rate = ctx->input(1);
    if (spectrogram.dims() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("spectrogram must be 3-dimensional", spectrogram.shape().DebugString()));
    }
    if (rate.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input sample_rate should be a scalar tensor, got ",
                       rate.shape().DebugString(), " instead."));
    }
    const int64_t audio_channels = spectrogram.dim_size(0), frames = spectrogram.dim_size(1),
                  bins = spectrogram.dim_size(2);
    const int32_t sample_rate = *rate.data<int32_t>();
    Filterbank bank;
    if (!bank.Initialize(bins, sample_rate, bands_, lower_, upper_) || coefficients_ < 1 ||
        coefficients_ > bands_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Mfcc initialization failed for channel count ", bins, ", sample rate ",
                       sample_rate, " and filterbank_channel_count ", bands_));
    }
    // The DCT-II's cosines, sqrt(2 / N) cos(i pi (j + 1/2) / N).
    const double pi = std::atan(1) * 4, norm = std::sqrt(2.0 / static_cast<double>(bands_));
    std::vector<double> cosines(coefficients_ * bands_);
    for (int64_t i = 0; i < coefficients_; ++i) {
      for (int64_t j = 0; j < bands_; ++j) {
        cosines[i * bands_ + j] =
            norm * std::cos(static_cast<double>(i) * (pi / bands_) * (j + 0.5));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(
                                          0, TensorShape({audio_channels, frames, coefficients_})));
    const float* in = spectrogram.data<float>();
    float* y = out->data<float>();
    ctx->intra_op_pool()->ParallelFor(audio_channels * frames, bins * 10 + bands_ * coefficients_,
                                      [&](int64_t begin, int64_t end) {
                                        std::vector<double> mel(bands_);
                                        for (int64_t r = begin; r < end; ++r) {
                                          // A spectrogram too short for the top band: TF's
                                          // filterbank gives nothing and its DCT of nothing zeros.
                                          const bool empty = bins <= bank.end;
                                          if (!empty) bank.Apply(in + r * bins, &mel);
                                          for (int64_t i = 0; i < coefficients_; ++i) {
                                            double sum = 0;
                                            for (int64_t j = 0; !empty && j < bands_; ++j) {
                                              sum += cosines[i * bands_ + j] *
                                                     std::log(std::max(mel[j], 1e-12));
                                            }
                                            y[r * coefficients_ + i] = static_cast<float>(sum);
                                          }
                                        }
                                      });
    return absl::OkStatus();
  }

 private:
  // The triangular mel filterbank of TF's MfccMelFilterbank.
  struct Filterbank {
    static double Mel(double hz) { return 1127.0 * std::log1p(hz / 700.0); }

    bool Initialize(int64_t bins, double sample_rate, int64_t bands, double lower, double upper) {
      if (bands < 1 || sample_rate <= 0 || bins < 2 || lower < 0 || upper <= lower) return false;
      channels = bands;
      centres.resize(bands + 1);
      const double mel_low = Mel(lower), spacing = (Mel(upper) - mel_low) / (bands + 1);
      for (int64_t i = 0; i <= bands; ++i) centres[i] = mel_low + spacing * (i + 1);
      const double hz_per_bin = 0.5 * sample_rate / static_cast<double>(bins - 1);
      start = static_cast<int64_t>(1.5 + lower / hz_per_bin);
      end = static_cast<int64_t>(upper / hz_per_bin);
      band.assign(bins, -2);
      weight.assign(bins, 0.0);
      int64_t c = 0;
      for (int64_t i = 0; i < bins; ++i) {
        if (i < start || i > end) continue;
        const double mel = Mel(static_cast<double>(i) * hz_per_bin);
        while (c < bands && centres[c] < mel) ++c;
        band[i] = c - 1;
        weight[i] = band[i] >= 0
                        ? (centres[band[i] + 1] - mel) / (centres[band[i] + 1] - centres[band[i]])
                        : (centres[0] - mel) / (centres[0] - mel_low);
      }
      return true;
    }
    // `power`: one frame's squared magnitudes; REQUIRES: more than `end` bins.
    void Apply(const float* power, std::vector<double>* out) const {
      std::fill(out->begin(), out->end(), 0.0);
      for (int64_t i = start; i <= end; ++i) {
        const double magnitude = std::sqrt(static_cast<double>(power[i]));
        const double weighted = magnitude * weight[i];
        const int64_t c = band[i];
        if (c >= 0) (*out)[c] += weighted;
        if (c + 1 < channels) (*out)[c + 1] += magnitude - weighted;
      }
    }

    int64_t channels = 0, start = 0, end = 0;
    std::vector<double> centres, weight;
    std::vector<int64_t> band;
  };

  float upper_ = 4000, lower_ = 20;
  int64_t bands_ = 40, coefficients_ = 13;
};

TW_REGISTER_KERNELS(audio_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("DecodeWav"), MakeFactory<DecodeWavOp>());
  RegisterKernel(cpu("EncodeWav"), MakeFactory<EncodeWavOp>());
  RegisterKernel(cpu("AudioSpectrogram"), MakeFactory<AudioSpectrogramOp>());
  RegisterKernel(cpu("Mfcc"), MakeFactory<MfccOp>());
}

}  // namespace
}  // namespace towerflow
