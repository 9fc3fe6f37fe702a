// The state every seeded random kernel keeps, on any device: TF's Philox
// stream from the node's seed and seed2 (random bits from the OS when both
// are 0, as TF) and its place in it. See Note [Random streams] in
// kernels/cpu/random_ops.cc.
#ifndef TOWERFLOW_KERNELS_RANDOM_OP_BASE_H_
#define TOWERFLOW_KERNELS_RANDOM_OP_BASE_H_

#include <cstdint>
#include <random>

#include "absl/synchronization/mutex.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "framework/kernel.h"

namespace towerflow {

// TF's stream for seeds `seed` and `seed2` (its GuardedPhiloxRandom: fresh
// random bits when both are 0).
inline PhiloxStream SeededStream(int64_t seed, int64_t seed2) {
  if (seed == 0 && seed2 == 0) {
    std::random_device device;
    seed = (static_cast<int64_t>(device()) << 32) | device();
    seed2 = (static_cast<int64_t>(device()) << 32) | device();
  }
  return PhiloxStream(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
}

// The stream of a node's seed and seed2 attrs.
inline absl::StatusOr<PhiloxStream> SeededStream(const KernelConstruction& c) {
  int64_t seed = 0, seed2 = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("seed", &seed));
  TW_RETURN_IF_ERROR(c.GetAttr("seed2", &seed2));
  return SeededStream(seed, seed2);
}

// A seeded kernel's stream, shared by its calls: each call reserves the
// blocks it may read and the stream moves on past them, as TF's
// GuardedPhiloxRandom, so successive runs draw TF's successive numbers.
class GuardedPhilox {
 public:
  absl::Status Init(const KernelConstruction& c) {
    TW_ASSIGN_OR_RETURN(PhiloxStream stream, SeededStream(c));
    Init(stream);
    return absl::OkStatus();
  }
  void Init(const PhiloxStream& stream) {
    absl::MutexLock lock(&mu_);
    initial_ = stream;
    next_ = stream;
  }
  // The stream at the call's first block; the next call starts `blocks` on.
  PhiloxStream Reserve(uint64_t blocks) {
    absl::MutexLock lock(&mu_);
    const PhiloxStream call = next_;
    next_.Skip(blocks);
    return call;
  }
  // TF's ReserveRandomOutputs: 256 blocks per output.
  PhiloxStream ReserveOutputs(int64_t n) {
    return Reserve(static_cast<uint64_t>(n) * kPhiloxBlocksPerOutput);
  }
  // The stream before any call (for kernels that keep their place in it on
  // a device).
  PhiloxStream initial() const {
    absl::MutexLock lock(&mu_);
    return initial_;
  }

 private:
  mutable absl::Mutex mu_;
  PhiloxStream initial_ ABSL_GUARDED_BY(mu_) = PhiloxStream(0, 0);
  PhiloxStream next_ ABSL_GUARDED_BY(mu_) = PhiloxStream(0, 0);
};

// The seeded random ops' kernels (seed and seed2 attrs).
class RandomOpBase : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return generator_.Init(c); }

 protected:
  GuardedPhilox& generator() { return generator_; }

 private:
  GuardedPhilox generator_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_RANDOM_OP_BASE_H_
