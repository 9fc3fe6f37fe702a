// More array and elementwise kernels against TensorFlow 2.21's values and
// messages (tf.raw_ops on these inputs; array_ops_test.cc is full):
// InplaceUpdate/Add/Sub, UnravelIndex, UniqueV2, UniqueWithCountsV2,
// ConjugateTranspose, NextAfter, ApproximateEqual and ScatterNdNonAliasingAdd.
// Gradients are checked in ops/gradients (finite differences).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

Tensor Rows() { return Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6}); }

absl::StatusOr<std::vector<Tensor>> Inplace(const char* op, const Tensor& x, const Tensor& i,
                                            const Tensor& v) {
  KernelRunner r(op);
  return r.Run({x, i, v});
}

TEST(InplaceTest, RowsUpdatedAddedSubtracted) {
  const Tensor v = Literal<float>({2, 2}, {10, 20, 30, 40});
  KernelRunner add("InplaceAdd");
  EXPECT_THAT(RunOk(add, {Rows(), Literal<int32_t>({2}, {0, 2}), v}),
              TensorIs<float>({3, 2}, {11, 22, 3, 4, 35, 46}));
  // A repeated row takes both updates.
  KernelRunner twice("InplaceAdd");
  EXPECT_THAT(RunOk(twice, {Rows(), Literal<int32_t>({2}, {1, 1}), v}),
              TensorIs<float>({3, 2}, {1, 2, 43, 64, 5, 6}));
  KernelRunner sub("InplaceSub");
  EXPECT_THAT(RunOk(sub, {Rows(), Literal<int32_t>({1}, {2}), Literal<float>({1, 2}, {10, 20})}),
              TensorIs<float>({3, 2}, {1, 2, 3, 4, -5, -14}));
  KernelRunner update("InplaceUpdate");
  EXPECT_THAT(RunOk(update, {Rows(), Literal<int32_t>({2}, {2, 0}),
                             Literal<float>({2, 2}, {10, 20, 7, 8})}),
              TensorIs<float>({3, 2}, {7, 8, 3, 4, 10, 20}));
  // Rows out of range wrap around, as TF's (3 is row 0, -1 row 2).
  KernelRunner wrap("InplaceUpdate");
  EXPECT_THAT(
      RunOk(wrap, {Rows(), Literal<int32_t>({2}, {3, -1}), Literal<float>({2, 2}, {10, 20, 7, 8})}),
      TensorIs<float>({3, 2}, {10, 20, 3, 4, 7, 8}));
  KernelRunner strings("InplaceUpdate");
  EXPECT_THAT(RunOk(strings, {Literal<std::string>({3}, {"a", "b", "c"}),
                              Literal<int32_t>({1}, {1}), Literal<std::string>({1}, {"z"})}),
              TensorIs<std::string>({3}, {"a", "z", "c"}));
}

TEST(InplaceTest, TensorFlowsMessages) {
  EXPECT_THAT(Inplace("InplaceUpdate", Rows(), Literal<int32_t>({1}, {1}),
                      Literal<float>({1, 3}, {10, 20, 3})),
              StatusIs(kInvalid, "x and v shape doesn't match at index 1 : [3,2] vs. [1,3]"));
  EXPECT_THAT(Inplace("InplaceAdd", Rows(), Literal<int32_t>({2}, {1, 2}),
                      Literal<float>({1, 2}, {10, 20})),
              StatusIs(kInvalid, "i and x shape doesn't match at index 0: [2] vs. [1,2]"));
  EXPECT_THAT(Inplace("InplaceSub", Rows(), Literal<int32_t>({1, 1}, {1}),
                      Literal<float>({1, 2}, {10, 20})),
              StatusIs(kInvalid, "i must be a vector. [1,1]"));
  EXPECT_THAT(
      Inplace("InplaceUpdate", Rows(), Literal<int32_t>({1}, {1}), Literal<float>({2}, {10, 20})),
      StatusIs(kInvalid, "x and v shape doesn't match (ranks differ): [3,2] vs. [2]"));
  EXPECT_THAT(
      Inplace("InplaceUpdate", Scalar<float>(1), Literal<int32_t>({1}, {0}), Scalar<float>(2)),
      StatusIs(kInvalid, "x must have rows (rank >= 1), got shape []"));
}

