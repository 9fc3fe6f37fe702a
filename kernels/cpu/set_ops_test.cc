// The tf.sets ops (set_ops.cc) against TensorFlow 2.21's values and
// messages (tf.raw_ops on these inputs; InvalidArgument where TF's unchecked
// operands meet its Internal errors).
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

Tensor I64(const TensorShape& shape, std::vector<int64_t> v) { return Literal<int64_t>(shape, v); }
Tensor I32(const TensorShape& shape, std::vector<int32_t> v) { return Literal<int32_t>(shape, v); }
Tensor Str(const TensorShape& shape, std::vector<std::string> v) {
  return Literal<std::string>(shape, v);
}

absl::StatusOr<std::vector<Tensor>> SetOp(const std::string& op, const std::string& which,
                                          const std::vector<Tensor>& inputs, bool validate = true) {
  KernelRunner r(op);
  r.Attr("set_operation", which).Attr("validate_indices", validate);
  return r.Run(inputs);
}

// The SparseTensor result (indices, values, shape) of a set op.
template <typename T>
void ExpectSets(const absl::StatusOr<std::vector<Tensor>>& out, int64_t rank,
                std::vector<int64_t> indices, std::vector<T> values, std::vector<int64_t> shape) {
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  const int64_t n = static_cast<int64_t>(values.size());
  EXPECT_THAT((*out)[0], TensorIs<int64_t>({n, rank}, indices));
  EXPECT_THAT((*out)[1], TensorIs<T>({n}, values));
  EXPECT_THAT((*out)[2], TensorIs<int64_t>({rank}, shape));
}

const Tensor kA = I32({2, 4}, {1, 2, 2, 5, 3, 3, 3, 3});
const Tensor kB = I32({2, 4}, {2, 7, 1, 1, 4, 3, 9, 0});

TEST(DenseToDenseSetOperationTest, EachOperationRowByRowAscending) {
  const std::string op = "DenseToDenseSetOperation";
  ExpectSets<int32_t>(SetOp(op, "a-b", {kA, kB}), 2, {0, 0}, {5}, {2, 1});
  ExpectSets<int32_t>(SetOp(op, "b-a", {kA, kB}), 2, {0, 0, 1, 0, 1, 1, 1, 2}, {7, 0, 4, 9},
                      {2, 3});
  ExpectSets<int32_t>(SetOp(op, "intersection", {kA, kB}), 2, {0, 0, 0, 1, 1, 0}, {1, 2, 3},
                      {2, 2});
  // The operation's name in any case.
  ExpectSets<int32_t>(SetOp(op, "UNION", {kA, kB}), 2,
                      {0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 1, 2, 1, 3}, {1, 2, 5, 7, 0, 3, 4, 9},
                      {2, 4});
  // Strings by byte: "" first, "\xff" last.
  ExpectSets<std::string>(SetOp(op, "union",
                                {Str({2, 3}, {"b", "a", "\xff", "", "x", "x"}),
                                 Str({2, 3}, {"a", "c", "a", "x", "y", "z"})}),
                          2, {0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 1, 2, 1, 3},
                          {"a", "b", "c", "\xff", "", "x", "y", "z"}, {2, 4});
  // Rank 3, the last dims differing; an empty group is left out.
  ExpectSets<int8_t>(SetOp(op, "a-b",
                           {Literal<int8_t>({2, 2, 2}, {1, 2, 3, 4, 5, 5, 6, 7}),
                            Literal<int8_t>({2, 2, 1}, {2, 9, 5, 1})}),
                     3, {0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1}, {1, 3, 4, 6, 7}, {2, 2, 2});
  ExpectSets<int64_t>(SetOp(op, "a-b", {I64({1, 2}, {1, 2}), I64({1, 3}, {1, 2, 2})}), 2, {}, {},
                      {1, 0});
  ExpectSets<int32_t>(SetOp(op, "union", {I32({0, 3}, {}), I32({0, 2}, {})}), 2, {}, {}, {0, 0});
}

