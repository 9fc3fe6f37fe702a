// The samplers of tf.random.gamma and tf.random.poisson, TF's numbers for
// the same seeds: the seeded RandomGamma, RandomPoisson and
// RandomPoissonV2, and the stateless StatelessRandomGammaV2/V3 and
// StatelessRandomPoisson (tf.random.stateless_gamma/poisson), and the
// binomials StatelessRandomBinomial and StatefulRandomBinomial
// (tf.random.stateless_binomial, tf.random.Generator.binomial).
//
// Each output element (parameter-major: element i of parameter p is output
// p * samples + i, stored at [i, p]) reads TF's Philox stream from its own
// 256 blocks on (GuardedPhilox reserves 256 per output), drawing double
// normals and uniforms a block at a time and using each block's values last
// first, as TF's kernels do; so elements fill in parallel and the numbers
// do not depend on the sharding.
// - Gamma(alpha): alpha == 1 is -log(1 - u); otherwise Marsaglia and
//   Tsang's transformation-rejection (d = alpha - 1/3, v = (1 + x / (3
//   sqrt d))^3), alpha < 1 through alpha + 1 and a uniform's 1/alpha power.
// - Poisson(rate): Knuth's product of uniforms below 10, Hormann's
//   transformed rejection (PTRS) from 10 on; in double, cast to the output
//   type. A NaN rate, or one past the output type's range, is refused
//   (TF's kernel never returns on it).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/float16.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/bcast.h"
#include "kernels/cpu/philox_fill.h"
#include "kernels/cpu/rng_state.h"
#include "kernels/kernel_util.h"
#include "kernels/random_op_base.h"

namespace towerflow {
namespace {

// Double uniforms and normals from one output's stretch of the stream, a
// block (two values) at a time, each block's second value first.
class OutputDraws {
 public:
  OutputDraws(PhiloxStream stream, int64_t output) : stream_(stream) {
    stream_.Skip(static_cast<uint64_t>(output) * kPhiloxBlocksPerOutput);
  }
  double Uniform() {
    if (uniforms_left_ == 0) {
      const PhiloxBlock b = stream_.Next();
      uniforms_[0] = PhiloxDouble(b.v[0], b.v[1]);
      uniforms_[1] = PhiloxDouble(b.v[2], b.v[3]);
      uniforms_left_ = 2;
    }
    return uniforms_[--uniforms_left_];
  }
  double Normal() {
    if (normals_left_ == 0) {
      const PhiloxBlock b = stream_.Next();
      PhiloxBoxMuller(b.v, &normals_[0], &normals_[1]);
      normals_left_ = 2;
    }
    return normals_[--normals_left_];
  }

 private:
  PhiloxStream stream_;
  double uniforms_[2] = {0, 0};
  double normals_[2] = {0, 0};
  int uniforms_left_ = 0;
  int normals_left_ = 0;
};

// The samples' shape from the shape input, TF's message for a bad one.
absl::StatusOr<TensorShape> SampleShape(const Tensor& shape) {
  if (shape.dims() != 1 || (shape.dtype() != DT_INT32 && shape.dtype() != DT_INT64)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape must be a vector of {int32,int64}, got shape: ", shape.shape().DebugString()));
  }
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(shape, "shape"));
  return TensorShape::FromDims(dims);
}

// The output: the samples' shape, then the parameters'.
absl::StatusOr<Tensor*> AllocateSamples(KernelContext* ctx, const TensorShape& samples,
                                        const TensorShape& params) {
  TensorShape shape = samples;
  for (const int64_t d : params.dim_sizes()) TW_RETURN_IF_ERROR(shape.AddDim(d));
  return ctx->allocate_output(0, shape);
}

// Runs sample(output index, parameter) for every output over the pool,
// writing out[i * params + p].
template <typename T, typename P, typename F>
void ForEachOutput(KernelContext* ctx, const P* params, int64_t num_params, int64_t samples, T* out,
                   int64_t cost, F sample) {
  ctx->intra_op_pool()->ParallelFor(num_params * samples, cost, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const int64_t p = o / samples, i = o % samples;
      out[i * num_params + p] = sample(o, static_cast<double>(params[p]));
    }
  });
}

struct Gamma {
  static double Sample(const PhiloxStream& stream, int64_t output, double alpha) {
    OutputDraws draw(stream, output);
    if (alpha == 1.0) return -std::log1p(-draw.Uniform());
    const bool below_one = alpha < 1;
    const double d = alpha + (below_one ? 2.0 / 3 : -1.0 / 3);
    const double c = 1.0 / 3 / std::sqrt(d);
    while (true) {
      const double x = draw.Normal();
      double v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = draw.Uniform();
      if (u < 1 - 0.0331 * (x * x) * (x * x) ||
          std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) {
        double result = d * v;
        if (below_one) result *= std::pow(draw.Uniform(), 1 / alpha);
        return result;
      }
    }
  }