TEST(UnravelIndexTest, CoordinatesAndErrors) {
  KernelRunner r("UnravelIndex");
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({3}, {22, 41, 37}), Literal<int32_t>({2}, {7, 6})}),
              TensorIs<int32_t>({2, 3}, {3, 6, 6, 4, 5, 1}));
  KernelRunner scalar("UnravelIndex");
  EXPECT_THAT(RunOk(scalar, {Scalar<int64_t>(1621), Literal<int64_t>({4}, {6, 7, 8, 9})}),
              TensorIs<int64_t>({4}, {3, 1, 4, 1}));
  // A negative index gives C's remainders, as TF's kernel.
  KernelRunner negative("UnravelIndex");
  EXPECT_THAT(RunOk(negative, {Literal<int32_t>({1}, {-1}), Literal<int32_t>({2}, {7, 6})}),
              TensorIs<int32_t>({2, 1}, {0, -1}));
  const auto run = [](const Tensor& indices, const Tensor& dims) {
    KernelRunner k("UnravelIndex");
    return k.Run({indices, dims});
  };
  EXPECT_THAT(run(Literal<int32_t>({1}, {42}), Literal<int32_t>({2}, {7, 6})),
              StatusIs(kInvalid, "index is out of bound as with dims"));
  EXPECT_THAT(run(Literal<int32_t>({2, 2}, {1, 2, 3, 4}), Literal<int32_t>({2}, {2, 3})),
              StatusIs(kInvalid, "The indices can only be scalar or vector, got \"[2,2]\""));
  EXPECT_THAT(run(Literal<int32_t>({1}, {1}), Literal<int32_t>({1, 2}, {2, 3})),
              StatusIs(kInvalid, "The indices can only be 1-D, got \"[1,2]\""));
  EXPECT_THAT(
      run(Literal<int32_t>({1}, {1}), Literal<int32_t>({2}, {0, 3})),
      StatusIs(kInvalid,
               "Input dims cannot contain a dim of zero, but dims contains zero at index 0"));
  EXPECT_THAT(run(Literal<int32_t>({1}, {1}), Literal<int32_t>({2}, {-2, 3})),
              StatusIs(kInvalid, "Input dims cannot be negative. Got dim = -2 at index 0"));
}

Tensor Grid() { return Literal<int32_t>({4, 3}, {1, 0, 1, 1, 0, 1, 2, 0, 2, 1, 0, 1}); }

TEST(UniqueV2Test, SlicesAlongAnAxis) {
  for (const int64_t axis : {int64_t{1}, int64_t{-1}}) {
    KernelRunner cols("UniqueV2");
    TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                            cols.Run({Grid(), Literal<int64_t>({1}, {axis})}));
    EXPECT_THAT(out[0], TensorIs<int32_t>({4, 2}, {1, 0, 1, 0, 2, 0, 1, 0}));
    EXPECT_THAT(out[1], TensorIs<int32_t>({3}, {0, 1, 0}));
  }
  KernelRunner rows("UniqueWithCountsV2");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, rows.Run({Grid(), Literal<int32_t>({1}, {0})}));
  EXPECT_THAT(out[0], TensorIs<int32_t>({2, 3}, {1, 0, 1, 2, 0, 2}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({4}, {0, 0, 1, 0}));
  EXPECT_THAT(out[2], TensorIs<int32_t>({2}, {3, 1}));
  // No axis: a vector, each NaN its own value.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  KernelRunner flat("UniqueV2");
  TW_ASSERT_OK_AND_ASSIGN(
      out, flat.Run({Literal<float>({5}, {3, 1, 3, nan, nan}), Literal<int64_t>({0}, {})}));
  EXPECT_EQ(out[0].NumElements(), 4);
  EXPECT_THAT(out[1], TensorIs<int32_t>({5}, {0, 1, 0, 2, 3}));
  // Empty slices are all equal: x [2,0,3] along axis 0 has one.
  KernelRunner empty("UniqueV2");
  TW_ASSERT_OK_AND_ASSIGN(out,
                          empty.Run({Filled<float>({2, 0, 3}, 0), Literal<int64_t>({1}, {0})}));
  EXPECT_EQ(out[0].shape(), TensorShape({1, 0, 3}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({2}, {0, 0}));
  KernelRunner strings("UniqueWithCountsV2");
  strings.Attr("out_idx", DT_INT64);
  TW_ASSERT_OK_AND_ASSIGN(
      out, strings.Run({Literal<std::string>({3}, {"a", "b", "a"}), Literal<int64_t>({1}, {0})}));
  EXPECT_THAT(out[0], TensorIs<std::string>({2}, {"a", "b"}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 1}));
}

TEST(UniqueV2Test, TensorFlowsMessages) {
  const auto run = [](const Tensor& x, const Tensor& axis) {
    KernelRunner r("UniqueV2");
    return r.Run({x, axis});
  };
  EXPECT_THAT(run(Grid(), Literal<int64_t>({2}, {0, 1})),
              StatusIs(kInvalid, "axis does not support input tensors larger than 1 elements"));
  EXPECT_THAT(run(Grid(), Literal<int64_t>({1}, {2})),
              StatusIs(kInvalid, "axis has to be between [0, 2)"));
  EXPECT_THAT(run(Grid(), Literal<int64_t>({1}, {-3})),
              StatusIs(kInvalid, "axis has to be between [0, 2)"));
  EXPECT_THAT(run(Grid(), Literal<int64_t>({0}, {})),
              StatusIs(kInvalid, "unique expects a 1D vector, got shape [4,3]"));
  EXPECT_THAT(run(Grid(), Literal<int64_t>({1, 1}, {0})),
              StatusIs(kInvalid, "axis expects a 1D vector, got shape [1,1]"));
}

