// ParseSequenceExampleV2, ParseSequenceExample and ParseSingleSequenceExample
// on literal tf.SequenceExamples: context features (dense, sparse, ragged)
// and feature lists (dense with lengths, sparse, ragged), a batch and a
// scalar, with TF 2.21's outputs and messages for the same inputs.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "proto/example.pb.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

Feature Floats(std::vector<float> values) {
  Feature f;
  for (float v : values) f.mutable_float_list()->add_value(v);
  return f;
}
Feature Ints(std::vector<int64_t> values) {
  Feature f;
  for (int64_t v : values) f.mutable_int64_list()->add_value(v);
  return f;
}
Feature Strings(std::vector<std::string> values) {
  Feature f;
  for (const std::string& v : values) f.mutable_bytes_list()->add_value(v);
  return f;
}

void AddSteps(SequenceExample* s, const std::string& key, std::vector<Feature> steps) {
  FeatureList& list = (*s->mutable_feature_lists()->mutable_feature_list())[key];
  for (Feature& f : steps) *list.add_feature() = std::move(f);
}

// s0: context {cd: [3], cs: ["x", "y"], cr: [1.5]}, lists {fd: [1, 2], [3,
// 4], [5, 6]; fs: [1], (a Feature without a list), [2, 3]; fr: ["a"], ["b",
// "c"]}. s1: context {cd: [4], cr: [2.5, 3.5]}, lists {fd: [7, 8]; fs: [4,
// 5, 6]; fr with no steps}. s2: lists {fs: [9]}.
std::vector<std::string> Sequences() {
  SequenceExample s0, s1, s2;
  auto& c0 = *s0.mutable_context()->mutable_feature();
  c0["cd"] = Ints({3});
  c0["cs"] = Strings({"x", "y"});
  c0["cr"] = Floats({1.5f});
  AddSteps(&s0, "fd", {Floats({1, 2}), Floats({3, 4}), Floats({5, 6})});
  AddSteps(&s0, "fs", {Ints({1}), Feature(), Ints({2, 3})});
  AddSteps(&s0, "fr", {Strings({"a"}), Strings({"b", "c"})});
  auto& c1 = *s1.mutable_context()->mutable_feature();
  c1["cd"] = Ints({4});
  c1["cr"] = Floats({2.5f, 3.5f});
  AddSteps(&s1, "fd", {Floats({7, 8})});
  AddSteps(&s1, "fs", {Ints({4, 5, 6})});
  AddSteps(&s1, "fr", {});
  AddSteps(&s2, "fs", {Ints({9})});
  return {s0.SerializeAsString(), s1.SerializeAsString(), s2.SerializeAsString()};
}

