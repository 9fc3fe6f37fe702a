#include "runtime/session.h"

#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/proto_io.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "graph/op_def_builder.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "testing/session_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::towerflow::testing::StatusIs;

GraphDef G(const std::string& text) {
  GraphDef g;
  absl::Status s = ParseTextProto(text, &g);
  EXPECT_TRUE(s.ok()) << s;
  return g;
}

// A Const node of float values.
std::string FloatConst(const std::string& name, std::vector<float> values,
                       const std::string& device = "") {
  std::string vals;
  for (float v : values) absl::StrAppend(&vals, " float_val: ", v);
  return absl::StrCat("node { name: '", name, "' op: 'Const' device: '", device,
                      "' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' "
                      "value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: ",
                      values.size(), " } }", vals, " } } } }\n");
}

std::string Binary(const std::string& op, const std::string& name, const std::string& a,
                   const std::string& b, const std::string& device = "") {
  return absl::StrCat("node { name: '", name, "' op: '", op, "' input: '", a, "' input: '", b,
                      "' device: '", device, "' attr { key: 'T' value { type: DT_FLOAT } } }\n");
}

std::string Placeholder(const std::string& name, const std::string& shape = "dim { size: 2 }") {
  return absl::StrCat("node { name: '", name,
                      "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
                      "attr { key: 'shape' value { shape { ",
                      shape, " } } } }\n");
}

Tensor Floats(std::vector<float> v) {
  Tensor t(DT_FLOAT, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.flat<float>()(i) = v[i];
  return t;
}

// Device counts from options (a flag, a file) are checked before any
// device is made.
TEST(SessionTest, RefusesImpossibleDeviceCounts) {
  for (const auto& [count, message] : std::vector<std::pair<int, std::string>>{
           {2147483647, "device_count[\"CPU\"] = 2147483647 is more than the 1024 devices"},
           {-1, "device_count[\"CPU\"] = -1 is negative"},
           {0, "device_count[\"CPU\"] must be at least 1"}}) {
    SessionOptions options;
    options.device_count["CPU"] = count;
    EXPECT_THAT(NewSession(options).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, message));
  }
  SessionOptions many;
  many.device_count["CPU"] = 1024;
  TW_EXPECT_OK(NewSession(many).status());
}

// A _Recv whose _Send is not in the step (a GraphDef may hold one) would
// wait forever: the step is refused, naming it. A matched pair runs.
TEST(SessionTest, RefusesARecvWithoutItsSend) {
  const std::string cpu = "/job:localhost/replica:0/task:0/device:CPU:0";
  const auto transfer = [&](const std::string& name, const std::string& op,
                            const std::string& input) {
    return absl::StrCat(
        "node { name: '", name, "' op: '", op, "' ", input.empty() ? "" : "input: '" + input + "' ",
        op == "_Send" ? "attr { key: 'T' value { type: DT_FLOAT } } "
                      : "attr { key: 'tensor_type' value { type: DT_FLOAT } } ",
        "attr { key: 'tensor_name' value { s: 'edge' } } attr { key: 'send_device' value { s: '",
        cpu,
        "' } } attr { key: 'send_device_incarnation' value { i: 1 } } attr { key: "
        "'recv_device' value { s: '",
        cpu,
        "' } } attr { key: 'client_terminated' value { b: false "
        "} } device: '/cpu:0' }");
  };
  GraphDef lonely;
  TW_ASSERT_OK(ParseTextProto(transfer("r", "_Recv", ""), &lonely));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession({}));
  TW_ASSERT_OK(session->Create(lonely));
  std::vector<Tensor> out;
  EXPECT_THAT(session->Run({}, {"r:0"}, {}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Node 'r' (_Recv) waits for tensor 'edge' from " + cpu +
                           ", which no _Send of this step sends"));

  GraphDef paired;
  TW_ASSERT_OK(ParseTextProto(
      absl::StrCat("node { name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
                   "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} "
                   "float_val: 2.5 } } } }",
                   transfer("s", "_Send", "x"), transfer("r", "_Recv", "^s")),
      &paired));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> both, NewSession({}));
  TW_ASSERT_OK(both->Create(paired));
  TW_ASSERT_OK(both->Run({}, {"r:0"}, {}, &out));
  EXPECT_THAT(out[0], ::testing::Property(&Tensor::NumElements, 1));
  EXPECT_EQ(out[0].data<float>()[0], 2.5f);
}

