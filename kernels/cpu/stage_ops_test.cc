// The staging area kernels, through a session: what one step stages a
// later one takes, stages wait for room and takes for their element (waits
// that another step or the step's own abort ends), and bad requests are
// refused before they wait. Values and messages are TF 2.21's (tf.raw_ops
// in graph mode).
#include <optional>
#include <thread>
#include <vector>

#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/queue_ops.h"
#include "runtime/client_session.h"
#include "testing/status_matchers.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

// A graph of staging ops, built first and then run.
class StageTest : public ::testing::Test {
 protected:
  Output C(const Tensor& t) { return ops::Const(root_, t.AsProto()); }
  Output Floats(std::vector<float> v) {
    return C(Literal<float>({static_cast<int64_t>(v.size())}, v));
  }
  Output Indices(std::vector<int32_t> v) {
    return C(Literal<int32_t>({static_cast<int64_t>(v.size())}, v));
  }
  Output Key(int64_t k) { return C(Literal<int64_t>({}, {k})); }

  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Output> fetches,
                                          std::vector<Operation> targets = {},
                                          const RunOptions& options = {}) {
    if (!session_) session_.emplace(root_);
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session_->Run(options, {}, fetches, targets, &out, nullptr));
    return out;
  }
  absl::Status Run(Operation target, const RunOptions& options = {}) {
    return Run({}, {target}, options).status();
  }
  int32_t Size(Output size) {
    absl::StatusOr<std::vector<Tensor>> out = Run({size});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].data<int32_t>()[0] : -1;
  }
  static RunOptions Deadline() {
    RunOptions options;
    options.timeout_in_ms = 20;
    return options;
  }

  Scope root_ = Scope::NewRootScope();
  std::optional<ClientSession> session_;
};

// The sequence form's attrs: area "a" of (float, int32) tuples.
ops::Stage::Attrs A() { return ops::Stage::Attrs().SharedName("a"); }
const std::vector<DataType> kTuple = {DT_FLOAT, DT_INT32};

TEST_F(StageTest, TuplesComeOutInTheOrderTheyWereStagedAsTF) {
  const auto stage = [&](std::vector<float> f, int32_t i) {
    return ops::Stage(root_, {Floats(f), C(Literal<int32_t>({}, {i}))}, A()).operation;
  };
  Operation s1 = stage({1.5, 2.5}, 7), s2 = stage({3}, 8), s3 = stage({}, 9);
  auto unstage = ops::Unstage(root_, kTuple, ops::Unstage::Attrs().SharedName("a"));
  auto peek =
      ops::StagePeek(root_, ops::Const(root_, 1), kTuple, ops::StagePeek::Attrs().SharedName("a"));
  Output size = ops::StageSize(root_, kTuple, ops::StageSize::Attrs().SharedName("a"));
  Operation clear = ops::StageClear(root_, kTuple, ops::StageClear::Attrs().SharedName("a"));
  TW_ASSERT_OK(Run(s1));
  TW_ASSERT_OK(Run(s2));
  TW_ASSERT_OK(Run(s3));
  EXPECT_EQ(Size(size), 3);
  TW_ASSERT_OK_AND_ASSIGN(auto first, Run({unstage[0], unstage[1]}));
  EXPECT_THAT(first[0], TensorIs<float>({2}, {1.5, 2.5}));
  EXPECT_THAT(first[1], TensorIs<int32_t>({}, {7}));
  TW_ASSERT_OK_AND_ASSIGN(auto peeked, Run({peek[0], peek[1]}));
  EXPECT_THAT(peeked[0], TensorIs<float>({0}, {}));
  EXPECT_THAT(peeked[1], TensorIs<int32_t>({}, {9}));
  EXPECT_EQ(Size(size), 2);  // a peek leaves the tuple staged
  TW_ASSERT_OK(Run(clear));
  EXPECT_EQ(Size(size), 0);
}

