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

// TF's Philox stream (its PhiloxRandom): a 128-bit counter and a 64-bit
// key; each block advances the counter by one. Seeded from a node's seed and
// seed2 attrs, the key is seed and the counter's high half seed2, as TF's
// GuardedPhiloxRandom, so the seeded random ops draw TF's numbers.
class PhiloxStream {
 public:
  TW_PHILOX_HOST_DEVICE PhiloxStream(uint64_t seed, uint64_t seed2)
      : counter_{{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)}},
        key_{{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}} {}
  TW_PHILOX_HOST_DEVICE PhiloxStream(PhiloxBlock counter, PhiloxKey key)
      : counter_(counter), key_(key) {}

  // The block at the counter; the counter moves on by one.
  TW_PHILOX_HOST_DEVICE PhiloxBlock Next() {
    const PhiloxBlock out = Philox(counter_, key_);
    Skip(1);
    return out;
  }
  // Moves the counter on by `blocks` (with carries through all 128 bits).
  TW_PHILOX_HOST_DEVICE void Skip(uint64_t blocks) {
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

// TF's uniform reals from random words: a float in [0, 1) from a word's 23
// low bits, a double from two words' 52 (the first word's 20 low bits
// high), each made as [1, 2) less one, so exact.
TW_PHILOX_HOST_DEVICE inline float PhiloxFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits) - 1.0f;
#else
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
#endif
}
TW_PHILOX_HOST_DEVICE inline double PhiloxDouble(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (uint64_t{1023} << 52) | (uint64_t{hi & 0xfffffu} << 32) | lo;
#ifdef __CUDA_ARCH__
  return __longlong_as_double(static_cast<long long>(bits)) - 1.0;
#else
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
#endif
}

// Box-Muller as TF's: the first uniform kept off 0, the angle 2 pi u
// rounded to float for floats (the CPU's logf and sincosf; the GPU's differ
// from them in the last place at most).
TW_PHILOX_HOST_DEVICE inline void PhiloxBoxMuller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = PhiloxFloat(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const float v1 = static_cast<float>(2.0f * 3.14159265358979323846 * PhiloxFloat(x1));
  const float u2 = sqrtf(-2.0f * logf(u1));
  sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}
TW_PHILOX_HOST_DEVICE inline void PhiloxBoxMuller(const uint32_t* x, double* d0, double* d1) {
  double u1 = PhiloxDouble(x[0], x[1]);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double v1 = 2 * 3.14159265358979323846 * PhiloxDouble(x[2], x[3]);
  const double u2 = sqrt(-2.0 * log(u1));
  sincos(v1, d0, d1);
  *d0 *= u2;
  *d1 *= u2;
}

// 32-bit words of a stream, one at a time (the four of a block in order),
// and TF's draws from them (its SimplePhilox): a float in [0, 1) from a
// word's 23 low bits, a double from two words, 64-bit words (low word
// first), and exact uniform integers in [0, n) by rejecting the low words
// that would bias them.
class PhiloxWords {
 public:
  TW_PHILOX_HOST_DEVICE explicit PhiloxWords(PhiloxStream* stream) : stream_(stream) {}
  TW_PHILOX_HOST_DEVICE uint32_t Next() {
    if (used_ == 4) {
      block_ = stream_->Next();
      used_ = 0;
    }
    return block_.v[used_++];
  }
  TW_PHILOX_HOST_DEVICE uint64_t Next64() {
    const uint32_t lo = Next(), hi = Next();
    return lo | static_cast<uint64_t>(hi) << 32;
  }
  TW_PHILOX_HOST_DEVICE float UniformFloat() { return PhiloxFloat(Next()); }
  TW_PHILOX_HOST_DEVICE double UniformDouble() {
    const uint32_t hi = Next(), lo = Next();
    return PhiloxDouble(hi, lo);
  }
  TW_PHILOX_HOST_DEVICE uint32_t Uniform(uint32_t n) {
    return UniformInt(n, [this] { return Next(); });
  }
  TW_PHILOX_HOST_DEVICE uint64_t Uniform64(uint64_t n) {
    return UniformInt(n, [this] { return Next64(); });
  }