TEST(DenseToDenseSetOperationTest, RefusesBadOperationsAndShapes) {
  const std::string op = "DenseToDenseSetOperation";
  EXPECT_THAT(SetOp(op, "Bogus", {kA, kB}), StatusIs(kInvalid, "Invalid set_operation bogus."));
  EXPECT_THAT(SetOp(op, "a-b", {I32({1, 2}, {1, 2}), I32({2, 1}, {1, 2})}),
              StatusIs(kInvalid, "Mismatched shapes [1] vs [2]"));
}

// [3, 4] with [0,0]=2 [0,1]=9 [2,0]=4 [2,3]=4.
const Tensor kSpIndices = I64({4, 2}, {0, 0, 0, 1, 2, 0, 2, 3});
const Tensor kSpValues = I32({4}, {2, 9, 4, 4});
const Tensor kSpShape = I64({2}, {3, 4});
const Tensor kDense = I32({3, 2}, {1, 2, 3, 4, 4, 5});

TEST(DenseToSparseSetOperationTest, EachOperation) {
  const std::string op = "DenseToSparseSetOperation";
  const std::vector<Tensor> in = {kDense, kSpIndices, kSpValues, kSpShape};
  ExpectSets<int32_t>(SetOp(op, "a-b", in), 2, {0, 0, 1, 0, 1, 1, 2, 0}, {1, 3, 4, 5}, {3, 2});
  ExpectSets<int32_t>(SetOp(op, "b-a", in), 2, {0, 0}, {9}, {3, 1});
  ExpectSets<int32_t>(SetOp(op, "intersection", in), 2, {0, 0, 2, 0}, {2, 4}, {3, 1});
  ExpectSets<int32_t>(SetOp(op, "union", in), 2, {0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 2, 0, 2, 1},
                      {1, 2, 9, 3, 4, 4, 5}, {3, 3});
  // An empty dense set.
  ExpectSets<int32_t>(
      SetOp(op, "union", {I32({2, 0}, {}), I64({1, 2}, {1, 0}), I32({1}, {7}), I64({2}, {2, 1})}),
      2, {1, 0}, {7}, {2, 1});
}

TEST(DenseToSparseSetOperationTest, UnvalidatedOutOfOrderRunsArePassedOverAsTfDoes) {
  const std::vector<Tensor> in = {kDense, I64({2, 2}, {2, 0, 0, 0}), I32({2}, {4, 2}), kSpShape};
  EXPECT_THAT(SetOp("DenseToSparseSetOperation", "union", in),
              StatusIs(kInvalid,
                       "indices[1] = [0,0] is out of order. Many sparse ops require "
                       "sorted indices.\n    Use `tf.sparse.reorder` to create a "
                       "correctly ordered copy.\n\n"));
  // Group 2 takes the first run; the run of group 0 comes too late.
  ExpectSets<int32_t>(SetOp("DenseToSparseSetOperation", "union", in, false), 2,
                      {0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1}, {1, 2, 3, 4, 4, 5}, {3, 2});
}

TEST(DenseToSparseSetOperationTest, RefusesBadSparseOperands) {
  const std::string op = "DenseToSparseSetOperation";
  const auto run = [&](Tensor indices, Tensor values, Tensor shape, bool validate = true) {
    return SetOp(op, "union", {kDense, indices, values, shape}, validate);
  };
  EXPECT_THAT(run(I64({1, 2}, {0, 4}), I32({1}, {4}), kSpShape),
              StatusIs(kInvalid, "indices[0] = [0,4] is out of bounds: need 0 <= index < [3,4]"));
  EXPECT_THAT(run(I64({1, 2}, {0, 4}), I32({1}, {4}), kSpShape, false),
              StatusIs(kInvalid, "indices[0, 1] expected < 4, got 4."));
  EXPECT_THAT(run(I64({2, 2}, {0, 1, 0, 1}), I32({2}, {4, 5}), kSpShape),
              StatusIs(kInvalid, "indices[1] = [0,1] is repeated"));
  EXPECT_THAT(run(I64({1, 2}, {0, 1}), I32({1}, {4}), I64({2}, {2, 4})),
              StatusIs(kInvalid, "Mismatched shapes [3] vs [2]"));
  EXPECT_THAT(run(I64({1, 1}, {0}), I32({1}, {4}), I64({1}, {4})),
              StatusIs(kInvalid, "Invalid rank 1."));
  EXPECT_THAT(run(I64({0, 2}, {}), I32({0}, {}), I64({2}, {2, -1})),
              StatusIs(kInvalid, "Expected shape dimensions to be non-negative, got -1"));
}

