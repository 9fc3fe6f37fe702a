// SpecializeForCapture on partitions of the STREAM test device
// (runtime/testing/stream_device.h), whose shape arithmetic runs on the
// host as a GPU's does.
#include "runtime/capture_specializer.h"

#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/device_mgr.h"
#include "runtime/session.h"
#include "runtime/testing/stream_device.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using ::towerflow::testing::StatusIs;

constexpr char kDevice[] = "/job:localhost/replica:0/task:0/device:STREAM:0";

std::string Node(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& attrs) {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "' device: '", kDevice, "' ");
  for (const std::string& in : inputs) absl::StrAppend(&s, "input: '", in, "' ");
  return absl::StrCat(s, attrs, " }\n");
}

constexpr char kFloat[] = "attr { key: 'T' value { type: DT_FLOAT } }";
constexpr char kInt[] = "attr { key: 'T' value { type: DT_INT32 } }";

std::string IntConst(const std::string& name, const std::string& values, int n) {
  return Node(name, "Const", {},
              absl::StrCat("attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
                           "value { tensor { dtype: DT_INT32 tensor_shape { dim { size: ",
                           n, " } } ", values, " } } }"));
}

std::string Arg(const std::string& name, int index, const std::string& type = "DT_FLOAT") {
  return Node(name, "_Arg", {},
              absl::StrCat("attr { key: 'T' value { type: ", type,
                           " } } attr { key: 'index' value { i: ", index, " } }"));
}

std::string Retval(const std::string& name, const std::string& input, int index,
                   const std::string& type = "DT_FLOAT") {
  return Node(name, "_Retval", {input},
              absl::StrCat("attr { key: 'T' value { type: ", type,
                           " } } attr { key: 'index' value { i: ", index, " } }"));
}

class CaptureSpecializerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = std::make_unique<ThreadPool>("test", 1);
    TW_ASSERT_OK_AND_ASSIGN(devices_,
                            DeviceMgr::Create({{testing::kStreamDevice, 1}}, pool_.get()));
    TW_ASSERT_OK_AND_ASSIGN(device_, devices_->Lookup(kDevice));
    host_ = devices_->host_device();
  }

  absl::StatusOr<CapturePlan> Specialize(const std::string& text,
                                         std::vector<TensorShape> feed_shapes, int fetches) {
    GraphDef partition;
    TW_RETURN_IF_ERROR(ParseTextProto(text, &partition));
    return SpecializeForCapture(partition, feed_shapes, {}, fetches, device_, host_, pool_.get());
  }

  static std::map<std::string, const NodeDef*> ByName(const CapturePlan& plan) {
    std::map<std::string, const NodeDef*> nodes;
    for (const NodeDef& n : plan.graph.node()) nodes[n.name()] = &n;
    return nodes;
  }

  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<DeviceMgr> devices_;
  Device* device_ = nullptr;
  Device* host_ = nullptr;
};

// x [B, 4] is reshaped by shape(x) - [0, 0]: the shape read and its
// arithmetic become one constant of the recorded B.
TEST_F(CaptureSpecializerTest, ShapeArithmeticBecomesConstantsOfTheFeedsShapes) {
  const std::string text = absl::StrCat(
      Arg("x", 0),
      Node("s", "Shape", {"x"},
           absl::StrCat(kFloat, " attr { key: 'out_type' value { type: DT_INT32 } }")),
      IntConst("zero", "int_val: 0 int_val: 0", 2), Node("dims", "Sub", {"s", "zero"}, kInt),
      Node("r", "Reshape", {"x", "dims"},
           absl::StrCat(kFloat, " attr { key: 'Tshape' value { type: DT_INT32 } }")),
      Retval("out", "r", 0));
  TW_ASSERT_OK_AND_ASSIGN(CapturePlan plan, Specialize(text, {TensorShape({3, 4})}, 1));
  const auto nodes = ByName(plan);
  EXPECT_EQ(nodes.count("s"), 0u);
  EXPECT_EQ(nodes.count("zero"), 0u);
  ASSERT_EQ(nodes.count("dims"), 1u);
  EXPECT_EQ(nodes.at("dims")->op(), "Const");
  TW_ASSERT_OK_AND_ASSIGN(Tensor dims, Tensor::FromProto(nodes.at("dims")->attr().at("value").tensor()));
  EXPECT_EQ(dims.data<int32_t>()[0], 3);
  EXPECT_EQ(dims.data<int32_t>()[1], 4);
  EXPECT_EQ(nodes.at("x")->op(), "_DeviceArg");
  EXPECT_EQ(nodes.at("out")->op(), "_DeviceRetval");
  EXPECT_EQ(plan.fetch_on_host, std::vector<bool>{false});
  // The shape folded in is checked when the step is recorded.
  ASSERT_EQ(nodes.count("s/_assert_shape_0"), 1u);
  const NodeDef& check = *nodes.at("s/_assert_shape_0");
  EXPECT_EQ(check.op(), "_AssertShape");
  EXPECT_EQ(check.input(0), "x");
  TW_ASSERT_OK_AND_ASSIGN(TensorShape shape, TensorShape::FromProto(check.attr().at("shape").shape()));
  EXPECT_EQ(shape, TensorShape({3, 4}));
}

