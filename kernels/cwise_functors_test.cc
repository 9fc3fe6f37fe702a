// The integer arithmetic of the elementwise functors wraps around as
// TensorFlow's does, with no undefined behaviour on the way: CI compiles
// this test with UBSan (.bazelrc, --config=sanitize_inputs), where a signed
// overflow would abort it. (The kernels' literal tests of the same values
// are in cpu/cwise_ops_test.cc.)
#include "kernels/cwise_functors.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace towerflow {
namespace functor {
namespace {

template <typename T>
class WrapAroundTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(WrapAroundTest, IntTypes);

TYPED_TEST(WrapAroundTest, BinaryFunctorsWrap) {
  using T = TypeParam;
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr T kMin = std::numeric_limits<T>::min();
  constexpr T kHalf = T(1) << (sizeof(T) * 4);
  EXPECT_EQ(Add<T>()(kMax, 1), kMin);
  EXPECT_EQ(Add<T>()(kMin, -1), kMax);
  EXPECT_EQ(Sub<T>()(kMin, 1), kMax);
  EXPECT_EQ(Sub<T>()(0, kMin), kMin);
  EXPECT_EQ(Mul<T>()(kMax, 2), T(-2));
  EXPECT_EQ(Mul<T>()(kMin, -1), kMin);
  EXPECT_EQ(Mul<T>()(kHalf, kHalf), T(0));
  EXPECT_EQ(SquaredDifference<T>()(kMax, -1), T(0));
  EXPECT_EQ(Pow<T>()(kMax, 2), T(1));
  EXPECT_EQ(Pow<T>()(3, 200), Mul<T>()(Pow<T>()(3, 100), Pow<T>()(3, 100)));
  EXPECT_EQ(Div<T>()(kMin, -1), kMin);
  EXPECT_EQ(Mod<T>()(kMin, -1), T(0));
  EXPECT_EQ(FloorDiv<T>()(kMin, -1), kMin);
  EXPECT_EQ(FloorDiv<T>()(kMin, 3), T(kMin / 3 - 1));
  EXPECT_EQ(FloorMod<T>()(kMin, kMax), T(kMax - 1));
}

TYPED_TEST(WrapAroundTest, UnaryFunctorsWrap) {
  using T = TypeParam;
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr T kMin = std::numeric_limits<T>::min();
  EXPECT_EQ(Neg<T>()(kMin), kMin);
  EXPECT_EQ(Neg<T>()(kMax), T(kMin + 1));
  EXPECT_EQ(Abs<T>()(kMin), kMin);
  EXPECT_EQ(Abs<T>()(T(-5)), T(5));
  EXPECT_EQ(Square<T>()(kMax), T(1));
  EXPECT_EQ(Square<T>()(kMin), T(0));
}

TEST(WrapAroundTest, NarrowTypesDoNotOverflowThroughIntPromotion) {
  // uint8 promotes to int; 255 * 255 fits, and the result wraps mod 256.
  EXPECT_EQ(Mul<uint8_t>()(255, 255), uint8_t(1));
  EXPECT_EQ(Add<uint8_t>()(255, 1), uint8_t(0));
  EXPECT_EQ(Sub<uint8_t>()(0, 1), uint8_t(255));
  // uint16 * uint16 would overflow int: computed as unsigned instead.
  EXPECT_EQ(Mul<uint16_t>()(65535, 65535), uint16_t(1));
}

TEST(WrapAroundTest, FloatingPointIsUnchanged) {
  EXPECT_EQ(Add<float>()(0.5f, 0.25f), 0.75f);
  EXPECT_EQ(Neg<double>()(2.0), -2.0);
  EXPECT_EQ(Square<float>()(-3.0f), 9.0f);
}

}  // namespace
}  // namespace functor
}  // namespace towerflow
