// The queue and conditional accumulator kernels, through a session: their
// state lives across steps, and their waits end when another step lets them
// go on or when their own step is aborted. Batches, seeded shuffles and
// messages are TF 2.21's (tf.raw_ops in graph mode).
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/queue_ops.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<double> Doubles(const Tensor& t) {
  return std::vector<double>(t.data<double>(), t.data<double>() + t.NumElements());
}

class QueueTest : public ::testing::Test {
 protected:
  QueueTest()
      : queue_(ops::FIFOQueueV2(root_.WithOpName("q"), {DT_INT64},
                                ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}))),
        values_(ops::Placeholder(root_.WithOpName("values"), DT_INT64)),
        enqueue_many_(
            ops::QueueEnqueueManyV2(root_.WithOpName("enqueue_many"), queue_, {values_}).operation),
        dequeue_(ops::QueueDequeueV2(root_.WithOpName("dequeue"), queue_, {DT_INT64})),
        size_(ops::QueueSizeV2(root_.WithOpName("size"), queue_)),
        close_(ops::QueueCloseV2(root_.WithOpName("close"), queue_).operation),
        session_(root_) {}

  absl::Status Enqueue(std::vector<int64_t> values) {
    Tensor t(DT_INT64, TensorShape({static_cast<int64_t>(values.size())}));
    for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
    std::vector<Tensor> out;
    return session_.Run({{values_, t}}, {}, {enqueue_many_}, &out);
  }
  absl::StatusOr<int64_t> Dequeue(const RunOptions& options = {}) {
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session_.Run(options, {}, {dequeue_[0]}, {}, &out, nullptr));
    return out[0].data<int64_t>()[0];
  }
  int64_t Size() {
    std::vector<Tensor> out;
    EXPECT_TRUE(session_.Run({size_}, &out).ok());
    return out.empty() ? -1 : out[0].data<int32_t>()[0];
  }

  Scope root_ = Scope::NewRootScope();
  Output queue_;
  Output values_;
  Operation enqueue_many_;
  ops::QueueDequeueV2 dequeue_;
  Output size_;
  Operation close_;
  ClientSession session_;
};

TEST_F(QueueTest, FirstInFirstOutAcrossSteps) {
  TW_ASSERT_OK(Enqueue({1, 2, 3}));
  EXPECT_EQ(Size(), 3);
  TW_ASSERT_OK_AND_ASSIGN(int64_t a, Dequeue());
  TW_ASSERT_OK_AND_ASSIGN(int64_t b, Dequeue());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
  TW_ASSERT_OK(Enqueue({7}));
  TW_ASSERT_OK_AND_ASSIGN(int64_t c, Dequeue());
  TW_ASSERT_OK_AND_ASSIGN(int64_t d, Dequeue());
  EXPECT_EQ(c, 3);
  EXPECT_EQ(d, 7);
  EXPECT_EQ(Size(), 0);
}

TEST_F(QueueTest, DequeueWaitsForAnotherStepsEnqueue) {
  absl::StatusOr<int64_t> got;
  std::thread waiter([&] { got = Dequeue(); });
  TW_ASSERT_OK(Enqueue({5}));
  waiter.join();
  TW_ASSERT_OK(got.status());
  EXPECT_EQ(*got, 5);
}

TEST_F(QueueTest, AStepDeadlineEndsAWaitingDequeue) {
  RunOptions options;
  options.timeout_in_ms = 20;
  const absl::Status s = Dequeue(options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  // The queue is unharmed: the next element goes to the next dequeue.
  TW_ASSERT_OK(Enqueue({9}));
  TW_ASSERT_OK_AND_ASSIGN(int64_t v, Dequeue());
  EXPECT_EQ(v, 9);
}

TEST_F(QueueTest, CloseDrainsThenFails) {
  TW_ASSERT_OK(Enqueue({4}));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session_.Run({}, {}, {close_}, &out));
  const absl::Status enqueue = Enqueue({5});
  EXPECT_EQ(enqueue.code(), absl::StatusCode::kCancelled) << enqueue;
  EXPECT_THAT(enqueue.message(), HasSubstr("FIFOQueue 'q' is closed."));
  TW_ASSERT_OK_AND_ASSIGN(int64_t v, Dequeue());
  EXPECT_EQ(v, 4);
  const absl::Status empty = Dequeue().status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kOutOfRange) << empty;
  EXPECT_THAT(empty.message(), HasSubstr("is closed and has insufficient elements"));
}

