// BatchMatMulV3's type triples (MatMul, BatchMatMul(V2): nn_ops_test.cc),
// with TF 2.21's values.
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

const std::vector<int> kX = {1, -2, 3, 4, 5, -6, 7, 8, 9, -1, 0, 2};  // [2,2,3]
const std::vector<int> kY = {1, 2, 3, -4, 5, 6};                      // [3,2]

// `values` * scale as a tensor of T.
template <typename T>
Tensor Scaled(std::initializer_list<int64_t> dims, const std::vector<int>& values, float scale,
              bool abs = false) {
  std::vector<T> out;
  for (int v : values)
    out.push_back(static_cast<T>(static_cast<float>(abs ? std::abs(v) : v) * scale));
  return Literal<T>(dims, out);
}

Tensor RunV3(const std::vector<Tensor>& in, DataType tout, bool adj_y = false) {
  KernelRunner r("BatchMatMulV3");
  r.Attr("Tout", tout).Attr("adj_y", adj_y);
  return RunOk(r, in);
}

TEST(BatchMatMulV3Test, MixedOperandTypes) {
  const Tensor x8 = Scaled<int8_t>({2, 2, 3}, kX, 1), y8 = Scaled<int8_t>({3, 2}, kY, 1);
  EXPECT_THAT(RunV3({x8, y8}, DT_INT32),
              TensorIs<int32_t>({2, 2, 2}, {10, 28, -11, -48, 76, 36, 9, 10}));
  // uint8 |x| * 20 (values to 180) times int8 y.
  EXPECT_THAT(RunV3({Scaled<uint8_t>({2, 2, 3}, kX, 20, /*abs=*/true), y8}, DT_INT32),
              TensorIs<int32_t>({2, 2, 2}, {440, 240, 980, 480, 1520, 720, 220, 280}));
  // bfloat16 x * 0.37 times int8 y: the float product rounded once. TF's
  // CPU kernel rounds its partial sums to bfloat16 (3.71875 where the exact
  // 3.70117 rounds to 3.70312; Note [16-bit floats on the CPU]).
  EXPECT_THAT(
      RunV3({Scaled<bfloat16>({2, 2, 3}, kX, 0.37f), y8}, DT_BFLOAT16),
      TensorIs<bfloat16>({2, 2, 2}, {bfloat16(3.703125f), bfloat16(10.375f), bfloat16(-4.0625f),
                                     bfloat16(-17.75f), bfloat16(28.125f), bfloat16(13.375f),
                                     bfloat16(3.328125f), bfloat16(3.6875f)}));
  // half (TF's CPU has no half kernel): small integers, exact.
  EXPECT_THAT(RunV3({Scaled<half>({2, 2, 3}, kX, 1), Scaled<half>({3, 2}, kY, 1)}, DT_HALF),
              TensorIs<half>({2, 2, 2}, {half(10), half(28), half(-11), half(-48), half(76),
                                         half(36), half(9), half(10)}));
  // int16 products wrap as TF's.
  EXPECT_THAT(
      RunV3({Scaled<int16_t>({2, 2, 3}, kX, 100), Scaled<int16_t>({3, 2}, kY, 50)}, DT_INT16),
      TensorIs<int16_t>({2, 2, 2}, {-15536, 8928, 10536, 22144, -13216, -16608, -20536, -15536}));
}

TEST(BatchMatMulV3Test, SameTypesAdjointAndErrors) {
  EXPECT_THAT(RunV3({Scaled<float>({2, 2, 3}, kX, 0.5f), Scaled<float>({2, 2, 3}, kX, 0.25f)},
                    DT_FLOAT, /*adj_y=*/true),
              TensorIs<float>({2, 2, 2}, {1.75f, -3, -3, 9.625f, 24.25f, 1.375f, 1.375f, 0.625f}));
  const Tensor x8 = Scaled<int8_t>({2, 2, 3}, kX, 1);
  KernelRunner r("BatchMatMulV3");
  r.Attr("Tout", DT_INT32);
  EXPECT_THAT(r.Run({x8, x8}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Matrix size-incompatible: In[0]: [2,2,3], In[1]: [2,2,3]"));
  // float operands with a double product: no kernel, as in TF.
  KernelRunner mixed("BatchMatMulV3");
  mixed.Attr("Tout", DT_DOUBLE);
  EXPECT_FALSE(mixed.Run({Scaled<float>({2, 2, 3}, kX, 1), Scaled<float>({3, 2}, kY, 1)}).ok());
}

TEST(SparseMatMulTest, FloatProductsOfFloatAndBfloat16) {
  KernelRunner r("SparseMatMul");
  EXPECT_THAT(RunOk(r, {Literal<float>({2, 3}, {1, 0, 2, 0, 0, 3}),
                        Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6})}),
              TensorIs<float>({2, 2}, {11, 14, 15, 18}));
  KernelRunner t("SparseMatMul");
  t.Attr("transpose_a", true).Attr("transpose_b", true).Attr("a_is_sparse", true);
  EXPECT_THAT(RunOk(t, {Literal<float>({3, 2}, {1, 0, 0, 0, 2, 3}),
                        Literal<float>({2, 3}, {1, 3, 5, 2, 4, 6})}),
              TensorIs<float>({2, 2}, {11, 14, 15, 18}));
  // bfloat16(0.1) = 0.10009765625 widens exactly: TF's 1.80029296875.
  KernelRunner b("SparseMatMul");
  EXPECT_THAT(RunOk(b, {Literal<bfloat16>({1, 2}, {bfloat16(1.5f), bfloat16(0.1f)}),
                        Literal<float>({2, 1}, {1, 3})}),
              TensorIs<float>({1, 1}, {1.80029296875f}));
  EXPECT_THAT(
      r.Run({Literal<float>({1, 3}, {1, 0, 2}), Literal<float>({2, 2}, {1, 2, 3, 4})}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Matrix size incompatible: a: [1,3], b: [2,2]"));
  EXPECT_THAT(r.Run({Literal<float>({3}, {1, 0, 2}), Literal<float>({2, 2}, {1, 2, 3, 4})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "a is not a matrix"));
}

}  // namespace
}  // namespace towerflow