TEST(ConjugateTransposeTest, ConjugatesComplexOnly) {
  KernelRunner c("ConjugateTranspose");
  EXPECT_THAT(
      RunOk(c, {Literal<complex64>({3, 2}, {{1, 2}, {3, -1}, {0, 1}, {2, 0}, {1, 1}, {-1, -1}}),
                Literal<int32_t>({2}, {1, 0})}),
      TensorIs<complex64>({2, 3}, {{1, -2}, {0, -1}, {1, -1}, {3, 1}, {2, 0}, {-1, 1}}));
  KernelRunner identity("ConjugateTranspose");
  EXPECT_THAT(
      RunOk(identity, {Literal<complex128>({2}, {{1, 2}, {3, -4}}), Literal<int32_t>({1}, {0})}),
      TensorIs<complex128>({2}, {{1, -2}, {3, 4}}));
  KernelRunner real("ConjugateTranspose");
  EXPECT_THAT(RunOk(real, {Rows(), Literal<int32_t>({2}, {1, 0})}),
              TensorIs<float>({2, 3}, {1, 3, 5, 2, 4, 6}));
  KernelRunner bad("ConjugateTranspose");
  EXPECT_THAT(bad.Run({Rows(), Literal<int32_t>({2}, {1, 1})}),
              StatusIs(kInvalid, "0 is missing from {1,1}."));
}

TEST(NextAfterTest, OneStepTowardsX2) {
  const float inf = std::numeric_limits<float>::infinity();
  KernelRunner r("NextAfter");
  EXPECT_THAT(
      RunOk(r, {Literal<float>({4}, {1, 0, -1, 2}), Literal<float>({4}, {2, -1, -1, inf})}),
      TensorIs<float>({4}, {1.0000001192092896f, -1.401298464324817e-45f, -1, 2.000000238418579f}));
  KernelRunner d("NextAfter");
  EXPECT_THAT(RunOk(d, {Literal<double>({2}, {1, 0}), Scalar<double>(0)}),
              TensorIs<double>({2}, {0.9999999999999999, 0}));
  KernelRunner bad("NextAfter");
  EXPECT_THAT(bad.Run({Literal<float>({1, 2}, {1, 0}), Literal<float>({3}, {2, 2, 3})}),
              StatusIs(kInvalid, "Incompatible shapes: [1,2] vs. [3]"));
}

TEST(ApproximateEqualTest, WithinTolerance) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  KernelRunner r("ApproximateEqual");
  EXPECT_THAT(RunOk(r, {Literal<float>({4}, {1, 2, 3, nan}),
                        Literal<float>({4}, {1.000001f, 2.1f, 3, nan})}),
              TensorIs<bool>({4}, {true, false, true, false}));
  KernelRunner loose("ApproximateEqual");
  loose.Attr("tolerance", 0.3f);
  EXPECT_THAT(RunOk(loose, {Literal<double>({2}, {1, 2}), Literal<double>({2}, {1.5, 2.2})}),
              TensorIs<bool>({2}, {false, true}));
  KernelRunner bad("ApproximateEqual");
  EXPECT_THAT(bad.Run({Literal<float>({2}, {1, 2}), Literal<float>({1}, {1.5})}),
              StatusIs(kInvalid, "x and y must be of the same shape. x shape: [2]. y shape: [1]"));
}

// TF 1's out-of-place scatter-add, TF 2.21's values and message.
TEST(ScatterNdNonAliasingAddTest, AddsDuplicatesAsTensorScatterAdd) {
  KernelRunner r("ScatterNdNonAliasingAdd");
  EXPECT_THAT(RunOk(r, {Literal<float>({4}, {1, 2, 3, 4}), Literal<int32_t>({3, 1}, {1, 3, 1}),
                        Literal<float>({3}, {10, 20, 30})}),
              TensorIs<float>({4}, {1, 42, 3, 24}));
  KernelRunner b("ScatterNdNonAliasingAdd");
  EXPECT_THAT(RunOk(b, {Literal<bool>({2}, {true, false}), Literal<int32_t>({1, 1}, {1}),
                        Literal<bool>({1}, {true})}),
              TensorIs<bool>({2}, {true, true}));
  KernelRunner bad("ScatterNdNonAliasingAdd");
  EXPECT_THAT(bad.Run({Literal<float>({4}, {1, 2, 3, 4}), Literal<int32_t>({2, 1}, {1, 4}),
                       Literal<float>({2}, {10, 20})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "indices[1] = [4] does not index into shape [4]"));
}

}  // namespace
}  // namespace towerflow