TEST_F(QueueTest, WrongComponentsAreRefused) {
  Output wrong = ops::Const(root_, {1.5});
  Operation bad = ops::QueueEnqueueV2(root_.WithOpName("bad"), queue_, {wrong}).operation;
  std::vector<Tensor> out;
  const absl::Status s = session_.Run({}, {}, {bad}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("component 0 is int64, not double"));
  Tensor scalar(DT_INT64, TensorShape({}));
  const absl::Status many = session_.Run({{values_, scalar}}, {}, {enqueue_many_}, &out);
  EXPECT_THAT(many.message(), HasSubstr("enqueue_many needs components of rank 1 or more"));
}

// A graph of queue ops, built first and then run.
class QueueGraphTest : public ::testing::Test {
 protected:
  Output C(const Tensor& t) { return ops::Const(root_, t.AsProto()); }
  Output Int32s(std::vector<int32_t> v) {
    return C(Literal<int32_t>({static_cast<int64_t>(v.size())}, v));
  }
  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Output> fetches,
                                          std::vector<Operation> targets = {},
                                          const RunOptions& options = {}) {
    if (!session_) session_.emplace(root_);
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session_->Run(options, {}, fetches, targets, &out, nullptr));
    return out;
  }
  absl::Status Run(Operation target) { return Run({}, {target}).status(); }
  Scope root_ = Scope::NewRootScope();
  std::optional<ClientSession> session_;
};

TEST_F(QueueGraphTest, DequeueManyAndUpToAsTF) {
  Output q = ops::FIFOQueueV2(root_.WithOpName("q"), {DT_FLOAT},
                              ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({2})}));
  Operation fill =
      ops::QueueEnqueueManyV2(root_, q, {C(Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6}))}).operation;
  Operation close = ops::QueueCloseV2(root_, q).operation;
  Output n = ops::Const(root_, 2);
  auto many = ops::QueueDequeueManyV2(root_, q, n, {DT_FLOAT});
  auto up_to = ops::QueueDequeueUpToV2(root_, q, n, {DT_FLOAT});
  auto none = ops::QueueDequeueManyV2(root_, q, ops::Const(root_, 0), {DT_FLOAT});
  Output closed = ops::QueueIsClosedV2(root_, q);
  TW_ASSERT_OK(Run(fill));
  TW_ASSERT_OK_AND_ASSIGN(auto empty, Run({none[0], closed}));
  EXPECT_THAT(empty[0], TensorIs<float>({0, 2}, {}));
  EXPECT_THAT(empty[1], TensorIs<bool>({}, {false}));
  TW_ASSERT_OK(Run(close));
  TW_ASSERT_OK_AND_ASSIGN(auto first, Run({many[0], closed}));
  EXPECT_THAT(first[0], TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_THAT(first[1], TensorIs<bool>({}, {true}));
  const absl::Status short_batch = Run({many[0]}).status();
  EXPECT_EQ(short_batch.code(), absl::StatusCode::kOutOfRange) << short_batch;
  EXPECT_THAT(short_batch.message(),
              HasSubstr("FIFOQueue 'q' is closed and has insufficient elements (requested 2, "
                        "current size 1)"));
  TW_ASSERT_OK_AND_ASSIGN(auto rest, Run({up_to[0]}));
  EXPECT_THAT(rest[0], TensorIs<float>({1, 2}, {5, 6}));
  const absl::Status drained = Run({up_to[0]}).status();
  EXPECT_EQ(drained.code(), absl::StatusCode::kOutOfRange) << drained;
  EXPECT_THAT(drained.message(), HasSubstr("(requested 2, current size 0)"));
}