// _AssertShape stops a recording whose folded shape a shape function got
// wrong, naming the tensor.
TEST_F(CaptureSpecializerTest, AFoldedShapeTheStepDoesNotComputeStopsTheRecording) {
  SessionOptions options;
  options.device_count[testing::kStreamDevice] = 1;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  GraphDef feedable;
  TW_ASSERT_OK(ParseTextProto(
      absl::StrCat(Node("x", "Placeholder", {}, "attr { key: 'dtype' value { type: DT_FLOAT } }"),
                   Node("check", "_AssertShape", {"x"},
                        absl::StrCat(kFloat, " attr { key: 'shape' value { shape { dim { size: 2 "
                                             "} } } } attr { key: '_tensor' value { s: 'x' } }"))),
      &feedable));
  TW_ASSERT_OK(session->Create(feedable));
  TW_EXPECT_OK(session->Run({{"x", Tensor(DT_FLOAT, TensorShape({2}))}}, {}, {"check"}, nullptr));
  EXPECT_THAT(session->Run({{"x", Tensor(DT_FLOAT, TensorShape({3}))}}, {}, {"check"}, nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "build-time shape inference gave [2] for 'x', but the step computes [3]"));
}

TEST_F(CaptureSpecializerTest, AFetchedShapeIsAConstantOfTheRecording) {
  const std::string text = absl::StrCat(
      Arg("x", 0),
      Node("s", "Shape", {"x"},
           absl::StrCat(kFloat, " attr { key: 'out_type' value { type: DT_INT32 } }")),
      Retval("out", "s", 0, "DT_INT32"));
  TW_ASSERT_OK_AND_ASSIGN(CapturePlan plan, Specialize(text, {TensorShape({5, 2})}, 1));
  EXPECT_EQ(ByName(plan).at("s")->op(), "Const");
  EXPECT_EQ(plan.fetch_on_host, std::vector<bool>{true});
}

TEST_F(CaptureSpecializerTest, AHostValueReadFromAVariableIsRefused) {
  // An int32 variable lives in host memory here: its value may change
  // between steps, and a recording would keep the one it read.
  const std::string text = absl::StrCat(
      Arg("x", 0),
      Node("v", "VariableV2", {},
           "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'shape' value { shape { "
           "dim { size: 2 } } } } attr { key: 'container' value { s: '' } } attr { key: "
           "'shared_name' value { s: '' } }"),
      Node("r", "Reshape", {"x", "v"},
           absl::StrCat(kFloat, " attr { key: 'Tshape' value { type: DT_INT32 } }")),
      Retval("out", "r", 0));
  EXPECT_THAT(Specialize(text, {TensorShape({8})}, 1).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "node 'r' (Reshape) reads input 1 ('v') on the host, and its value is not "
                       "known before the step runs"));
}

TEST_F(CaptureSpecializerTest, AKernelNotDeclaredCapturableIsRefused) {
  const std::string text =
      absl::StrCat(Arg("x", 0), Node("w", "Where", {"x"}, kFloat), Retval("out", "w", 0, "DT_INT64"));
  EXPECT_THAT(Specialize(text, {TensorShape({8})}, 1).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "node 'w' (Where) has no kernel on STREAM declared capturable"));
}

TEST_F(CaptureSpecializerTest, AnInt32FeedIsRefused) {
  const std::string text = absl::StrCat(
      Arg("x", 0), Arg("dims", 1, "DT_INT32"),
      Node("r", "Reshape", {"x", "dims"},
           absl::StrCat(kFloat, " attr { key: 'Tshape' value { type: DT_INT32 } }")),
      Retval("out", "r", 0));
  EXPECT_THAT(Specialize(text, {TensorShape({8}), TensorShape({2})}, 1).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "node 'r' (Reshape) reads the host-memory feed 'dims' (input 1) on the "
                       "host, for more than copying it to the device"));
}

TEST_F(CaptureSpecializerTest, AnInt32FeedThatIsOnlyCopiedGoesThroughAHostSlot) {
  // STREAM's Cast from int32 only copies its host input to the device
  // (KernelDef::copied_host_inputs), as a GPU's class labels are.
  const std::string text = absl::StrCat(
      Arg("labels", 0, "DT_INT32"),
      Node("y", "Cast", {"labels"},
           "attr { key: 'SrcT' value { type: DT_INT32 } } attr { key: 'DstT' value { type: "
           "DT_FLOAT } } attr { key: 'Truncate' value { b: false } }"),
      Retval("out", "y", 0));
  TW_ASSERT_OK_AND_ASSIGN(CapturePlan plan, Specialize(text, {TensorShape({4})}, 1));
  EXPECT_EQ(plan.feed_on_host, std::vector<bool>{true});
  EXPECT_EQ(plan.fetch_on_host, std::vector<bool>{false});
}

TEST_F(CaptureSpecializerTest, ABadIndexIsInvalidArgument) {
  const std::string text = absl::StrCat(Arg("x", 3), Retval("out", "x", 0));
  EXPECT_THAT(Specialize(text, {TensorShape({8})}, 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "has index 3 out of range"));
}

}  // namespace
}  // namespace towerflow
