// Normalizations, as gpu/norm_ops.cc: FusedBatchNorm (V1/V3) and
// FusedBatchNormGrad (V1/V3) on NHWC or NCHW (and, on the CPU only, the
// graph optimizer's _FusedBatchNormEx / _FusedBatchNormGradEx: the same with
// a Relu after, or its gradient's mask before), computed on a [rows, C] view
// (NCHW is transposed to NHWC first); LRN and LRNGrad (NHWC) as single fused
// passes over the channels (TF's formulas).
//
// Training: mean and biased variance over N*H*W per channel;
//   y = scale * (x - mean) / sqrt(var + epsilon) + offset;
//   batch_variance is the unbiased variance (n / (n - 1)), and with
//   exponential_avg_factor f != 1 both batch outputs are running averages
//   (1 - f) * old + f * new, as TF. reserve_space_1/2 keep the mean and the
//   biased variance for the gradient.
// Gradient (training), with x^ = (x - mean) * rsqrt(var + eps):
//   offset_bp = sum dy; scale_bp = sum dy x^;
//   dx = scale * rsqrt(var + eps) * (dy - offset_bp / n - x^ scale_bp / n).
// Inference uses the given mean and variance; dx = dy * scale * rsqrt.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/norm_attrs.h"
#include "kernels/window.h"

namespace towerflow {
namespace {

using Row = Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>>;

// Note [Batch norm on the CPU]
// Legend: R rows (N*H*W), C channels; x, y, dy, dx are [R, C] row-major
// (NHWC). Every pass works a row at a time with Eigen arrays of C channels,
// which Eigen vectorises across the channels (expressions over a whole
// [C, rows] block, with the channel vectors replicated across it or reduced
// along its rows, compiled to scalar loops). Rows go in parallel on the
// intra-op pool; the sums walk blocks of whole rows (kBlockFloats floats: an
// L1 cache's worth):
// - moments: the mean, then the mean of (x - mean)^2: two reads of x (a
//   one-pass variance cancels when |mean| >> stddev). Sums run in float over
//   kFloatRows rows, then in double; blocks add up in order, so any thread
//   count gives the same bits.
// - normalisation: y = (x - mean) * a + offset per channel, a = scale *
//   rsqrt(var + eps) (x * a + (offset - mean * a) would lose digits to
//   cancellation when |mean| >> stddev). One read, one write.
// - gradient: per block, sum dy and sum dy * (x - mean) in one read of x and
//   dy; then dx = k (dy - mean dy) + A (x - mean) per channel
//   (BatchNormGradient), one pass.
// Eigen's expressions over the whole [R, C] (a mean, then a variance, then a
// normalisation, each a broadcast) took three to four passes per kernel.
using ChannelVector = Eigen::Map<const Eigen::ArrayXf>;  // [C]: a row, or per channel
using MutableChannelVector = Eigen::Map<Eigen::ArrayXf>;
using ChannelSumVector = Eigen::Map<Eigen::ArrayXd>;

constexpr int64_t kBlockFloats = 8192;
// Rows summed in float before their sum joins the block's in double.
constexpr int64_t kFloatRows = 16;

int64_t RowsPerBlock(int64_t c) { return std::max<int64_t>(1, kBlockFloats / c); }

// out[0, C) = the sum over rows [r0, r0 + n) of what add(r, sum) adds to a
// float sum of C channels, in float over kFloatRows rows at a time (Eigen's
// float vectors), then in double.
template <typename AddRow>
void SumRows(int64_t r0, int64_t n, int64_t c, double* out, const AddRow& add) {
  ChannelSumVector total(out, c);
  total.setZero();
  Eigen::ArrayXf sum(c);
  for (int64_t r = r0; r < r0 + n; r += kFloatRows) {
    sum.setZero();
    for (int64_t q = r; q < std::min(r + kFloatRows, r0 + n); ++q) add(q, sum);
    total += sum.cast<double>();
  }
}

// Per-channel sums over the rows, `k` sums per channel: `block(r0, n, out)`
// writes the k*C sums of rows [r0, r0 + n) into `out`, and the blocks' sums
// add up in order (the same result for any number of threads). Returns k*C
// doubles, sum j of channel ch at [j*C + ch]. REQUIRES: c >= 1.
template <typename BlockSums>
std::vector<double> ChannelSums(ThreadPool* pool, int64_t rows, int64_t c, int k,
                                const BlockSums& block) {
  const int64_t per_block = RowsPerBlock(c);
  const int64_t blocks = (rows + per_block - 1) / per_block;
  std::vector<double> partial(static_cast<size_t>(blocks * k * c));
  pool->ParallelFor(blocks, per_block * c * 3 * k, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t r0 = b * per_block;
      block(r0, std::min(per_block, rows - r0), partial.data() + b * k * c);
    }
  });
  std::vector<double> sums(static_cast<size_t>(k * c), 0.0);
  for (int64_t b = 0; b < blocks; ++b) {
    const double* p = partial.data() + b * k * c;
    for (int64_t i = 0; i < k * c; ++i) sums[i] += p[i];
  }
  return sums;
}

