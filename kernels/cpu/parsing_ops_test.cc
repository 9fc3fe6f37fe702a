// ParseExample, ParseExampleV2 and ParseSingleExample on literal
// tf.Examples: dense features with and without defaults, variable-length
// and ragged ones, sparse ones, V2's scalar input and key vectors, and what
// they refuse, with TF's values and messages.
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
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

// TF 2.21's outputs of ParseSingleExample on {a: [1.5, 2.5], b: [7, 8, 9],
// c: ["x", "yz"], d: [3]}: sparse b and c, dense a and a missing feature
// with its default.
TEST(ParseSingleExampleTest, ParsesOneExampleAsTensorFlow) {
  Example e;
  auto& f = *e.mutable_features()->mutable_feature();
  for (float v : {1.5f, 2.5f}) f["a"].mutable_float_list()->add_value(v);
  for (int64_t v : {7, 8, 9}) f["b"].mutable_int64_list()->add_value(v);
  for (const char* v : {"x", "yz"}) f["c"].mutable_bytes_list()->add_value(v);
  f["d"].mutable_int64_list()->add_value(3);
  KernelRunner k("ParseSingleExample");
  k.Attr("num_sparse", int64_t{2})
      .Attr("sparse_keys", std::vector<std::string>{"b", "c"})
      .Attr("dense_keys", std::vector<std::string>{"a", "missing"})
      .Attr("sparse_types", std::vector<DataType>{DT_INT64, DT_STRING})
      .Attr("Tdense", std::vector<DataType>{DT_FLOAT, DT_INT64})
      .Attr("dense_shapes",
            std::vector<PartialTensorShape>{PartialTensorShape({2}), PartialTensorShape({1})});
  const Tensor defaults_a = Literal<float>({2}, {0, 0}),
               defaults_missing = Literal<int64_t>({1}, {5});
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      k.Run({Literal<std::string>({}, {e.SerializeAsString()}), defaults_a, defaults_missing}));
  ASSERT_EQ(out.size(), 8u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 1}, {0, 1, 2}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({2, 1}, {0, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({3}, {7, 8, 9}));
  EXPECT_EQ(Values<std::string>(out[3]), (std::vector<std::string>{"x", "yz"}));
  EXPECT_THAT(out[4], TensorIs<int64_t>({1}, {3}));
  EXPECT_THAT(out[5], TensorIs<int64_t>({1}, {2}));
  EXPECT_THAT(out[6], TensorIs<float>({2}, {1.5f, 2.5f}));
  EXPECT_THAT(out[7], TensorIs<int64_t>({1}, {5}));
  // An empty string is an empty example: no sparse values, the defaults.
  TW_ASSERT_OK_AND_ASSIGN(out,
                          k.Run({Literal<std::string>({}, {""}), defaults_a, defaults_missing}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({0, 1}, {}));
  EXPECT_THAT(out[4], TensorIs<int64_t>({1}, {0}));
  EXPECT_THAT(out[6], TensorIs<float>({2}, {0, 0}));

  EXPECT_THAT(
      k.Run({Literal<std::string>({1}, {e.SerializeAsString()}), defaults_a, defaults_missing}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Expected serialized to be a scalar, got shape: [1]"));
  EXPECT_THAT(k.Run({Literal<std::string>({}, {e.SerializeAsString()}), defaults_a,
                     Tensor(DT_INT64, TensorShape({0}))}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Feature: missing (data type: int64) is required but could not be found."));
  KernelRunner keys("ParseSingleExample");
  keys.Attr("num_sparse", int64_t{1})
      .Attr("sparse_keys", std::vector<std::string>{})
      .Attr("dense_keys", std::vector<std::string>{})
      .Attr("sparse_types", std::vector<DataType>{DT_INT64})
      .Attr("Tdense", std::vector<DataType>{})
      .Attr("dense_shapes", std::vector<PartialTensorShape>{});
  EXPECT_THAT(keys.Run({Literal<std::string>({}, {""})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "0 sparse_keys for num_sparse 1"));
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
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Expected ragged_keys to be a vector of 0 strings, got string [1]"));
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
  // TF's messages for values of the wrong type or count.
  Example floats;  // ids as floats, and the required x
  auto& ff = *floats.mutable_features()->mutable_feature();
  for (float v : {1, 2, 3}) ff["ids"].mutable_float_list()->add_value(v);
  for (float v : {1, 2}) ff["x"].mutable_float_list()->add_value(v);
  inputs = V2Inputs(Literal<std::string>({2}, {examples[0], floats.SerializeAsString()}),
                    Tensor(DT_STRING, TensorShape({0})));
  EXPECT_THAT(k.Run(inputs), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Name: <unknown>, Key: ids, Index: 1.  Data types don't "
                                      "match. Expected type: int64, Actual type: float"));
  inputs[3] = Literal<std::string>({2}, {"ids", "s"});
  EXPECT_THAT(k.Run(inputs), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Name: <unknown>, Key: ids, Index: 0.  Data types don't "
                                      "match. Data type: int64 but expected type: float"));
  inputs[3] = Literal<std::string>({2}, {"x", "s"});
  Example three;
  for (float v : {1, 2, 3})
    (*three.mutable_features()->mutable_feature())["x"].mutable_float_list()->add_value(v);
  inputs[0] = Literal<std::string>({2}, {examples[0], three.SerializeAsString()});
  EXPECT_THAT(k.Run(inputs), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Name: <unknown>, Key: x, Index: 1.  Number of float values "
                                      "!= expected.  Values size: 3 but output shape: [2]"));
}

// {v: [1, 2, 3, 4], r: [7, 8], s: ["a"]}, {s: ["b", "c"]}, {v: [5, 6], r: [9]}.
std::vector<std::string> ThreeExamples() {
  Example e[3];
  auto& f0 = *e[0].mutable_features()->mutable_feature();
  for (float v : {1, 2, 3, 4}) f0["v"].mutable_float_list()->add_value(v);
  for (int64_t v : {7, 8}) f0["r"].mutable_int64_list()->add_value(v);
  f0["s"].mutable_bytes_list()->add_value("a");
  auto& f1 = *e[1].mutable_features()->mutable_feature();
  for (const char* v : {"b", "c"}) f1["s"].mutable_bytes_list()->add_value(v);
  auto& f2 = *e[2].mutable_features()->mutable_feature();
  for (float v : {5, 6}) f2["v"].mutable_float_list()->add_value(v);
  f2["r"].mutable_int64_list()->add_value(9);
  return {e[0].SerializeAsString(), e[1].SerializeAsString(), e[2].SerializeAsString()};
}

// ParseExampleV2 with one dense feature `key` of `shape` (tf.io.FixedLen-
// SequenceFeature when its first dimension is -1).
absl::StatusOr<std::vector<Tensor>> ParseDense(const Tensor& serialized, const std::string& key,
                                               PartialTensorShape shape, const Tensor& def) {
  KernelRunner k("ParseExampleV2");
  k.Attr("num_sparse", int64_t{0})
      .Attr("sparse_types", std::vector<DataType>{})
      .Attr("Tdense", std::vector<DataType>{def.dtype()})
      .Attr("dense_shapes", std::vector<PartialTensorShape>{shape})
      .Attr("ragged_value_types", std::vector<DataType>{})
      .Attr("ragged_split_types", std::vector<DataType>{});
  const Tensor none(DT_STRING, TensorShape({0}));
  return k.Run({serialized, none, none, Literal<std::string>({1}, {key}), none, def});
}

// TF 2.21's outputs (tf.io.parse_example with FixedLenSequenceFeature):
// padded with the default to the longest example; a missing feature is
// empty.
TEST(ParseExampleV2Test, VariableLengthDenseFeaturesAsTensorFlow) {
  const std::vector<std::string> examples = ThreeExamples();
  const Tensor batch = Literal<std::string>({3}, examples);
  absl::StatusOr<std::vector<Tensor>> out =
      ParseDense(batch, "v", PartialTensorShape({-1, 2}), Literal<float>({}, {-1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({3, 2, 2}, {1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1}));
  out = ParseDense(Literal<std::string>({}, {examples[0]}), "v", PartialTensorShape({-1, 2}),
                   Literal<float>({}, {0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  out = ParseDense(batch, "s", PartialTensorShape({-1}), Literal<std::string>({}, {""}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values<std::string>((*out)[0]), (std::vector<std::string>{"a", "", "b", "c", "", ""}));
  out = ParseDense(batch, "s", PartialTensorShape({-1, 1}), Literal<std::string>({}, {"x"}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<std::string>((*out)[0]),
            (std::vector<std::string>{"a", "x", "b", "c", "x", "x"}));

  EXPECT_THAT(ParseDense(batch, "v", PartialTensorShape({-1, 3}), Literal<float>({}, {0})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: <unknown>, Key: v, Index: 0.  Number of float values is not a "
                       "multiple of stride length. Saw 4 values but output shape is: [?,3]"));
  EXPECT_THAT(ParseDense(batch, "v", PartialTensorShape({-1, 2}), Literal<float>({2}, {1, 2})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "dense_shape[0] is a variable length shape: [?,2], therefore def_value[0] "
                       "must contain a single element (the padding element)."));
  EXPECT_THAT(ParseDense(batch, "v", PartialTensorShape({2, -1}), Literal<float>({}, {0})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "dense_shapes[0] has unknown rank or unknown inner dimensions: [2,?]"));
  EXPECT_THAT(ParseDense(batch, "v", PartialTensorShape({-1, 2}), Literal<int64_t>({}, {0})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: <unknown>, Key: v, Index: 0.  Data types don't match. Data type: "
                       "float but expected type: int64"));
  EXPECT_THAT(ParseDense(batch, "v", PartialTensorShape({4}), Literal<float>({4}, {0, 0, 0, 0})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: <unknown>, Key: v, Index: 2.  Number of float values != expected.  "
                       "Values size: 2 but output shape: [4]"));
}

// tf.io.RaggedFeature: values and row splits in either split type (TF
// 2.21's); a scalar's splits are empty.
TEST(ParseExampleV2Test, RaggedFeaturesAsTensorFlow) {
  const std::vector<std::string> examples = ThreeExamples();
  KernelRunner k("ParseExampleV2");
  k.Attr("num_sparse", int64_t{0})
      .Attr("sparse_types", std::vector<DataType>{})
      .Attr("Tdense", std::vector<DataType>{})
      .Attr("dense_shapes", std::vector<PartialTensorShape>{})
      .Attr("ragged_value_types", std::vector<DataType>{DT_INT64, DT_STRING})
      .Attr("ragged_split_types", std::vector<DataType>{DT_INT32, DT_INT64});
  const Tensor none(DT_STRING, TensorShape({0}));
  const Tensor keys = Literal<std::string>({2}, {"r", "s"});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          k.Run({Literal<std::string>({3}, examples), none, none, none, keys}));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({3}, {7, 8, 9}));
  EXPECT_EQ(Values<std::string>(out[1]), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_THAT(out[2], TensorIs<int32_t>({4}, {0, 2, 2, 3}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({4}, {0, 1, 3, 3}));
  TW_ASSERT_OK_AND_ASSIGN(out,
                          k.Run({Literal<std::string>({}, {examples[1]}), none, none, none, keys}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({0}, {}));
  EXPECT_EQ(Values<std::string>(out[1]), (std::vector<std::string>{"b", "c"}));
  EXPECT_THAT(out[2], TensorIs<int32_t>({0}, {}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({0}, {}));

  KernelRunner floats("ParseExampleV2");
  floats.Attr("num_sparse", int64_t{0})
      .Attr("sparse_types", std::vector<DataType>{})
      .Attr("Tdense", std::vector<DataType>{})
      .Attr("dense_shapes", std::vector<PartialTensorShape>{})
      .Attr("ragged_value_types", std::vector<DataType>{DT_FLOAT})
      .Attr("ragged_split_types", std::vector<DataType>{DT_INT32});
  EXPECT_THAT(floats.Run({Literal<std::string>({3}, examples), none, none, none,
                          Literal<std::string>({1}, {"r"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: <unknown>, Key: r, Index: 0.  Data types don't match. Expected "
                       "type: float, Actual type: int64"));
  floats.Attr("ragged_split_types", std::vector<DataType>{DT_INT32, DT_INT32});
  EXPECT_THAT(
      floats.Run({Literal<std::string>({3}, examples), none, none, none,
                  Literal<std::string>({1}, {"r"})}),
      StatusIs(absl::StatusCode::kInvalidArgument, "len(ragged_keys) != len(ragged_split_types)"));
}

// A Feature with no list is empty: no sparse values, the default for a
// dense feature, no rows for a variable-length one (TF 2.21's).
TEST(ParseExampleTest, AFeatureWithoutAListIsEmpty) {
  Example e;
  (*e.mutable_features()->mutable_feature())["v"];
  const Tensor serialized = Literal<std::string>({1}, {e.SerializeAsString()});
  absl::StatusOr<std::vector<Tensor>> out =
      ParseDense(serialized, "v", PartialTensorShape({1}), Literal<float>({1}, {1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({1, 1}, {1}));
  out = ParseDense(serialized, "v", PartialTensorShape({-1}), Literal<float>({}, {1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({1, 0}, {}));
  EXPECT_THAT(ParseDense(serialized, "v", PartialTensorShape({1}), kNoDefault),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: <unknown>, Feature: v (data type: float) is required but could "
                       "not be found."));
  KernelRunner k("ParseExample");
  k.Attr("Nsparse", int64_t{1})
      .Attr("Ndense", int64_t{0})
      .Attr("sparse_types", std::vector<DataType>{DT_STRING})
      .Attr("Tdense", std::vector<DataType>{})
      .Attr("dense_shapes", std::vector<PartialTensorShape>{});
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> sparse,
      k.Run({serialized, Tensor(DT_STRING, TensorShape({0})), Literal<std::string>({}, {"v"})}));
  EXPECT_THAT(sparse[0], TensorIs<int64_t>({0, 2}, {}));
  EXPECT_THAT(sparse[2], TensorIs<int64_t>({2}, {1, 0}));
  // The names in messages.
  EXPECT_THAT(k.Run({Literal<std::string>({3}, ThreeExamples()),
                     Literal<std::string>({3}, {"a", "b", "c"}), Literal<std::string>({}, {"v"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Name: a, Key: v, Index: 0.  Data types don't match. Expected type: "
                       "string, Actual type: float"));
}

// ParseSingleExample's variable-length features and its messages, which
// name the key alone (TF 2.21's).
TEST(ParseSingleExampleTest, VariableLengthFeaturesAsTensorFlow) {
  const auto parse = [](PartialTensorShape shape, DataType sparse_type) {
    KernelRunner k("ParseSingleExample");
    k.Attr("num_sparse", int64_t{1})
        .Attr("sparse_keys", std::vector<std::string>{"r"})
        .Attr("dense_keys", std::vector<std::string>{"v"})
        .Attr("sparse_types", std::vector<DataType>{sparse_type})
        .Attr("Tdense", std::vector<DataType>{DT_FLOAT})
        .Attr("dense_shapes", std::vector<PartialTensorShape>{shape});
    return k.Run({Literal<std::string>({}, {ThreeExamples()[0]}), Literal<float>({}, {0})});
  };
  absl::StatusOr<std::vector<Tensor>> out = parse(PartialTensorShape({-1, 2}), DT_INT64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[3], TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_THAT(
      parse(PartialTensorShape({-1, 2}), DT_FLOAT),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Key: r.  Data types don't match. Expected type: float, Actual type: int64"));
  EXPECT_THAT(parse(PartialTensorShape({-1, 3}), DT_INT64),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Error while parsing feature with key v: number of elements should be "
                       "divisible by 3, found 4 instead"));
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

// TF 2.21's bytes (tf.raw_ops.SerializeTensor / TensorSummaryV2 /
// TensorSummary on these tensors, as hex).
std::string Hex(const Tensor& t) { return absl::BytesToHexString(*t.data<std::string>()); }

TEST(SerializeTensorTest, TfsBytes) {
  const auto serialize = [](const Tensor& t) {
    KernelRunner r("SerializeTensor");
    return Hex(RunOk(r, {t}));
  };
  EXPECT_EQ(serialize(Literal<float>({2, 2}, {1.5f, 2, 3, 4})),
            "08011208120208021202080222100000c03f000000400000404000008040");
  EXPECT_EQ(serialize(Literal<int64_t>({}, {7})), "0809120022080700000000000000");
  EXPECT_EQ(serialize(Literal<std::string>({2}, {"a", "bc"})), "080712041202080242016142026263");
  EXPECT_EQ(serialize(Literal<bool>({2}, {true, false})), "080a12041202080222020100");
  EXPECT_EQ(serialize(Literal<int8_t>({2}, {1, 2})), "080612041202080222020102");
  EXPECT_EQ(serialize(Literal<half>({}, {half(1.5f)})), "081312002202003e");
  EXPECT_EQ(serialize(Tensor(DT_FLOAT, TensorShape({0, 3}))), "08011206120012020803");
  EXPECT_EQ(serialize(Literal<complex64>({1}, {complex64(1, 2)})),
            "080812041202080122080000803f00000040");
}

TEST(ParseTensorTest, RoundTripsAndRefusesAsTf) {
  const auto parse = [](std::string bytes, DataType type) {
    KernelRunner r("ParseTensor");
    r.Attr("out_type", type);
    return r.Run({Literal<std::string>({}, {bytes})});
  };
  const std::string floats = absl::HexStringToBytes(
      "08011204120208022208"
      "0000c03f00000040");
  absl::StatusOr<std::vector<Tensor>> out = parse(floats, DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({2}, {1.5f, 2}));
  // A short float_val repeats its last value (TF's rule).
  TensorProto short_list;
  short_list.set_dtype(DT_FLOAT);
  short_list.mutable_tensor_shape()->add_dim()->set_size(3);
  short_list.add_float_val(1);
  short_list.add_float_val(2);
  out = parse(short_list.SerializeAsString(), DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({3}, {1, 2, 2}));
  EXPECT_THAT(parse(floats, DT_DOUBLE),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Type mismatch between parsed tensor (float) and dtype (double)"));
  EXPECT_THAT(parse("\xff\xff", DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Could not parse `serialized` as TensorProto, base64: //8="));
  EXPECT_THAT(parse("", DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument, "Cannot parse tensor from proto: "));
  KernelRunner vec("ParseTensor");
  vec.Attr("out_type", DT_FLOAT);
  EXPECT_THAT(vec.Run({Literal<std::string>({1}, {floats})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected `serialized` to be a scalar, got shape: [1]"));
  // A few bytes declaring 2^40 floats meet the session's limits, not malloc.
  TensorProto huge;
  huge.set_dtype(DT_FLOAT);
  huge.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  EXPECT_THAT(parse(huge.SerializeAsString(), DT_FLOAT),
              StatusIs(absl::StatusCode::kResourceExhausted, "OOM when allocating tensor"));
}

TEST(TensorSummaryTest, TfsBytes) {
  const auto v2 = [](const Tensor& t, std::string metadata) {
    KernelRunner r("TensorSummaryV2");
    return Hex(RunOk(
        r, {Literal<std::string>({}, {"t"}), t, Literal<std::string>({}, {std::move(metadata)})}));
  };
  EXPECT_EQ(v2(Literal<float>({2}, {1.5f, 2}), ""),
            "0a190a01744212080112041202080222080000c03f000000404a00");
  EXPECT_EQ(v2(Literal<float>({2}, {1.5f, 2}), "\x12\x04text"),
            "0a1f0a01744212080112041202080222080000c03f000000404a06120474657874");
  EXPECT_EQ(v2(Literal<std::string>({1}, {"x"}), absl::HexStringToBytes("0a0a0a0474657874120261"
                                                                        "62")),
            "0a1e0a0174420b08071204120208014201784a0c0a0a0a047465787412026162");
  // Metadata that does not parse is left empty, as TF ignores it.
  EXPECT_EQ(v2(Literal<float>({2}, {1.5f, 2}), "\xff"),
            "0a190a01744212080112041202080222080000c03f000000404a00");
  KernelRunner bad("TensorSummaryV2");
  EXPECT_THAT(bad.Run({Literal<std::string>({1}, {"t"}), Literal<float>({}, {1}),
                       Literal<std::string>({}, {""})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "tag must be scalar"));
  // TF 1's names the node (here "TensorSummary", as TF's eager node).
  KernelRunner v1("TensorSummary", "TensorSummary");
  v1.Attr("description", "d").Attr("display_name", "dn");
  EXPECT_EQ(Hex(RunOk(v1, {Literal<float>({2}, {1.5f, 2})})),
            "0a233a0d54656e736f7253756d6d6172794212080112041202080222080000c03f00000040");
}

}  // namespace
}  // namespace towerflow
