// ScaleAndTranslate and ScaleAndTranslateGrad (ops/resample_ops.cc), with
// TF's pixels: the rows and the columns are resampled separately, each by
// "spans" computed once per dimension (Note [Spans]); an output is a float
// sum, weight by weight in span order as TF adds them.
//
// Note [Spans]
// Output pixel x of a dimension samples the input at
// s = (x + 0.5) / scale - translation / scale. Its span is the input pixels
// within the kernel's radius of s (the radius times 1 / scale when shrinking
// with antialias, so the kernel low-passes as it resamples), weighted by
// kernel((i + 0.5 - s) / kernel_scale) and normalised to sum 1. An output
// whose s falls outside [0, size] gets no span (zeros), as does one whose
// weights sum to about 0. The gradient's spans are the forward ones read the
// other way: for each input pixel, the outputs it fed and with what weight.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

constexpr float kPi = 3.14159265359f;

// The sampling kernels: weight at |distance| x, and radius.
enum class Kernel {
  kLanczos1,
  kLanczos3,
  kLanczos5,
  kGaussian,
  kBox,
  kTriangle,
  kKeysCubic,
  kMitchellCubic
};

absl::StatusOr<Kernel> ParseKernel(const std::string& name) {
  const std::string k = absl::AsciiStrToLower(name);
  if (k == "lanczos1") return Kernel::kLanczos1;
  if (k == "lanczos3") return Kernel::kLanczos3;
  if (k == "lanczos5") return Kernel::kLanczos5;
  if (k == "gaussian") return Kernel::kGaussian;
  if (k == "box") return Kernel::kBox;
  if (k == "triangle") return Kernel::kTriangle;
  if (k == "keyscubic") return Kernel::kKeysCubic;
  if (k == "mitchellcubic") return Kernel::kMitchellCubic;
  return absl::InvalidArgumentError(absl::StrCat("Unrecognized kernel type: ", name));
}

float Radius(Kernel k) {
  switch (k) {
    case Kernel::kLanczos3:
      return 3;
    case Kernel::kLanczos5:
      return 5;
    case Kernel::kGaussian:
      return 1.5f;
    case Kernel::kKeysCubic:
    case Kernel::kMitchellCubic:
      return 2;
    default:
      return 1;
  }
}

float Weight(Kernel k, float x) {
  x = std::abs(x);
  switch (k) {
    case Kernel::kLanczos1:
    case Kernel::kLanczos3:
    case Kernel::kLanczos5: {
      const float r = Radius(k);
      if (x > r) return 0;
      if (x <= 1e-3f) return 1;  // sin(x) / x at 0
      return r * std::sin(kPi * x) * std::sin(kPi * x / r) / (kPi * kPi * x * x);
    }
    case Kernel::kGaussian: {
      const float sigma = 1.5f / 3.0f;
      if (x >= 1.5f) return 0;
      return std::exp(-x * x / (2.0 * sigma * sigma));
    }
    case Kernel::kBox:
      return x < 0.5f ? 1.0f : x == 0.5f ? 0.5f : 0.0f;
    case Kernel::kTriangle:
      return x < 1.0f ? 1.0f - x : 0.0f;
    case Kernel::kKeysCubic:
      if (x >= 2.0f) return 0;
      if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
      return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    case Kernel::kMitchellCubic:
      if (x >= 2.0f) return 0;
      if (x >= 1.0f) return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
      return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
  }
  return 0;
}

// Output pixel x of a dimension is sum_j weights[x * size + j] *
// input[starts[x] + j] over the j < size with starts[x] + j < input size.
// The weights live in a tensor of the device's, so a size*count past its
// memory limits is ResourceExhausted, not a failed allocation.
struct Spans {
  int64_t size = 0;
  std::vector<int64_t> starts;
  Tensor storage;
  float* weights = nullptr;
};

absl::Status AllocateWeights(KernelContext* ctx, int64_t count, Spans* spans) {
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims({spans->size, count}));
  TW_ASSIGN_OR_RETURN(spans->storage, ctx->allocate_temp(DT_FLOAT, shape));
  spans->weights = spans->storage.data<float>();
  std::fill(spans->weights, spans->weights + shape.num_elements(), 0.0f);
  return absl::OkStatus();
}

