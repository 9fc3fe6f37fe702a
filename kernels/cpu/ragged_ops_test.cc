// RaggedTensorToTensor (ragged_ops.cc) with TensorFlow's values and
// messages (TF 2.21, tf.raw_ops).
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

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<std::vector<Tensor>> ToTensor(const Tensor& shape, const Tensor& values,
                                             const Tensor& fill, std::vector<Tensor> partitions,
                                             std::vector<std::string> types) {
  KernelRunner r("RaggedTensorToTensor");
  r.Attr("row_partition_types", types);
  std::vector<Tensor> inputs = {shape, values, fill};
  inputs.insert(inputs.end(), partitions.begin(), partitions.end());
  return r.Run(inputs);
}

Tensor Splits(std::initializer_list<int64_t> v) {
  return Literal<int64_t>({static_cast<int64_t>(v.size())}, v);
}

TEST(RaggedOpsTest, RowSplitsAsTensorFlow) {
  const Tensor v = Literal<float>({6}, {1, 2, 3, 4, 5, 6});
  const Tensor splits = Splits({0, 2, 2, 6});
  const auto run = [&](const Tensor& shape, float fill) {
    absl::StatusOr<std::vector<Tensor>> out =
        ToTensor(shape, v, Scalar<float>(fill), {splits}, {"ROW_SPLITS"});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  };
  EXPECT_THAT(run(Scalar<int64_t>(-1), 0),
              TensorIs<float>({3, 4}, {1, 2, 0, 0, 0, 0, 0, 0, 3, 4, 5, 6}));
  EXPECT_THAT(run(Literal<int64_t>({2}, {2, 3}), -1),
              TensorIs<float>({2, 3}, {1, 2, -1, -1, -1, -1}));
  EXPECT_THAT(run(Literal<int64_t>({2}, {4, 5}), -1),
              TensorIs<float>({4, 5}, {1, 2, -1, -1, -1, -1, -1, -1, -1, -1,
                                       3, 4, 5,  6,  -1, -1, -1, -1, -1, -1}));
  EXPECT_THAT(run(Literal<int64_t>({2}, {-1, 2}), -1),
              TensorIs<float>({3, 2}, {1, 2, -1, -1, 3, 4}));
  // Splits ending before the last value use the first values (TF's).
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> early,
      ToTensor(Scalar<int64_t>(-1), v, Scalar<float>(0), {Splits({0, 2, 5})}, {"ROW_SPLITS"}));
  EXPECT_THAT(early[0], TensorIs<float>({2, 3}, {1, 2, 0, 3, 4, 5}));
}

TEST(RaggedOpsTest, RowIdsInnerBlocksAndTwoLevels) {
  const Tensor v = Literal<float>({6}, {1, 2, 3, 4, 5, 6});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> ids,
                          ToTensor(Scalar<int64_t>(-1), v, Scalar<float>(9),
                                   {Scalar<int64_t>(4), Splits({0, 0, 2, 2, 2, 3})},
                                   {"FIRST_DIM_SIZE", "VALUE_ROWIDS"}));
  EXPECT_THAT(ids[0], TensorIs<float>({4, 3}, {1, 2, 9, 9, 9, 9, 3, 4, 5, 6, 9, 9}));
  Tensor pairs(DT_FLOAT, TensorShape({6, 2}));
  for (int i = 0; i < 12; ++i) pairs.data<float>()[i] = static_cast<float>(i);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> inner,
                          ToTensor(Scalar<int32_t>(-1), pairs, Literal<float>({2}, {7, 8}),
                                   {Literal<int32_t>({4}, {0, 1, 4, 6})}, {"ROW_SPLITS"}));
  EXPECT_THAT(inner[0],
              TensorIs<float>({3, 3, 2}, {0, 1, 7, 8, 7, 8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 7, 8}));
  const std::vector<float> two_level = {1, 2, 0, 0, 0, 0, 3, 0, 0, 4, 5, 6};
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> splits2,
      ToTensor(Scalar<int32_t>(-1), v, Scalar<float>(0),
               {Literal<int32_t>({3}, {0, 1, 3}), Literal<int32_t>({4}, {0, 2, 3, 6})},
               {"ROW_SPLITS", "ROW_SPLITS"}));
  EXPECT_THAT(splits2[0], TensorIs<float>({2, 2, 3}, two_level));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> ids2,
                          ToTensor(Scalar<int32_t>(-1), v, Scalar<float>(0),
                                   {Scalar<int32_t>(2), Literal<int32_t>({3}, {0, 1, 1}),
                                    Literal<int32_t>({6}, {0, 0, 1, 2, 2, 2})},
                                   {"FIRST_DIM_SIZE", "VALUE_ROWIDS", "VALUE_ROWIDS"}));
  EXPECT_THAT(ids2[0], TensorIs<float>({2, 2, 3}, two_level));
}

