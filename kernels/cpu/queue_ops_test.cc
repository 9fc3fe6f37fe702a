// The FIFO queue and conditional accumulator kernels, through a session:
// their state lives across steps, and their waits end when another step
// lets them go on or when their own step is aborted.
#include <thread>
#include <vector>

#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "runtime/client_session.h"
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