TEST_F(StageTest, UnstageWaitsForAnotherStepsStage) {
  Operation stage = ops::Stage(root_, {Floats({4}), C(Literal<int32_t>({}, {1}))}, A()).operation;
  auto unstage = ops::Unstage(root_, kTuple, ops::Unstage::Attrs().SharedName("a"));
  TW_ASSERT_OK(Run(std::vector<Output>{}).status());  // the session exists before the thread
  absl::StatusOr<std::vector<Tensor>> got;
  std::thread taker([&] { got = Run({unstage[0], unstage[1]}); });
  TW_ASSERT_OK(Run(stage));
  taker.join();
  TW_ASSERT_OK(got.status());
  EXPECT_THAT((*got)[0], TensorIs<float>({1}, {4}));
  EXPECT_THAT((*got)[1], TensorIs<int32_t>({}, {1}));
}

TEST_F(StageTest, StageWaitsForRoomAtCapacity) {
  const auto attrs = ops::Stage::Attrs().SharedName("c").Capacity(1);
  Operation a = ops::Stage(root_, {Floats({1})}, attrs).operation;
  Operation b = ops::Stage(root_, {Floats({2})}, attrs).operation;
  auto unstage = ops::Unstage(root_, {DT_FLOAT}, ops::Unstage::Attrs().SharedName("c"));
  Output size = ops::StageSize(root_, {DT_FLOAT}, ops::StageSize::Attrs().SharedName("c"));
  TW_ASSERT_OK(Run(a));
  absl::Status staged;
  std::thread stager([&] { staged = Run(b); });  // waits until the unstage below
  TW_ASSERT_OK_AND_ASSIGN(auto first, Run({unstage[0]}));
  stager.join();
  TW_ASSERT_OK(staged);
  EXPECT_THAT(first[0], TensorIs<float>({1}, {1}));
  EXPECT_EQ(Size(size), 1);
  TW_ASSERT_OK_AND_ASSIGN(auto second, Run({unstage[0]}));
  EXPECT_THAT(second[0], TensorIs<float>({1}, {2}));
}

TEST_F(StageTest, AStepAbortEndsAWaitAndLosesNothing) {
  // Every op of the area says its capacity, as TF's StagingArea makes
  // them: the first to run makes the area.
  const auto attrs = ops::Stage::Attrs().SharedName("c").Capacity(1);
  Operation a = ops::Stage(root_, {Floats({1})}, attrs).operation;
  Operation b = ops::Stage(root_, {Floats({2})}, attrs).operation;
  auto unstage = ops::Unstage(root_, {DT_FLOAT}, ops::Unstage::Attrs().SharedName("c").Capacity(1));
  Output size =
      ops::StageSize(root_, {DT_FLOAT}, ops::StageSize::Attrs().SharedName("c").Capacity(1));
  EXPECT_THAT(Run({unstage[0]}, {}, Deadline()), StatusIs(absl::StatusCode::kDeadlineExceeded));
  TW_ASSERT_OK(Run(a));
  EXPECT_THAT(Run(b, Deadline()), StatusIs(absl::StatusCode::kDeadlineExceeded));  // full
  EXPECT_EQ(Size(size), 1);  // b was not staged
  TW_ASSERT_OK_AND_ASSIGN(auto got, Run({unstage[0]}));
  EXPECT_THAT(got[0], TensorIs<float>({1}, {1}));  // the cancelled take did not take it
  EXPECT_EQ(Size(size), 0);
}

TEST_F(StageTest, MemoryLimitAsTF) {
  const auto attrs = ops::Stage::Attrs().SharedName("m").MemoryLimit(8);
  Operation big = ops::Stage(root_, {Floats({1, 2, 3})}, attrs).operation;
  Operation small = ops::Stage(root_, {Floats({1, 2})}, attrs).operation;
  auto unstage = ops::Unstage(root_, {DT_FLOAT}, ops::Unstage::Attrs().SharedName("m"));
  EXPECT_THAT(Run(big), StatusIs(absl::StatusCode::kResourceExhausted,
                                 "Attempted to insert tensors with combined size of '12' bytes "
                                 "into Staging Area with a memory limit of '8'."));
  TW_ASSERT_OK(Run(small));
  // 8 bytes are staged: another 8 wait for the first to go.
  EXPECT_THAT(Run(small, Deadline()), StatusIs(absl::StatusCode::kDeadlineExceeded));
  TW_ASSERT_OK(Run({unstage[0]}).status());
  TW_ASSERT_OK(Run(small));
}