// The biased mean and variance of each channel of x [R, C], in two passes:
// the mean, then the mean square of x - mean (a one-pass variance, the mean
// of the squares less the squared mean, loses digits to cancellation, and
// the finite differences of the gradient ops see them). REQUIRES: R, C >= 1.
void Moments(ThreadPool* pool, const float* x, int64_t rows, int64_t c, float* mean,
             float* variance) {
  const std::vector<double> sums =
      ChannelSums(pool, rows, c, 1, [&](int64_t r0, int64_t n, double* out) {
        SumRows(r0, n, c, out,
                [&](int64_t r, Eigen::ArrayXf& sum) { sum += ChannelVector(x + r * c, c); });
      });
  for (int64_t ch = 0; ch < c; ++ch) mean[ch] = static_cast<float>(sums[ch] / rows);
  const ChannelVector mean_v(mean, c);
  const std::vector<double> squares =
      ChannelSums(pool, rows, c, 1, [&](int64_t r0, int64_t n, double* out) {
        SumRows(r0, n, c, out, [&](int64_t r, Eigen::ArrayXf& sum) {
          sum += (ChannelVector(x + r * c, c) - mean_v).square();
        });
      });
  for (int64_t ch = 0; ch < c; ++ch) variance[ch] = static_cast<float>(squares[ch] / rows);
}

// out[i] = y[i] > 0 ? dy[i] : 0 (0 for a NaN y, as ReluGrad), or with
// dy == out, y[i] > 0 ? y[i] : 0 (Relu). Written with the vector units'
// compare-and-mask: Eigen 3.4 computes a select one element at a time.
void ReluMask(const float* y, const float* dy, int64_t n, float* out) {
  int64_t i = 0;
#if defined(__AVX512F__)
  const __m512 zero = _mm512_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    const __mmask16 positive = _mm512_cmp_ps_mask(_mm512_loadu_ps(y + i), zero, _CMP_GT_OQ);
    _mm512_storeu_ps(out + i, _mm512_maskz_mov_ps(positive, _mm512_loadu_ps(dy + i)));
  }
#elif defined(__AVX__)
  const __m256 zero = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    const __m256 positive = _mm256_cmp_ps(_mm256_loadu_ps(y + i), zero, _CMP_GT_OQ);
    _mm256_storeu_ps(out + i, _mm256_and_ps(positive, _mm256_loadu_ps(dy + i)));
  }
