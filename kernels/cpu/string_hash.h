// The string hashes TF's kernels share and whose numbers graphs keep
// (hash buckets, crossed features): SipHash-2-4 (TF's StrongKeyedHash) and
// TF's FingerprintCat64; FarmHash's Fingerprint64 is <farmhash.h>'s
// util::Fingerprint64.
#ifndef TOWERFLOW_KERNELS_CPU_STRING_HASH_H_
#define TOWERFLOW_KERNELS_CPU_STRING_HASH_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace towerflow {

// The 8 bytes at p as a little-endian number.
inline uint64_t LoadLittle64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// SipHash-2-4 of `s` under the 128-bit key (k0, k1): the keyed hash of
// TF's StringToHashBucketStrong (highwayhash's SipHash).
inline uint64_t SipHash24(uint64_t k0, uint64_t k1, absl::string_view s) {
  uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
  uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
  const auto rotl = [](uint64_t x, int b) { return (x << b) | (x >> (64 - b)); };
  const auto rounds = [&](int n) {
    for (int i = 0; i < n; ++i) {
      v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
      v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
      v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
      v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
    }
  };
  const auto word = [&](uint64_t m) {
    v3 ^= m;
    rounds(2);
    v0 ^= m;
  };
  const size_t whole = s.size() / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) word(LoadLittle64(s.data() + i));
  uint64_t last = static_cast<uint64_t>(s.size()) << 56;
  for (size_t i = whole; i < s.size(); ++i) {
    last |= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * (i - whole));
  }
  word(last);
  v2 ^= 0xff;
  rounds(4);
  return v0 ^ v1 ^ v2 ^ v3;
}

// TF's FingerprintCat64: two fingerprints combined, in order (the hash of
// a crossed feature from its parts').
inline uint64_t FingerprintCat64(uint64_t a, uint64_t b) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ull;
  const auto shift_mix = [](uint64_t v) { return v ^ (v >> 47); };
  uint64_t result = a ^ kMul;
  result ^= shift_mix(b * kMul) * kMul;
  result *= kMul;
  result = shift_mix(result) * kMul;
  return shift_mix(result);
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_STRING_HASH_H_
