// Einsum (einsum_op.cc) on the forms tf.keras emits and NumPy's examples;
// expected values worked out by hand.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

Tensor Einsum(const std::string& equation, const std::vector<Tensor>& inputs) {
  KernelRunner r("Einsum");
  r.Attr("equation", equation).Attr("N", static_cast<int64_t>(inputs.size()));
  return RunOk(r, inputs);
}

Tensor Iota(const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i + 1);
  return t;
}

// Repeated labels, as NumPy and TF read them: diagonals of an input, and
// an output label repeated writes onto a zeroed diagonal.
TEST(EinsumTest, DiagonalsAreReadAndWritten) {
  const Tensor m = Iota({3, 3});  // 1..9
  EXPECT_THAT(Einsum("ii->i", {m}), TensorIs<float>({3}, {1, 5, 9}));
  EXPECT_THAT(Einsum("ii->", {m}), TensorIs<float>({}, {15}));
  EXPECT_THAT(Einsum("ii", {m}), TensorIs<float>({}, {15}));  // implicit: the trace
  EXPECT_THAT(Einsum("i->ii", {Literal<float>({3}, {1, 2, 3})}),
              TensorIs<float>({3, 3}, {1, 0, 0, 0, 2, 0, 0, 0, 3}));
  // The diagonal of one input against a matrix: out[i] = sum_j a[i,j] b[j,j].
  EXPECT_THAT(Einsum("ij,jj->i", {Iota({2, 3}), m}), TensorIs<float>({2}, {38, 83}));
  // A batch of diagonals times a vector, written onto a batch of diagonals.
  const Tensor batch = Iota({2, 2, 2});  // [[1,2],[3,4]], [[5,6],[7,8]]
  EXPECT_THAT(Einsum("bii,i->bii", {batch, Literal<float>({2}, {10, 100})}),
              TensorIs<float>({2, 2, 2}, {10, 0, 0, 400, 50, 0, 0, 800}));
  // Three repeats: the diagonal of a cube.
  EXPECT_THAT(Einsum("iii->i", {Iota({2, 2, 2})}), TensorIs<float>({2}, {1, 8}));
}

TEST(EinsumTest, MatrixProductsAndTheirVariants) {
  const Tensor a = Literal<float>({2, 2}, {1, 2, 3, 4});
  const Tensor b = Literal<float>({2, 2}, {5, 6, 7, 8});
  EXPECT_THAT(Einsum("ij,jk->ik", {a, b}), TensorIs<float>({2, 2}, {19, 22, 43, 50}));
  // Implicit output: the labels that occur once, alphabetically.
  EXPECT_THAT(Einsum("ij,jk", {a, b}), TensorIs<float>({2, 2}, {19, 22, 43, 50}));
  // The transposed product, written into a permuted output.
  EXPECT_THAT(Einsum("ij,jk->ki", {a, b}), TensorIs<float>({2, 2}, {19, 43, 22, 50}));
  EXPECT_THAT(Einsum("ij,kj->ik", {a, b}), TensorIs<float>({2, 2}, {17, 23, 39, 53}));
  // Dot product, outer product, elementwise product.
  EXPECT_THAT(Einsum("i,i->", {Literal<float>({3}, {1, 2, 3}), Literal<float>({3}, {4, 5, 6})}),
              TensorIs<float>({}, {32}));
  EXPECT_THAT(Einsum("i,j->ij", {Literal<float>({2}, {1, 2}), Literal<float>({3}, {1, 10, 100})}),
              TensorIs<float>({2, 3}, {1, 10, 100, 2, 20, 200}));
  EXPECT_THAT(Einsum("ij,ij->ij", {a, b}), TensorIs<float>({2, 2}, {5, 12, 21, 32}));
}

TEST(EinsumTest, OneInputTransposesAndSums) {
  const Tensor a = Iota({2, 3});  // 1..6
  EXPECT_THAT(Einsum("ij->ji", {a}), TensorIs<float>({3, 2}, {1, 4, 2, 5, 3, 6}));
  EXPECT_THAT(Einsum("ij->j", {a}), TensorIs<float>({3}, {5, 7, 9}));
  EXPECT_THAT(Einsum("ij->", {a}), TensorIs<float>({}, {21}));
  EXPECT_THAT(Einsum("ij", {a}), TensorIs<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
}

TEST(EinsumTest, BatchedAndKerasAttentionForms) {
  // bij,bjk->bik: two batches of 1x2 by 2x1.
  EXPECT_THAT(Einsum("bij,bjk->bik", {Iota({2, 1, 2}), Iota({2, 2, 1})}),
              TensorIs<float>({2, 1, 1}, {5, 25}));
  // EinsumDense's "abc,cd->abd": a [1,2,2] input by a [2,1] kernel.
  EXPECT_THAT(Einsum("abc,cd->abd", {Iota({1, 2, 2}), Literal<float>({2, 1}, {1, -1})}),
              TensorIs<float>({1, 2, 1}, {-1, -1}));
  // MultiHeadAttention's scores "aecd,abcd->acbe": query [a,e,c,d] against
  // key [a,b,c,d], summing d, batching a and c.
  const Tensor key = Iota({1, 2, 1, 2});    // b = 2 positions, d = 2
  const Tensor query = Iota({1, 1, 1, 2});  // e = 1 position
  EXPECT_THAT(Einsum("aecd,abcd->acbe", {query, key}), TensorIs<float>({1, 1, 2, 1}, {5, 11}));
}

TEST(EinsumTest, EllipsisBroadcastsLeadingDims) {
  // [2,1,2,2] x [3,2,2]: the ellipsis dims [2,1] and [3] broadcast to [2,3].
  const Tensor a = Literal<float>({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});  // I and 2I
  const Tensor b = Iota({3, 2, 2});
  const Tensor out = Einsum("...ij,...jk->...ik", {a, b});
  std::vector<float> expected;
  for (int s : {1, 2}) {
    for (int i = 1; i <= 12; ++i) expected.push_back(static_cast<float>(s * i));
  }
  EXPECT_THAT(out, TensorIs<float>({2, 3, 2, 2}, expected));
  // An ellipsis summed away.
  EXPECT_THAT(Einsum("...i->i", {Iota({2, 2, 2})}), TensorIs<float>({2}, {16, 20}));
}

TEST(EinsumTest, BadEquationsAndShapesAreClearErrors) {
  const Tensor a = Iota({2, 3});
  KernelRunner r("Einsum");
  r.Attr("equation", "ij,jk->ik").Attr("N", int64_t{2});
  EXPECT_THAT(r.Run({a, Iota({2, 2})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "label 'j' has size 3"));
  EXPECT_THAT(r.Run({a, Iota({3})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "has rank 1 but its term names 2"));
  KernelRunner bad("Einsum");
  bad.Attr("equation", "ij->ik").Attr("N", int64_t{1});
  EXPECT_THAT(bad.Run({a}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "output label 'k' is in no input"));
  KernelRunner diagonal("Einsum");
  diagonal.Attr("equation", "ii->i").Attr("N", int64_t{1});
  EXPECT_THAT(diagonal.Run({Iota({2, 3})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "sizes 2 and 3; they must be equal"));
  KernelRunner character("Einsum");
  character.Attr("equation", "i1->i").Attr("N", int64_t{1});
  EXPECT_THAT(character.Run({Iota({2, 2})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "invalid character '1'"));
}

}  // namespace
}  // namespace towerflow