#endif
  for (; i < n; ++i) out[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

// y = scale * (x - mean) * rsqrt(variance + epsilon) + offset over [R, C],
// then y = max(y, 0) with `relu` (_FusedBatchNormEx; 0 for NaN, as Relu).
void Normalize(ThreadPool* pool, const float* x, int64_t rows, int64_t c, const float* scale,
               const float* offset, const float* mean, const float* variance, float epsilon,
               bool relu, float* y) {
  std::vector<float> a(c);
  for (int64_t ch = 0; ch < c; ++ch) a[ch] = scale[ch] / std::sqrt(variance[ch] + epsilon);
  const ChannelVector av(a.data(), c), mean_v(mean, c), offset_v(offset, c);
  pool->ParallelFor(rows, c * 3, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      MutableChannelVector y_row(y + r * c, c);
      y_row = (ChannelVector(x + r * c, c) - mean_v) * av + offset_v;
      if (relu) ReluMask(y + r * c, y + r * c, c, y + r * c);
    }
  });
}

// The gradient of Normalize (see the file comment), with rstd =
// rsqrt(variance + epsilon), k = scale * rstd, x^ = (x - mean) * rstd:
//   offset_bp = sum dy; scale_bp = sum dy x^ = rstd * sum dy (x - mean);
//   training:  dx = k (dy - offset_bp / R - x^ scale_bp / R)
//                 = k (dy - offset_bp / R) + A (x - mean)
//              with A = -k rstd scale_bp / R;
//   inference: dx = k dy.
// With `relu_y` (_FusedBatchNormGradEx: the gradient through
// Relu(FusedBatchNorm(x)), relu_y its output), dy is first masked to
// dy where relu_y > 0, block by block into dx, and read from there.
void BatchNormGradient(ThreadPool* pool, const float* dy, const float* x, int64_t rows, int64_t c,
                       const float* scale, const float* mean, const float* variance, float epsilon,
                       bool training, const float* relu_y, float* dx, float* scale_bp,
                       float* offset_bp) {
  const ChannelVector mean_v(mean, c);
  const float* const given_dy = dy;
  if (relu_y != nullptr) dy = dx;
  const std::vector<double> sums =
      ChannelSums(pool, rows, c, 2, [&](int64_t r0, int64_t n, double* out) {
        if (relu_y != nullptr) ReluMask(relu_y + r0 * c, given_dy + r0 * c, n * c, dx + r0 * c);
        SumRows(r0, n, c, out,
                [&](int64_t r, Eigen::ArrayXf& sum_dy) { sum_dy += ChannelVector(dy + r * c, c); });
        SumRows(r0, n, c, out + c, [&](int64_t r, Eigen::ArrayXf& sum_dy_xc) {
          sum_dy_xc += ChannelVector(dy + r * c, c) * (ChannelVector(x + r * c, c) - mean_v);
        });
      });
  std::vector<float> k(c), a(c), mean_dy(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    const double rstd = 1.0 / std::sqrt(static_cast<double>(variance[ch]) + epsilon);
    const double kk = scale[ch] * rstd;
    offset_bp[ch] = static_cast<float>(sums[ch]);
    scale_bp[ch] = static_cast<float>(rstd * sums[c + ch]);
    k[ch] = static_cast<float>(kk);
    a[ch] = training ? static_cast<float>(-kk * rstd * rstd * sums[c + ch] / rows) : 0.0f;
    mean_dy[ch] = training ? static_cast<float>(sums[ch] / rows) : 0.0f;
  }
  const ChannelVector kv(k.data(), c), av(a.data(), c), mean_dy_v(mean_dy.data(), c);
  pool->ParallelFor(rows, c * 5, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      MutableChannelVector dx_row(dx + r * c, c);
      const ChannelVector dy_row(dy + r * c, c);
      if (training) {
        dx_row = (dy_row - mean_dy_v) * kv + (ChannelVector(x + r * c, c) - mean_v) * av;
      } else {
        dx_row = dy_row * kv;
      }
    }
  });
}