// One feature of each kind: context dense cd (int64 scalar, default -1),
// sparse cs (string) and ragged cr (float, int64 splits); feature lists
// dense fd (float [2]), sparse fs (int64) and ragged fr (string, int32
// splits).
void ConfigureV2(KernelRunner& k) {
  k.Attr("Ncontext_sparse", int64_t{1})
      .Attr("Tcontext_dense", std::vector<DataType>{DT_INT64})
      .Attr("context_sparse_types", std::vector<DataType>{DT_STRING})
      .Attr("context_ragged_value_types", std::vector<DataType>{DT_FLOAT})
      .Attr("context_ragged_split_types", std::vector<DataType>{DT_INT64})
      .Attr("context_dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({})})
      .Attr("Nfeature_list_sparse", int64_t{1})
      .Attr("Nfeature_list_dense", int64_t{1})
      .Attr("feature_list_dense_types", std::vector<DataType>{DT_FLOAT})
      .Attr("feature_list_sparse_types", std::vector<DataType>{DT_INT64})
      .Attr("feature_list_ragged_value_types", std::vector<DataType>{DT_STRING})
      .Attr("feature_list_ragged_split_types", std::vector<DataType>{DT_INT32})
      .Attr("feature_list_dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({2})});
}

std::vector<Tensor> V2Inputs(const Tensor& serialized, bool fd_may_be_missing,
                             const Tensor& names = Tensor(DT_STRING, TensorShape({0}))) {
  return {serialized,
          names,
          Literal<std::string>({1}, {"cs"}),
          Literal<std::string>({1}, {"cd"}),
          Literal<std::string>({1}, {"cr"}),
          Literal<std::string>({1}, {"fs"}),
          Literal<std::string>({1}, {"fd"}),
          Literal<std::string>({1}, {"fr"}),
          Literal<bool>({1}, {fd_may_be_missing}),
          Literal<int64_t>({}, {-1})};
}

TEST(ParseSequenceExampleV2Test, ParsesABatchAsTensorFlow) {
  const std::vector<std::string> s = Sequences();
  KernelRunner k("ParseSequenceExampleV2");
  ConfigureV2(k);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          k.Run(V2Inputs(Literal<std::string>({2}, {s[0], s[1]}), false)));
  ASSERT_EQ(out.size(), 14u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 2}, {0, 0, 0, 1}));
  EXPECT_EQ(Values<std::string>(out[1]), (std::vector<std::string>{"x", "y"}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 2}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({2}, {3, 4}));
  EXPECT_THAT(out[4], TensorIs<float>({3}, {1.5f, 2.5f, 3.5f}));
  EXPECT_THAT(out[5], TensorIs<int64_t>({3}, {0, 1, 3}));
  EXPECT_THAT(out[6], TensorIs<int64_t>({6, 3}, {0, 0, 0, 0, 2, 0, 0, 2, 1,  //
                                                 1, 0, 0, 1, 0, 1, 1, 0, 2}));
  EXPECT_THAT(out[7], TensorIs<int64_t>({6}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(out[8], TensorIs<int64_t>({3}, {2, 3, 3}));
  EXPECT_THAT(out[9], TensorIs<float>({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0}));
  EXPECT_THAT(out[10], TensorIs<int64_t>({2}, {3, 1}));
  EXPECT_EQ(Values<std::string>(out[11]), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_THAT(out[12], TensorIs<int32_t>({3}, {0, 2, 2}));
  EXPECT_THAT(out[13], TensorIs<int32_t>({3}, {0, 1, 3}));
}

// A scalar: no batch dimension (tf.io.parse_single_sequence_example); the
// row splits over examples are scalars, as TF's shapes (whose values TF
// leaves unset).
TEST(ParseSequenceExampleV2Test, AScalarHasNoBatchDimension) {
  KernelRunner k("ParseSequenceExampleV2");
  ConfigureV2(k);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          k.Run(V2Inputs(Literal<std::string>({}, {Sequences()[0]}), false)));
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 1}, {0, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({1}, {2}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({}, {3}));
  EXPECT_THAT(out[4], TensorIs<float>({1}, {1.5f}));
  EXPECT_EQ(out[5].shape(), TensorShape());
  EXPECT_THAT(out[6], TensorIs<int64_t>({3, 2}, {0, 0, 2, 0, 2, 1}));
  EXPECT_THAT(out[8], TensorIs<int64_t>({2}, {3, 2}));
  EXPECT_THAT(out[9], TensorIs<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(out[10], TensorIs<int64_t>({}, {3}));
  EXPECT_EQ(out[12].shape(), TensorShape());
  EXPECT_THAT(out[13], TensorIs<int32_t>({3}, {0, 1, 3}));
}

TEST(ParseSequenceExampleV2Test, AMissingDenseListIsRefusedUnlessAssumedEmpty) {
  const std::vector<std::string> s = Sequences();
  KernelRunner k("ParseSequenceExampleV2");
  ConfigureV2(k);
  const Tensor batch = Literal<std::string>({2}, {s[0], s[2]});
  EXPECT_THAT(k.Run(V2Inputs(batch, false)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: <unknown>, Feature list 'fd' is required but could not be found.  "
                       "Did you mean to include it in feature_list_dense_missing_assumed_empty "
                       "or feature_list_dense_defaults?"));
  EXPECT_THAT(k.Run(V2Inputs(batch, false, Literal<std::string>({2}, {"first", "second"}))),
              StatusIs(absl::StatusCode::kInvalidArgument, "Name: second, Feature list 'fd'"));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, k.Run(V2Inputs(batch, true)));
  EXPECT_THAT(out[3], TensorIs<int64_t>({2}, {3, -1}));  // s2's cd: the default
  EXPECT_THAT(out[5], TensorIs<int64_t>({3}, {0, 1, 1}));
  EXPECT_THAT(out[6], TensorIs<int64_t>({4, 3}, {0, 0, 0, 0, 2, 0, 0, 2, 1, 1, 0, 0}));
  EXPECT_THAT(out[7], TensorIs<int64_t>({4}, {1, 2, 3, 9}));
  EXPECT_THAT(out[8], TensorIs<int64_t>({3}, {2, 3, 2}));
  EXPECT_THAT(out[9], TensorIs<float>({2, 3, 2}, {1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0}));
  EXPECT_THAT(out[10], TensorIs<int64_t>({2}, {3, 0}));
  EXPECT_THAT(out[12], TensorIs<int32_t>({3}, {0, 2, 2}));
}

TEST(ParseSequenceExampleV2Test, RefusesAsTensorFlow) {
  const std::vector<std::string> s = Sequences();
  // cd as floats, fd's step of three values, fs's step as floats.
  SequenceExample bad;
  (*bad.mutable_context()->mutable_feature())["cd"] = Floats({1});
  AddSteps(&bad, "fd", {Floats({1, 2, 3})});
  AddSteps(&bad, "fs", {Floats({1})});
  AddSteps(&bad, "fr", {Ints({1})});
  const Tensor batch = Literal<std::string>({2}, {s[0], bad.SerializeAsString()});
  KernelRunner k("ParseSequenceExampleV2");
  ConfigureV2(k);
  EXPECT_THAT(k.Run(V2Inputs(batch, false)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: <unknown>, Context feature: cd.  Data types don't match. Expected "
                       "type: int64"));
  std::vector<Tensor> inputs = V2Inputs(batch, false);
  inputs[3] = Literal<std::string>({1}, {"none"});
  EXPECT_THAT(k.Run(inputs), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Name: <unknown>, Key: fd, Index: 0.  Number of values != "
                                      "expected.  values size: 3 but output shape: [2]"));
  inputs[6] = Literal<std::string>({1}, {"none"});
  inputs[8] = Literal<bool>({1}, {true});
  EXPECT_THAT(k.Run(inputs), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Name: <unknown>, Feature list: fs, Index: 0.  Data types "
                                      "don't match. Expected type: int64"));
  inputs[5] = Literal<std::string>({1}, {"none"});
  EXPECT_THAT(k.Run(inputs), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Name: <unknown>, Feature list: fr, Index: 0.  Data types "
                                      "don't match. Expected type: string"));
  EXPECT_THAT(k.Run(V2Inputs(Literal<std::string>({1}, {"\x12\x03"
                                                        "bad"}),
                             false)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Invalid protocol message input, example id: <unknown>"));
  EXPECT_THAT(k.Run(V2Inputs(Literal<std::string>({1, 1}, {s[0]}), false)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected serialized to be a scalar or vector, got shape: [1,1]"));
  // Sequence features are fixed-length (TF's message).
  KernelRunner variable("ParseSequenceExampleV2");
  ConfigureV2(variable);
  variable.Attr("feature_list_dense_shapes",
                std::vector<PartialTensorShape>{PartialTensorShape({-1})});
  EXPECT_THAT(variable.Run(V2Inputs(batch, false)),
              StatusIs(absl::StatusCode::kInvalidArgument, "Shape [?] is not fully defined"));
}

// TF 1's forms: ParseSingleSequenceExample (keys as scalar inputs, no
// lengths) and ParseSequenceExample (keys as attrs), TF 2.21's outputs.
void ConfigureV1(KernelRunner& k) {
  k.Attr("Ncontext_sparse", int64_t{1})
      .Attr("Ncontext_dense", int64_t{1})
      .Attr("Nfeature_list_sparse", int64_t{1})
      .Attr("Nfeature_list_dense", int64_t{1})
      .Attr("context_sparse_types", std::vector<DataType>{DT_STRING})
      .Attr("Tcontext_dense", std::vector<DataType>{DT_INT64})
      .Attr("feature_list_dense_types", std::vector<DataType>{DT_FLOAT})
      .Attr("context_dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({})})
      .Attr("feature_list_sparse_types", std::vector<DataType>{DT_INT64})
      .Attr("feature_list_dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({2})});
}

TEST(ParseSingleSequenceExampleTest, ParsesAsTensorFlow) {
  const std::vector<std::string> s = Sequences();
  KernelRunner k("ParseSingleSequenceExample");
  ConfigureV1(k);
  const auto inputs = [](const std::string& serialized, std::vector<std::string> empty) {
    const int64_t n = static_cast<int64_t>(empty.size());
    return std::vector<Tensor>{Literal<std::string>({}, {serialized}),
                               Literal<std::string>({n}, std::move(empty)),
                               Literal<std::string>({}, {"cs"}),
                               Literal<std::string>({}, {"cd"}),
                               Literal<std::string>({}, {"fs"}),
                               Literal<std::string>({}, {"fd"}),
                               Literal<int64_t>({}, {-1}),
                               Literal<std::string>({}, {"dbg"})};
  };
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, k.Run(inputs(s[0], {})));
  ASSERT_EQ(out.size(), 8u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 1}, {0, 1}));
  EXPECT_EQ(Values<std::string>(out[1]), (std::vector<std::string>{"x", "y"}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({1}, {2}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({}, {3}));
  EXPECT_THAT(out[4], TensorIs<int64_t>({3, 2}, {0, 0, 2, 0, 2, 1}));
  EXPECT_THAT(out[5], TensorIs<int64_t>({3}, {1, 2, 3}));
  EXPECT_THAT(out[6], TensorIs<int64_t>({2}, {3, 2}));
  EXPECT_THAT(out[7], TensorIs<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(k.Run(inputs(s[2], {})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: dbg, Feature list 'fd' is required but could not be found."));
  TW_ASSERT_OK_AND_ASSIGN(out, k.Run(inputs(s[2], {"fd"})));
  EXPECT_THAT(out[0], TensorIs<int64_t>({0, 1}, {}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({1}, {0}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({}, {-1}));
  EXPECT_THAT(out[4], TensorIs<int64_t>({1, 2}, {0, 0}));
  EXPECT_THAT(out[5], TensorIs<int64_t>({1}, {9}));
  EXPECT_THAT(out[6], TensorIs<int64_t>({2}, {1, 1}));
  EXPECT_THAT(out[7], TensorIs<float>({0, 2}, {}));
}

TEST(ParseSequenceExampleTest, ParsesABatchAsTensorFlow) {
  const std::vector<std::string> s = Sequences();
  KernelRunner k("ParseSequenceExample");
  ConfigureV1(k);
  k.Attr("context_sparse_keys", std::vector<std::string>{"cs"})
      .Attr("context_dense_keys", std::vector<std::string>{"cd"})
      .Attr("feature_list_sparse_keys", std::vector<std::string>{"fs"})
      .Attr("feature_list_dense_keys", std::vector<std::string>{"fd"})
      .Attr("feature_list_dense_missing_assumed_empty", std::vector<std::string>{"fd"});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          k.Run({Literal<std::string>({2}, {s[0], s[2]}),
                                 Tensor(DT_STRING, TensorShape({0})), Literal<int64_t>({}, {-1})}));
  ASSERT_EQ(out.size(), 9u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 2}, {0, 0, 0, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 2}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({2}, {3, -1}));
  EXPECT_THAT(out[4], TensorIs<int64_t>({4, 3}, {0, 0, 0, 0, 2, 0, 0, 2, 1, 1, 0, 0}));
  EXPECT_THAT(out[5], TensorIs<int64_t>({4}, {1, 2, 3, 9}));
  EXPECT_THAT(out[6], TensorIs<int64_t>({3}, {2, 3, 2}));
  EXPECT_THAT(out[7], TensorIs<float>({2, 3, 2}, {1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0}));
  EXPECT_THAT(out[8], TensorIs<int64_t>({2}, {3, 0}));
  EXPECT_THAT(k.Run({Literal<std::string>({}, {s[0]}), Tensor(DT_STRING, TensorShape({0})),
                     Literal<int64_t>({}, {-1})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected serialized to be a vector, got shape: []"));
}

}  // namespace
}  // namespace towerflow
