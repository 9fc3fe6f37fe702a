// Tensors in tests: literals and gmock matchers, with no kernels linked in
// (kernels/testing/kernel_runner.h adds running one kernel).
//
//   Tensor x = Literal<float>({2, 2}, {1, 2, 3, 4});
//   EXPECT_THAT(out, TensorIs<float>({2, 2}, {1, 2, 3, 4}));
//   EXPECT_THAT(out, TensorNear<float>({2}, {0.5, 0.25}, 1e-6));
#ifndef TOWERFLOW_TESTS_TENSOR_TESTING_H_
#define TOWERFLOW_TESTS_TENSOR_TESTING_H_

#include <algorithm>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "absl/base/internal/raw_logging.h"
#include "gmock/gmock.h"
#include "framework/tensor.h"

namespace towerflow {

// A tensor of `shape` holding `values` (row-major). REQUIRES: sizes match.
template <typename T>
Tensor Literal(const TensorShape& shape, std::initializer_list<T> values) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  ABSL_RAW_CHECK(static_cast<int64_t>(values.size()) == t.NumElements(), "Literal size");
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}
template <typename T>
Tensor Literal(const TensorShape& shape, const std::vector<T>& values) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  ABSL_RAW_CHECK(static_cast<int64_t>(values.size()) == t.NumElements(), "Literal size");
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}
template <typename T>
Tensor Scalar(T value) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape());
  *t.data<T>() = value;
  return t;
}
// A tensor of `shape` filled with `value`.
template <typename T>
Tensor Filled(const TensorShape& shape, T value) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  std::fill_n(t.data<T>(), t.NumElements(), value);
  return t;
}

// The elements of `t` as a vector. REQUIRES: T matches t.dtype().
template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

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

}  // namespace towerflow

#endif  // TOWERFLOW_TESTS_TENSOR_TESTING_H_
