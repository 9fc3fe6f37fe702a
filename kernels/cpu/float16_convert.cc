#include "kernels/cpu/float16_convert.h"

#include <cstdint>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace towerflow {
namespace {

void HalfToFloat(const half* in, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

void FloatToHalf(const float* in, half* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
#endif
  for (; i < n; ++i) out[i] = half(in[i]);
}

}  // namespace

void ConvertFloat16(const Eigen::ThreadPoolDevice& d, const Tensor& from, Tensor* to) {
  const int64_t n = from.NumElements();
  if (n == 0) return;
  if (from.dtype() == DT_BFLOAT16) {
    to->flat<float>().device(d) = from.flat<bfloat16>().template cast<float>();
    return;
  }
  if (to->dtype() == DT_BFLOAT16) {
    to->flat<bfloat16>().device(d) = from.flat<float>().template cast<bfloat16>();
    return;
  }
  // half: blocks over the pool, 2 bytes in and 4 out per element.
  const Eigen::TensorOpCost cost(from.dtype() == DT_HALF ? 2 : 4, from.dtype() == DT_HALF ? 4 : 2,
                                 1);
  if (from.dtype() == DT_HALF) {
    const half* in = from.data<half>();
    float* out = to->data<float>();
    d.parallelFor(n, cost, [&](Eigen::Index first, Eigen::Index last) {
      HalfToFloat(in + first, out + first, last - first);
    });
  } else {
    const float* in = from.data<float>();
    half* out = to->data<half>();
    d.parallelFor(n, cost, [&](Eigen::Index first, Eigen::Index last) {
      FloatToHalf(in + first, out + first, last - first);
    });
  }
}

}  // namespace towerflow