TEST(SessionTest, RunsConstantArithmetic) {
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(FloatConst("a", {1, 2}) + FloatConst("b", {10, 20}) +
                  Binary("AddV2", "c", "a", "b") + Binary("Mul", "d", "c", "a")));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"c", "d:0"}, {}, &out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].span<float>(), ElementsAre(11, 22));
  EXPECT_THAT(out[1].span<float>(), ElementsAre(11, 44));
}

TEST(SessionTest, FeedsPlaceholdersAndChecksThem) {
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(Placeholder("x") + FloatConst("two", {2, 2}) + Binary("Mul", "y", "x", "two")));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({{"x", Floats({3, 4})}}, {"y"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(6, 8));

  EXPECT_THAT(s->Run({}, {"y"}, {}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "You must feed a value for placeholder tensor 'x' with dtype float and "
                       "shape [2]"));
  EXPECT_THAT(s->Run({{"x", Tensor(DT_INT32, {2})}}, {"y"}, {}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Feed 'x' is a int32 tensor, but the graph expects float"));
  EXPECT_THAT(s->Run({{"x", Floats({1, 2, 3})}}, {"y"}, {}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Cannot feed value of shape [3] for tensor 'x', which has shape [2]"));
  EXPECT_THAT(s->Run({{"nope", Floats({1})}}, {"y"}, {}, &out),
              StatusIs(absl::StatusCode::kNotFound, "names node 'nope'"));
  EXPECT_THAT(s->Run({}, {"y:3"}, {}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument, "has only 1 outputs"));
}

TEST(SessionTest, FeedsInAnyOrderRunOneExecutorAndOneRandomStream) {
  // A seeded RandomUniform plus x and y: its stream goes on from step to
  // step, whatever order the feeds come in (a hash map's, say); a step
  // that restarted it would repeat the first draw.
  const std::string uniform =
      "node { name: 'shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
      "int_val: 2 } } } }\n"
      "node { name: 'u' op: 'RandomUniform' input: 'shape' attr { key: 'T' value { type: DT_INT32 "
      "} } attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'seed' value { i: 1 } } "
      "attr { key: 'seed2' value { i: 2 } } }\n";
  const std::string graph = Placeholder("x") + Placeholder("y") + uniform +
                            Binary("AddV2", "xy", "x", "y") + Binary("AddV2", "out", "xy", "u");
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> one, MakeSession(graph));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> other, MakeSession(graph));
  const Tensor zeros = Floats({0, 0});
  std::vector<Tensor> a1, a2, b1, b2;
  TW_ASSERT_OK(one->Run({{"x", zeros}, {"y", zeros}}, {"out"}, {}, &a1));
  TW_ASSERT_OK(one->Run({{"y", zeros}, {"x", zeros}}, {"out"}, {}, &a2));
  TW_ASSERT_OK(other->Run({{"x", zeros}, {"y", zeros}}, {"out"}, {}, &b1));
  TW_ASSERT_OK(other->Run({{"x", zeros}, {"y", zeros}}, {"out"}, {}, &b2));
  EXPECT_EQ(a1[0].span<float>()[0], b1[0].span<float>()[0]);
  EXPECT_EQ(a2[0].span<float>()[0], b2[0].span<float>()[0]);  // the stream went on
  EXPECT_NE(a1[0].span<float>()[0], a2[0].span<float>()[0]);
}

TEST(SessionTest, AStatefulNodesStateGoesOnAcrossRunSignatures) {
  // TF 2.21 in a tf.compat.v1 session: RandomUniform([3], seed=1, seed2=2)
  // fetched as x, as its Identity y, as x, and as both: four draws of one
  // stream, as TF's OpSegment shares a stateful node's kernel among the
  // executors of a session's signatures.
  const std::string graph =
      "node { name: 'shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
      "int_val: 3 } } } }\n"
      "node { name: 'x' op: 'RandomUniform' input: 'shape' attr { key: 'T' value { type: DT_INT32 "
      "} } attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'seed' value { i: 1 } } "
      "attr { key: 'seed2' value { i: 2 } } }\n"
      "node { name: 'y' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(graph));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"x"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(0.40639675f, 0.8575996f, 0.05539584f));
  TW_ASSERT_OK(s->Run({}, {"y"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(0.16840732f, 0.88910615f, 0.53549695f));
  TW_ASSERT_OK(s->Run({}, {"x"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(0.49945498f, 0.06284702f, 0.46006584f));
  TW_ASSERT_OK(s->Run({}, {"x", "y"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(0.3871758f, 0.44283462f, 0.33014917f));
  EXPECT_THAT(out[1].span<float>(), ElementsAre(0.3871758f, 0.44283462f, 0.33014917f));
}

TEST(SessionTest, UnusedPlaceholdersNeedNoFeed) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s,
                          MakeSession(Placeholder("unused") + FloatConst("a", {5})));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"a"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(5));
}

TEST(SessionTest, FeedingANonPlaceholderCutsItsProducer) {
  // c would need the unfed placeholder x; feeding c itself cuts x off.
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(Placeholder("x") + FloatConst("a", {1, 1}) + Binary("AddV2", "c", "x", "a") +
                  Binary("Mul", "d", "c", "c")));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({{"c", Floats({3, 5})}}, {"d", "c"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(9, 25));
  EXPECT_THAT(out[1].span<float>(), ElementsAre(3, 5));  // a fed fetch returns the feed
}

TEST(SessionTest, FeedsASecondOutput) {
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(FloatConst("a", {1}) + FloatConst("b", {2}) +
                  "node { name: 'z' op: 'IdentityN' input: 'a' input: 'b' "
                  "attr { key: 'T' value { list { type: DT_FLOAT type: DT_FLOAT } } } }\n" +
                  Binary("AddV2", "w", "z:0", "z:1")));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"w"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(3));
  TW_ASSERT_OK(s->Run({{"z:1", Floats({40})}}, {"w", "z:0"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(41));
  EXPECT_THAT(out[1].span<float>(), ElementsAre(1));
}

TEST(SessionTest, MissingKernelIsUnimplementedNamingOpDeviceAndDtype) {
  // Send (the multi-process op, issue 22) has no kernel on any device yet;
  // an op with kernels for other dtypes is refused earlier, by the placer.
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(FloatConst("a", {1}) + "node { name: 'm' op: 'Send' input: 'a' "
                                         "attr { key: 'T' value { type: DT_FLOAT } } "
                                         "attr { key: 'tensor_name' value { s: 'a' } } "
                                         "attr { key: 'send_device' value { s: '/cpu:0' } } "
                                         "attr { key: 'send_device_incarnation' value { i: 1 } } "
                                         "attr { key: 'recv_device' value { s: '/cpu:0' } } }\n"));
  std::vector<Tensor> out;
  EXPECT_THAT(s->Run({}, {}, {"m"}, nullptr),
              StatusIs(absl::StatusCode::kUnimplemented,
                       "No kernel for op 'Send' on device type CPU with T=float"));
  TW_EXPECT_OK(s->Run({}, {"a"}, {}, &out));  // pruned away, it does not matter
}

TEST(SessionTest, KernelErrorNamesTheNodeAndOp) {
  // Shapes unknown when the graph is built, so only the kernel can tell.
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(Placeholder("a", "unknown_rank: true") + Placeholder("b", "unknown_rank: true") +
                  Binary("AddV2", "bad", "a", "b")));
  std::vector<Tensor> out;
  absl::Status st = s->Run({{"a", Floats({1, 2})}, {"b", Floats({1, 2, 3})}}, {"bad"}, {}, &out);
  EXPECT_THAT(st, StatusIs(absl::StatusCode::kInvalidArgument, "Incompatible shapes: [2] vs. [3]"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("[[node bad (AddV2) on "));
}

// Fill's output shape comes from a feed, so only the kernel knows its size.
GraphDef FillOfFedDims() {
  return G(R"pb(
    node {
      name: "dims"
      op: "Placeholder"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
    }
    node {
      name: "one"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
      attr {
        key: "value"
        value { tensor { dtype: DT_FLOAT float_val: 1 } }
      }
    }
    node {
      name: "fill"
      op: "Fill"
      input: [ "dims", "one" ]
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "index_type"
        value { type: DT_INT32 }
      }
    }
  )pb");
}

absl::Status RunFill(Session* s, int32_t rows, int32_t cols) {
  Tensor dims(DT_INT32, {2});
  dims.flat<int32_t>()(0) = rows;
  dims.flat<int32_t>()(1) = cols;
  std::vector<Tensor> out;
  return s->Run({{"dims", dims}}, {"fill"}, {}, &out);
}

// The default limits leave room for what no budget counts: half of the
// memory available now, so at most half of the machine's.
TEST(SessionTest, DefaultMemoryLimitsAreHalfOfTheAvailableMemory) {
  const MemoryLimits limits = MemoryLimits::Default();
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  EXPECT_GT(limits.max_tensor_bytes, 0);
  EXPECT_EQ(limits.host_budget_bytes, limits.max_tensor_bytes);
  if (physical > 0) EXPECT_LE(limits.max_tensor_bytes, physical / 2);
}

TEST(SessionTest, MemoryLimitsRefuseTensorsNamingTheNodeBeforeAllocating) {
  SessionOptions options;
  options.max_tensor_bytes = 1 << 20;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, NewSession(options));
  TW_ASSERT_OK(s->Create(FillOfFedDims()));
  TW_EXPECT_OK(RunFill(s.get(), 10, 10));
  absl::Status st = RunFill(s.get(), 1000, 1000);
  EXPECT_THAT(st, StatusIs(absl::StatusCode::kResourceExhausted,
                           "OOM when allocating tensor with shape [1000,1000] and type float: "
                           "4000000 bytes, past the session's max_tensor_bytes of 1048576"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("[[node fill (Fill) on "));
  // 2^62 elements of 4 bytes: more bytes than an int64 counts.
  EXPECT_THAT(RunFill(s.get(), 2147483647, 2147483647),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "more than 2^63 bytes, past the session's max_tensor_bytes"));

  // The budget counts every host tensor of the process.
  SessionOptions budget;
  budget.host_memory_budget_bytes = CpuAllocator()->GetStats()->bytes_in_use + (1 << 20);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> b, NewSession(budget));
  TW_ASSERT_OK(b->Create(FillOfFedDims()));
  TW_EXPECT_OK(RunFill(b.get(), 10, 10));
  EXPECT_THAT(RunFill(b.get(), 1000, 1000),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "4000000 bytes more would take the process's host tensors from "));
  EXPECT_THAT(RunFill(b.get(), 1000, 1000), StatusIs(absl::StatusCode::kResourceExhausted,
                                                     "past the session's host memory budget of "));

  SessionOptions negative;
  negative.max_tensor_bytes = -1;
  EXPECT_THAT(NewSession(negative).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "max_tensor_bytes (-1)"));
}

