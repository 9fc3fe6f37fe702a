// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3") and the draws the random kernels make from it, compiled for the host
// and (by nvcc) for the device, so a seeded random op gives the same numbers
// on a CPU and a GPU. See Note [Random streams] in kernels/cpu/random_ops.cc.
#ifndef TOWERFLOW_CORE_PHILOX_H_
#define TOWERFLOW_CORE_PHILOX_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define TW_PHILOX_HOST_DEVICE __host__ __device__
#else
#define TW_PHILOX_HOST_DEVICE
#endif

namespace towerflow {

struct PhiloxBlock {
  uint32_t v[4];
};
struct PhiloxKey {
  uint32_t k[2];
};

TW_PHILOX_HOST_DEVICE inline PhiloxBlock Philox(PhiloxBlock ctr, PhiloxKey key) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kM0} * ctr.v[0], p1 = uint64_t{kM1} * ctr.v[2];
    ctr = PhiloxBlock{
        {static_cast<uint32_t>(p1 >> 32) ^ ctr.v[1] ^ key.k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ ctr.v[3] ^ key.k[1], static_cast<uint32_t>(p0)}};
    key.k[0] += kW0;
    key.k[1] += kW1;
  }
  return ctr;
}

// The block of element `index`, redraw `attempt` (TruncatedNormal's
// rejections), under `key`.
TW_PHILOX_HOST_DEVICE inline PhiloxBlock PhiloxDraw(PhiloxKey key, uint64_t index,
                                                    uint32_t attempt) {
  return Philox(
      PhiloxBlock{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), attempt, 0}},
      key);
}

// A uniform number in [0, 1) from 32 random bits (24 significant, so it is
// exact as a float).
TW_PHILOX_HOST_DEVICE inline double PhiloxUniform01(uint32_t bits) {
  return (bits >> 8) * (1.0 / 16777216.0);
}

// A standard normal from one block (Box-Muller on its first two words).
TW_PHILOX_HOST_DEVICE inline double PhiloxNormal(const PhiloxBlock& b) {
  const double u1 = (static_cast<double>(b.v[0]) + 1.0) / 4294967296.0;  // (0, 1]
  const double u2 = PhiloxUniform01(b.v[1]);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

// The normal of element `index`, redrawn while |x| > 2 when `truncated`.
TW_PHILOX_HOST_DEVICE inline double PhiloxNormalAt(PhiloxKey key, uint64_t index, bool truncated) {
  double x = PhiloxNormal(PhiloxDraw(key, index, 0));
  for (uint32_t attempt = 1; truncated && fabs(x) > 2.0; ++attempt) {
    x = PhiloxNormal(PhiloxDraw(key, index, attempt));
  }
  return x;
}

// TF's own Philox stream (its PhiloxRandom, GuardedPhiloxRandom and
// SimplePhilox), for the ops whose numbers must be TF's for the same seeds
// (SampleDistortedBoundingBox): a 128-bit counter whose high half is seed2
// and a key that is seed; each block advances the counter by one.
class PhiloxStream {
 public:
  PhiloxStream(uint64_t seed, uint64_t seed2)
      : counter_{{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)}},
        key_{{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}} {}
  PhiloxStream(PhiloxBlock counter, PhiloxKey key) : counter_(counter), key_(key) {}

  // The block at the counter; the counter moves on by one.
  PhiloxBlock Next() {
    const PhiloxBlock out = Philox(counter_, key_);
    Skip(1);
    return out;
  }
  // Moves the counter on by `blocks` (with carries through all 128 bits).
  void Skip(uint64_t blocks) {
    const uint32_t lo = static_cast<uint32_t>(blocks);
    uint32_t hi = static_cast<uint32_t>(blocks >> 32);
    counter_.v[0] += lo;
    if (counter_.v[0] < lo) ++hi;
    counter_.v[1] += hi;
    if (counter_.v[1] < hi && ++counter_.v[2] == 0) ++counter_.v[3];
  }

 private:
  PhiloxBlock counter_;
  PhiloxKey key_;
};

// The key and counter TF's stateless random ops run Philox from: the two
// seeds, as a counter, scrambled by one Philox block under a fixed key; the
// block's first half is the key, its second the counter's high half.
inline void StatelessKeyCounter(uint64_t seed0, uint64_t seed1, PhiloxKey* key,
                                PhiloxBlock* counter) {
  const PhiloxBlock mix =
      Philox(PhiloxBlock{{static_cast<uint32_t>(seed0), static_cast<uint32_t>(seed0 >> 32),
                          static_cast<uint32_t>(seed1), static_cast<uint32_t>(seed1 >> 32)}},
             PhiloxKey{{0x3ec8f720u, 0x02461e29u}});
  *key = PhiloxKey{{mix.v[0], mix.v[1]}};
  *counter = PhiloxBlock{{0, 0, mix.v[2], mix.v[3]}};
}

// 32-bit words of a stream, one at a time (the four of a block in order),
// and TF's draws from them: a float in [0, 1) from the word's 23 low bits,
// and an exact uniform integer in [0, n) by rejecting the low words that
// would bias it.
class PhiloxWords {
 public:
  explicit PhiloxWords(PhiloxStream* stream) : stream_(stream) {}
  uint32_t Next() {
    if (used_ == 4) {
      block_ = stream_->Next();
      used_ = 0;
    }
    return block_.v[used_++];
  }
  float UniformFloat() {
    const uint32_t bits = (127u << 23) | (Next() & 0x7fffffu);  // [1, 2)
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f - 1.0f;
  }
  uint32_t Uniform(uint32_t n) {
    if (n == 0) return Next() * n;
    if ((n & (n - 1)) == 0) return Next() & (n - 1);
    const uint32_t reject = 0xffffffffu % n + 1;
    uint32_t r;
    do {
      r = Next();
    } while (r < reject);
    return r % n;
  }

 private:
  PhiloxStream* stream_;
  PhiloxBlock block_{};
  int used_ = 4;
};

}  // namespace towerflow

#undef TW_PHILOX_HOST_DEVICE

#endif  // TOWERFLOW_CORE_PHILOX_H_
