// Placement, Send/Recv partitioning across virtual CPU devices, and
// variables, through Session::Run.
#include <map>

#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "testing/session_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::towerflow::testing::StatusIs;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";
constexpr char kCpu2[] = "/job:localhost/replica:0/task:0/device:CPU:2";

std::string Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                 const std::string& device,
                 const std::string& attrs = "attr { key: 'T' value { type: DT_FLOAT } }") {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "' device: '", device, "' ");
  for (const std::string& in : inputs) absl::StrAppend(&s, "input: '", in, "' ");
  return absl::StrCat(s, attrs, " }\n");
}

std::string Scalar(const std::string& name, float v, const std::string& device,
                   const std::string& extra = "") {
  return Node(name, "Const", {}, device,
              absl::StrCat("attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' "
                           "value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: ",
                           v, " } } } ", extra));
}

// n CPUs and no GPU, also on a machine that has one (a CUDA build there
// would otherwise list /device:GPU:0 and place the unpinned nodes on it).
SessionOptions Cpus(int n, bool soft = false) {
  SessionOptions o;
  o.device_count["CPU"] = n;
  o.device_count["GPU"] = 0;
  o.allow_soft_placement = soft;
  return o;
}

// node name -> device, from the partition graphs of one traced run.
std::map<std::string, std::string> PlacementOf(Session* s, const std::vector<std::string>& fetches,
                                               const std::vector<std::string>& targets = {}) {
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status st = s->Run(options, {}, fetches, targets, &out, &metadata);
  EXPECT_TRUE(st.ok()) << st;
  std::map<std::string, std::string> where;
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) where[n.name()] = n.device();
  }
  return where;
}

TEST(PlacementTest, VirtualCpuDevicesAreListed) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession("", Cpus(3)));
  std::vector<std::string> names;
  for (const DeviceAttributes& d : s->ListDevices()) names.push_back(d.name);
  EXPECT_THAT(names, ElementsAre(kCpu0, kCpu1, kCpu2));
}

TEST(PlacementTest, ExplicitAndPartialSpecs) {
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(Scalar("a", 1, "/cpu:1") + Scalar("b", 2, "/device:CPU:*") + Scalar("c", 3, "") +
                      Node("d", "AddV2", {"a", "b"}, "/job:localhost/device:CPU:2"),
                  Cpus(3)));
  auto where = PlacementOf(s.get(), {"d", "c"});
  EXPECT_EQ(where["a"], kCpu1);
  EXPECT_EQ(where["b"], kCpu0);
  EXPECT_EQ(where["c"], kCpu0);
  EXPECT_EQ(where["d"], kCpu2);
}

TEST(PlacementTest, MissingDeviceIsAnErrorWithoutSoftPlacement) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s,
                          MakeSession(Scalar("x", 1, "/gpu:1"), Cpus(1)));
  std::vector<Tensor> out;
  EXPECT_THAT(s->Run({}, {"x"}, {}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Cannot assign a device for operation 'x': Operation was explicitly "
                       "assigned to /device:GPU:1 but available devices are [ " +
                           std::string(kCpu0) + " ]"));
}

TEST(PlacementTest, SoftPlacementRunsAGpuGraphOnCpu) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s,
                          MakeSession(Scalar("x", 1, "/gpu:1") + Scalar("y", 2, "/device:GPU:0") +
                                          Node("z", "AddV2", {"x", "y"}, "/gpu:1"),
                                      Cpus(1, /*soft=*/true)));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"z"}, {}, &out));
  EXPECT_EQ(*out[0].data<float>(), 3.0f);
  EXPECT_EQ(PlacementOf(s.get(), {"z"})["z"], kCpu0);
}

TEST(PlacementTest, SoftPlacementKeepsTheTypeWhenTheIndexIsMissing) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s,
                          MakeSession(Scalar("x", 1, "/cpu:7"), Cpus(2, /*soft=*/true)));
  EXPECT_EQ(PlacementOf(s.get(), {"x"})["x"], kCpu0);
}

TEST(PlacementTest, ColocationAttrFollowsTheNamedNode) {
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(Scalar("a", 1, "/cpu:2") +
                      Scalar("b", 2, "", "attr { key: '_class' value { list { s: 'loc:@a' } } }"),
                  Cpus(3)));
  EXPECT_EQ(PlacementOf(s.get(), {"b"})["b"], kCpu2);
}

TEST(PlacementTest, ConflictingColocatedRequestsAreAnError) {
  const std::string g =
      Scalar("a", 1, "/cpu:1") +
      Scalar("b", 2, "/cpu:2", "attr { key: '_class' value { list { s: 'loc:@a' } } }");
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> strict, MakeSession(g, Cpus(3)));
  std::vector<Tensor> out;
  EXPECT_THAT(strict->Run({}, {"b"}, {}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument, "Cannot colocate nodes 'a' and 'b'"));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> soft, MakeSession(g, Cpus(3, /*soft=*/true)));
  EXPECT_EQ(PlacementOf(soft.get(), {"b"})["b"], kCpu1);
}