TEST(SessionTest, CreateTwiceAndRunAfterCloseAreFailedPrecondition) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(FloatConst("a", {1})));
  const absl::Status twice = s->Create(G(""));
  EXPECT_THAT(twice, StatusIs(absl::StatusCode::kFailedPrecondition, "use Extend"));
  EXPECT_FALSE(IsSessionClosed(twice));
  TW_ASSERT_OK(s->Close());
  std::vector<Tensor> out;
  const absl::Status after = s->Run({}, {"a"}, {}, &out);
  EXPECT_THAT(after, StatusIs(absl::StatusCode::kFailedPrecondition, "Session has been closed."));
  EXPECT_TRUE(IsSessionClosed(after));
}

// A kernel that says it has started, waits to be let go, then fails as a
// kernel does when Close has torn down what it needed (a resource gone).
absl::Notification wait_entered, wait_release;
class WaitThenFailOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext*) override {
    wait_entered.Notify();
    wait_release.WaitForNotification();
    return absl::NotFoundError("the resource this kernel needed is gone");
  }
};
[[maybe_unused]] const bool wait_registered = [] {
  RegisterOp(OpDefBuilder("TestWaitThenFail").SetIsStateful().SetShapeFn([](InferenceContext*) {
    return absl::OkStatus();  // no outputs
  }));
  RegisterKernel(KernelDefBuilder("TestWaitThenFail").Device(kDeviceCpu),
                 MakeFactory<WaitThenFailOp>());
  return true;
}();