TEST_F(QueueGraphTest, ABatchLargerThanTheCapacityTakesElementsAsTheyCome) {
  Output q = ops::FIFOQueueV2(
      root_, {DT_INT32}, ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}).Capacity(2));
  Operation fill = ops::QueueEnqueueManyV2(root_, q, {Int32s({1, 2, 3, 4, 5})}).operation;
  auto many = ops::QueueDequeueManyV2(root_, q, ops::Const(root_, 5), {DT_INT32});
  absl::StatusOr<std::vector<Tensor>> got;
  TW_ASSERT_OK(Run(std::vector<Output>{}).status());  // the session exists before the threads
  std::thread taker([&] { got = Run({many[0]}); });
  TW_ASSERT_OK(Run(fill));  // waits at capacity 2 until the batch takes them
  taker.join();
  TW_ASSERT_OK(got.status());
  EXPECT_THAT((*got)[0], TensorIs<int32_t>({5}, {1, 2, 3, 4, 5}));
}

TEST_F(QueueGraphTest, AnAbortedBatchPutsItsElementsBack) {
  Output q = ops::FIFOQueueV2(root_, {DT_INT32},
                              ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}));
  Operation fill = ops::QueueEnqueueManyV2(root_, q, {Int32s({7, 8})}).operation;
  auto many = ops::QueueDequeueManyV2(root_, q, ops::Const(root_, 3), {DT_INT32});
  auto all = ops::QueueDequeueManyV2(root_, q, ops::Const(root_, 2), {DT_INT32});
  TW_ASSERT_OK(Run(fill));
  RunOptions deadline;
  deadline.timeout_in_ms = 20;
  const absl::Status s = Run({many[0]}, {}, deadline).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  TW_ASSERT_OK_AND_ASSIGN(auto size, Run({ops::QueueSizeV2(root_, q)}));
  EXPECT_THAT(size[0], TensorIs<int32_t>({}, {2}));
  TW_ASSERT_OK_AND_ASSIGN(auto back, Run({all[0]}));
  EXPECT_THAT(back[0], TensorIs<int32_t>({2}, {7, 8}));  // in their order
}