TEST_F(StageTest, BadSequenceRequestsAreRefused) {
  Operation stage = ops::Stage(root_, {Floats({1})}, A()).operation;  // not (float, int32)
  auto unstage = ops::Unstage(root_, kTuple, ops::Unstage::Attrs().SharedName("a"));
  auto negative =
      ops::StagePeek(root_, ops::Const(root_, -1), kTuple, ops::StagePeek::Attrs().SharedName("a"));
  Operation make = ops::Stage(root_, {Floats({1}), C(Literal<int32_t>({}, {1}))}, A()).operation;
  auto as_map = ops::MapUnstageNoKey(root_, Indices({0}), {DT_FLOAT},
                                     ops::MapUnstageNoKey::Attrs().SharedName("a"));
  // An area made by StageSize has no dtypes: a take of others leaves the
  // tuple where it is.
  Output untyped_size = ops::StageSize(root_, {}, ops::StageSize::Attrs().SharedName("u"));
  Operation untyped_stage = ops::Stage(root_, {Floats({5})}, A().SharedName("u")).operation;
  auto wrong_take = ops::Unstage(root_, {DT_INT32}, ops::Unstage::Attrs().SharedName("u"));
  TW_ASSERT_OK(Run(make));
  EXPECT_THAT(Run(stage), StatusIs(absl::StatusCode::kInvalidArgument,
                                   "staging area 'a' holds tuples of (float, int32), not (float)"));
  EXPECT_THAT(Run({negative[0]}),
              StatusIs(absl::StatusCode::kInvalidArgument, "index must be >= 0, not -1"));
  EXPECT_THAT(Run({as_map.key}),
              StatusIs(absl::StatusCode::kInvalidArgument, "is a Stage area, not a map"));
  TW_ASSERT_OK_AND_ASSIGN(auto got, Run({unstage[0], unstage[1]}));
  EXPECT_THAT(got[0], TensorIs<float>({1}, {1}));
  EXPECT_EQ(Size(untyped_size), 0);
  TW_ASSERT_OK(Run(untyped_stage));
  EXPECT_THAT(
      Run({wrong_take[0]}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Mismatch stage/unstage: the tuple staged is (float), the op takes (int32)"));
  EXPECT_EQ(Size(untyped_size), 1);
}

// The map forms: area "m" of (float, float) elements.
const std::vector<DataType> kPair = {DT_FLOAT, DT_FLOAT};

TEST_F(StageTest, OrderedMapAsTF) {
  const auto attrs = ops::OrderedMapStage::Attrs().SharedName("m");
  const auto stage = [&](int64_t key, std::vector<int32_t> indices, std::vector<float> v) {
    return ops::OrderedMapStage(root_, Key(key), Indices(indices), {Floats(v)}, kPair, attrs)
        .operation;
  };
  Operation s5a = stage(5, {0}, {1}), s5b = stage(5, {1}, {2, 3});
  Operation s3b = stage(3, {1}, {30}), s3a = stage(3, {0}, {20});
  Output size = ops::OrderedMapSize(root_, kPair, ops::OrderedMapSize::Attrs().SharedName("m"));
  Output incomplete = ops::OrderedMapIncompleteSize(
      root_, kPair, ops::OrderedMapIncompleteSize::Attrs().SharedName("m"));
  auto no_key = ops::OrderedMapUnstageNoKey(root_, Indices({0, 1}), kPair,
                                            ops::OrderedMapUnstageNoKey::Attrs().SharedName("m"));
  auto peek = ops::OrderedMapPeek(root_, Key(5), Indices({0, 1}), kPair,
                                  ops::OrderedMapPeek::Attrs().SharedName("m"));
  const auto unstage = [&](int32_t index) {
    return ops::OrderedMapUnstage(root_, Key(5), Indices({index}), {DT_FLOAT},
                                  ops::OrderedMapUnstage::Attrs().SharedName("m"))[0];
  };
  Output u1 = unstage(1), u0 = unstage(0);
  TW_ASSERT_OK(Run(s5a));
  EXPECT_EQ(Size(size), 0);
  EXPECT_EQ(Size(incomplete), 1);
  TW_ASSERT_OK(Run(s5b));
  EXPECT_EQ(Size(size), 1);
  EXPECT_EQ(Size(incomplete), 0);
  TW_ASSERT_OK(Run(s3b));
  TW_ASSERT_OK(Run(s3a));
  TW_ASSERT_OK_AND_ASSIGN(auto first, Run({no_key.key, no_key.values[0], no_key.values[1]}));
  EXPECT_THAT(first[0], TensorIs<int64_t>({}, {3}));  // the smallest key
  EXPECT_THAT(first[1], TensorIs<float>({1}, {20}));
  EXPECT_THAT(first[2], TensorIs<float>({1}, {30}));
  TW_ASSERT_OK_AND_ASSIGN(auto peeked, Run({peek[0], peek[1]}));
  EXPECT_THAT(peeked[0], TensorIs<float>({1}, {1}));
  EXPECT_THAT(peeked[1], TensorIs<float>({2}, {2, 3}));
  TW_ASSERT_OK_AND_ASSIGN(auto second, Run({u1}));
  EXPECT_THAT(second[0], TensorIs<float>({2}, {2, 3}));
  EXPECT_EQ(Size(size), 1);  // component 0 is still there
  EXPECT_THAT(Run({u1}), StatusIs(absl::StatusCode::kInvalidArgument,
                                  "Tensor at index '1' for key '5' has already been removed."));
  TW_ASSERT_OK_AND_ASSIGN(auto last, Run({u0}));
  EXPECT_THAT(last[0], TensorIs<float>({1}, {1}));
  EXPECT_EQ(Size(size), 0);
}

TEST_F(StageTest, MapUnstageWaitsUntilTheElementIsComplete) {
  const auto attrs = ops::MapStage::Attrs().SharedName("m");
  Operation part0 =
      ops::MapStage(root_, Key(9), Indices({0}), {Floats({1})}, kPair, attrs).operation;
  Operation part1 =
      ops::MapStage(root_, Key(9), Indices({1}), {Floats({2})}, kPair, attrs).operation;
  auto unstage = ops::MapUnstage(root_, Key(9), Indices({0, 1}), kPair,
                                 ops::MapUnstage::Attrs().SharedName("m"));
  TW_ASSERT_OK(Run(std::vector<Output>{}).status());  // the session exists before the thread
  absl::StatusOr<std::vector<Tensor>> got;
  std::thread taker([&] { got = Run({unstage[0], unstage[1]}); });
  TW_ASSERT_OK(Run(part0));
  TW_ASSERT_OK(Run(part1));
  taker.join();
  TW_ASSERT_OK(got.status());
  EXPECT_THAT((*got)[0], TensorIs<float>({1}, {1}));
  EXPECT_THAT((*got)[1], TensorIs<float>({1}, {2}));
}

TEST_F(StageTest, MapCapacityCountsCompleteElements) {
  const auto attrs = ops::MapStage::Attrs().SharedName("m").Capacity(1);
  const auto stage = [&](int64_t key, std::vector<int32_t> indices, std::vector<float> v) {
    return ops::MapStage(root_, Key(key), Indices(indices), {Floats(v)}, kPair, attrs).operation;
  };
  Operation whole1 =
      ops::MapStage(root_, Key(1), Indices({0, 1}), {Floats({1}), Floats({2})}, kPair, attrs)
          .operation;
  Operation whole2 =
      ops::MapStage(root_, Key(2), Indices({0, 1}), {Floats({3}), Floats({4})}, kPair, attrs)
          .operation;
  Operation part3 = stage(3, {0}, {5});
  auto take1 = ops::MapUnstage(root_, Key(1), Indices({0, 1}), kPair,
                               ops::MapUnstage::Attrs().SharedName("m"));
  Output incomplete =
      ops::MapIncompleteSize(root_, kPair, ops::MapIncompleteSize::Attrs().SharedName("m"));
  TW_ASSERT_OK(Run(whole1));
  TW_ASSERT_OK(Run(part3));  // a part does not wait for capacity
  EXPECT_EQ(Size(incomplete), 1);
  absl::Status staged;
  std::thread stager([&] { staged = Run(whole2); });  // waits until key 1 goes
  TW_ASSERT_OK(Run({take1[0]}).status());
  stager.join();
  TW_ASSERT_OK(staged);
}

TEST_F(StageTest, BadMapRequestsAreRefusedAsTF) {
  const auto attrs = ops::MapStage::Attrs().SharedName("m");
  const auto stage = [&](int64_t key, std::vector<int32_t> indices, Output v) {
    return ops::MapStage(root_, Key(key), Indices(indices), {v}, kPair, attrs).operation;
  };
  Operation out_of_bounds = stage(1, {2}, Floats({1}));
  Operation once = stage(1, {1}, Floats({1}));
  Operation wrong_dtype = stage(1, {0}, C(Literal<int32_t>({}, {1})));
  Operation unordered =
      ops::MapStage(root_, Key(1), Indices({1, 0}), {Floats({1}), Floats({2})}, kPair, attrs)
          .operation;
  Operation whole =
      ops::MapStage(root_, Key(4), Indices({0, 1}), {Floats({1}), Floats({2})}, kPair, attrs)
          .operation;
  auto wrong_take = ops::MapUnstage(root_, Key(4), Indices({0}), {DT_INT32},
                                    ops::MapUnstage::Attrs().SharedName("m"));
  Operation as_sequence = ops::Stage(root_, {Floats({1})}, A().SharedName("m")).operation;
  Output size = ops::MapSize(root_, kPair, ops::MapSize::Attrs().SharedName("m"));
  Operation over_limit = ops::MapStage(root_, Key(1), Indices({0}), {Floats({1, 2, 3})}, {DT_FLOAT},
                                       ops::MapStage::Attrs().SharedName("lim").MemoryLimit(8))
                             .operation;
  EXPECT_THAT(Run(out_of_bounds), StatusIs(absl::StatusCode::kInvalidArgument,
                                           "Index '2' for key '1' was out of bounds '2'."));
  TW_ASSERT_OK(Run(once));
  EXPECT_THAT(Run(once), StatusIs(absl::StatusCode::kInvalidArgument,
                                  "The tensor for index '1' for key '1' was already initialized."));
  EXPECT_THAT(Run(wrong_dtype), StatusIs(absl::StatusCode::kInvalidArgument,
                                         "staging area 'm': component 0 is float, not int32"));
  EXPECT_THAT(Run(unordered), StatusIs(absl::StatusCode::kInvalidArgument,
                                       "indices are not strictly ordered: 1, 0"));
  TW_ASSERT_OK(Run(whole));
  EXPECT_THAT(Run(whole), StatusIs(absl::StatusCode::kInvalidArgument,
                                   "staging area 'm': key '4' is already staged"));
  EXPECT_THAT(Run({wrong_take[0]}),
              StatusIs(absl::StatusCode::kInvalidArgument, "component 0 is float, not int32"));
  EXPECT_THAT(Run(as_sequence),
              StatusIs(absl::StatusCode::kInvalidArgument, "is a map, not a Stage area"));
  EXPECT_EQ(Size(size), 1);  // key 4, untouched by the refused requests
  EXPECT_THAT(Run(over_limit),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "Attempted to insert tensors with combined size of '12' bytes into "
                       "Staging Area with a memory limit of '8'."));
}

}  // namespace
}  // namespace towerflow