// A step Close cuts short is cancelled, whatever its kernels met while the
// session tore down (SyncReplicasOptimizer's chief loop ends on that).
TEST(SessionTest, AStepCutShortByCloseIsCancelled) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s,
                          MakeSession("node { name: 'w' op: 'TestWaitThenFail' }"));
  absl::Status status;
  std::thread step([&] { status = s->Run({}, {}, {"w"}, nullptr); });
  wait_entered.WaitForNotification();
  TW_ASSERT_OK(s->Close());
  wait_release.Notify();
  step.join();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kCancelled, "Session has been closed"));
  EXPECT_TRUE(IsSessionClosed(status));
  EXPECT_FALSE(IsSessionClosed(absl::CancelledError("cancelled by the caller")));
}

// A kernel that counts its objects alive and made: each cached step's
// executor holds one (a stateless op's: a stateful node's kernel is the
// session's, shared by its executors).
std::atomic<int> counted_alive{0}, counted_made{0};
class CountedOp : public OpKernel {
 public:
  CountedOp() {
    ++counted_alive;
    ++counted_made;
  }
  ~CountedOp() override { --counted_alive; }
  absl::Status Compute(KernelContext*) override { return absl::OkStatus(); }
};
[[maybe_unused]] const bool counted_registered = [] {
  RegisterOp(OpDefBuilder("TestCounted").SetShapeFn([](InferenceContext*) {
    return absl::OkStatus();  // no outputs
  }));
  RegisterKernel(KernelDefBuilder("TestCounted").Device(kDeviceCpu), MakeFactory<CountedOp>());
  return true;
}();

