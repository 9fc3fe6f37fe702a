// SparseCross, SparseCrossV2 and SparseCrossHashed (sparse_cross_ops.cc)
// against TensorFlow 2.21's values and messages (tf.raw_ops on these
// inputs).
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
Tensor Str(const TensorShape& shape, std::vector<std::string> v) {
  return Literal<std::string>(shape, v);
}

// A string column (row 0: a, b; row 1: c), an int64 one (row 0: 7; row 1:
// 8, -9), both [2, 2]; dense [[x], [y]] and [[3, 4], [5, 6]].
struct SparseColumn {
  Tensor indices, values, shape;
};
const SparseColumn kStrings{I64({3, 2}, {0, 0, 0, 1, 1, 0}), Str({3}, {"a", "b", "c"}),
                            I64({2}, {2, 2})};
const SparseColumn kInts{I64({3, 2}, {0, 0, 1, 0, 1, 1}), I64({3}, {7, 8, -9}), I64({2}, {2, 2})};
const Tensor kDenseStrings = Str({2, 1}, {"x", "y"});
const Tensor kDenseInts = I64({2, 2}, {3, 4, 5, 6});

// The op's inputs (the sparse columns' indices, values and shapes, the
// dense columns, then `rest`) and its list attrs.
struct Columns {
  std::vector<Tensor> tensors;
  int64_t n = 0;
  DataTypeVector sparse_types, dense_types;
};

Columns Inputs(const std::vector<SparseColumn>& sparse, const std::vector<Tensor>& dense,
               const std::vector<Tensor>& rest = {}) {
  Columns in;
  in.n = static_cast<int64_t>(sparse.size());
  for (const SparseColumn& c : sparse) in.tensors.push_back(c.indices);
  for (const SparseColumn& c : sparse) {
    in.tensors.push_back(c.values);
    in.sparse_types.push_back(c.values.dtype());
  }
  for (const SparseColumn& c : sparse) in.tensors.push_back(c.shape);
  for (const Tensor& t : dense) {
    in.tensors.push_back(t);
    in.dense_types.push_back(t.dtype());
  }
  in.tensors.insert(in.tensors.end(), rest.begin(), rest.end());
  return in;
}

absl::StatusOr<std::vector<Tensor>> RunCross(KernelRunner& r, const Columns& in) {
  r.Attr("N", in.n).Attr("sparse_types", in.sparse_types).Attr("dense_types", in.dense_types);
  return r.Run(in.tensors);
}

absl::StatusOr<std::vector<Tensor>> CrossV1(const Columns& inputs, DataType out, DataType internal,
                                            int64_t buckets = 0, int64_t key = 0) {
  KernelRunner r("SparseCross");
  r.Attr("hashed_output", out == DT_INT64)
      .Attr("num_buckets", buckets)
      .Attr("hash_key", key)
      .Attr("out_type", out)
      .Attr("internal_type", internal);
  return RunCross(r, inputs);
}

absl::StatusOr<std::vector<Tensor>> CrossHashed(Columns in, int64_t buckets, bool strong,
                                                std::vector<int64_t> salt) {
  KernelRunner r("SparseCrossHashed");
  in.tensors.push_back(Literal<int64_t>({}, {buckets}));
  in.tensors.push_back(Literal<bool>({}, {strong}));
  in.tensors.push_back(I64({static_cast<int64_t>(salt.size())}, salt));
  return RunCross(r, in);
}

template <typename T>
void ExpectCross(const absl::StatusOr<std::vector<Tensor>>& out, std::vector<int64_t> indices,
                 std::vector<T> values, std::vector<int64_t> shape) {
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  const int64_t n = static_cast<int64_t>(values.size());
  EXPECT_THAT((*out)[0], TensorIs<int64_t>({n, 2}, indices));
  EXPECT_THAT((*out)[1], TensorIs<T>({n}, values));
  EXPECT_THAT((*out)[2], TensorIs<int64_t>({2}, shape));
}

const std::vector<int64_t> kTwoByFour = {0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 1, 2, 1, 3};