// _FusedBatchNormEx / _FusedBatchNormGradEx's activation_mode: true for
// Relu, false for Identity (and for the ops without the attr).
// InvalidArgument for another mode or side inputs, which the optimizer
// does not make.
absl::StatusOr<bool> ReadActivationMode(const KernelConstruction& c) {
  if (!c.def().attr().count("activation_mode")) return false;
  std::string mode;
  int64_t side_inputs = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("activation_mode", &mode));
  TW_RETURN_IF_ERROR(c.GetAttr("num_side_inputs", &side_inputs));
  if (side_inputs != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_side_inputs = ", side_inputs, " is not supported on the CPU"));
  }
  if (mode != "Identity" && mode != "Relu") {
    return absl::InvalidArgumentError(
        absl::StrCat("activation_mode '", mode, "' is not supported: Identity or Relu"));
  }
  return mode == "Relu";
}

// FusedBatchNorm (V1/V2/V3), and _FusedBatchNormEx with activation_mode
// Relu (the graph optimizer's FusedBatchNorm + Relu), whose outputs are
// FusedBatchNormV3's with y past the Relu.
class FusedBatchNormOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(relu_, ReadActivationMode(c));
    return a_.Init(c);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const auto& d = ctx->eigen_cpu_device();
    const Tensor& x_in = ctx->input(0);
    if (x_in.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional", x_in.shape().DebugString()));
    }
    Tensor x = x_in;
    if (a_.nchw) {
      TW_ASSIGN_OR_RETURN(x, ToNhwc(d, ctx->device()->allocator(), x_in));
    }
    const int64_t c = x.dim_size(3), rows = x.NumElements() / std::max<int64_t>(c, 1);
    const char* names[] = {"scale", "offset", "mean", "variance"};
    for (int i = 1; i <= 4; ++i) {
      if (!a_.is_training && i >= 3) {
        TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(i), c, names[i - 1]));
      } else if (i < 3) {
        TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(i), c, names[i - 1]));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * y_out, ctx->allocate_output(0, x_in.shape()));
    std::array<Tensor*, 5> stats;
    for (int i = 1; i < ctx->num_outputs(); ++i) {
      TW_ASSIGN_OR_RETURN(stats[i - 1],
                          ctx->allocate_output(i, TensorShape({i == 5 ? int64_t{0} : c})));
    }
    Tensor y = *y_out;
    if (a_.nchw) {
      TW_ASSIGN_OR_RETURN(y, ctx->allocate_temp(DT_FLOAT, x.shape()));
    }
    Row mean = stats[0]->vec<float>(), var = stats[1]->vec<float>();
    Row saved_mean = stats[2]->vec<float>(), saved_var = stats[3]->vec<float>();
    ThreadPool* pool = ctx->intra_op_pool();
    if (a_.is_training) {
      if (rows == 0 || c == 0) {
        saved_mean.setZero();
        saved_var.setZero();
      } else {
        Moments(pool, x.data<float>(), rows, c, saved_mean.data(), saved_var.data());
      }
      const float correction = rows > 1 ? static_cast<float>(rows) / (rows - 1) : 1.0f;
      const float f = a_.exponential_avg_factor;
      if (f == 1.0f) {
        mean.device(d) = saved_mean;
        var.device(d) = saved_var * correction;
      } else {
        TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(3), c, "mean"));
        TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(4), c, "variance"));
        mean.device(d) = ctx->input(3).vec<float>() * (1 - f) + saved_mean * f;
        var.device(d) = ctx->input(4).vec<float>() * (1 - f) + saved_var * correction * f;
      }
    } else {
      mean.device(d) = ctx->input(3).vec<float>();
      var.device(d) = ctx->input(4).vec<float>();
      saved_mean.device(d) = mean;
      saved_var.device(d) = var;
    }
    if (rows > 0 && c > 0) {
      const Row m = a_.is_training ? saved_mean : mean;
      const Row v = a_.is_training ? saved_var : var;
      Normalize(pool, x.data<float>(), rows, c, ctx->input(1).data<float>(),
                ctx->input(2).data<float>(), m.data(), v.data(), a_.epsilon, relu_,
                y.data<float>());
    }
    if (a_.nchw) TW_RETURN_IF_ERROR(FromNhwc(d, y, y_out));
    return absl::OkStatus();
  }

 private:
  BnAttrs a_;
  bool relu_ = false;
};

