// Queue runners as TF 1's: threads that fill a queue from the graph's
// enqueue ops, close it when their source ends, and cancel it when an
// enqueue fails or the runners are stopped.
#include "train/queue_runner.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/logging_ops.h"
#include "ops/gen/queue_ops.h"
#include "runtime/client_session.h"
#include "testing/status_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace train {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::towerflow::testing::StatusIs;

// TF 2.21's tf.compat.v1.train.QueueRunner(q, [enqueue]).to_proto(),
// serialized: queue "q", enqueue op "enqueue", close op "q_Close", cancel
// op "q_Close_1", queue_closed_exception_types [OUT_OF_RANGE].
constexpr char kTfQueueRunnerDef[] =
    "\x0a\x01q\x12\x07\x65nqueue\x1a\x07q_Close\x22\x09q_Close_1\x2a\x01\x0b";

// A queue "q" of int64 scalars (capacity 2) with its close and cancel ops,
// and a source queue "src" that the enqueue ops take their values from.
class QueueRunnerTest : public ::testing::Test {
 protected:
  QueueRunnerTest()
      : queue_(ops::FIFOQueueV2(
            root_.WithOpName("q"), {DT_INT64},
            ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}).Capacity(2))),
        source_(ops::FIFOQueueV2(root_.WithOpName("src"), {DT_INT64},
                                 ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}))),
        dequeue_(ops::QueueDequeueV2(root_.WithOpName("dequeue"), queue_, {DT_INT64})[0]) {
    ops::QueueCloseV2(root_.WithOpName("q_Close"), queue_);
    ops::QueueCloseV2(root_.WithOpName("q_Close_1"), queue_,
                      ops::QueueCloseV2::CancelPendingEnqueues(true));
    ops::QueueEnqueueManyV2(root_.WithOpName("fill_src"), source_,
                            {ops::Const(root_, {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4},
                                                int64_t{5}, int64_t{6}})});
    ops::QueueCloseV2(root_.WithOpName("close_src"), source_);
  }

  // An enqueue op named `name` moving one element from "src" to "q".
  void MoveFromSource(const std::string& name) {
    ops::QueueEnqueueV2(
        root_.WithOpName(name), queue_,
        {ops::QueueDequeueV2(root_.WithOpName(name + "/take"), source_, {DT_INT64})[0]});
  }
  // The runners run the session by node names: it gets the graph first.
  void StartSession() {
    session_ = std::make_unique<ClientSession>(root_);
    TW_ASSERT_OK(session_->ExtendGraph());
  }
  // "src" holds 1, 2, ..., 6 and is closed.
  void FillAndCloseSource() {
    TW_ASSERT_OK(session_->session()->Run({}, {}, {"fill_src"}, nullptr));
    TW_ASSERT_OK(session_->session()->Run({}, {}, {"close_src"}, nullptr));
  }
  absl::StatusOr<int64_t> Dequeue() {
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session_->Run({dequeue_}, &out));
    return out[0].data<int64_t>()[0];
  }
  QueueRunnerDef Def(std::vector<std::string> enqueue_ops) {
    QueueRunnerDef def;
    def.set_queue_name("q");
    for (const std::string& op : enqueue_ops) def.add_enqueue_op_name(op);
    def.set_close_op_name("q_Close");
    def.set_cancel_op_name("q_Close_1");
    return def;
  }

  Scope root_ = Scope::NewRootScope();
  Output queue_;
  Output source_;
  Output dequeue_;
  std::unique_ptr<ClientSession> session_;
};

TEST_F(QueueRunnerTest, ParsesTensorFlowsQueueRunnerDef) {
  QueueRunnerDef def;
  ASSERT_TRUE(def.ParseFromString(std::string(kTfQueueRunnerDef, sizeof(kTfQueueRunnerDef) - 1)));
  EXPECT_EQ(def.queue_name(), "q");
  EXPECT_THAT(def.enqueue_op_name(), ElementsAre("enqueue"));
  EXPECT_EQ(def.close_op_name(), "q_Close");
  EXPECT_EQ(def.cancel_op_name(), "q_Close_1");
  EXPECT_THAT(def.queue_closed_exception_types(),
              ElementsAre(static_cast<int>(absl::StatusCode::kOutOfRange)));
}

TEST_F(QueueRunnerTest, FillsTheQueueThenClosesItWhenTheSourceEnds) {
  MoveFromSource("enqueue");
  StartSession();
  FillAndCloseSource();
  TW_ASSERT_OK_AND_ASSIGN(auto runner,
                          QueueRunner::FromProto(session_->session(), Def({"enqueue"})));
  runner->Start();
  std::vector<int64_t> got;
  for (int i = 0; i < 6; ++i) {
    TW_ASSERT_OK_AND_ASSIGN(int64_t v, Dequeue());
    got.push_back(v);
  }
  EXPECT_THAT(got, ElementsAre(1, 2, 3, 4, 5, 6));
  // The source's end (OutOfRange) ended the thread, which closed "q": the
  // consumer sees the end of the data instead of waiting.
  EXPECT_THAT(Dequeue(), StatusIs(absl::StatusCode::kOutOfRange, "closed"));
  TW_EXPECT_OK(runner->Join());
  EXPECT_EQ(runner->runs(), 6);
}