TEST(PlacementTest, ResourceOpsFollowTheirVariable) {
  const std::string var_attrs =
      "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { shape {} } }";
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(Node("v", "VarHandleOp", {}, "/cpu:1", var_attrs) + Scalar("init", 5, "") +
                      Node("assign", "AssignVariableOp", {"v", "init"}, "",
                           "attr { key: 'dtype' value { type: DT_FLOAT } }") +
                      Node("read", "ReadVariableOp", {"v"}, "",
                           "attr { key: 'dtype' value { type: DT_FLOAT } }"),
                  Cpus(2)));
  auto where = PlacementOf(s.get(), {}, {"assign"});
  EXPECT_EQ(where["assign"], kCpu1);
  EXPECT_EQ(where["init"], kCpu0);  // sent across
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"read"}, {}, &out));
  EXPECT_EQ(*out[0].data<float>(), 5.0f);
  EXPECT_EQ(PlacementOf(s.get(), {"read"})["read"], kCpu1);
}

TEST(PlacementTest, LogDevicePlacementPrintsEachNode) {
  SessionOptions o = Cpus(2);
  o.log_device_placement = true;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(Scalar("a", 1, "/cpu:1"), o));
  ::testing::internal::CaptureStderr();
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"a"}, {}, &out));
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr(absl::StrCat("a: (Const): ", kCpu1)));
}

TEST(PartitionTest, SendRecvAcrossThreeDevicesCopiesEachTensorOncePerDevice) {
  // a on CPU:0 feeds two nodes on CPU:1 and one on CPU:2; c on CPU:1 feeds CPU:2.
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s,
                          MakeSession(Scalar("a", 3, "/cpu:0") + Scalar("one", 1, "/cpu:1") +
                                          Node("b", "AddV2", {"a", "one"}, "/cpu:1") +
                                          Node("c", "Mul", {"a", "b"}, "/cpu:1") +
                                          Node("d", "Sub", {"c", "a"}, "/cpu:2"),
                                      Cpus(3)));
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata metadata;
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run(options, {}, {"d", "b"}, {}, &out, &metadata));
  EXPECT_EQ(*out[0].data<float>(), 9.0f);  // (3 * (3 + 1)) - 3
  EXPECT_EQ(*out[1].data<float>(), 4.0f);
  ASSERT_EQ(metadata.partition_graphs.size(), 3u);
  std::map<std::string, int> recvs;  // device -> _Recv count
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      if (n.op() == "_Recv") ++recvs[n.device()];
    }
  }
  EXPECT_EQ(recvs[kCpu1], 1);         // a, once, for both b and c
  EXPECT_EQ(recvs[kCpu2], 2);         // a and c
  EXPECT_EQ(recvs.count(kCpu0), 0u);  // fetches are taken where they are made
}

TEST(PartitionTest, ControlEdgesCrossDevices) {
  const std::string var_attrs =
      "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { shape {} } }";
  // read on CPU:1 must wait for assign on CPU:0 through a control edge.
  TW_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Session> s,
      MakeSession(Node("v", "VarHandleOp", {}, "/cpu:0", var_attrs) + Scalar("x", 7, "/cpu:0") +
                      Node("assign", "AssignVariableOp", {"v", "x"}, "/cpu:0",
                           "attr { key: 'dtype' value { type: DT_FLOAT } }") +
                      Scalar("y", 1, "/cpu:1") +
                      Node("after", "Identity", {"y", "^assign"}, "/cpu:1"),
                  Cpus(2)));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"after"}, {}, &out));
  EXPECT_EQ(*out[0].data<float>(), 1.0f);
}

TEST(PartitionTest, AnErrorOnOneDeviceCancelsTheOthersWithoutDeadlock) {
  const std::string p =
      "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { shape { "
      "unknown_rank: true } } }";
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s,
                          MakeSession(Node("x", "Placeholder", {}, "/cpu:0", p) +
                                          Node("y", "Placeholder", {}, "/cpu:0", p) +
                                          Node("bad", "AddV2", {"x", "y"}, "/cpu:1") +
                                          Node("after", "Mul", {"bad", "bad"}, "/cpu:2") +
                                          Node("other", "Mul", {"x", "x"}, "/cpu:2"),
                                      Cpus(3)));
  Tensor x(DT_FLOAT, {2}), y(DT_FLOAT, {3});
  std::vector<Tensor> out;
  EXPECT_THAT(
      s->Run({{"x", x}, {"y", y}}, {"after", "other"}, {}, &out),
      StatusIs(absl::StatusCode::kInvalidArgument,
               absl::StrCat("Incompatible shapes: [2] vs. [3]\n\t [[node bad (AddV2) on ", kCpu1)));
}

}  // namespace
}  // namespace towerflow
