// Tensors in tests: literals and gmock matchers, with no kernels linked in
// (TF's tensor_testutil.h). Part of the public testing library
// (@towerflow//:testing).
//
//   Tensor x = Literal<float>({2, 2}, {1, 2, 3, 4});
//   EXPECT_THAT(out, TensorIs<float>({2, 2}, {1, 2, 3, 4}));
//   EXPECT_THAT(out, TensorNear<float>({2}, {0.5, 0.25}, 1e-6));
//   EXPECT_THAT(out, TensorEq(expected));  // dtype, shape, every value
//   // Each |out - expected| <= atol + rtol * |expected| (numpy's allclose):
//   EXPECT_THAT(out, TensorNear(expected, /*atol=*/1e-6, /*rtol=*/1e-5));
//
// A mismatch says what differs: the dtype, the shape, or how many values,
// with the first one's index and both values:
//   2 of 4 values differ; the first at [0, 1] (flat 1): 2.5 where 2 was
//   expected (|difference| 0.5 > tolerance 1e-06)
#ifndef TOWERFLOW_TESTING_TENSOR_TESTING_H_
#define TOWERFLOW_TESTING_TENSOR_TESTING_H_

#include <algorithm>
#include <initializer_list>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/internal/raw_logging.h"
#include "core/float16.h"
#include "framework/tensor.h"
#include "gmock/gmock.h"

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
// A half or bfloat16 tensor of `values`, each rounded to the type (to
// nearest even): Rounded<half>({2}, {0.1f, 1.5f}).
template <typename T, typename = std::enable_if_t<kIsFloat16<T>>>
Tensor Rounded(const TensorShape& shape, std::initializer_list<float> values) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  ABSL_RAW_CHECK(static_cast<int64_t>(values.size()) == t.NumElements(), "Literal size");
  std::transform(values.begin(), values.end(), t.data<T>(), [](float v) { return T(v); });
  return t;
}
// A half or bfloat16 tensor given by its bit patterns, as TensorFlow's
// numbers are printed exactly: Bits<half>({2}, {0x3c00, 0x2e66}).
template <typename T, typename = std::enable_if_t<kIsFloat16<T>>>
Tensor Bits(const TensorShape& shape, std::initializer_list<uint16_t> bits) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  ABSL_RAW_CHECK(static_cast<int64_t>(bits.size()) == t.NumElements(), "Literal size");
  std::transform(bits.begin(), bits.end(), t.data<T>(), Float16FromBits<T>);
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

// Whether `got` equals `expected` (`exact`) or is within
// atol + rtol * |expected| of it, value by value: the empty string when it
// is, else what differs. NaN matches NaN. Values are compared for the
// numeric dtypes and strings; other dtypes compare equal only by their
// bytes.
std::string TensorDifference(const Tensor& got, const Tensor& expected, bool exact, double atol,
                             double rtol);

class TensorMatcher {
 public:
  // `invalid`: why `expected` could not be made (then nothing matches).
  TensorMatcher(Tensor expected, bool exact, double atol, double rtol, std::string invalid = "")
      : expected_(std::move(expected)),
        exact_(exact),
        atol_(atol),
        rtol_(rtol),
        invalid_(std::move(invalid)) {}

  bool MatchAndExplain(const Tensor& got, ::testing::MatchResultListener* listener) const {
    if (!invalid_.empty()) {
      *listener << invalid_;
      return false;
    }
    const std::string difference = TensorDifference(got, expected_, exact_, atol_, rtol_);
    if (difference.empty()) return true;
    *listener << difference;
    return false;
  }
  void DescribeTo(std::ostream* os) const {
    *os << (exact_ ? "equals " : "is near ") << expected_.DebugString(12);
    if (!exact_) *os << " within atol " << atol_ << " + rtol " << rtol_ << " |expected|";
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "is not ";
    DescribeTo(os);
  }

 private:
  Tensor expected_;
  bool exact_;
  double atol_;
  double rtol_;
  std::string invalid_;
};

template <typename T>
TensorMatcher LiteralMatcher(const TensorShape& shape, const std::vector<T>& values, bool exact,
                             double atol) {
  if (static_cast<int64_t>(values.size()) != shape.num_elements()) {
    return TensorMatcher(Tensor(), exact, atol, 0,
                         "the expected values are " + std::to_string(values.size()) +
                             " for shape " + shape.DebugString());
  }
  return TensorMatcher(Literal<T>(shape, values), exact, atol, 0);
}

// A tensor of `expected`'s dtype and shape with the same values.
inline ::testing::PolymorphicMatcher<TensorMatcher> TensorEq(Tensor expected) {
  return ::testing::MakePolymorphicMatcher(TensorMatcher(std::move(expected), true, 0, 0));
}
// A tensor of `expected`'s dtype and shape whose every value v is within
// atol + rtol * |e| of expected's e (numpy's allclose).
inline ::testing::PolymorphicMatcher<TensorMatcher> TensorNear(Tensor expected, double atol,
                                                               double rtol = 0) {
  return ::testing::MakePolymorphicMatcher(TensorMatcher(std::move(expected), false, atol, rtol));
}

// The same with the expected tensor written as its shape and values:
// TensorIs<float>({2, 2}, {1, 2, 3, 4}) is TensorEq of that literal. A
// count of values that does not fit the shape matches nothing.
template <typename T>
::testing::PolymorphicMatcher<TensorMatcher> TensorIs(const TensorShape& shape,
                                                      const std::vector<T>& values) {
  return ::testing::MakePolymorphicMatcher(LiteralMatcher(shape, values, true, 0));
}
template <typename T>
::testing::PolymorphicMatcher<TensorMatcher> TensorNear(const TensorShape& shape,
                                                        const std::vector<T>& values,
                                                        double tolerance) {
  return ::testing::MakePolymorphicMatcher(LiteralMatcher(shape, values, false, tolerance));
}

}  // namespace towerflow

#endif  // TOWERFLOW_TESTING_TENSOR_TESTING_H_