TEST(SparseCrossTest, JoinsEveryCombinationLastColumnFastest) {
  ExpectCross<std::string>(
      CrossV1(Inputs({kStrings, kInts}, {kDenseStrings, kDenseInts}), DT_STRING, DT_INT64),
      kTwoByFour,
      {"a_X_7_X_x_X_3", "a_X_7_X_x_X_4", "b_X_7_X_x_X_3", "b_X_7_X_x_X_4", "c_X_8_X_y_X_5",
       "c_X_8_X_y_X_6", "c_X_-9_X_y_X_5", "c_X_-9_X_y_X_6"},
      {2, 4});
  ExpectCross<std::string>(CrossV1(Inputs({}, {kDenseStrings, kDenseInts}), DT_STRING, DT_INT64),
                           {0, 0, 0, 1, 1, 0, 1, 1}, {"x_X_3", "x_X_4", "y_X_5", "y_X_6"}, {2, 2});
  ExpectCross<std::string>(CrossV1(Inputs({}, {}), DT_STRING, DT_INT64), {}, {}, {0, 0});
}

TEST(SparseCrossTest, HashesChainFingerprintsFromTheKey) {
  const Columns in = Inputs({kStrings, kInts}, {kDenseStrings, kDenseInts});
  ExpectCross<int64_t>(
      CrossV1(in, DT_INT64, DT_INT64, 0, 956888297470), kTwoByFour,
      {6065751633607988169, 2278045603747980233, 8226470438821346137, 5288523265338123934,
       8194495769678879290, 759638284536313166, 189551823173215952, 183518762190090209},
      {2, 4});
  ExpectCross<int64_t>(CrossV1(in, DT_INT64, DT_INT64, 100, 956888297470), kTwoByFour,
                       {69, 40, 44, 34, 97, 73, 59, 9}, {2, 4});
  ExpectCross<int64_t>(CrossV1(Inputs({kStrings}, {kDenseStrings}), DT_INT64, DT_STRING, 10, 1),
                       {0, 0, 0, 1, 1, 0}, {6, 5, 3}, {2, 2});
  ExpectCross<int64_t>(CrossV1(Inputs({kInts}, {kDenseInts}), DT_INT64, DT_INT64, 0, -5),
                       {0, 0, 0, 1, 1, 0, 1, 1, 1, 2, 1, 3},
                       {5365933989739042934, 1953893443348759223, 454536469892671568,
                        2058537578737343865, 2143998075264815346, 5499806565770944311},
                       {2, 4});
  ExpectCross<int64_t>(CrossV1(Inputs({}, {kDenseInts}), DT_INT64, DT_INT64, 1, 0),
                       {0, 0, 0, 1, 1, 0, 1, 1}, {0, 0, 0, 0}, {2, 2});
}

TEST(SparseCrossTest, RowsAsTfWalksThem) {
  // Entries of row 0 after one of row 1 are not seen; columns (the second
  // index) are not looked at.
  const SparseColumn unsorted{I64({3, 2}, {1, 0, 0, 0, 0, 1}), Str({3}, {"a", "b", "c"}),
                              I64({2}, {2, 2})};
  ExpectCross<std::string>(CrossV1(Inputs({unsorted}, {kDenseStrings}), DT_STRING, DT_INT64),
                           {1, 0}, {"a_X_y"}, {2, 1});
  const SparseColumn odd_columns{I64({3, 2}, {0, 5, 0, 9, 1, -3}), Str({3}, {"a", "b", "c"}),
                                 I64({2}, {2, 2})};
  ExpectCross<std::string>(CrossV1(Inputs({odd_columns}, {kDenseStrings}), DT_STRING, DT_INT64),
                           {0, 0, 0, 1, 1, 0}, {"a_X_x", "b_X_x", "c_X_y"}, {2, 2});
  const SparseColumn past_the_batch{I64({2, 2}, {0, 0, 5, 0}), Str({2}, {"a", "b"}),
                                    I64({2}, {2, 2})};
  ExpectCross<std::string>(CrossV1(Inputs({past_the_batch}, {kDenseStrings}), DT_STRING, DT_INT64),
                           {0, 0}, {"a_X_x"}, {2, 1});
}

