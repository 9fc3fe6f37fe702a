// The state every seeded random kernel keeps, on any device: its Philox key
// from the node's seed and seed2 (random bits from the OS when both are 0,
// as TF) and the next unused counter. See Note [Random streams] in
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

// TF's own stream for a node's seed and seed2 attrs (its GuardedPhiloxRandom:
// fresh random bits when both are 0), for the ops whose draws must be TF's
// (SampleDistortedBoundingBox, Multinomial).
inline absl::StatusOr<PhiloxStream> SeededStream(const KernelConstruction& c) {
  int64_t seed = 0, seed2 = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("seed", &seed));
  TW_RETURN_IF_ERROR(c.GetAttr("seed2", &seed2));
  if (seed == 0 && seed2 == 0) {
    std::random_device device;
    seed = (static_cast<int64_t>(device()) << 32) | device();
    seed2 = (static_cast<int64_t>(device()) << 32) | device();
  }
  return PhiloxStream(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
}

class RandomOpBase : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    int64_t seed = 0, seed2 = 0;
    TW_RETURN_IF_ERROR(c.GetAttr("seed", &seed));
    TW_RETURN_IF_ERROR(c.GetAttr("seed2", &seed2));
    if (seed == 0 && seed2 == 0) {
      std::random_device rd;
      seed = rd();
      seed2 = rd();
    }
    // Mix both seeds into the 64-bit key.
    const PhiloxBlock k =
        Philox(PhiloxBlock{{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                            static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)}},
               PhiloxKey{{0x5EEDu, 0xC0FFEEu}});
    key_ = PhiloxKey{{k.v[0], k.v[1]}};
    return absl::OkStatus();
  }

 protected:
  // The first counter of `n` fresh ones.
  uint64_t Reserve(uint64_t n) {
    absl::MutexLock lock(&mu_);
    const uint64_t base = next_;
    next_ += n;
    return base;
  }
  PhiloxKey key() const { return key_; }

 private:
  PhiloxKey key_{};
  absl::Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_RANDOM_OP_BASE_H_