TEST_F(QueueRunnerTest, ThreadsOfOneRunnerCloseTheQueueOnceAllEnded) {
  MoveFromSource("enqueue_a");
  MoveFromSource("enqueue_b");
  StartSession();
  FillAndCloseSource();
  TW_ASSERT_OK_AND_ASSIGN(
      auto runner, QueueRunner::FromProto(session_->session(), Def({"enqueue_a", "enqueue_b"})));
  runner->Start();
  std::vector<int64_t> got;
  for (int i = 0; i < 6; ++i) {
    TW_ASSERT_OK_AND_ASSIGN(int64_t v, Dequeue());
    got.push_back(v);
  }
  std::sort(got.begin(), got.end());
  EXPECT_THAT(got, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(Dequeue(), StatusIs(absl::StatusCode::kOutOfRange, "closed"));
  TW_EXPECT_OK(runner->Join());
  EXPECT_EQ(runner->runs(), 6);
}

TEST_F(QueueRunnerTest, AFailedEnqueueCancelsTheQueueAndJoinReturnsTheError) {
  const ops::Assert check(root_.WithOpName("check"), ops::Const(root_, false),
                          {ops::Const(root_, std::string("bad record"))});
  ops::QueueEnqueueV2(root_.WithOpName("enqueue").WithControlDependencies({check.operation}),
                      queue_, {ops::Const(root_, int64_t{7})});
  StartSession();
  TW_ASSERT_OK_AND_ASSIGN(auto runner,
                          QueueRunner::FromProto(session_->session(), Def({"enqueue"})));
  runner->Start();
  // The cancel op closed "q": the consumer is not left waiting.
  EXPECT_THAT(Dequeue(), StatusIs(absl::StatusCode::kOutOfRange, "closed"));
  EXPECT_THAT(runner->Join(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       "queue runner of 'q': running 'enqueue': "));
  EXPECT_THAT(runner->Join(), StatusIs(absl::StatusCode::kInvalidArgument, "bad record"));
  EXPECT_EQ(runner->runs(), 0);
}

TEST_F(QueueRunnerTest, RequestStopEndsAnEndlessRunnerWaitingInAnEnqueue) {
  ops::QueueEnqueueV2(root_.WithOpName("enqueue"), queue_, {ops::Const(root_, int64_t{7})});
  StartSession();
  TW_ASSERT_OK_AND_ASSIGN(auto runner,
                          QueueRunner::FromProto(session_->session(), Def({"enqueue"})));
  runner->Start();
  for (int i = 0; i < 5; ++i) {
    TW_ASSERT_OK_AND_ASSIGN(int64_t v, Dequeue());
    EXPECT_EQ(v, 7);
  }
  // The queue is full (capacity 2), so the thread waits in an enqueue: the
  // cancel op ends that run, and the thread with it, quietly.
  runner->RequestStop();
  TW_EXPECT_OK(runner->Join());
  EXPECT_GE(runner->runs(), 5);
}

TEST_F(QueueRunnerTest, TheRunnersOfAMetaGraphsCollection) {
  ops::QueueEnqueueV2(root_.WithOpName("enqueue"), queue_, {ops::Const(root_, int64_t{7})});
  StartSession();
  MetaGraphDef meta;
  TW_ASSERT_OK(root_.ToGraphDef(meta.mutable_graph_def()));
  TW_ASSERT_OK_AND_ASSIGN(auto none, QueueRunnersFromMetaGraph(session_->session(), meta));
  EXPECT_THAT(none, IsEmpty());

  CollectionDef& runners = (*meta.mutable_collection_def())["queue_runners"];
  runners.mutable_bytes_list()->add_value(kTfQueueRunnerDef, sizeof(kTfQueueRunnerDef) - 1);
  {
    TW_ASSERT_OK_AND_ASSIGN(auto got, QueueRunnersFromMetaGraph(session_->session(), meta));
    ASSERT_EQ(got.size(), 1);
    EXPECT_EQ(got[0]->queue_name(), "q");
    got[0]->Start();
    TW_ASSERT_OK_AND_ASSIGN(int64_t v, Dequeue());
    EXPECT_EQ(v, 7);
    got[0]->RequestStop();
    TW_EXPECT_OK(got[0]->Join());
  }

  QueueRunnerDef unknown = Def({"enqueue", "nope"});
  runners.mutable_bytes_list()->add_value(unknown.SerializeAsString());
  EXPECT_THAT(QueueRunnersFromMetaGraph(session_->session(), meta),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "collection 'queue_runners' entry 1 (queue 'q') names op 'nope', which the "
                       "graph does not have"));
  QueueRunnerDef bad_code = Def({"enqueue"});
  bad_code.add_queue_closed_exception_types(99);
  runners.mutable_bytes_list()->set_value(1, bad_code.SerializeAsString());
  EXPECT_THAT(QueueRunnersFromMetaGraph(session_->session(), meta),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "entry 1: queue runner of 'q': queue_closed_exception_types has 99"));
  runners.mutable_bytes_list()->set_value(1, std::string("\x0a\xff", 2));
  EXPECT_THAT(QueueRunnersFromMetaGraph(session_->session(), meta),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "collection 'queue_runners' entry 1 is not a QueueRunnerDef"));
  runners.mutable_node_list()->add_value("q");
  EXPECT_THAT(QueueRunnersFromMetaGraph(session_->session(), meta),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "collection 'queue_runners' is not a bytes_list"));
}

TEST_F(QueueRunnerTest, ARunnerWithoutEnqueueOpsIsRefused) {
  StartSession();
  EXPECT_THAT(
      QueueRunner::FromProto(session_->session(), Def({})),
      StatusIs(absl::StatusCode::kInvalidArgument, "queue runner of 'q' has no enqueue op"));
}

}  // namespace
}  // namespace train
}  // namespace towerflow