TEST(SparseCrossTest, RefusesBadColumnsWithTfsMessages) {
  const auto cross = [](const std::vector<SparseColumn>& sparse, const std::vector<Tensor>& dense,
                        DataType internal = DT_INT64) {
    return CrossV1(Inputs(sparse, dense), DT_STRING, internal);
  };
  EXPECT_THAT(cross({kStrings}, {kDenseInts}, DT_STRING),
              StatusIs(kInvalid, "Dense inputs should be of internal type 7 but received 9"));
  EXPECT_THAT(cross({kInts}, {}, DT_STRING),
              StatusIs(kInvalid, "Input values should be of internal type 7 but received 9"));
  EXPECT_THAT(cross({kStrings}, {I64({3, 1}, {1, 2, 3})}),
              StatusIs(kInvalid, "Expected batch size 2 got 3 at dense tensor 0"));
  EXPECT_THAT(cross({kStrings, {kInts.indices, kInts.values, I64({2}, {3, 2})}}, {}),
              StatusIs(kInvalid, "Expected batch size 2 got 3 at position 1"));
  EXPECT_THAT(cross({{I64({2}, {0, 1}), kStrings.values, kStrings.shape}}, {}),
              StatusIs(kInvalid,
                       "Input indices should be a matrix but received shape [2] at "
                       "position 0"));
  EXPECT_THAT(cross({{I64({1, 3}, {0, 0, 0}), Str({1}, {"a"}), kStrings.shape}}, {}),
              StatusIs(kInvalid, "Expected D2 of index to be 2 got 3 at position 0"));
  EXPECT_THAT(cross({{kStrings.indices, Str({1}, {"a"}), kStrings.shape}}, {}),
              StatusIs(kInvalid, "Expected size of values to be 3 got 1 at position 0"));
  EXPECT_THAT(cross({{kStrings.indices, kStrings.values, I64({3}, {2, 2, 2})}}, {}),
              StatusIs(kInvalid, "shape should imply a 2D tensor, but got [3] at position 0"));
  EXPECT_THAT(cross({kStrings}, {I64({2}, {1, 2})}),
              StatusIs(kInvalid,
                       "Dense inputs should be a matrix but received shape [2] at "
                       "position 0"));
  // TF would size its tables by the negative batch.
  EXPECT_THAT(cross({{I64({0, 2}, {}), Str({0}, {}), I64({2}, {-1, 2})}}, {}),
              StatusIs(kInvalid, "Expected a non-negative batch size, got -1"));
}

TEST(SparseCrossV2Test, JoinsWithTheSeparator) {
  KernelRunner r("SparseCrossV2");
  ExpectCross<std::string>(
      RunCross(r, Inputs({kStrings, kInts}, {kDenseInts}, {Literal<std::string>({}, {"--"})})),
      kTwoByFour,
      {"a--7--3", "a--7--4", "b--7--3", "b--7--4", "c--8--5", "c--8--6", "c---9--5", "c---9--6"},
      {2, 4});
  KernelRunner bad("SparseCrossV2");
  EXPECT_THAT(RunCross(bad, Inputs({kStrings}, {}, {Str({1}, {"a"})})),
              StatusIs(kInvalid,
                       "Input separator should be a scalar. Received: "
                       "Tensor<type: string shape: [1] values: a>"));
}

TEST(SparseCrossHashedTest, ChainsFromTheFirstFeature) {
  ExpectCross<int64_t>(
      CrossHashed(Inputs({kStrings, kInts}, {kDenseStrings, kDenseInts}), 0, false, {137, 173}),
      kTwoByFour,
      {45272470780328945, 556057425926946470, 2024035103820381890, 6859615706047629716,
       4874622157867033712, 3070819076079651439, 7590315506272795157, 4899548671698359202},
      {2, 4});
  // An int64 sparse feature is Fingerprint64 of its low four bytes, a dense
  // one goes in as it is (TF's).
  ExpectCross<int64_t>(CrossHashed(Inputs({kInts}, {kDenseInts}), 1000, false, {1, 2}),
                       {0, 0, 0, 1, 1, 0, 1, 1, 1, 2, 1, 3}, {265, 155, 72, 761, 297, 780}, {2, 4});
  // A negative bucket count: modulo int64's maximum, as none.
  ExpectCross<int64_t>(CrossHashed(Inputs({kInts}, {}), -3, false, {1, 2}), {0, 0, 1, 0, 1, 1},
                       {456183119178236718, 824750381067182135, 4445888607814773748}, {2, 2});
}

TEST(SparseCrossHashedTest, StrongHashIsSipHashUnderTheSalt) {
  ExpectCross<int64_t>(CrossHashed(Inputs({kStrings}, {}), 0, true, {137, 173}), {0, 0, 0, 1, 1, 0},
                       {8128005079731125233, 5524000490119507203, 5369109151339078260}, {2, 2});
  ExpectCross<int64_t>(CrossHashed(Inputs({kInts}, {}), 0, true, {137, 173}), {0, 0, 1, 0, 1, 1},
                       {3077134946191282200, 6363971121380973019, 6389283160164226946}, {2, 2});
  EXPECT_THAT(CrossHashed(Inputs({kInts}, {}), 1000, true, {1, 2, 3}),
              StatusIs(kInvalid, "Input \"salt\" must have length 2 but has length 3"));
}

}  // namespace
}  // namespace towerflow