TEST_F(QueueGraphTest, RandomShuffleDrawsTFsOrder) {
  // TF 2.21: random_shuffle_queue_v2(capacity=20, min_after_dequeue=2,
  // seed=7, seed2=11), range(10) enqueued; dequeue_many(4), dequeue, size,
  // close, dequeue_up_to(10).
  Output q = ops::RandomShuffleQueueV2(root_, {DT_INT32},
                                       ops::RandomShuffleQueueV2::Attrs()
                                           .Shapes({PartialTensorShape({})})
                                           .Capacity(20)
                                           .MinAfterDequeue(2)
                                           .Seed(7)
                                           .Seed2(11));
  Operation fill =
      ops::QueueEnqueueManyV2(root_, q, {Int32s({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}).operation;
  auto many = ops::QueueDequeueManyV2(root_, q, ops::Const(root_, 4), {DT_INT32});
  auto one = ops::QueueDequeueV2(root_, q, {DT_INT32});
  Output size = ops::QueueSizeV2(root_, q);
  Operation close = ops::QueueCloseV2(root_, q).operation;
  auto rest = ops::QueueDequeueUpToV2(root_, q, ops::Const(root_, 10), {DT_INT32});
  TW_ASSERT_OK(Run(fill));
  TW_ASSERT_OK_AND_ASSIGN(auto a, Run({many[0]}));
  EXPECT_THAT(a[0], TensorIs<int32_t>({4}, {3, 8, 9, 7}));
  TW_ASSERT_OK_AND_ASSIGN(auto b, Run({one[0]}));
  EXPECT_THAT(b[0], TensorIs<int32_t>({}, {5}));
  TW_ASSERT_OK_AND_ASSIGN(auto c, Run({size}));
  EXPECT_THAT(c[0], TensorIs<int32_t>({}, {5}));
  TW_ASSERT_OK(Run(close));
  TW_ASSERT_OK_AND_ASSIGN(auto d, Run({rest[0]}));
  EXPECT_THAT(d[0], TensorIs<int32_t>({5}, {2, 0, 4, 6, 1}));
}

TEST_F(QueueGraphTest, RandomShuffleKeepsMinAfterDequeueUntilClosed) {
  Output q = ops::RandomShuffleQueueV2(root_, {DT_INT32},
                                       ops::RandomShuffleQueueV2::Attrs()
                                           .Shapes({PartialTensorShape({})})
                                           .MinAfterDequeue(2)
                                           .Seed(1));
  Operation fill = ops::QueueEnqueueManyV2(root_, q, {Int32s({4, 4})}).operation;
  auto one = ops::QueueDequeueV2(root_, q, {DT_INT32});
  TW_ASSERT_OK(Run(fill));
  RunOptions deadline;
  deadline.timeout_in_ms = 20;
  const absl::Status held = Run({one[0]}, {}, deadline).status();
  EXPECT_EQ(held.code(), absl::StatusCode::kDeadlineExceeded) << held;
  TW_ASSERT_OK(Run(ops::QueueCloseV2(root_, q).operation));
  TW_ASSERT_OK_AND_ASSIGN(auto got, Run({one[0]}));
  EXPECT_THAT(got[0], TensorIs<int32_t>({}, {4}));
}

TEST_F(QueueGraphTest, PaddingFifoPadsToTheLargestElement) {
  // TF 2.21's padding_fifo_queue_v2 with shapes [[None, 2], [None]].
  Output q = ops::PaddingFIFOQueueV2(root_, {DT_INT32, DT_STRING},
                                     ops::PaddingFIFOQueueV2::Attrs().Shapes(
                                         {PartialTensorShape({-1, 2}), PartialTensorShape({-1})}));
  Operation a = ops::QueueEnqueueV2(root_, q,
                                    {C(Literal<int32_t>({1, 2}, {1, 2})),
                                     C(Literal<std::string>({3}, {"a", "b", "c"}))})
                    .operation;
  Operation b = ops::QueueEnqueueV2(root_, q,
                                    {C(Literal<int32_t>({3, 2}, {3, 4, 5, 6, 7, 8})),
                                     C(Literal<std::string>({1}, {"d"}))})
                    .operation;
  auto many = ops::QueueDequeueManyV2(root_, q, ops::Const(root_, 2), {DT_INT32, DT_STRING});
  auto none = ops::QueueDequeueManyV2(root_, q, ops::Const(root_, 0), {DT_INT32, DT_STRING});
  Operation bad =
      ops::QueueEnqueueV2(root_, q, {Int32s({1, 2}), C(Literal<std::string>({1}, {"a"}))})
          .operation;
  TW_ASSERT_OK(Run(a));
  TW_ASSERT_OK(Run(b));
  TW_ASSERT_OK_AND_ASSIGN(auto got, Run({many[0], many[1]}));
  EXPECT_THAT(got[0], TensorIs<int32_t>({2, 3, 2}, {1, 2, 0, 0, 0, 0, 3, 4, 5, 6, 7, 8}));
  EXPECT_THAT(got[1], TensorIs<std::string>({2, 3}, {"a", "b", "c", "d", "", ""}));
  TW_ASSERT_OK_AND_ASSIGN(auto empty, Run({none[0], none[1]}));
  EXPECT_THAT(empty[0], TensorIs<int32_t>({0, 0, 2}, {}));
  EXPECT_THAT(empty[1], TensorIs<std::string>({0, 0}, {}));
  const absl::Status s = Run(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("component 0 has shape [?,2], not [2]"));
}

TEST_F(QueueGraphTest, PriorityQueueLowestFirst) {
  // TF 2.21: priorities [3, 1, 3, 2] of "a".."d" dequeue as [1, 2, 3, 3],
  // "b", "d", "a", "c" (equal priorities in their order of arrival).
  Output q = ops::PriorityQueueV2(root_, {PartialTensorShape({})},
                                  ops::PriorityQueueV2::Attrs().ComponentTypes({DT_STRING}));
  Operation fill = ops::QueueEnqueueManyV2(root_, q,
                                           {C(Literal<int64_t>({4}, {3, 1, 3, 2})),
                                            C(Literal<std::string>({4}, {"a", "b", "c", "d"}))})
                       .operation;
  auto many = ops::QueueDequeueManyV2(root_, q, ops::Const(root_, 4), {DT_INT64, DT_STRING});
  TW_ASSERT_OK(Run(fill));
  TW_ASSERT_OK_AND_ASSIGN(auto got, Run({many[0], many[1]}));
  EXPECT_THAT(got[0], TensorIs<int64_t>({4}, {1, 2, 3, 3}));
  EXPECT_THAT(got[1], TensorIs<std::string>({4}, {"b", "d", "a", "c"}));
}

TEST_F(QueueGraphTest, PriorityUpToReturnsTheLastElementsOfAClosedQueue) {
  // TF 2.21 gives [1, 3] and then OutOfRange, losing priority 5's element;
  // Towerflow returns it.
  Output q = ops::PriorityQueueV2(root_, {PartialTensorShape({})},
                                  ops::PriorityQueueV2::Attrs().ComponentTypes({DT_STRING}));
  Operation fill = ops::QueueEnqueueManyV2(root_, q,
                                           {C(Literal<int64_t>({3}, {5, 1, 3})),
                                            C(Literal<std::string>({3}, {"a", "b", "c"}))})
                       .operation;
  auto up_to = ops::QueueDequeueUpToV2(root_, q, ops::Const(root_, 2), {DT_INT64, DT_STRING});
  TW_ASSERT_OK(Run(fill));
  TW_ASSERT_OK(Run(ops::QueueCloseV2(root_, q).operation));
  TW_ASSERT_OK_AND_ASSIGN(auto first, Run({up_to[0], up_to[1]}));
  EXPECT_THAT(first[0], TensorIs<int64_t>({2}, {1, 3}));
  EXPECT_THAT(first[1], TensorIs<std::string>({2}, {"b", "c"}));
  TW_ASSERT_OK_AND_ASSIGN(auto last, Run({up_to[0], up_to[1]}));
  EXPECT_THAT(last[0], TensorIs<int64_t>({1}, {5}));
  EXPECT_THAT(last[1], TensorIs<std::string>({1}, {"a"}));
  const absl::Status s = Run({up_to[0]}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  EXPECT_THAT(s.message(), HasSubstr("PriorityQueue"));
}

TEST_F(QueueGraphTest, BadQueuesAndRequestsAreErrors) {
  const auto error_of = [&](Output fetch) {
    absl::StatusOr<std::vector<Tensor>> r = Run({fetch});
    return r.status();
  };
  Output unshaped = ops::FIFOQueueV2(root_.WithOpName("unshaped"), {DT_FLOAT});
  EXPECT_THAT(
      error_of(
          ops::QueueDequeueManyV2(root_, unshaped, ops::Const(root_, 2), {DT_FLOAT}).components[0]),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "require the components to have specified shapes"));
  Output q = ops::FIFOQueueV2(
      root_.WithOpName("shared"), {DT_INT32},
      ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}).SharedName("shared"));
  EXPECT_THAT(
      error_of(ops::QueueDequeueManyV2(root_, q, ops::Const(root_, -1), {DT_INT32}).components[0]),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "requested -1 < 0 elements"));
  EXPECT_THAT(error_of(ops::QueueDequeueV2(root_, q, {DT_FLOAT}).components[0]),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "FIFOQueue 'shared' holds (int32), not (float)"));
  Output bigger = ops::FIFOQueueV2(
      root_, {DT_INT32},
      ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}).SharedName("shared").Capacity(6));
  TW_ASSERT_OK(Run({q}).status());
  EXPECT_THAT(error_of(bigger),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Shared queue 'shared' has capacity -1 but requested "
                                "capacity was 6"));
  Output shuffled = ops::RandomShuffleQueueV2(
      root_, {DT_INT32}, ops::RandomShuffleQueueV2::Attrs().SharedName("shared"));
  EXPECT_THAT(error_of(shuffled), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                    "is a FIFOQueue, not a "
                                                    "RandomShuffleQueue"));
  Output held = ops::RandomShuffleQueueV2(
      root_, {DT_INT32}, ops::RandomShuffleQueueV2::Attrs().Capacity(5).MinAfterDequeue(5));
  EXPECT_THAT(error_of(held), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                "min_after_dequeue 5 must be >= 0 and "
                                                "< capacity 5"));
  Output unranked = ops::PaddingFIFOQueueV2(
      root_, {DT_INT32}, ops::PaddingFIFOQueueV2::Attrs().Shapes({PartialTensorShape()}));
  EXPECT_THAT(error_of(unranked),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "must have known rank"));
  Output by_priority = ops::PriorityQueueV2(
      root_, {PartialTensorShape({})}, ops::PriorityQueueV2::Attrs().ComponentTypes({DT_FLOAT}));
  Operation vector_priority =
      ops::QueueEnqueueV2(root_, by_priority,
                          {C(Literal<int64_t>({2}, {1, 2})), ops::Const(root_, 1.0f)})
          .operation;
  EXPECT_THAT(Run(vector_priority), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                      "component 0 has shape [], not [2]"));
}