  // alpha [alphas] -> out[samples, alphas].
  template <typename T>
  static absl::Status Fill(KernelContext* ctx, const PhiloxStream& stream, const Tensor& alpha,
                           int64_t samples, Tensor* out) {
    const int64_t alphas = alpha.NumElements();
    ForEachOutput(ctx, alpha.data<T>(), alphas, samples, out->data<T>(), 300,
                  [&](int64_t o, double a) { return static_cast<T>(Sample(stream, o, a)); });
    return absl::OkStatus();
  }
};

template <typename U>
struct Poisson {
  static double Highest() {
    if constexpr (kIsFloat16<U>) {
      return static_cast<double>(Eigen::NumTraits<U>::highest());
    } else {
      return static_cast<double>(std::numeric_limits<U>::max());
    }
  }

  static double Sample(const PhiloxStream& stream, int64_t output, double rate) {
    OutputDraws draw(stream, output);
    if (rate < 10) {
      // Knuth: the number of uniforms whose product stays above e^-rate.
      const double limit = std::exp(-rate);
      double product = 1, k = 0;
      while (true) {
        product *= draw.Uniform();
        if (product <= limit && k <= Highest()) return k;
        k += 1;
      }
    }
    // Hormann's PTRS.
    const double log_rate = std::log(rate);
    const double b = 0.931 + 2.53 * std::sqrt(rate);
    const double a = -0.059 + 0.02483 * b;
    const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    while (true) {
      const double u = draw.Uniform() - 0.5;
      const double v = draw.Uniform();
      const double u_shifted = 0.5 - std::abs(u);
      const double k = std::floor((2 * a / u_shifted + b) * u + rate + 0.43);
      if (k > Highest()) continue;
      if (u_shifted >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2)) return k;
      if (k < 0 || (u_shifted < 0.013 && v > u_shifted)) continue;
      const double s = std::log(v * inv_alpha / (a / (u_shifted * u_shifted) + b));
      const double t = -rate + k * log_rate - std::lgamma(k + 1);
      if (s <= t) return k;
    }
  }

  // rate [rates] -> out[samples, rates].
  template <typename R>
  static absl::Status Fill(KernelContext* ctx, const PhiloxStream& stream, const Tensor& rate,
                           int64_t samples, Tensor* out) {
    const int64_t rates = rate.NumElements();
    // TF's kernel loops for ever on these (every draw is rejected).
    for (int64_t p = 0; p < rates; ++p) {
      const double r = static_cast<double>(rate.data<R>()[p]);
      if (!(r <= Highest())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "rate ", r, " (element ", p, ") gives samples beyond ", DataTypeString(out->dtype()),
            "'s range: it must be a number no larger than ", Highest()));
      }
    }
    ForEachOutput(ctx, rate.data<R>(), rates, samples, out->data<U>(), 400,
                  [&](int64_t o, double r) { return static_cast<U>(Sample(stream, o, r)); });
    return absl::OkStatus();
  }
};

// RandomGamma: [shape..., alpha's...], 256 blocks reserved per output.
template <typename T>
class RandomGammaOp : public RandomOpBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(TensorShape shape, SampleShape(ctx->input(0)));
    const Tensor& alpha = ctx->input(1);
    const int64_t samples = shape.num_elements();
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateSamples(ctx, shape, alpha.shape()));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Gamma::Fill<T>(ctx, generator().ReserveOutputs(samples * alpha.NumElements()), alpha,
                          samples, out);
  }
};

// RandomPoisson (R == U) and RandomPoissonV2: [shape..., rate's...].
template <typename R, typename U>
class RandomPoissonOp : public RandomOpBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(TensorShape shape, SampleShape(ctx->input(0)));
    const Tensor& rate = ctx->input(1);
    const int64_t samples = shape.num_elements();
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateSamples(ctx, shape, rate.shape()));
    if (samples == 0) return absl::OkStatus();
    return Poisson<U>::template Fill<R>(
        ctx, generator().ReserveOutputs(samples * rate.NumElements()), rate, samples, out);
  }
};