absl::StatusOr<Spans> ForwardSpans(KernelContext* ctx, Kernel kernel, int64_t out_size,
                                   int64_t in_size, float scale, float translate, bool antialias) {
  const float inv_scale = 1.0 / scale;
  const float inv_translate = -inv_scale * translate;
  const float kernel_scale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const float reach = Radius(kernel) * kernel_scale;
  Spans spans;
  // (In double and clamped before any conversion: a scale of 1e-45 makes
  // the reach infinite, which TF converts to an integer regardless.)
  const double widest = 2 * std::ceil(static_cast<double>(reach)) + 1;
  spans.size = widest >= static_cast<double>(in_size) ? in_size : static_cast<int64_t>(widest);
  spans.starts.assign(out_size, 0);
  TW_RETURN_IF_ERROR(AllocateWeights(ctx, out_size, &spans));
  std::vector<float> weights;
  for (int64_t x = 0; x < out_size; ++x) {
    const float sample = (x + 0.5f) * inv_scale + inv_translate;
    // Outside the input (or NaN, from a NaN translation): no span.
    if (!(sample >= 0 && sample <= in_size)) continue;
    // Clamped as floats, so an infinite reach converts no infinity.
    const auto index = [&](float f) {
      return f <= 0                                 ? int64_t{0}
             : f >= static_cast<float>(in_size - 1) ? in_size - 1
                                                    : static_cast<int64_t>(f);
    };
    const int64_t start = index(std::ceil(sample - reach - 0.5f));
    const int64_t end = index(std::floor(sample + reach - 0.5f)) + 1;
    float total = 0;
    weights.clear();
    for (int64_t i = start; i < end; ++i) {
      const float w = Weight(kernel, std::abs((i + 0.5f - sample) * (1.0f / kernel_scale)));
      total += w;
      weights.push_back(w);
    }
    if (std::abs(total) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv_total = 1.0f / total;
      for (size_t j = 0; j < weights.size() && static_cast<int64_t>(j) < spans.size; ++j) {
        spans.weights[x * spans.size + j] = weights[j] * inv_total;
      }
    }
    spans.starts[x] = start;
  }
  return spans;
}

// The forward spans inverted: for each input pixel, the outputs it fed.
absl::StatusOr<Spans> GradSpans(KernelContext* ctx, const Spans& forward, int64_t out_size,
                                int64_t in_size) {
  struct Part {
    int64_t output;
    float weight;
  };
  std::vector<std::vector<Part>> parts(in_size);
  for (int64_t x = 0; x < out_size; ++x) {
    for (int64_t j = 0; j < forward.size; ++j) {
      const int64_t i = forward.starts[x] + j;
      const float w = forward.weights[x * forward.size + j];
      if (w != 0.0f && i < in_size) parts[i].push_back({x, w});
    }
  }
  Spans spans;
  for (auto& p : parts) {  // outputs in order (they are: x ascends)
    if (!p.empty()) spans.size = std::max(spans.size, p.back().output - p.front().output + 1);
  }
  spans.starts.assign(in_size, 0);
  TW_RETURN_IF_ERROR(AllocateWeights(ctx, in_size, &spans));
  for (int64_t i = 0; i < in_size; ++i) {
    if (parts[i].empty()) continue;
    spans.starts[i] = parts[i].front().output;
    for (const Part& p : parts[i]) {
      spans.weights[i * spans.size + p.output - spans.starts[i]] += p.weight;
    }
  }
  return spans;
}

// out[b] = columns(rows(in[b])): the row pass into `mid` [batch, out_h,
// in_w, c], then the column pass into `out` [batch, out_h, out_w, c].
template <typename T>
void Gather(KernelContext* ctx, const Spans& rows, const Spans& cols, const T* in, int64_t batch,
            int64_t in_h, int64_t in_w, int64_t channels, int64_t out_h, int64_t out_w, float* mid,
            float* out) {
  const int64_t in_row = in_w * channels, out_row = out_w * channels;
  ctx->intra_op_pool()->ParallelFor(
      batch * out_h, in_row * rows.size + out_row * cols.size, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t b = r / out_h, y = r % out_h;
          float* m = mid + r * in_row;
          std::fill(m, m + in_row, 0.0f);
          const int64_t start = rows.starts[y];
          const int64_t count = std::min(start + rows.size, in_h) - start;
          for (int64_t j = 0; j < count; ++j) {
            const float w = rows.weights[y * rows.size + j];
            const T* src = in + (b * in_h + start + j) * in_row;
            for (int64_t k = 0; k < in_row; ++k) m[k] += w * static_cast<float>(src[k]);
          }
          float* o = out + r * out_row;
          for (int64_t x = 0; x < out_w; ++x) {
            float* pixel = o + x * channels;
            std::fill(pixel, pixel + channels, 0.0f);
            const int64_t first = cols.starts[x];
            const int64_t n = std::min(first + cols.size, in_w) - first;
            for (int64_t j = 0; j < n; ++j) {
              const float w = cols.weights[x * cols.size + j];
              const float* p = m + (first + j) * channels;
              for (int64_t c = 0; c < channels; ++c) pixel[c] += w * p[c];
            }
          }
        }
      });
}

// A [2] float input: (rows, columns).
absl::StatusOr<std::pair<float, float>> FloatPair(const Tensor& t) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("t must be 1-dimensional", t.shape().DebugString()));
  }
  if (t.NumElements() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("t must have two elements", t.shape().DebugString()));
  }
  return std::make_pair(t.data<float>()[0], t.data<float>()[1]);
}

class ResampleBase : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string name;
    TW_RETURN_IF_ERROR(c.GetAttr("kernel_type", &name));
    TW_ASSIGN_OR_RETURN(kernel_, ParseKernel(name));
    return c.GetAttr("antialias", &antialias_);
  }

 protected:
  // Scale and translation inputs 2 and 3.
  absl::Status ReadScales(KernelContext* ctx) {
    TW_ASSIGN_OR_RETURN(scale_, FloatPair(ctx->input(2)));
    if (!(scale_.first > 0 && scale_.second > 0)) {
      return absl::InvalidArgumentError("Scale must be greater than zero.");
    }
    TW_ASSIGN_OR_RETURN(translate_, FloatPair(ctx->input(3)));
    return absl::OkStatus();
  }

  Kernel kernel_ = Kernel::kLanczos3;
  bool antialias_ = true;
  std::pair<float, float> scale_, translate_;
};