class AccumulatorTest : public ::testing::Test {
 protected:
  explicit AccumulatorTest(const char* reduction = "MEAN")
      : accumulator_(ops::ResourceConditionalAccumulator(
            root_.WithOpName("acc"), DT_DOUBLE, PartialTensorShape({2}),
            ops::ResourceConditionalAccumulator::Attrs().ReductionType(reduction))),
        grad_(ops::Placeholder(root_.WithOpName("grad"), DT_DOUBLE)),
        local_step_(ops::Placeholder(root_.WithOpName("local_step"), DT_INT64)),
        apply_(ops::ResourceAccumulatorApplyGradient(root_.WithOpName("apply"), accumulator_,
                                                     local_step_, grad_)
                   .operation),
        num_required_(ops::Placeholder(root_.WithOpName("num_required"), DT_INT32)),
        take_(ops::ResourceAccumulatorTakeGradient(root_.WithOpName("take"), accumulator_,
                                                   num_required_, DT_DOUBLE)
                  .average),
        num_(ops::ResourceAccumulatorNumAccumulated(root_.WithOpName("num"), accumulator_)),
        set_step_(ops::ResourceAccumulatorSetGlobalStep(root_.WithOpName("set_step"), accumulator_,
                                                        local_step_)
                      .operation),
        session_(root_) {}