TEST(RaggedOpsTest, StringsAndEmptyRows) {
  Tensor words(DT_STRING, TensorShape({3}));
  words.data<std::string>()[0] = "a";
  words.data<std::string>()[1] = "b c";
  words.data<std::string>()[2] = "d";
  Tensor pad(DT_STRING, TensorShape({}));
  *pad.data<std::string>() = "<pad>";
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, ToTensor(Scalar<int64_t>(-1), words, pad,
                                                            {Splits({0, 2, 3})}, {"ROW_SPLITS"}));
  const Tensor& t = out[0];
  EXPECT_THAT(std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + 4),
              ElementsAre("a", "b c", "d", "<pad>"));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> empty,
                          ToTensor(Scalar<int64_t>(-1), Literal<float>({0}, {}), Scalar<float>(0),
                                   {Splits({0, 0, 0})}, {"ROW_SPLITS"}));
  EXPECT_THAT(empty[0], TensorIs<float>({2, 0}, {}));
}

TEST(RaggedOpsTest, BadPartitionsAreErrors) {
  const Tensor v = Literal<float>({6}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(
      ToTensor(Scalar<int64_t>(-1), v, Scalar<float>(0), {Splits({0, 3, 2, 6})}, {"ROW_SPLITS"})
          .status()
          .message(),
      HasSubstr("Invalid row split size."));
  EXPECT_THAT(ToTensor(Scalar<int64_t>(-1), v, Scalar<float>(0), {Splits({0, 6})}, {"ROW_LENGTHS"})
                  .status()
                  .message(),
              HasSubstr("Cannot handle type ROW_LENGTHS"));
  EXPECT_THAT(
      ToTensor(Scalar<int64_t>(-1), v, Scalar<float>(0), {Splits({0, 2, 7})}, {"ROW_SPLITS"})
          .status()
          .message(),
      HasSubstr("row_splits end at 7 but the next level has only 6 elements"));
  EXPECT_THAT(
      ToTensor(Scalar<int64_t>(-1), v, Scalar<float>(0),
               {Scalar<int64_t>(2), Splits({0, 1, 0, 1, 1, 1})}, {"FIRST_DIM_SIZE", "VALUE_ROWIDS"})
          .status()
          .message(),
      HasSubstr("value_rowids must be sorted"));
  EXPECT_THAT(ToTensor(Scalar<int64_t>(-1), v, Literal<float>({2}, {1, 2}), {Splits({0, 6})},
                       {"ROW_SPLITS"})
                  .status()
                  .message(),
              HasSubstr("are incompatible"));
}

absl::StatusOr<std::vector<Tensor>> ToSparse(std::vector<Tensor> splits, const Tensor& values) {
  KernelRunner k("RaggedTensorToSparse");
  k.Attr("RAGGED_RANK", static_cast<int64_t>(splits.size()));
  splits.push_back(values);
  return k.Run(splits);
}

// tf.RaggedTensor.to_sparse: TF 2.21's indices, values and dense shapes for
// one and two ragged levels, values with an inner dimension, and nothing.
TEST(RaggedTensorToSparseTest, AsTensorFlow) {
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, ToSparse({Literal<int64_t>({4}, {0, 2, 2, 5})},
                                                            Literal<float>({5}, {1, 2, 3, 4, 5})));
  EXPECT_THAT(out[0], TensorIs<int64_t>({5, 2}, {0, 0, 0, 1, 2, 0, 2, 1, 2, 2}));
  EXPECT_THAT(out[1], TensorIs<float>({5}, {1, 2, 3, 4, 5}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {3, 3}));
  TW_ASSERT_OK_AND_ASSIGN(
      out, ToSparse({Literal<int32_t>({3}, {0, 2, 3}), Literal<int32_t>({4}, {0, 1, 4, 4})},
                    Literal<int32_t>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})));
  EXPECT_THAT(out[0], TensorIs<int64_t>({8, 4}, {0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1,
                                                 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 2, 0, 0, 1, 2, 1}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({8}, {1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({4}, {2, 2, 3, 2}));
  TW_ASSERT_OK_AND_ASSIGN(out, ToSparse({Literal<int64_t>({3}, {0, 2, 3})},
                                        Literal<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6})));
  EXPECT_THAT(out[0],
              TensorIs<int64_t>({6, 3}, {0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({3}, {2, 2, 2}));
  TW_ASSERT_OK_AND_ASSIGN(out, ToSparse({Literal<int64_t>({1}, {0})}, Literal<float>({0}, {})));
  EXPECT_THAT(out[0], TensorIs<int64_t>({0, 2}, {}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {0, 0}));
}

TEST(RaggedTensorToSparseTest, BadSplitsGiveTensorFlowsErrors) {
  const Tensor three = Literal<float>({3}, {1, 2, 3});
  EXPECT_THAT(ToSparse({Literal<int64_t>({3}, {0, 2, 1})}, three),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Ragged splits should be non decreasing, but we got 2 followed by 1"));
  EXPECT_THAT(
      ToSparse({Literal<int64_t>({3}, {1, 2, 3})}, three),
      StatusIs(absl::StatusCode::kInvalidArgument, "First value of ragged splits must be 0."));
  const std::string final_value =
      "Final value of ragged splits must match the length the corresponding ragged values.";
  EXPECT_THAT(ToSparse({Literal<int64_t>({3}, {0, 2, 4})}, three),
              StatusIs(absl::StatusCode::kInvalidArgument, final_value));
  EXPECT_THAT(ToSparse({Literal<int64_t>({3}, {0, 2, 3}), Literal<int64_t>({3}, {0, 1, 4})},
                       Literal<float>({4}, {1, 2, 3, 4})),
              StatusIs(absl::StatusCode::kInvalidArgument, final_value));
  EXPECT_THAT(ToSparse({Literal<int64_t>({2}, {0, 3})}, Literal<float>({}, {5})),
              StatusIs(absl::StatusCode::kInvalidArgument, final_value));
  EXPECT_THAT(ToSparse({Literal<int64_t>({0}, {})}, three),
              StatusIs(absl::StatusCode::kInvalidArgument, "ragged splits may not be empty."));
  EXPECT_THAT(ToSparse({Literal<int64_t>({1, 2}, {0, 3})}, three),
              StatusIs(absl::StatusCode::kInvalidArgument, "rt_nested_splits[0] must be a vector"));
}

// RaggedGather against TF 2.21's outputs and messages for these inputs.
absl::StatusOr<std::vector<Tensor>> Gather(const std::vector<Tensor>& splits, const Tensor& values,
                                           const Tensor& indices, int64_t output_ragged_rank) {
  KernelRunner k("RaggedGather");
  k.Attr("PARAMS_RAGGED_RANK", static_cast<int64_t>(splits.size()))
      .Attr("OUTPUT_RAGGED_RANK", output_ragged_rank);
  std::vector<Tensor> inputs = splits;
  inputs.push_back(values);
  inputs.push_back(indices);
  return k.Run(inputs);
}

TEST(RaggedGatherTest, AsTensorFlow) {
  const Tensor splits = Literal<int64_t>({4}, {0, 2, 2, 5});
  const Tensor values = Literal<float>({5}, {1, 2, 3, 4, 5});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          Gather({splits}, values, Literal<int32_t>({4}, {2, 0, 1, 2}), 1));
  EXPECT_THAT(out[0], TensorIs<int64_t>({5}, {0, 3, 5, 5, 8}));
  EXPECT_THAT(out[1], TensorIs<float>({8}, {3, 4, 5, 1, 2, 3, 4, 5}));

  // Two ragged levels over values of [2], gathered by 2-D indices: the
  // indices' rows become a uniform ragged dimension.
  TW_ASSERT_OK_AND_ASSIGN(
      out, Gather({Literal<int64_t>({3}, {0, 2, 3}), Literal<int64_t>({4}, {0, 1, 4, 4})},
                  Literal<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                  Literal<int32_t>({2, 2}, {1, 0, 0, 0}), 3));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3}, {0, 2, 4}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({5}, {0, 1, 3, 5, 7}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({8}, {0, 0, 1, 4, 5, 8, 9, 12}));
  EXPECT_THAT(out[3], TensorIs<float>({12, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4,
                                                5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}));

  // A scalar index gives the row itself; int32 splits, strings.
  TW_ASSERT_OK_AND_ASSIGN(out, Gather({splits}, values, Literal<int64_t>({}, {2}), 0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], TensorIs<float>({3}, {3, 4, 5}));
  TW_ASSERT_OK_AND_ASSIGN(
      out, Gather({Literal<int32_t>({3}, {0, 1, 3})}, Literal<std::string>({3}, {"a", "bc", "d"}),
                  Literal<int64_t>({3}, {1, 1, 0}), 1));
  EXPECT_THAT(out[0], TensorIs<int32_t>({4}, {0, 2, 4, 5}));
  EXPECT_THAT(out[1], TensorIs<std::string>({5}, {"bc", "d", "bc", "d", "a"}));
  TW_ASSERT_OK_AND_ASSIGN(out, Gather({splits}, values, Literal<int32_t>({0}, {}), 1));
  EXPECT_THAT(out[0], TensorIs<int64_t>({1}, {0}));
  EXPECT_THAT(out[1], TensorIs<float>({0}, {}));
}

TEST(RaggedGatherTest, BadInputsAreTensorFlowsErrors) {
  const Tensor splits = Literal<int64_t>({4}, {0, 2, 2, 5});
  const Tensor values = Literal<float>({5}, {1, 2, 3, 4, 5});
  EXPECT_THAT(Gather({splits}, values, Literal<int32_t>({1, 2}, {1, 3}), 2),
              StatusIs(absl::StatusCode::kInvalidArgument, "indices[0,1] = 3 is not in [0, 3)"));
  EXPECT_THAT(Gather({splits}, values, Literal<int32_t>({1}, {-1}), 1),
              StatusIs(absl::StatusCode::kInvalidArgument, "indices[0] = -1 is not in [0, 3)"));
  EXPECT_THAT(Gather({Literal<int64_t>({4}, {0, 3, 2, 5})}, values, Literal<int32_t>({1}, {1}), 1),
              StatusIs(absl::StatusCode::kInvalidArgument, "Ragged splits must be sorted"));
  EXPECT_THAT(
      Gather({Literal<int64_t>({4}, {0, 2, 2, 6})}, values, Literal<int32_t>({1}, {1}), 1),
      StatusIs(absl::StatusCode::kInvalidArgument, "Ragged splits must not point past values"));
  EXPECT_THAT(Gather({Literal<int64_t>({4}, {-1, 2, 2, 5})}, values, Literal<int32_t>({1}, {1}), 1),
              StatusIs(absl::StatusCode::kInvalidArgument, "Ragged splits must be non-negative"));
  EXPECT_THAT(Gather({splits}, Literal<float>({}, {1}), Literal<int32_t>({1}, {1}), 1),
              StatusIs(absl::StatusCode::kInvalidArgument, "params.rank must be nonzero"));
  // Empty indices whose uniform splits would not fit in memory (TF's
  // kernel throws building them).
  const absl::StatusOr<std::vector<Tensor>> huge = Gather(
      {splits}, values, Tensor(DT_INT32, TensorShape({int64_t{1} << 31, int64_t{1} << 31, 0})), 3);
  EXPECT_FALSE(huge.ok());
  // Outer splits ending at the inner splits' length (TF reads past them).
  EXPECT_THAT(
      Gather({Literal<int64_t>({2}, {0, 3}), Literal<int64_t>({3}, {0, 1, 2})},
             Literal<float>({2}, {1, 2}), Literal<int32_t>({1}, {0}), 2),
      StatusIs(absl::StatusCode::kInvalidArgument, "Ragged splits must not point past values"));
}

}  // namespace
}  // namespace towerflow
