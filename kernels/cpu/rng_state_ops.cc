// The state steps of TF 2's tf.random.Generator: RngReadAndSkip (and TF
// 2.0's RngSkip) on the generator's int64 resource variable. For Philox
// (alg 1, or 3: auto-select) the state is [counter low, counter high, key];
// the step returns it and moves the 128-bit counter on by 256 * delta
// (the product wrapping in 64 bits, as TF's), so the stateless V2 draws
// that follow (StatelessRandomUniformV2, ...) give TF's numbers. The
// variable is changed in place when no one else holds its buffer, else
// copied first (Note [Variable copy-on-write]). And NonDeterministicInts,
// which seeds a generator from entropy.
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/rng_state.h"
#include "kernels/kernel_util.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

constexpr int64_t kPhilox = 1, kThreeFry = 2, kAutoSelect = 3;

}  // namespace

absl::Status ReadAndSkipPhilox(KernelContext* ctx, int64_t alg, uint64_t blocks, int64_t* old,
                               absl::StatusCode threefry_code) {
  TW_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupResourceVar(ctx, 0));
  absl::MutexLock lock(&var->mu);
  if (!var->initialized) {
    return absl::FailedPreconditionError(
        absl::StrCat("Attempting to use uninitialized value ", var->name()));
  }
  if (var->dtype() != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dtype of RNG state variable must be int64, not ", DataTypeString(var->dtype())));
  }
  const Tensor& state = var->tensor;
  if (state.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("RNG state must have one and only one dimension, not ", state.dims()));
  }
  if (alg == kThreeFry) {
    return absl::Status(threefry_code, "Non-XLA devices don't support the ThreeFry algorithm.");
  }
  if (alg != kPhilox && alg != kAutoSelect) {
    return absl::InvalidArgumentError(absl::StrCat("Unsupported algorithm id: ", alg));
  }
  if (state.dim_size(0) < kPhiloxStateSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("For the Philox algorithm, the size of state must be at least ",
                     kPhiloxStateSize, "; got ", state.dim_size(0)));
  }
  if (old != nullptr) std::copy_n(state.data<int64_t>(), kPhiloxStateSize, old);
  if (!var->tensor.RefCountIsOne()) {  // someone reads the old buffer: copy
    TW_ASSIGN_OR_RETURN(Tensor fresh, CopyForWrite(ctx, var->tensor));
    var->tensor = std::move(fresh);
  }
  auto* words = reinterpret_cast<uint64_t*>(var->tensor.data<int64_t>());
  words[0] += blocks;
  if (words[0] < blocks) ++words[1];
  return absl::OkStatus();
}

namespace {

class RngReadAndSkipOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& alg = ctx->input(1);
    const Tensor& delta = ctx->input(2);
    if (alg.NumElements() != 1 || delta.NumElements() != 1) {
      return absl::InvalidArgumentError("alg and delta must be scalars");
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({kPhiloxStateSize})));
    return ReadAndSkipPhilox(ctx, *alg.data<int32_t>(),
                             *delta.data<uint64_t>() * kPhiloxBlocksPerOutput,
                             out->data<int64_t>());
  }
};

class RngSkipOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& alg = ctx->input(1);
    const Tensor& delta = ctx->input(2);
    if (alg.NumElements() != 1 || delta.NumElements() != 1) {
      return absl::InvalidArgumentError("algorithm and delta must be scalars");
    }
    return ReadAndSkipPhilox(ctx, *alg.data<int64_t>(),
                             static_cast<uint64_t>(*delta.data<int64_t>()) * kPhiloxBlocksPerOutput,
                             nullptr);
  }
};

// NonDeterministicInts(shape): fresh 64-bit numbers (the OS's entropy
// seeding a Mersenne twister per run), cast to dtype, as TF's seeds
// tf.random.Generator.from_non_deterministic_state with.
class NonDeterministicIntsOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    std::random_device entropy;
    std::mt19937_64 bits((uint64_t{entropy()} << 32) | entropy());
    const int64_t n = out->NumElements();
    switch (out->dtype()) {
      case DT_INT32:
        for (int64_t i = 0; i < n; ++i) out->data<int32_t>()[i] = static_cast<int32_t>(bits());
        return absl::OkStatus();
      case DT_UINT32:
        for (int64_t i = 0; i < n; ++i) out->data<uint32_t>()[i] = static_cast<uint32_t>(bits());
        return absl::OkStatus();
      case DT_INT64:
        for (int64_t i = 0; i < n; ++i) out->data<int64_t>()[i] = static_cast<int64_t>(bits());
        return absl::OkStatus();
      case DT_UINT64:
        for (int64_t i = 0; i < n; ++i) out->data<uint64_t>()[i] = bits();
        return absl::OkStatus();
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("Unsupported dtype: ", DataTypeString(out->dtype())));
    }
  }
};

}  // namespace

TW_REGISTER_KERNELS(rng_state_ops) {
  RegisterKernel(KernelDefBuilder("RngReadAndSkip").Device(kDeviceCpu),
                 MakeFactory<RngReadAndSkipOp>());
  RegisterKernel(KernelDefBuilder("RngSkip").Device(kDeviceCpu), MakeFactory<RngSkipOp>());
  KernelDefBuilder ints("NonDeterministicInts");
  ints.Device(kDeviceCpu).HostMemory("shape");
  for (DataType t : {DT_INT32, DT_UINT32, DT_INT64, DT_UINT64}) ints.TypeConstraint("dtype", t);
  RegisterKernel(ints, MakeFactory<NonDeterministicIntsOp>());
}

}  // namespace towerflow