// FusedBatchNormGrad (V1/V2/V3), and _FusedBatchNormGradEx with
// activation_mode Relu (the graph optimizer's ReluGrad +
// FusedBatchNormGradV3): y_backprop is the gradient of the Relu's output y
// (input 7), masked where y <= 0.
class FusedBatchNormGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(relu_, ReadActivationMode(c));
    return a_.Init(c);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const auto& d = ctx->eigen_cpu_device();
    const Tensor& dy_in = ctx->input(0);
    const Tensor& x_in = ctx->input(1);
    TW_RETURN_IF_ERROR(CheckBatchNormGradShapes(dy_in, x_in));
    Tensor x = x_in, dy = dy_in, relu_y;
    if (relu_) {
      relu_y = ctx->input(7);
      if (relu_y.shape() != x_in.shape()) {
        return absl::InvalidArgumentError(absl::StrCat("y must have x's shape ",
                                                       x_in.shape().DebugString(), ", got ",
                                                       relu_y.shape().DebugString()));
      }
    }
    if (a_.nchw) {
      TW_ASSIGN_OR_RETURN(x, ToNhwc(d, ctx->device()->allocator(), x_in));
      TW_ASSIGN_OR_RETURN(dy, ToNhwc(d, ctx->device()->allocator(), dy_in));
      if (relu_) {
        TW_ASSIGN_OR_RETURN(relu_y, ToNhwc(d, ctx->device()->allocator(), relu_y));
      }
    }
    const int64_t c = x.dim_size(3), rows = x.NumElements() / std::max<int64_t>(c, 1);
    TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(2), c, "scale"));
    TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(3), c, "reserve_space_1 (mean)"));
    TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(4), c, "reserve_space_2 (variance)"));
    TW_ASSIGN_OR_RETURN(Tensor * dx_out, ctx->allocate_output(0, x_in.shape()));
    std::array<Tensor*, 4> outs;
    for (int i = 1; i < ctx->num_outputs(); ++i) {
      TW_ASSIGN_OR_RETURN(outs[i - 1], ctx->allocate_output(i, TensorShape({i <= 2 ? c : 0})));
    }
    Tensor dx = *dx_out;
    if (a_.nchw) {
      TW_ASSIGN_OR_RETURN(dx, ctx->allocate_temp(DT_FLOAT, x.shape()));
    }
    Row scale_bp = outs[0]->vec<float>(), offset_bp = outs[1]->vec<float>();
    if (rows == 0 || c == 0) {
      scale_bp.setZero();
      offset_bp.setZero();
      return absl::OkStatus();
    }
    BatchNormGradient(ctx->intra_op_pool(), dy.data<float>(), x.data<float>(), rows, c,
                      ctx->input(2).data<float>(), ctx->input(3).data<float>(),
                      ctx->input(4).data<float>(), a_.epsilon, a_.is_training,
                      relu_ ? relu_y.data<float>() : nullptr, dx.data<float>(), scale_bp.data(),
                      offset_bp.data());
    if (a_.nchw) TW_RETURN_IF_ERROR(FromNhwc(d, dx, dx_out));
    return absl::OkStatus();
  }

 private:
  BnAttrs a_;
  bool relu_ = false;
};

