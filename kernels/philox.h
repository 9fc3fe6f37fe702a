// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3") and the draws the random kernels make from it, compiled for the host
// and (by nvcc) for the device, so a seeded random op gives the same numbers
// on a CPU and a GPU. See Note [Random streams] in kernels/cpu/random_ops.cc.
#ifndef TOWERFLOW_KERNELS_PHILOX_H_
#define TOWERFLOW_KERNELS_PHILOX_H_

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define TW_HOST_DEVICE __host__ __device__
#else
#define TW_HOST_DEVICE
#endif

namespace towerflow {

struct PhiloxBlock {
  uint32_t v[4];
};
struct PhiloxKey {
  uint32_t k[2];
};

TW_HOST_DEVICE inline PhiloxBlock Philox(PhiloxBlock ctr, PhiloxKey key) {
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
TW_HOST_DEVICE inline PhiloxBlock PhiloxDraw(PhiloxKey key, uint64_t index, uint32_t attempt) {
  return Philox(
      PhiloxBlock{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), attempt, 0}},
      key);
}

// A uniform number in [0, 1) from 32 random bits (24 significant, so it is
// exact as a float).
TW_HOST_DEVICE inline double PhiloxUniform01(uint32_t bits) {
  return (bits >> 8) * (1.0 / 16777216.0);
}

// A standard normal from one block (Box-Muller on its first two words).
TW_HOST_DEVICE inline double PhiloxNormal(const PhiloxBlock& b) {
  const double u1 = (static_cast<double>(b.v[0]) + 1.0) / 4294967296.0;  // (0, 1]
  const double u2 = PhiloxUniform01(b.v[1]);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

// The normal of element `index`, redrawn while |x| > 2 when `truncated`.
TW_HOST_DEVICE inline double PhiloxNormalAt(PhiloxKey key, uint64_t index, bool truncated) {
  double x = PhiloxNormal(PhiloxDraw(key, index, 0));
  for (uint32_t attempt = 1; truncated && fabs(x) > 2.0; ++attempt) {
    x = PhiloxNormal(PhiloxDraw(key, index, attempt));
  }
  return x;
}

}  // namespace towerflow

#undef TW_HOST_DEVICE

#endif  // TOWERFLOW_KERNELS_PHILOX_H_
