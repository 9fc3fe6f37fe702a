// The stateless random ops, TF's numbers to the bit: Philox from the key and
// counter StatelessKeyCounter derives from the seed (the V2 forms take them
// as inputs), read as TF's FillPhiloxRandom reads it:
// - uniforms, normals and truncated normals: core/philox.h's groups
//   (kernels/cpu/philox_fill.h), in half, bfloat16, float and double;
// - integers in [lo, hi): lo + a word (two for 64 bits) modulo hi - lo
//   (TF's modulo, slightly biased for ranges that do not divide 2^32);
// - integers over a type's whole range: the word (two words, low first).
// And tf.random.Generator's Stateful* draws: the same from its state
// variable's counter and key.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/philox_fill.h"
#include "kernels/cpu/rng_state.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

constexpr int32_t kPhilox = 1, kThreeFry = 2, kAutoSelect = 3;

}  // namespace

absl::StatusOr<PhiloxStream> StatelessStream(KernelContext* ctx, bool v2, int first) {
  PhiloxKey key;
  PhiloxBlock counter;
  if (!v2) {
    const Tensor& seed = ctx->input(first);
    if (seed.dims() != 1 || seed.dim_size(0) != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("seed must have shape [2], not ", seed.shape().DebugString()));
    }
    // int32 seeds widen with their sign, as TF's.
    StatelessKeyCounter(static_cast<uint64_t>(IntAt(seed, 0)),
                        static_cast<uint64_t>(IntAt(seed, 1)), &key, &counter);
    return PhiloxStream(counter, key);
  }
  const Tensor& key_t = ctx->input(first);
  const Tensor& counter_t = ctx->input(first + 1);
  const Tensor& alg_t = ctx->input(first + 2);
  if (alg_t.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("alg must be a scalar, got ", alg_t.shape().DebugString()));
  }
  const int32_t alg = *alg_t.data<int32_t>();
  if (alg != kPhilox && alg != kAutoSelect) {
    return alg == kThreeFry
               ? absl::InvalidArgumentError("Unsupported algorithm id: 2")
               : absl::InvalidArgumentError(absl::StrCat("Unsupported algorithm id: ", alg));
  }
  if (key_t.dims() != 1 || key_t.dim_size(0) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("key must have shape [1], not ", key_t.shape().DebugString(),
                     ". (Note that batched keys are not supported yet.)"));
  }
  if (counter_t.dims() != 1 || counter_t.dim_size(0) < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "counter must be a vector of at least 2 elements, got ", counter_t.shape().DebugString()));
  }
  const uint64_t k = key_t.data<uint64_t>()[0];
  const uint64_t c0 = counter_t.data<uint64_t>()[0], c1 = counter_t.data<uint64_t>()[1];
  key = PhiloxKey{{static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)}};
  counter = PhiloxBlock{{static_cast<uint32_t>(c0), static_cast<uint32_t>(c0 >> 32),
                         static_cast<uint32_t>(c1), static_cast<uint32_t>(c1 >> 32)}};
  return PhiloxStream(counter, key);
}

namespace {

// The output of the shape input `input`.
absl::StatusOr<Tensor*> AllocateShaped(KernelContext* ctx, int input = 0) {
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(input), "shape"));
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  return ctx->allocate_output(0, shape);
}

template <typename T, PhiloxDist kDist, bool kV2>
class StatelessRandomOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(PhiloxStream stream, StatelessStream(ctx, kV2, 1));
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateShaped(ctx));
    FillPhilox(kDist, stream, out->data<T>(), out->NumElements(), ctx->intra_op_pool());
    return absl::OkStatus();
  }
};

// minval and maxval, inputs `first` and `first` + 1, are scalars (TF's
// messages).
absl::Status CheckScalarBounds(KernelContext* ctx, int first) {
  for (const auto& [what, t] : {std::pair<const char*, const Tensor*>{"minval", &ctx->input(first)},
                                {"maxval", &ctx->input(first + 1)}}) {
    if (t->dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be 0-D, got shape ", t->shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

// Their values, minval < maxval.
template <typename T>
absl::StatusOr<std::pair<T, T>> OrderedBounds(KernelContext* ctx, int first) {
  const T lo = *ctx->input(first).data<T>(), hi = *ctx->input(first + 1).data<T>();
  if (!(lo < hi)) {
    return absl::InvalidArgumentError(absl::StrCat("Need minval < maxval, got ", lo, " >= ", hi));
  }
  return std::make_pair(lo, hi);
}

// n integers in [lo, hi): lo + a word (two words, low first, for 64 bits)
// modulo hi - lo, as TF's UniformDistribution. REQUIRES: lo < hi.
template <typename T>
void FillInts(PhiloxStream stream, T lo, T hi, T* y, int64_t n) {
  using U = std::make_unsigned_t<T>;
  const U range = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  PhiloxWords words(&stream);
  for (int64_t i = 0; i < n; ++i) {
    U bits;
    if constexpr (sizeof(T) == 4) {
      bits = words.Next();
    } else {
      const uint64_t low = words.Next();
      bits = static_cast<U>(low | (uint64_t{words.Next()} << 32));
    }
    y[i] = static_cast<T>(static_cast<U>(lo) + bits % range);
  }
}

// n integers over T's whole range: a word each (two, low first, for 64
// bits), as TF's UniformFullIntDistribution.
template <typename T>
void FillFullInts(PhiloxStream stream, T* y, int64_t n) {
  using U = std::make_unsigned_t<T>;
  PhiloxWords words(&stream);
  for (int64_t i = 0; i < n; ++i) {
    U bits = words.Next();
    if constexpr (sizeof(T) == 8) bits |= uint64_t{words.Next()} << 32;
    y[i] = static_cast<T>(bits);
  }
}

template <typename T, bool kV2>
class StatelessRandomIntOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int bounds = kV2 ? 4 : 2;
    TW_RETURN_IF_ERROR(CheckScalarBounds(ctx, bounds));
    TW_ASSIGN_OR_RETURN(PhiloxStream stream, StatelessStream(ctx, kV2, 1));
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateShaped(ctx));
    const int64_t n = out->NumElements();
    if (n == 0) return absl::OkStatus();  // TF's: no draws, no order to check
    TW_ASSIGN_OR_RETURN(const auto range, OrderedBounds<T>(ctx, bounds));
    FillInts(stream, range.first, range.second, out->data<T>(), n);
    return absl::OkStatus();
  }
};

