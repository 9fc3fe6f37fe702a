// The CPU's fill of TF's random distributions (core/philox.h's groups) into
// an output, over the intra-op pool, for the seeded, stateless and
// tf.random.Generator ops alike, and the stateless ops' streams. half and bfloat16 take TF's own
// forms: uniforms from a word's 10 (7) low bits, normals computed in float and rounded, four to a
// group as floats.
#ifndef TOWERFLOW_KERNELS_CPU_PHILOX_FILL_H_
#define TOWERFLOW_KERNELS_CPU_PHILOX_FILL_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "absl/status/statusor.h"
#include "core/float16.h"
#include "core/philox.h"
#include "framework/kernel_context.h"
#include "framework/threadpool.h"

namespace towerflow {

// n values of `dist` drawn from `stream` into out (T: half, bfloat16, float
// or double), TF's numbers; groups spread over `pool` (may be null).
template <typename T>
void FillPhilox(PhiloxDist dist, const PhiloxStream& stream, T* out, int64_t n, ThreadPool* pool) {
  using Compute = std::conditional_t<kIsFloat16<T>, float, T>;
  constexpr int kGroup = PhiloxGroupSize<Compute>();
  const int64_t groups = (n + kGroup - 1) / kGroup;
  const auto fill = [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const int64_t first = g * kGroup;
      const int count = static_cast<int>(std::min<int64_t>(kGroup, n - first));
      if constexpr (kIsFloat16<T>) {
        if (dist == PhiloxDist::kUniform) {
          // TF's Uint16ToHalf / Uint16ToGfloat16: the mantissa's bits of a
          // number in [1, 2), less one (exact).
          PhiloxStream s = stream;
          s.Skip(static_cast<uint64_t>(g));
          const PhiloxBlock b = s.Next();
          constexpr uint32_t kMantissa = std::is_same_v<T, half> ? 10 : 7;
          for (int k = 0; k < count; ++k) {
            out[first + k] = static_cast<T>(static_cast<float>(b.v[k] & ((1u << kMantissa) - 1)) /
                                            static_cast<float>(1u << kMantissa));
          }
          continue;
        }
      }
      Compute values[kGroup];
      PhiloxGroup<Compute>(dist, stream, static_cast<uint64_t>(g), values);
      for (int k = 0; k < count; ++k) out[first + k] = static_cast<T>(values[k]);
    }
  };
  if (pool == nullptr) {
    fill(0, groups);
  } else {
    pool->ParallelFor(groups, dist == PhiloxDist::kTruncatedNormal ? 400 : 100, fill);
  }
}

// The stream a stateless op draws from: its seed input [2] at `first` (V1:
// TF's key and counter derived from the seed), or its key [1], counter [2]
// and alg inputs starting at `first` (V2), with TF's messages for bad ones
// (kernels/cpu/stateless_random_ops.cc).
absl::StatusOr<PhiloxStream> StatelessStream(KernelContext* ctx, bool v2, int first);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_PHILOX_FILL_H_