  absl::Status Apply(int64_t step, std::vector<double> g) {
    Tensor grad(DT_DOUBLE, TensorShape({static_cast<int64_t>(g.size())}));
    for (size_t i = 0; i < g.size(); ++i) grad.data<double>()[i] = g[i];
    Tensor s(DT_INT64, TensorShape({}));
    s.data<int64_t>()[0] = step;
    std::vector<Tensor> out;
    return session_.Run({{grad_, grad}, {local_step_, s}}, {}, {apply_}, &out);
  }
  absl::StatusOr<std::vector<double>> Take(int32_t n) {
    Tensor t(DT_INT32, TensorShape({}));
    t.data<int32_t>()[0] = n;
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session_.Run({{num_required_, t}}, {take_}, &out));
    return Doubles(out[0]);
  }
  int32_t Num() {
    std::vector<Tensor> out;
    EXPECT_TRUE(session_.Run({num_}, &out).ok());
    return out.empty() ? -1 : out[0].data<int32_t>()[0];
  }
  absl::Status SetStep(int64_t step) {
    Tensor s(DT_INT64, TensorShape({}));
    s.data<int64_t>()[0] = step;
    std::vector<Tensor> out;
    return session_.Run({{local_step_, s}}, {}, {set_step_}, &out);
  }

  Scope root_ = Scope::NewRootScope();
  Output accumulator_, grad_, local_step_;
  Operation apply_;
  Output num_required_, take_, num_;
  Operation set_step_;
  ClientSession session_;
};