 private:
  template <typename U, typename Draw>
  TW_PHILOX_HOST_DEVICE static U UniformInt(U n, Draw draw) {
    if (n == 0) return draw() * n;
    if ((n & (n - 1)) == 0) return draw() & (n - 1);
    const U reject = static_cast<U>(~U{0} % n + 1);
    U r;
    do {
      r = draw();
    } while (r < reject);
    return r % n;
  }

  PhiloxStream* stream_;
  PhiloxBlock block_{};
  int used_ = 4;
};

// The real distributions of TF's random ops and how TF's FillPhiloxRandom
// lays them out: the output in groups (4 floats or 2 doubles), group g
// computed from the stream alone, so groups fill in any order, on any
// device, with TF's numbers.
// - uniform: group g is block g, one word per float, two per double;
// - normal: group g is block g through Box-Muller (pairs of words for
//   floats, of word pairs for doubles);
// - truncated normal: group g reads words from 256 blocks on per group (its
//   4 floats' or 2 doubles' reserve of 256 words each), drawing normals in
//   pairs and keeping those under 2 in magnitude, in order.
// Every call of a seeded op reserves 256 blocks per output (TF's
// ReserveRandomOutputs), so runs continue the stream as TF's do.
enum class PhiloxDist { kUniform, kNormal, kTruncatedNormal };

constexpr uint64_t kPhiloxBlocksPerOutput = 256;

// Elements per group: 4 floats, 2 doubles.
template <typename T>
TW_PHILOX_HOST_DEVICE constexpr int PhiloxGroupSize() {
  return sizeof(T) == 8 ? 2 : 4;
}

// Group g of `dist` from `stream` (at the call's first block) into out
// [PhiloxGroupSize<T>()]. T is float or double.
template <typename T>
TW_PHILOX_HOST_DEVICE inline void PhiloxGroup(PhiloxDist dist, PhiloxStream stream, uint64_t g,
                                              T* out) {
  constexpr bool kFloat = sizeof(T) == 4;
  if (dist == PhiloxDist::kTruncatedNormal) {
    stream.Skip(g * (kFloat ? 256 : 128));
    PhiloxWords words(&stream);
    int kept = 0;
    while (kept < PhiloxGroupSize<T>()) {
      T pair[2];
      if constexpr (kFloat) {
        const uint32_t x0 = words.Next();
        const uint32_t x1 = words.Next();
        PhiloxBoxMuller(x0, x1, &pair[0], &pair[1]);
      } else {
        uint32_t x[4];
        for (uint32_t& w : x) w = words.Next();
        PhiloxBoxMuller(x, &pair[0], &pair[1]);
      }
      for (int k = 0; k < 2 && kept < PhiloxGroupSize<T>(); ++k) {
        if (fabs(pair[k]) < T(2)) out[kept++] = pair[k];
      }
    }
    return;
  }
  stream.Skip(g);
  const PhiloxBlock b = stream.Next();
  if constexpr (kFloat) {
    if (dist == PhiloxDist::kUniform) {
      for (int k = 0; k < 4; ++k) out[k] = PhiloxFloat(b.v[k]);
    } else {
      PhiloxBoxMuller(b.v[0], b.v[1], &out[0], &out[1]);
      PhiloxBoxMuller(b.v[2], b.v[3], &out[2], &out[3]);
    }
  } else if (dist == PhiloxDist::kUniform) {
    out[0] = PhiloxDouble(b.v[0], b.v[1]);
    out[1] = PhiloxDouble(b.v[2], b.v[3]);
  } else {
    PhiloxBoxMuller(b.v, &out[0], &out[1]);
  }
}

}  // namespace towerflow

#undef TW_PHILOX_HOST_DEVICE

#endif  // TOWERFLOW_CORE_PHILOX_H_