// OK when `shape` ends with `suffix` (the parameters' shape), TF's message
// otherwise.
absl::Status CheckEndsWith(const TensorShape& shape, const TensorShape& suffix) {
  const int lead = shape.dims() - suffix.dims();
  bool ends_with = lead >= 0;
  for (int d = 0; ends_with && d < suffix.dims(); ++d) {
    ends_with = shape.dim_size(lead + d) == suffix.dim_size(d);
  }
  return ends_with ? absl::OkStatus()
                   : absl::InvalidArgumentError("Shape passed in must end with broadcasted shape.");
}

// The stateless forms: the output's shape is the shape input, which ends
// with the parameter's; the stream is the seed's (V2: the key and counter).
// Inputs: shape, the seed (or key, counter, alg), the parameter.
absl::StatusOr<Tensor*> AllocateStateless(KernelContext* ctx, const Tensor& param,
                                          int64_t* samples) {
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "shape"));
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
  *samples = 0;
  if (shape.num_elements() == 0) return out;  // TF's: nothing drawn, nothing checked
  TW_RETURN_IF_ERROR(CheckEndsWith(shape, param.shape()));
  *samples = shape.num_elements() / param.NumElements();
  return out;
}

template <bool kV2>
struct StatelessGamma {
  template <typename T>
  class Op : public OpKernel {
   public:
    absl::Status Compute(KernelContext* ctx) override {
      TW_ASSIGN_OR_RETURN(PhiloxStream stream, StatelessStream(ctx, kV2, 1));
      const Tensor& alpha = ctx->input(kV2 ? 4 : 2);
      int64_t samples = 0;
      TW_ASSIGN_OR_RETURN(Tensor * out, AllocateStateless(ctx, alpha, &samples));
      if (samples == 0) return absl::OkStatus();
      return Gamma::Fill<T>(ctx, stream, alpha, samples, out);
    }
  };
};

template <typename R>
struct StatelessPoisson {
  template <typename U>
  class Op : public OpKernel {
   public:
    absl::Status Compute(KernelContext* ctx) override {
      TW_ASSIGN_OR_RETURN(PhiloxStream stream, StatelessStream(ctx, false, 1));
      const Tensor& rate = ctx->input(2);
      int64_t samples = 0;
      TW_ASSIGN_OR_RETURN(Tensor * out, AllocateStateless(ctx, rate, &samples));
      if (samples == 0) return absl::OkStatus();
      return Poisson<U>::template Fill<R>(ctx, stream, rate, samples, out);
    }
  };
};

// Binomial(count, prob) as TF's: 0 for count <= 0 or prob <= 0, count for
// prob >= 1; otherwise with p = min(prob, 1 - prob) (the sample mirrored
// for p = 1 - prob), Hormann's BTRS when count p >= 10 (from 256 blocks per
// output) and the inversion (geometric variates summed past count, from 42
// blocks per output) below; the tests on count p in T's own arithmetic.
// NaN probabilities (and counts) give NaN (0 in an integer type, as Cast's
// NaN).
struct Binomial {
  static double Inversion(const PhiloxStream& stream, int64_t output, double count, double p) {
    PhiloxStream at = stream;
    at.Skip(static_cast<uint64_t>(output) * 42);
    OutputDraws draw(at, 0);
    const double log_q = std::log1p(-p);
    double sum = 0;
    int64_t n = 0;
    while (true) {
      sum += std::ceil(std::log(draw.Uniform()) / log_q);
      if (sum > count) return static_cast<double>(n);
      ++n;
    }
  }

  // Stirling's series' error of log k!.
  static double StirlingTail(double k) {
    static constexpr double kSmall[] = {
        0.0810614667953272,  0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
        0.0166446911898211,  0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
        0.00925546218271273, 0.00833056343336287};
    if (k <= 9) return kSmall[static_cast<int>(k)];
    const double kp1sq = (k + 1) * (k + 1);
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
  }

  static double Btrs(const PhiloxStream& stream, int64_t output, double count, double p) {
    OutputDraws draw(stream, output);
    const double stddev = std::sqrt(count * p * (1 - p));
    const double b = 1.15 + 2.53 * stddev;
    const double a = -0.0873 + 0.0248 * b + 0.01 * p;
    const double c = count * p + 0.5;
    const double v_r = 0.92 - 4.2 / b;
    const double r = p / (1 - p);
    const double alpha = (2.83 + 5.1 / b) * stddev;
    const double m = std::floor((count + 1) * p);
    while (true) {
      const double u = draw.Uniform() - 0.5;
      double v = draw.Uniform();
      const double us = 0.5 - std::abs(u);
      const double k = std::floor((2 * a / us + b) * u + c);
      if (us >= 0.07 && v <= v_r) return k;
      if (k < 0 || k > count) continue;
      v = std::log(v * alpha / (a / (us * us) + b));
      const double bound = (m + 0.5) * std::log((m + 1) / (r * (count - m + 1))) +
                           (count + 1) * std::log((count - m + 1) / (count - k + 1)) +
                           (k + 0.5) * std::log(r * (count - k + 1) / (k + 1)) + StirlingTail(m) +
                           StirlingTail(count - m) - StirlingTail(k) - StirlingTail(count - k);
      if (v <= bound) return k;
    }
  }