TEST_F(AccumulatorTest, MeanOfTheStepsGradientsThenTheNextStep) {
  TW_ASSERT_OK(Apply(0, {1, 2}));
  TW_ASSERT_OK(Apply(0, {3, 4}));
  EXPECT_EQ(Num(), 2);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> mean, Take(2));
  EXPECT_THAT(mean, ElementsAre(2, 3));
  EXPECT_EQ(Num(), 0);
  // The take moved the accumulator to step 1: a step-0 gradient is stale.
  TW_ASSERT_OK(Apply(0, {100, 100}));
  EXPECT_EQ(Num(), 0);
  TW_ASSERT_OK(Apply(1, {5, 6}));
  TW_ASSERT_OK(Apply(2, {7, 8}));  // newer than the accumulator: taken
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> next, Take(2));
  EXPECT_THAT(next, ElementsAre(6, 7));
  // SetGlobalStep moves the accumulator's step: older gradients drop.
  TW_ASSERT_OK(SetStep(10));
  TW_ASSERT_OK(Apply(9, {1, 1}));
  EXPECT_EQ(Num(), 0);
}

TEST_F(AccumulatorTest, TakeWaitsForAnotherStepsGradients) {
  absl::StatusOr<std::vector<double>> got;
  std::thread taker([&] { got = Take(2); });
  TW_ASSERT_OK(Apply(0, {1, 1}));
  TW_ASSERT_OK(Apply(0, {3, 5}));
  taker.join();
  TW_ASSERT_OK(got.status());
  EXPECT_THAT(*got, ElementsAre(2, 3));
}

TEST_F(AccumulatorTest, BadGradientsAndCountsAreErrors) {
  const absl::Status shape = Apply(0, {1, 2, 3});
  EXPECT_EQ(shape.code(), absl::StatusCode::kInvalidArgument) << shape;
  EXPECT_THAT(shape.message(), HasSubstr("has shape [2], the gradient [3]"));
  const absl::Status zero = Take(0).status();
  EXPECT_THAT(zero.message(), HasSubstr("num_required must be positive, but was 0"));
  RunOptions options;
  options.timeout_in_ms = 20;
  Tensor one(DT_INT32, TensorShape({}));
  one.data<int32_t>()[0] = 1;
  std::vector<Tensor> out;
  const absl::Status waited =
      session_.Run(options, {{num_required_, one}}, {take_}, {}, &out, nullptr);
  EXPECT_EQ(waited.code(), absl::StatusCode::kDeadlineExceeded) << waited;
  TW_ASSERT_OK(Apply(0, {4, 4}));  // the cancelled take took nothing
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> g, Take(1));
  EXPECT_THAT(g, ElementsAre(4, 4));
}

class SumAccumulatorTest : public AccumulatorTest {
 protected:
  SumAccumulatorTest() : AccumulatorTest("SUM") {}
};

TEST_F(SumAccumulatorTest, SumsInsteadOfAveraging) {
  TW_ASSERT_OK(Apply(0, {1, 2}));
  TW_ASSERT_OK(Apply(0, {3, 4}));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> sum, Take(2));
  EXPECT_THAT(sum, ElementsAre(4, 6));
}

}  // namespace
}  // namespace towerflow