TEST(SparseToSparseSetOperationTest, EachOperationOverBothOperandsGroups) {
  const std::string op = "SparseToSparseSetOperation";
  const std::vector<Tensor> in = {
      I64({4, 2}, {0, 0, 0, 1, 1, 0, 3, 2}), Str({4}, {"a", "b", "c", "d"}), I64({2}, {4, 3}),
      I64({4, 2}, {0, 0, 2, 0, 3, 0, 3, 1}), Str({4}, {"b", "x", "d", "e"}), I64({2}, {4, 5})};
  ExpectSets<std::string>(SetOp(op, "a-b", in), 2, {0, 0, 1, 0}, {"a", "c"}, {4, 1});
  ExpectSets<std::string>(SetOp(op, "b-a", in), 2, {2, 0, 3, 0}, {"x", "e"}, {4, 1});
  ExpectSets<std::string>(SetOp(op, "intersection", in), 2, {0, 0, 3, 0}, {"b", "d"}, {4, 1});
  ExpectSets<std::string>(SetOp(op, "union", in), 2, {0, 0, 0, 1, 1, 0, 2, 0, 3, 0, 3, 1},
                          {"a", "b", "c", "x", "d", "e"}, {4, 2});
}

TEST(SparseToSparseSetOperationTest, UnvalidatedAndBadOperandsAsTf) {
  const std::string op = "SparseToSparseSetOperation";
  const Tensor none = I64({0, 2}, {});
  // Runs merged as they come: TF's answer, rows out of order and all.
  ExpectSets<int32_t>(SetOp(op, "union",
                            {I64({2, 2}, {1, 0, 0, 0}), I32({2}, {1, 2}), I64({2}, {2, 3}),
                             I64({2, 2}, {0, 0, 1, 0}), I32({2}, {5, 6}), I64({2}, {2, 3})},
                            false),
                      2, {0, 0, 1, 0, 1, 1, 0, 0}, {5, 1, 6, 2}, {2, 2});
  // A negative last index is only a value's position.
  ExpectSets<int32_t>(SetOp(op, "union",
                            {I64({1, 2}, {0, -2}), I32({1}, {1}), I64({2}, {1, 3}), none,
                             I32({0}, {}), I64({2}, {1, 3})},
                            false),
                      2, {0, 0}, {1}, {1, 1});
  EXPECT_THAT(SetOp(op, "union",
                    {I64({1, 2}, {0, 0}), I32({1}, {1}), I64({2}, {1, 0}), none, I32({0}, {}),
                     I64({2}, {1, 0})},
                    false),
              StatusIs(kInvalid, "Invalid dim_size[1] = 0."));
  EXPECT_THAT(SetOp(op, "union",
                    {none, I32({0}, {}), I64({2}, {4, 3}), none, I32({0}, {}), I64({2}, {5, 5})}),
              StatusIs(kInvalid, "Mismatched shapes [4] vs [5]"));
}

Tensor SetSize(const Tensor& indices, const Tensor& values, const Tensor& shape,
               bool validate = true, absl::Status* status = nullptr) {
  KernelRunner r("SetSize");
  r.Attr("validate_indices", validate);
  absl::StatusOr<std::vector<Tensor>> out = r.Run({indices, values, shape});
  if (status != nullptr) *status = out.status();
  if (!out.ok()) return Tensor();
  return (*out)[0];
}

absl::Status SetSizeStatus(const Tensor& indices, const Tensor& values, const Tensor& shape,
                           bool validate = true) {
  absl::Status status;
  SetSize(indices, values, shape, validate, &status);
  return status;
}