  template <typename T>
  static double Sample(const PhiloxStream& stream, int64_t output, T count, T prob) {
    const double n = static_cast<double>(count);
    // A NaN count never stops TF's inversion; Towerflow's sample is NaN.
    if (std::isnan(n)) return n;
    if (n <= 0 || prob <= T(0)) return 0;
    if (prob >= T(1)) return n;
    const bool mirrored = prob > T(0.5);
    if (!mirrored && !(prob <= T(0.5))) return std::numeric_limits<double>::quiet_NaN();
    const T p = mirrored ? T(T(1) - prob) : prob;
    const double k = T(count * p) >= T(10) ? Btrs(stream, output, n, static_cast<double>(p))
                                           : Inversion(stream, output, n, static_cast<double>(p));
    return mirrored ? n - k : k;
  }

  // counts and probs broadcast to the output's last dimensions; out[i, b]
  // is sample i of batch member b (output b * samples + i).
  template <typename T, typename U>
  static absl::Status Fill(KernelContext* ctx, const PhiloxStream& stream, const Tensor& counts,
                           const Tensor& probs, const TensorShape& batch, Tensor* out) {
    const int64_t batches = batch.num_elements();
    if (batches == 0 || out->NumElements() == 0) return absl::OkStatus();
    const int64_t samples = out->NumElements() / batches;
    const std::vector<int64_t> count_at = BroadcastIndices(counts.shape().dim_sizes(), batch);
    const std::vector<int64_t> prob_at = BroadcastIndices(probs.shape().dim_sizes(), batch);
    const T* c = counts.data<T>();
    const T* p = probs.data<T>();
    U* y = out->data<U>();
    ctx->intra_op_pool()->ParallelFor(batches * samples, 400, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const int64_t b = o / samples, i = o % samples;
        const double k = Sample(stream, o, c[count_at[b]], p[prob_at[b]]);
        y[i * batches + b] = std::isnan(k) && !kIsFloatingPoint<U> ? U(0) : static_cast<U>(k);
      }
    });
    return absl::OkStatus();
  }
};

// The output of shape input `input`, which ends with counts' and probs'
// broadcast shape (returned in `batch`), with TF's messages.
absl::StatusOr<Tensor*> AllocateBinomial(KernelContext* ctx, int input, const Tensor& counts,
                                         const Tensor& probs, TensorShape* batch) {
  const BCast bcast(counts.shape(), probs.shape());
  if (!bcast.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "counts and probs must have compatible batch dimensions: ", counts.shape().DebugString(),
        " vs. ", probs.shape().DebugString()));
  }
  const Tensor& shape_t = ctx->input(input);
  if (shape_t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input shape should be a vector, got shape: ", shape_t.shape().DebugString()));
  }
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(shape_t, "shape"));
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  *batch = bcast.output_shape();
  TW_RETURN_IF_ERROR(CheckEndsWith(shape, *batch));
  return ctx->allocate_output(0, shape);
}

// StatelessRandomBinomial(shape, seed, counts, probs).
template <typename T>
struct StatelessBinomial {
  template <typename U>
  class Op : public OpKernel {
   public:
    absl::Status Compute(KernelContext* ctx) override {
      const Tensor& seed = ctx->input(1);
      if (seed.dims() != 1 || seed.dim_size(0) != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("seed must have shape [2], not ", seed.shape().DebugString()));
      }
      TensorShape batch;
      TW_ASSIGN_OR_RETURN(Tensor * out,
                          AllocateBinomial(ctx, 0, ctx->input(2), ctx->input(3), &batch));
      if (out->NumElements() == 0) return absl::OkStatus();
      TW_ASSIGN_OR_RETURN(PhiloxStream stream, StatelessStream(ctx, false, 1));
      return Binomial::Fill<T, U>(ctx, stream, ctx->input(2), ctx->input(3), batch, out);
    }
  };
};

