// ParseExample and ParseExampleV2 on literal tf.Examples: dense features
// with and without defaults, sparse ones, V2's scalar input and key vectors,
// and what they refuse.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "proto/example.pb.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

// {x: [1, 2], ids: [3, 4, 5], s: ["a"]} and {x: [3, 4], ids: [6]}.
std::vector<std::string> TwoExamples() {
  Example a, b;
  auto& fa = *a.mutable_features()->mutable_feature();
  fa["x"].mutable_float_list()->add_value(1);
  fa["x"].mutable_float_list()->add_value(2);
  for (int64_t v : {3, 4, 5}) fa["ids"].mutable_int64_list()->add_value(v);
  fa["s"].mutable_bytes_list()->add_value("a");
  auto& fb = *b.mutable_features()->mutable_feature();
  fb["x"].mutable_float_list()->add_value(3);
  fb["x"].mutable_float_list()->add_value(4);
  fb["ids"].mutable_int64_list()->add_value(6);
  return {a.SerializeAsString(), b.SerializeAsString()};
}

const Tensor kNoDefault = Tensor(DT_FLOAT, TensorShape({0}));

// Dense x (float [2], required) and s (string scalar, default "z"); sparse
// ids (int64).
void ConfigureV2(KernelRunner& k) {
  k.Attr("num_sparse", int64_t{1});
  k.Attr("sparse_types", std::vector<DataType>{DT_INT64});
  k.Attr("dense_shapes",
         std::vector<PartialTensorShape>{PartialTensorShape({2}), PartialTensorShape({})});
  k.Attr("ragged_value_types", std::vector<DataType>{});
  k.Attr("ragged_split_types", std::vector<DataType>{});
}

std::vector<Tensor> V2Inputs(const Tensor& serialized, const Tensor& ragged_keys) {
  return {serialized,
          Tensor(DT_STRING, TensorShape({0})),
          Literal<std::string>({1}, {"ids"}),
          Literal<std::string>({2}, {"x", "s"}),
          ragged_keys,
          kNoDefault,
          Literal<std::string>({}, {"z"})};
}

TEST(ParseExampleV2Test, ParsesABatch) {
  KernelRunner k("ParseExampleV2");
  ConfigureV2(k);
  const std::vector<std::string> examples = TwoExamples();
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      k.Run(V2Inputs(Literal<std::string>({2}, examples), Tensor(DT_STRING, TensorShape({0})))));
  ASSERT_EQ(out.size(), 5u);  // ids' indices, values, shape; x; s
  EXPECT_THAT(out[0], TensorIs<int64_t>({4, 2}, {0, 0, 0, 1, 0, 2, 1, 0}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({4}, {3, 4, 5, 6}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 3}));
  EXPECT_THAT(out[3], TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(out[4].shape(), TensorShape({2}));
  EXPECT_EQ(Values<std::string>(out[4]), (std::vector<std::string>{"a", "z"}));
}

TEST(ParseExampleV2Test, AScalarHasNoBatchDimension) {
  KernelRunner k("ParseExampleV2");
  ConfigureV2(k);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          k.Run(V2Inputs(Literal<std::string>({}, {TwoExamples()[0]}),
                                         Tensor(DT_STRING, TensorShape({0})))));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 1}, {0, 1, 2}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({3}, {3, 4, 5}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({1}, {3}));
  EXPECT_THAT(out[3], TensorIs<float>({2}, {1, 2}));
  EXPECT_EQ(Values<std::string>(out[4]), std::vector<std::string>{"a"});
}

TEST(ParseExampleV2Test, RefusesWhatItCannotParse) {
  KernelRunner k("ParseExampleV2");
  ConfigureV2(k);
  const std::vector<std::string> examples = TwoExamples();
  EXPECT_THAT(
      k.Run(V2Inputs(Literal<std::string>({1, 2}, examples), Tensor(DT_STRING, TensorShape({0})))),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Expected serialized to be a scalar or vector, got shape: [1,2]"));
  EXPECT_THAT(
      k.Run(V2Inputs(Literal<std::string>({2}, examples), Literal<std::string>({1}, {"r"}))),
      StatusIs(absl::StatusCode::kUnimplemented, "ragged"));
  std::vector<Tensor> inputs =
      V2Inputs(Literal<std::string>({2}, examples), Tensor(DT_STRING, TensorShape({0})));
  inputs[3] = Literal<std::string>({1}, {"x"});
  EXPECT_THAT(k.Run(inputs), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Expected dense_keys to be a vector of 2 strings"));
  // The required x missing from an example.
  Example empty;
  EXPECT_THAT(k.Run(V2Inputs(Literal<std::string>({1}, {empty.SerializeAsString()}),
                             Tensor(DT_STRING, TensorShape({0})))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Feature: x (data type: float) is required but could not be found."));
  KernelRunner ragged("ParseExampleV2");
  ConfigureV2(ragged);
  ragged.Attr("ragged_value_types", std::vector<DataType>{DT_FLOAT});
  ragged.Attr("ragged_split_types", std::vector<DataType>{DT_INT64});
  EXPECT_THAT(
      ragged.Run(V2Inputs(Literal<std::string>({2}, examples), Literal<std::string>({1}, {"r"}))),
      StatusIs(absl::StatusCode::kUnimplemented, "ragged features"));
}

// ParseExample (v1) gives the same as V2 for a batch.
TEST(ParseExampleTest, ParsesABatch) {
  KernelRunner k("ParseExample");
  k.Attr("Nsparse", int64_t{1});
  k.Attr("Ndense", int64_t{2});
  k.Attr("sparse_types", std::vector<DataType>{DT_INT64});
  k.Attr("dense_shapes",
         std::vector<PartialTensorShape>{PartialTensorShape({2}), PartialTensorShape({})});
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      k.Run({Literal<std::string>({2}, TwoExamples()), Tensor(DT_STRING, TensorShape({0})),
             Literal<std::string>({}, {"ids"}), Literal<std::string>({}, {"x"}),
             Literal<std::string>({}, {"s"}), kNoDefault, Literal<std::string>({}, {"z"})}));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({4, 2}, {0, 0, 0, 1, 0, 2, 1, 0}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 3}));
  EXPECT_THAT(out[3], TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(Values<std::string>(out[4]), (std::vector<std::string>{"a", "z"}));
  // V1 takes no scalar.
  EXPECT_THAT(
      k.Run({Literal<std::string>({}, {TwoExamples()[0]}), Tensor(DT_STRING, TensorShape({0})),
             Literal<std::string>({}, {"ids"}), Literal<std::string>({}, {"x"}),
             Literal<std::string>({}, {"s"}), kNoDefault, Literal<std::string>({}, {"z"})}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Expected serialized to be a vector"));
}

}  // namespace
}  // namespace towerflow