// A program that fetches ever different tensors does not grow without end:
// the session keeps the executors of max_cached_steps signatures, the least
// recently run dropped first and built again when run.
TEST(SessionTest, KeepsTheExecutorsOfTheMostRecentlyRunSteps) {
  SessionOptions options;
  options.max_cached_steps = 3;
  std::string graph = "node { name: 'k' op: 'TestCounted' }";
  for (int i = 0; i < 6; ++i) graph += FloatConst(absl::StrCat("c", i), {1.f * i});
  {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(graph, options));
    const auto run = [&](int i) {
      std::vector<Tensor> out;
      TW_ASSERT_OK(s->Run({}, {absl::StrCat("c", i)}, {"k"}, &out));
      EXPECT_THAT(out[0].span<float>(), ElementsAre(1.f * i));
    };
    counted_made = 0;
    for (int i = 0; i < 6; ++i) run(i);
    EXPECT_EQ(counted_made, 6);   // one executor per signature
    EXPECT_EQ(counted_alive, 3);  // signatures 3, 4, 5 kept
    run(4);                       // kept: nothing is built
    EXPECT_EQ(counted_made, 6);
    run(0);  // dropped: built again; 3, the least recently run, goes
    EXPECT_EQ(counted_made, 7);
    EXPECT_EQ(counted_alive, 3);
    run(5);
    run(4);
    EXPECT_EQ(counted_made, 7);  // 4, 5 and 0 are the ones kept
    run(3);
    EXPECT_EQ(counted_made, 8);
  }
  EXPECT_EQ(counted_alive, 0);
  options.max_cached_steps = 0;
  EXPECT_THAT(MakeSession(graph, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "SessionOptions.max_cached_steps must be positive, got 0"));
}

TEST(SessionTest, ExtendAddsNodesToLaterRuns) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(FloatConst("a", {1})));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"a"}, {}, &out));
  TW_ASSERT_OK(s->Extend(G(Binary("AddV2", "b", "a", "a"))));
  TW_ASSERT_OK(s->Run({}, {"b"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(2));
}

TEST(SessionTest, StepStatsRecordEveryNodeAndMakeAChromeTrace) {
  // The graph as written: constant folding would make b a Const.
  SessionOptions as_written;
  as_written.optimizer = GraphOptimizerOptions::None();
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(FloatConst("a", {1}) + Binary("AddV2", "b", "a", "a"), as_written));
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata metadata;
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run(options, {}, {"b"}, {}, &out, &metadata));
  ASSERT_EQ(metadata.step_stats.dev_stats.size(), 1u);
  const DeviceStepStats& dev = metadata.step_stats.dev_stats[0];
  EXPECT_EQ(dev.device, "/job:localhost/replica:0/task:0/device:CPU:0");
  std::vector<std::string> names;
  for (const NodeExecStats& n : dev.node_stats) {
    names.push_back(n.node_name);
    EXPECT_LE(n.start_micros, n.end_micros);
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("a", "b", "_retval_0"));
  const std::string json = ChromeTraceJson(metadata.step_stats);
  EXPECT_THAT(json, HasSubstr("\"name\":\"b\",\"cat\":\"Op\",\"ph\":\"X\""));
  EXPECT_THAT(json, HasSubstr("\"op\":\"AddV2\""));
}

TEST(SessionTest, SixteenThreadsRunConcurrentlyWithCorrectResults) {
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(Placeholder("x") + FloatConst("a", {1, 2}) + Binary("Mul", "y", "x", "a") +
                  Binary("AddV2", "z", "y", "a")));
  std::atomic<int> runs{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const float v = t * 1000 + i;
        std::vector<Tensor> out;
        absl::Status st = s->Run({{"x", Floats({v, v})}}, {"z"}, {}, &out);
        // z = x * [1, 2] + [1, 2]
        if (!st.ok() || out[0].flat<float>()(0) != v + 1 || out[0].flat<float>()(1) != 2 * v + 2) {
          ++wrong;
        }
        ++runs;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(runs.load(), 16 * 50);
}

}  // namespace
}  // namespace towerflow