template <typename T, bool kV2>
class StatelessRandomFullIntOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    if (!kV2 && ctx->input(1).dtype() != DT_INT32 && ctx->input(1).dtype() != DT_INT64) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid seed type: ", DataTypeString(ctx->input(1).dtype())));
    }
    TW_ASSIGN_OR_RETURN(PhiloxStream stream, StatelessStream(ctx, kV2, 1));
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateShaped(ctx));
    FillFullInts(stream, out->data<T>(), out->NumElements());
    return absl::OkStatus();
  }
};

// tf.random.Generator's draws (StatefulUniform, StatefulStandardNormalV2,
// StatefulTruncatedNormal, StatefulUniformInt, StatefulUniformFullInt):
// the stateless V2 draws from the state variable's counter and key, the
// counter then moved on by 256 per output (TF's). Inputs: the state, the
// algorithm, the shape (and the bounds).
enum class Draw { kUniform, kNormal, kTruncated, kInt, kFullInt };

template <typename T, Draw kDraw>
class StatefulRandomOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& alg = ctx->input(1);
    if (alg.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input 1 (0-based) must have shape [], not ", alg.shape().DebugString()));
    }
    std::pair<T, T> range{};
    if constexpr (kDraw == Draw::kInt) {
      TW_RETURN_IF_ERROR(CheckScalarBounds(ctx, 3));
      TW_ASSIGN_OR_RETURN(range, OrderedBounds<T>(ctx, 3));  // checked even with no draws, as TF
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateShaped(ctx, 2));
    const int64_t n = out->NumElements();
    int64_t state[kPhiloxStateSize];
    TW_RETURN_IF_ERROR(ReadAndSkipPhilox(ctx, *alg.data<int64_t>(),
                                         static_cast<uint64_t>(n) * kPhiloxBlocksPerOutput, state,
                                         absl::StatusCode::kUnimplemented));
    const PhiloxStream stream = StreamOfState(state);
    T* y = out->data<T>();
    if constexpr (kDraw == Draw::kInt) {
      FillInts(stream, range.first, range.second, y, n);
    } else if constexpr (kDraw == Draw::kFullInt) {
      FillFullInts(stream, y, n);
    } else {
      FillPhilox(kDraw == Draw::kUniform  ? PhiloxDist::kUniform
                 : kDraw == Draw::kNormal ? PhiloxDist::kNormal
                                          : PhiloxDist::kTruncatedNormal,
                 stream, y, n, ctx->intra_op_pool());
    }
    return absl::OkStatus();
  }
};

template <Draw kDraw>
struct StatefulOps {
  template <typename T>
  using Op = StatefulRandomOp<T, kDraw>;
};

// StatelessRandomGetKeyCounter, and with kAlg StatelessRandomGetKeyCounterAlg
// (its third output the algorithm, Philox).
template <bool kAlg>
class GetKeyCounterOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(PhiloxStream unused, StatelessStream(ctx, false, 0));
    (void)unused;
    const Tensor& seed = ctx->input(0);
    PhiloxKey key;
    PhiloxBlock counter;
    StatelessKeyCounter(static_cast<uint64_t>(IntAt(seed, 0)),
                        static_cast<uint64_t>(IntAt(seed, 1)), &key, &counter);
    TW_ASSIGN_OR_RETURN(Tensor * key_t, ctx->allocate_output(0, TensorShape({1})));
    TW_ASSIGN_OR_RETURN(Tensor * counter_t, ctx->allocate_output(1, TensorShape({2})));
    key_t->data<uint64_t>()[0] = key.k[0] | (uint64_t{key.k[1]} << 32);
    counter_t->data<uint64_t>()[0] = counter.v[0] | (uint64_t{counter.v[1]} << 32);
    counter_t->data<uint64_t>()[1] = counter.v[2] | (uint64_t{counter.v[3]} << 32);
    if constexpr (kAlg) {
      TW_ASSIGN_OR_RETURN(Tensor * alg, ctx->allocate_output(2, TensorShape({})));
      *alg->data<int32_t>() = kPhilox;
    }
    return absl::OkStatus();
  }
};

class GetAlgOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * alg, ctx->allocate_output(0, TensorShape({})));
    *alg->data<int32_t>() = kPhilox;
    return absl::OkStatus();
  }
};

template <PhiloxDist kDist>
struct Ops {
  template <typename T>
  using V1 = StatelessRandomOp<T, kDist, false>;
  template <typename T>
  using V2 = StatelessRandomOp<T, kDist, true>;
};
template <typename T>
using IntV1 = StatelessRandomIntOp<T, false>;
template <typename T>
using IntV2 = StatelessRandomIntOp<T, true>;
template <typename T>
using FullIntV1 = StatelessRandomFullIntOp<T, false>;
template <typename T>
using FullIntV2 = StatelessRandomFullIntOp<T, true>;

TW_REGISTER_KERNELS(stateless_random_ops) {
  const auto cpu = [](const std::string& op, bool v2) {
    KernelDefBuilder b(op);
    b.Device(kDeviceCpu).HostMemory("shape");
    if (v2) {
      b.HostMemory("key").HostMemory("counter").HostMemory("alg");
    } else {
      b.HostMemory("seed");
    }
    return b;
  };
  RegisterTypedKernels<Ops<PhiloxDist::kUniform>::V1, half, bfloat16, float, double>(
      cpu("StatelessRandomUniform", false), "dtype");
  RegisterTypedKernels<Ops<PhiloxDist::kUniform>::V2, half, bfloat16, float, double>(
      cpu("StatelessRandomUniformV2", true), "dtype");
  RegisterTypedKernels<Ops<PhiloxDist::kNormal>::V1, half, bfloat16, float, double>(
      cpu("StatelessRandomNormal", false), "dtype");
  RegisterTypedKernels<Ops<PhiloxDist::kNormal>::V2, half, bfloat16, float, double>(
      cpu("StatelessRandomNormalV2", true), "dtype");
  RegisterTypedKernels<Ops<PhiloxDist::kTruncatedNormal>::V1, half, bfloat16, float, double>(
      cpu("StatelessTruncatedNormal", false), "dtype");
  RegisterTypedKernels<Ops<PhiloxDist::kTruncatedNormal>::V2, half, bfloat16, float, double>(
      cpu("StatelessTruncatedNormalV2", true), "dtype");
  RegisterTypedKernels<IntV1, int32_t, int64_t>(
      cpu("StatelessRandomUniformInt", false).HostMemory("minval").HostMemory("maxval"), "dtype");
  RegisterTypedKernels<IntV2, int32_t, int64_t, uint32_t, uint64_t>(
      cpu("StatelessRandomUniformIntV2", true).HostMemory("minval").HostMemory("maxval"), "dtype");
  RegisterTypedKernels<FullIntV1, int32_t, int64_t, uint32_t, uint64_t>(
      cpu("StatelessRandomUniformFullInt", false), "dtype");
  RegisterTypedKernels<FullIntV2, int32_t, int64_t, uint32_t, uint64_t>(
      cpu("StatelessRandomUniformFullIntV2", true), "dtype");
  RegisterKernel(KernelDefBuilder("StatelessRandomGetKeyCounter").Device(kDeviceCpu),
                 MakeFactory<GetKeyCounterOp<false>>());
  RegisterKernel(KernelDefBuilder("StatelessRandomGetKeyCounterAlg").Device(kDeviceCpu),
                 MakeFactory<GetKeyCounterOp<true>>());
  RegisterKernel(KernelDefBuilder("StatelessRandomGetAlg").Device(kDeviceCpu),
                 MakeFactory<GetAlgOp>());
  const auto stateful = [](const std::string& op) {
    KernelDefBuilder b(op);
    b.Device(kDeviceCpu).HostMemory("algorithm").HostMemory("shape");
    return b;
  };
  RegisterTypedKernels<StatefulOps<Draw::kUniform>::Op, half, bfloat16, float, double>(
      stateful("StatefulUniform"), "dtype");
  RegisterTypedKernels<StatefulOps<Draw::kNormal>::Op, half, bfloat16, float, double>(
      stateful("StatefulStandardNormalV2"), "dtype");
  RegisterTypedKernels<StatefulOps<Draw::kTruncated>::Op, half, bfloat16, float, double>(
      stateful("StatefulTruncatedNormal"), "dtype");
  RegisterTypedKernels<StatefulOps<Draw::kInt>::Op, int32_t, int64_t>(
      stateful("StatefulUniformInt").HostMemory("minval").HostMemory("maxval"), "dtype");
  RegisterTypedKernels<StatefulOps<Draw::kFullInt>::Op, int32_t, int64_t, uint32_t, uint64_t>(
      stateful("StatefulUniformFullInt"), "dtype");
}

}  // namespace
}  // namespace towerflow