TEST(SetSizeTest, CountsDistinctValuesPerGroup) {
  EXPECT_THAT(SetSize(I64({5, 2}, {0, 0, 0, 1, 0, 2, 2, 1, 2, 3}), I64({5}, {5, 5, 6, 1, 1}),
                      I64({2}, {3, 4})),
              TensorIs<int32_t>({3}, {2, 0, 1}));
  EXPECT_THAT(SetSize(I64({3, 3}, {0, 1, 0, 1, 0, 0, 1, 0, 1}), Str({3}, {"a", "a", "b"}),
                      I64({3}, {2, 2, 2})),
              TensorIs<int32_t>({2, 2}, {0, 1, 2, 0}));
  EXPECT_THAT(SetSize(I64({0, 2}, {}), I32({0}, {}), I64({2}, {2, 3})),
              TensorIs<int32_t>({2}, {0, 0}));
  // Unvalidated: a negative last index counts, and a group met twice keeps
  // its last run's count (TF's answers).
  EXPECT_THAT(SetSize(I64({1, 2}, {0, -1}), I32({1}, {1}), I64({2}, {3, 3}), false),
              TensorIs<int32_t>({3}, {1, 0, 0}));
  EXPECT_THAT(
      SetSize(I64({3, 2}, {1, 0, 0, 0, 1, 1}), I32({3}, {1, 2, 3}), I64({2}, {3, 3}), false),
      TensorIs<int32_t>({3}, {1, 1, 0}));
}

TEST(SetSizeTest, RefusesBadOperandsWithTfsMessages) {
  const Tensor one = I32({1}, {1});
  EXPECT_THAT(SetSizeStatus(I64({1, 1}, {0}), one, I64({1}, {3})),
              StatusIs(kInvalid, "Invalid rank 1."));
  EXPECT_THAT(SetSizeStatus(I64({1, 2}, {0, 5}), one, I64({2}, {3, 3}), false),
              StatusIs(kInvalid, "indices[0, 1] expected < 3, got 5."));
  EXPECT_THAT(SetSizeStatus(I64({1, 2}, {-1, 1}), one, I64({2}, {2, 3})),
              StatusIs(kInvalid, "indices[0] = [-1,1] is out of bounds: need 0 <= index < [2,3]"));
  // Unvalidated, TF would write outside its output.
  EXPECT_THAT(SetSizeStatus(I64({1, 2}, {-1, 1}), one, I64({2}, {2, 3}), false),
              StatusIs(kInvalid, "Index out of range, [-1] vs [2]"));
  EXPECT_THAT(SetSizeStatus(I64({0, 2}, {}), I32({0}, {}), I64({1, 2}, {2, 3})),
              StatusIs(kInvalid, "Shape must be a 1D tensor."));
  EXPECT_THAT(SetSizeStatus(I64({0, 2}, {}), I32({0}, {}), I64({2}, {2, -3})),
              StatusIs(kInvalid, "Expected shape dimensions to be non-negative, got -3"));
  EXPECT_THAT(SetSizeStatus(I64({0, 3}, {}), I32({0}, {}), I64({3}, {1LL << 40, 1LL << 40, 5})),
              StatusIs(kInvalid,
                       "Encountered overflow when multiplying 1099511627776 with "
                       "1099511627776, result: -1"));
  EXPECT_THAT(SetSizeStatus(I64({1, 2}, {0, 0}), I32({0}, {}), I64({2}, {2, 3})),
              StatusIs(kInvalid,
                       "indices and values rows (indexing dimension) must match. "
                       "(indices = 1, values = 0)"));
  EXPECT_THAT(SetSizeStatus(I64({2}, {0, 1}), I32({2}, {1, 2}), I64({2}, {2, 3})),
              StatusIs(kInvalid, "indices must be a matrix, but got: [2]"));
  EXPECT_THAT(SetSizeStatus(I64({1, 2}, {0, 1}), I32({1, 1}, {1}), I64({2}, {2, 3})),
              StatusIs(kInvalid, "vals must be a vec, but got: [1,1]"));
  EXPECT_THAT(SetSizeStatus(I64({1, 3}, {0, 1, 1}), one, I64({2}, {2, 3})),
              StatusIs(kInvalid, "Order length must be SparseTensor rank."));
}

}  // namespace
}  // namespace towerflow