// The LRN kernels work a pixel's C channels at a time as Eigen arrays
// (Eigen's own vector packets: GCC's -O2 leaves loops of unknown length
// scalar, and the scalar loops were 60% of the CIFAR-10 model's LRN time).
template <typename T>
using Channels = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutableChannels = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// Windowed sums over channels of `v` (length c) with radius r, via prefix
// sums: out[i] = sum v[max(0,i-r) .. min(c-1,i+r)]. The middle range needs
// no clamping: one vector subtraction.
template <typename T>
void WindowSums(const T* v, int64_t c, int64_t r, T* prefix, T* out) {
  prefix[0] = 0;
  for (int64_t i = 0; i < c; ++i) prefix[i + 1] = prefix[i] + v[i];
  const int64_t lo = std::min(r, c), hi = std::max(lo, c - r - 1);
  for (int64_t i = 0; i < lo; ++i) out[i] = prefix[std::min(c, i + r + 1)] - prefix[0];
  if (hi > lo) {
    MutableChannels<T>(out + lo, hi - lo) =
        Channels<T>(prefix + lo + r + 1, hi - lo) - Channels<T>(prefix + lo - r, hi - lo);
  }
  for (int64_t i = hi; i < c; ++i) {
    out[i] = prefix[std::min(c, i + r + 1)] - prefix[std::max<int64_t>(0, i - r)];
  }
}

// out[i] = (bias + alpha * sums[i])^-beta, with the branch on beta hoisted
// out of the loop (square roots and divisions for TF's 0.75 and 0.5,
// correctly rounded like the scalar ones).
template <typename T>
void NormPowers(const T* sums, int64_t c, T bias, T alpha, T beta, T* out) {
  const auto n = alpha * Channels<T>(sums, c) + bias;
  MutableChannels<T> o(out, c);
  if (beta == T(0.75)) {
    o = n.sqrt().inverse();
    o = o * o.sqrt();
  } else if (beta == T(0.5)) {
    o = n.sqrt().inverse();
  } else {
    for (int64_t i = 0; i < c; ++i) out[i] = std::pow(bias + alpha * sums[i], -beta);
  }
}

// LRN: y = x * (bias + alpha * sum_{|c'-c|<=r} x[c']^2)^-beta.
template <typename T>
class LrnOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return p_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional, got ", in.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    if (in.NumElements() == 0) return absl::OkStatus();
    const int64_t c = in.dim_size(3), pixels = in.NumElements() / c;
    const T* x = in.data<T>();
    T* y = out->data<T>();
    const T bias = p_.bias, alpha = p_.alpha, beta = p_.beta;
    ctx->intra_op_pool()->ParallelFor(pixels, 8 * c, [&](int64_t begin, int64_t end) {
      std::vector<T> sq(c), prefix(c + 1), sums(c), pw(c);
      for (int64_t px = begin; px < end; ++px) {
        const Channels<T> xi(x + px * c, c);
        MutableChannels<T>(sq.data(), c) = xi.square();
        WindowSums(sq.data(), c, p_.radius, prefix.data(), sums.data());
        NormPowers(sums.data(), c, bias, alpha, beta, pw.data());
        MutableChannels<T>(y + px * c, c) = xi * Channels<T>(pw.data(), c);
      }
    });
    return absl::OkStatus();
  }

 private:
  LrnParams p_;
};

// LRNGrad(input_grads dy, input_image x, output_image y):
//   dx[j] = dy[j] n[j]^-beta
//           - 2 alpha beta x[j] sum_{|c-j|<=r} dy[c] x[c] n[c]^(-beta-1)
// with n[c] = bias + alpha * sum_{|c'-c|<=r} x[c']^2.
template <typename T>
class LrnGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return p_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& in = ctx->input(1);
    const Tensor& out = ctx->input(2);
    TW_RETURN_IF_ERROR(CheckLrnGradShapes(dy, in, out));
    TW_ASSIGN_OR_RETURN(Tensor * dx_t, ctx->allocate_output(0, in.shape()));
    if (in.NumElements() == 0) return absl::OkStatus();
    const int64_t c = in.dim_size(3), pixels = in.NumElements() / c;
    const T* x = in.data<T>();
    const T* g = dy.data<T>();
    T* dx = dx_t->data<T>();
    const T bias = p_.bias, alpha = p_.alpha, beta = p_.beta;
    ctx->intra_op_pool()->ParallelFor(pixels, 16 * c, [&](int64_t begin, int64_t end) {
      std::vector<T> v(c), prefix(c + 1), sums(c), t(c);
      const Channels<T> v_a(v.data(), c);
      const Channels<T> sums_a(sums.data(), c);
      for (int64_t px = begin; px < end; ++px) {
        const Channels<T> xi(x + px * c, c), gi(g + px * c, c);
        MutableChannels<T>(v.data(), c) = xi.square();
        WindowSums(v.data(), c, p_.radius, prefix.data(), sums.data());
        NormPowers(sums.data(), c, bias, alpha, beta, v.data());  // n^-beta
        MutableChannels<T>(t.data(), c) =
            gi * xi * v_a / (alpha * sums_a + bias);  // dy x n^(-beta-1)
        WindowSums(t.data(), c, p_.radius, prefix.data(), sums.data());
        MutableChannels<T>(dx + px * c, c) = gi * v_a - T(2) * alpha * beta * xi * sums_a;
      }
    });
    return absl::OkStatus();
  }

 private:
  LrnParams p_;
};