class ScaleAndTranslateOp : public ResampleBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional", in.shape().DebugString()));
    }
    const Tensor& size = ctx->input(1);
    if (size.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("output_shape_t must be 1-dimensional", size.shape().DebugString()));
    }
    if (size.NumElements() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("output_shape_t must have two elements", size.shape().DebugString()));
    }
    const int64_t max_int = std::numeric_limits<int32_t>::max();
    if (in.dim_size(1) > max_int || in.dim_size(2) > max_int) {
      return absl::InvalidArgumentError("input sizes must be between 0 and max int32");
    }
    const int64_t out_h = size.data<int32_t>()[0], out_w = size.data<int32_t>()[1];
    const int64_t batch = in.dim_size(0), in_h = in.dim_size(1), in_w = in.dim_size(2),
                  channels = in.dim_size(3);
    if (out_h <= 0 || out_w <= 0) {
      return absl::InvalidArgumentError("output dimensions must be positive");
    }
    if (channels <= 0) return absl::InvalidArgumentError("image must have at least one channel");
    if (in_h <= 0 || in_w <= 0) {
      return absl::InvalidArgumentError("input image must be of non-zero size");
    }
    TW_RETURN_IF_ERROR(ReadScales(ctx));
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, TensorShape({batch, out_h, out_w, channels})));
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(const Spans cols, ForwardSpans(ctx, kernel_, out_w, in_w, scale_.second,
                                                       translate_.second, antialias_));
    TW_ASSIGN_OR_RETURN(const Spans rows, ForwardSpans(ctx, kernel_, out_h, in_h, scale_.first,
                                                       translate_.first, antialias_));
    TW_ASSIGN_OR_RETURN(Tensor mid,
                        ctx->allocate_temp(DT_FLOAT, TensorShape({batch, out_h, in_w, channels})));
    bool done = false;
    VisitNumberType(in.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!kIsComplex<T> && !std::is_same_v<T, bool>) {
        Gather(ctx, rows, cols, in.data<T>(), batch, in_h, in_w, channels, out_h, out_w,
               mid.data<float>(), out->data<float>());
        done = true;
      }
    });
    if (!done) return UnsupportedDtype("ScaleAndTranslate", in.dtype());
    return absl::OkStatus();
  }
};

class ScaleAndTranslateGradOp : public ResampleBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& original = ctx->input(1);
    if (grads.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input_grad must be 4-dimensional", grads.shape().DebugString()));
    }
    if (original.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("original_image must be 4-dimensional", original.shape().DebugString()));
    }
    const int64_t batch = grads.dim_size(0), channels = grads.dim_size(3);
    const int64_t in_h = original.dim_size(1), in_w = original.dim_size(2);
    const int64_t out_h = grads.dim_size(1), out_w = grads.dim_size(2);
    const int64_t max_int = std::numeric_limits<int32_t>::max();
    if (in_h > max_int || in_w > max_int) {
      return absl::InvalidArgumentError("original sizes must be between 0 and max int32");
    }
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, TensorShape({batch, in_h, in_w, channels})));
    TW_RETURN_IF_ERROR(ReadScales(ctx));
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(
        const Spans forward_cols,
        ForwardSpans(ctx, kernel_, out_w, in_w, scale_.second, translate_.second, antialias_));
    TW_ASSIGN_OR_RETURN(const Spans cols, GradSpans(ctx, forward_cols, out_w, in_w));
    TW_ASSIGN_OR_RETURN(
        const Spans forward_rows,
        ForwardSpans(ctx, kernel_, out_h, in_h, scale_.first, translate_.first, antialias_));
    TW_ASSIGN_OR_RETURN(const Spans rows, GradSpans(ctx, forward_rows, out_h, in_h));
    TW_ASSIGN_OR_RETURN(Tensor mid,
                        ctx->allocate_temp(DT_FLOAT, TensorShape({batch, in_h, out_w, channels})));
    Gather(ctx, rows, cols, grads.data<float>(), batch, out_h, out_w, channels, in_h, in_w,
           mid.data<float>(), out->data<float>());
    return absl::OkStatus();
  }
};

}  // namespace

TW_REGISTER_KERNELS(scale_and_translate_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  for (const DataType t : {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_INT64, DT_BFLOAT16,
                           DT_HALF, DT_FLOAT, DT_DOUBLE}) {
    RegisterKernel(cpu("ScaleAndTranslate").TypeConstraint("T", t),
                   MakeFactory<ScaleAndTranslateOp>());
  }
  RegisterKernel(cpu("ScaleAndTranslateGrad").TypeConstraint("T", DT_FLOAT),
                 MakeFactory<ScaleAndTranslateGradOp>());
}

}  // namespace towerflow
