// Helpers for the kernel tests that check gradients: seeded random tensors,
// a 4-D shape as the int32 vector the backprop kernels take, and the
// largest error of an analytic gradient against central differences.
#ifndef TOWERFLOW_KERNELS_TESTING_GRADIENT_CHECK_H_
#define TOWERFLOW_KERNELS_TESTING_GRADIENT_CHECK_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>

#include "gtest/gtest.h"
#include "testing/tensor_testing.h"

namespace towerflow {

// A tensor of `shape` with values uniform in [lo, hi), the same for a seed.
template <typename T>
Tensor Random(const TensorShape& shape, int seed, double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t(DataTypeToEnum<T>::value, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<T>()[i] = static_cast<T>(dist(gen));
  return t;
}

// A 4-D shape as the int32 vector Conv2DBackpropInput, AvgPoolGrad and
// the like take.
inline Tensor Shape4(const TensorShape& s) {
  return Literal<int32_t>(
      {4}, {static_cast<int32_t>(s.dim_size(0)), static_cast<int32_t>(s.dim_size(1)),
            static_cast<int32_t>(s.dim_size(2)), static_cast<int32_t>(s.dim_size(3))});
}

// Max |analytic - numeric| of d/dx sum(forward(x) * w), where `backprop`
// returns the analytic gradient given x and w (the output gradient).
template <typename T>
double MaxGradientError(const Tensor& x, const std::function<Tensor(const Tensor&)>& forward,
                        const std::function<Tensor(const Tensor&, const Tensor&)>& backprop,
                        double delta) {
  const Tensor y = forward(x);
  const Tensor w = Random<T>(y.shape(), 99);
  const Tensor analytic = backprop(x, w);
  EXPECT_EQ(analytic.shape(), x.shape());
  double worst = 0;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    Tensor xp = *x.DeepCopy(), xm = *x.DeepCopy();
    xp.data<T>()[i] += static_cast<T>(delta);
    xm.data<T>()[i] -= static_cast<T>(delta);
    const Tensor yp = forward(xp), ym = forward(xm);
    double numeric = 0;
    for (int64_t j = 0; j < y.NumElements(); ++j) {
      numeric += (static_cast<double>(yp.data<T>()[j]) - ym.data<T>()[j]) * w.data<T>()[j];
    }
    numeric /= 2 * delta;
    worst = std::max(worst, std::abs(numeric - analytic.data<T>()[i]));
  }
  return worst;
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_TESTING_GRADIENT_CHECK_H_