// BatchNormWithGlobalNormalization(t, m, v, beta, gamma) and its Grad(t, m,
// v, gamma, backprop), TF's first batch norm, with TF's formulas: with
// r = rsqrt(v + eps) and g = gamma (1 without scale_after_normalization),
// result = (t - m) r g + beta; dx = dy r g, db = sum dy, dm = -db r g,
// dg = sum(dy (t - m)) r (0 without scale), dv = sum(dy (t - m)) g (-r/2)
// / (v + eps).
class GlobalNormalizationBase : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("variance_epsilon", &epsilon_));
    return c.GetAttr("scale_after_normalization", &scale_);
  }

 protected:
  // Checks t (4-D) and the per-channel vectors at `vectors`, named `names`.
  static absl::StatusOr<int64_t> Depth(KernelContext* ctx, std::initializer_list<int> vectors,
                                       std::initializer_list<const char*> names) {
    const Tensor& t = ctx->input(0);
    if (t.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional", t.shape().DebugString()));
    }
    const int64_t depth = t.dim_size(3);
    auto name = names.begin();
    for (const int i : vectors) {
      const Tensor& v = ctx->input(i);
      if (v.dims() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(*name, " must be 1-dimensional", v.shape().DebugString()));
      }
      if (v.dim_size(0) != depth) {
        return absl::InvalidArgumentError(absl::StrCat(
            *name, " must have ", depth, " elements (input's depth), got ", v.dim_size(0)));
      }
      ++name;
    }
    return depth;
  }
  float epsilon_ = 0;
  bool scale_ = false;
};

template <typename T>
class GlobalNormalizationOp : public GlobalNormalizationBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const int64_t depth,
                        Depth(ctx, {1, 2, 3, 4}, {"mean", "variance", "beta", "gamma"}));
    const Tensor& t = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, t.shape()));
    const int64_t rows = depth == 0 ? 0 : t.NumElements() / depth;
    if (rows == 0 || depth == 0) return absl::OkStatus();
    const Eigen::array<Eigen::DenseIndex, 2> rest{rows, 1};
    const auto vec = [&](int i) { return ctx->input(i).shaped<T, 2>({1, depth}); };
    Eigen::Tensor<T, 2, Eigen::RowMajor> factor =
        (vec(2) + vec(2).constant(static_cast<T>(epsilon_))).rsqrt();
    if (scale_) factor = factor * vec(4);
    out->shaped<T, 2>({rows, depth}).device(ctx->eigen_cpu_device()) =
        (t.shaped<T, 2>({rows, depth}) - vec(1).broadcast(rest)) * factor.broadcast(rest) +
        vec(3).broadcast(rest);
    return absl::OkStatus();
  }
};