// StatefulRandomBinomial(resource, algorithm, shape, counts, probs):
// tf.random.Generator's binomial, the state moved on by TF's 256 blocks
// for each of batches * 50 * (samples + 3) outputs.
template <typename T>
struct StatefulBinomial {
  template <typename U>
  class Op : public OpKernel {
   public:
    absl::Status Compute(KernelContext* ctx) override {
      const Tensor& alg = ctx->input(1);
      TensorShape batch;
      TW_ASSIGN_OR_RETURN(Tensor * out,
                          AllocateBinomial(ctx, 2, ctx->input(3), ctx->input(4), &batch));
      if (alg.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("algorithm must be of shape [], not ", alg.shape().DebugString()));
      }
      if (*alg.data<int64_t>() != 1) {  // Philox alone, as TF's (no auto-select)
        return absl::InvalidArgumentError(
            absl::StrCat("Unsupported algorithm id: ", *alg.data<int64_t>()));
      }
      const int64_t batches = batch.num_elements();
      const int64_t samples = batches == 0 ? 0 : out->NumElements() / batches;
      int64_t state[kPhiloxStateSize];
      TW_RETURN_IF_ERROR(ReadAndSkipPhilox(
          ctx, *alg.data<int64_t>(),
          static_cast<uint64_t>(batches * 2 * 100 * (samples + 3) / 4) * kPhiloxBlocksPerOutput,
          state));
      return Binomial::Fill<T, U>(ctx, StreamOfState(state), ctx->input(3), ctx->input(4), batch,
                                  out);
    }
  };
};

template <typename R>
struct PoissonV2 {
  template <typename U>
  using Op = RandomPoissonOp<R, U>;
};
template <typename T>
using PoissonV1 = RandomPoissonOp<T, T>;

template <typename R>
void RegisterPoissonV2() {
  RegisterTypedKernels<PoissonV2<R>::template Op, half, float, double, int32_t, int64_t>(
      KernelDefBuilder("RandomPoissonV2")
          .Device(kDeviceCpu)
          .HostMemory("shape")
          .TypeConstraint("R", DataTypeToEnum<R>::value),
      "dtype");
  RegisterTypedKernels<StatelessPoisson<R>::template Op, half, float, double, int32_t, int64_t>(
      KernelDefBuilder("StatelessRandomPoisson")
          .Device(kDeviceCpu)
          .HostMemory("shape")
          .HostMemory("seed")
          .TypeConstraint("Rtype", DataTypeToEnum<R>::value),
      "dtype");
}

template <typename T>
void RegisterBinomial() {
  RegisterTypedKernels<StatelessBinomial<T>::template Op, half, float, double, int32_t, int64_t>(
      KernelDefBuilder("StatelessRandomBinomial")
          .Device(kDeviceCpu)
          .HostMemory("shape")
          .HostMemory("seed")
          .TypeConstraint("T", DataTypeToEnum<T>::value),
      "dtype");
  RegisterTypedKernels<StatefulBinomial<T>::template Op, half, float, double, int32_t, int64_t>(
      KernelDefBuilder("StatefulRandomBinomial")
          .Device(kDeviceCpu)
          .HostMemory("algorithm")
          .HostMemory("shape")
          .TypeConstraint("T", DataTypeToEnum<T>::value),
      "dtype");
}

TW_REGISTER_KERNELS(random_sampling_ops) {
  RegisterTypedKernels<RandomGammaOp, half, float, double>(
      KernelDefBuilder("RandomGamma").Device(kDeviceCpu).HostMemory("shape"), "T");
  RegisterTypedKernels<PoissonV1, half, float, double>(
      KernelDefBuilder("RandomPoisson").Device(kDeviceCpu).HostMemory("shape"), "dtype");
  RegisterTypedKernels<StatelessGamma<false>::Op, half, float, double>(
      KernelDefBuilder("StatelessRandomGammaV2")
          .Device(kDeviceCpu)
          .HostMemory("shape")
          .HostMemory("seed"),
      "dtype");
  RegisterTypedKernels<StatelessGamma<true>::Op, half, float, double>(
      KernelDefBuilder("StatelessRandomGammaV3")
          .Device(kDeviceCpu)
          .HostMemory("shape")
          .HostMemory("key")
          .HostMemory("counter")
          .HostMemory("alg"),
      "dtype");
  RegisterBinomial<half>();
  RegisterBinomial<float>();
  RegisterBinomial<double>();
  RegisterPoissonV2<half>();
  RegisterPoissonV2<float>();
  RegisterPoissonV2<double>();
  RegisterPoissonV2<int32_t>();
  RegisterPoissonV2<int64_t>();
}

}  // namespace
}  // namespace towerflow
