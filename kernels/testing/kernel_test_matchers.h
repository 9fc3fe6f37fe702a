// gmock helpers for kernel tests: comparing a Tensor's shape and values.
//
//   EXPECT_THAT(out, TensorIs<float>({2, 2}, {1, 2, 3, 4}));
//   EXPECT_THAT(out, TensorNear<float>({2}, {0.5, 0.25}, 1e-6));
#ifndef TOWERFLOW_KERNELS_TESTING_KERNEL_TEST_MATCHERS_H_
#define TOWERFLOW_KERNELS_TESTING_KERNEL_TEST_MATCHERS_H_

#include <ostream>
#include <vector>

#include "gmock/gmock.h"
#include "kernels/testing/kernel_runner.h"

namespace towerflow {

// Readable gtest output for tensors and shapes.
inline void PrintTo(const Tensor& t, std::ostream* os) { *os << t.DebugString(12); }
inline void PrintTo(const TensorShape& s, std::ostream* os) { *os << s.DebugString(); }

MATCHER_P2(TensorIsImpl, shape, values, "") {
  using T = typename std::decay_t<decltype(values)>::value_type;
  if (arg.dtype() != DataTypeToEnum<T>::value) {
    *result_listener << "dtype " << DataTypeString(arg.dtype());
    return false;
  }
  if (arg.shape() != shape) {
    *result_listener << "shape " << arg.shape().DebugString();
    return false;
  }
  const std::vector<T> got = Values<T>(arg);
  return ::testing::ExplainMatchResult(::testing::ElementsAreArray(values), got, result_listener);
}

MATCHER_P3(TensorNearImpl, shape, values, tolerance, "") {
  using T = typename std::decay_t<decltype(values)>::value_type;
  if (arg.dtype() != DataTypeToEnum<T>::value || arg.shape() != shape) {
    *result_listener << "got " << arg.DebugString();
    return false;
  }
  const std::vector<T> got = Values<T>(arg);
  return ::testing::ExplainMatchResult(
      ::testing::Pointwise(::testing::DoubleNear(tolerance), values), got, result_listener);
}

template <typename T>
auto TensorIs(const TensorShape& shape, std::vector<T> values) {
  return TensorIsImpl(shape, std::move(values));
}
template <typename T>
auto TensorNear(const TensorShape& shape, std::vector<T> values, double tolerance) {
  return TensorNearImpl(shape, std::move(values), tolerance);
}

// Runs `runner` on `inputs` and returns output `i`; fails the test (and
// returns an empty tensor) when the kernel fails.
inline Tensor RunOk(KernelRunner& runner, const std::vector<Tensor>& inputs, int i = 0) {
  absl::StatusOr<std::vector<Tensor>> out = runner.Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || static_cast<int>(out->size()) <= i) return Tensor();
  return (*out)[i];
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_TESTING_KERNEL_TEST_MATCHERS_H_