template <typename T>
class GlobalNormalizationGradOp : public GlobalNormalizationBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const int64_t depth, Depth(ctx, {1, 2, 3}, {"mean", "variance", "gamma"}));
    const Tensor& t = ctx->input(0);
    const Tensor& dy = ctx->input(4);
    if (dy.shape() != t.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("backprop has shape ",
                                                     dy.shape().DebugString(), " but input has ",
                                                     t.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, t.shape()));
    Tensor* grads[4];
    for (int i = 0; i < 4; ++i) {
      TW_ASSIGN_OR_RETURN(grads[i], ctx->allocate_output(i + 1, TensorShape({depth})));
    }
    const int64_t rows = depth == 0 ? 0 : t.NumElements() / depth;
    if (depth == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    const Eigen::array<Eigen::DenseIndex, 2> rest{rows, 1};
    const Eigen::array<Eigen::DenseIndex, 1> over_rows{0};
    const auto vec = [&](int i) { return ctx->input(i).shaped<T, 2>({1, depth}); };
    const auto x = t.shaped<T, 2>({rows, depth});
    const auto g = dy.shaped<T, 2>({rows, depth});
    using Row = Eigen::Tensor<T, 2, Eigen::RowMajor>;
    const Row r = (vec(2) + vec(2).constant(static_cast<T>(epsilon_))).rsqrt();
    const Row gamma = scale_ ? Row(vec(3)) : Row(r.constant(T(1)));
    auto dm = grads[0]->shaped<T, 2>({1, depth});
    auto dv = grads[1]->shaped<T, 2>({1, depth});
    auto db = grads[2]->shaped<T, 2>({1, depth});
    auto dg = grads[3]->shaped<T, 2>({1, depth});
    db.device(d) = g.sum(over_rows).reshape(Eigen::array<Eigen::DenseIndex, 2>{1, depth});
    const Row centered = (g * (x - vec(1).broadcast(rest)))
                             .sum(over_rows)
                             .reshape(Eigen::array<Eigen::DenseIndex, 2>{1, depth});
    dx->shaped<T, 2>({rows, depth}).device(d) = g * (r * gamma).broadcast(rest);
    dm.device(d) = -db * r * gamma;
    if (scale_) {
      dg.device(d) = centered * r;
    } else {
      dg.setZero();
    }
    dv.device(d) = centered * gamma * r * r.constant(T(-0.5)) /
                   (vec(2) + vec(2).constant(static_cast<T>(epsilon_)));
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(norm_ops) {
  const auto cpu = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceCpu).TypeConstraint<float>("T");
  };
  RegisterKernel(cpu("FusedBatchNorm"), MakeFactory<FusedBatchNormOp>());
  const auto any = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<GlobalNormalizationOp, float, double>(
      any("BatchNormWithGlobalNormalization"), "T");
  RegisterTypedKernels<GlobalNormalizationGradOp, float, double>(
      any("BatchNormWithGlobalNormalizationGrad"), "T");
  RegisterKernel(cpu("FusedBatchNormV2").TypeConstraint<float>("U"),
                 MakeFactory<FusedBatchNormOp>());
  RegisterKernel(cpu("FusedBatchNormV3").TypeConstraint<float>("U"),
                 MakeFactory<FusedBatchNormOp>());
  RegisterKernel(cpu("FusedBatchNormGrad"), MakeFactory<FusedBatchNormGradOp>());
  RegisterKernel(cpu("FusedBatchNormGradV2").TypeConstraint<float>("U"),
                 MakeFactory<FusedBatchNormGradOp>());
  RegisterKernel(cpu("FusedBatchNormGradV3").TypeConstraint<float>("U"),
                 MakeFactory<FusedBatchNormGradOp>());
  RegisterKernel(cpu("_FusedBatchNormEx").TypeConstraint<float>("U"),
                 MakeFactory<FusedBatchNormOp>());
  RegisterKernel(cpu("_FusedBatchNormGradEx").TypeConstraint<float>("U"),
                 MakeFactory<FusedBatchNormGradOp>());
  RegisterKernel(cpu("LRN"), MakeFactory<LrnOp<float>>());
  RegisterKernel(cpu("LRNGrad"), MakeFactory<LrnGradOp<float>>());
}

}  // namespace
}  // namespace towerflow
