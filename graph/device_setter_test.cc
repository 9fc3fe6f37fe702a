// ReplicaDeviceSetter: the placements of TensorFlow's device_setter_test.py
// and of contrib's GreedyLoadBalancingStrategy tests, with Towerflow's
// resource variables (TF's tests use tf.Variable; handle and initializer play
// the roles of v.device and v.initializer.device).
#include "graph/device_setter.h"

#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

const std::map<std::string, std::vector<std::string>> kCluster = {
    {"ps", {"ps0:2222", "ps1:2222"}}, {"worker", {"worker0:2222", "worker1:2222", "worker2:2222"}}};

Scope WithSetter(const Scope& root, ReplicaDeviceSetterOptions options) {
  absl::StatusOr<DeviceFunction> setter = ReplicaDeviceSetter(options);
  EXPECT_TRUE(setter.ok()) << setter.status();
  return root.WithDeviceFunction(*setter);
}

std::string DeviceOf(const Variable& v) { return v.handle().node()->requested_device(); }
std::string InitDeviceOf(const Variable& v) { return v.initializer().node()->requested_device(); }

ReplicaDeviceSetterOptions ClusterOptions() {
  ReplicaDeviceSetterOptions o;
  o.cluster = kCluster;
  return o;
}

TEST(DeviceSetterTest, CpuOverride) {
  Scope root = Scope::NewRootScope();
  Scope s = WithSetter(root, ClusterOptions());
  Variable v = GetVariable(s.WithDevice("/cpu:0"), "v", TensorShape({2}));
  Variable w = GetVariable(s, "w", TensorShape({2}));
  Output a = ops::Add(s.WithDevice("/cpu:0"), v.value(), w.value());
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(DeviceOf(v), "/job:ps/task:0/device:CPU:0");
  EXPECT_EQ(InitDeviceOf(v), "/job:ps/task:0/device:CPU:0");
  EXPECT_EQ(DeviceOf(w), "/job:ps/task:1");
  EXPECT_EQ(InitDeviceOf(w), "/job:ps/task:1");
  EXPECT_EQ(a.node()->requested_device(), "/job:worker/device:CPU:0");
}

TEST(DeviceSetterTest, ResourceVariable) {
  Scope root = Scope::NewRootScope();
  Variable v = GetVariable(WithSetter(root, ClusterOptions()), "v", TensorShape({2}));
  EXPECT_EQ(DeviceOf(v), "/job:ps/task:0");
}

TEST(DeviceSetterTest, TwoPsTasksRoundRobin) {
  Scope root = Scope::NewRootScope();
  Scope s = WithSetter(root, ClusterOptions());
  Variable v = GetVariable(s, "v", TensorShape({2}));
  Variable w = GetVariable(s, "w", TensorShape({2}));
  Output a = ops::Add(s, v.value(), w.value());
  EXPECT_EQ(DeviceOf(v), "/job:ps/task:0");
  EXPECT_EQ(InitDeviceOf(v), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(w), "/job:ps/task:1");
  EXPECT_EQ(InitDeviceOf(w), "/job:ps/task:1");
  EXPECT_EQ(a.node()->requested_device(), "/job:worker");
  // Reads live with their variable.
  EXPECT_EQ(a.node()->input_node(0)->requested_device(), "/job:ps/task:0");
}

TEST(DeviceSetterTest, PinVariableToJob) {
  Scope root = Scope::NewRootScope();
  Scope s = WithSetter(root, ClusterOptions());
  Variable v = GetVariable(s, "v", TensorShape({2}));
  Variable w = GetVariable(s.WithDevice("/job:moon"), "w", TensorShape({2}));
  // An explicit ps job still gets its task set.
  Variable x = GetVariable(s.WithDevice("/job:moon").WithDevice("/job:ps"), "x", TensorShape({2}));
  Output a = ops::AddN(s, {v.value(), w.value(), x.value()});
  EXPECT_EQ(DeviceOf(v), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(w), "/job:moon");
  EXPECT_EQ(InitDeviceOf(w), "/job:moon");
  EXPECT_EQ(DeviceOf(x), "/job:ps/task:1");
  EXPECT_EQ(InitDeviceOf(x), "/job:ps/task:1");
  EXPECT_EQ(a.node()->requested_device(), "/job:worker");
}

TEST(DeviceSetterTest, UseCpuForPs) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions o;
  o.ps_tasks = 1;
  o.ps_device = "/cpu:0";
  Scope s = WithSetter(root, o);
  Variable v = GetVariable(s, "v", TensorShape({2}));
  Variable w = GetVariable(s.WithDevice("/job:moon"), "w", TensorShape({2}));
  Output a = ops::Add(s, v.value(), w.value());
  EXPECT_EQ(DeviceOf(v), "/device:CPU:0");
  EXPECT_EQ(InitDeviceOf(v), "/device:CPU:0");
  EXPECT_EQ(DeviceOf(w), "/job:moon/device:CPU:0");
  EXPECT_EQ(InitDeviceOf(w), "/job:moon/device:CPU:0");
  EXPECT_EQ(a.node()->requested_device(), "/job:worker");
}

TEST(DeviceSetterTest, NoMerging) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions o = ClusterOptions();
  o.merge_devices = false;
  Scope s = WithSetter(root, o);
  Variable v = GetVariable(s, "v", TensorShape({2}));
  Variable w = GetVariable(s.WithDevice("/job:ps"), "w", TensorShape({2}));
  Output a = ops::Add(s, v.value(), w.value());
  EXPECT_EQ(DeviceOf(v), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(w), "/job:ps");
  EXPECT_EQ(InitDeviceOf(w), "/job:ps");
  EXPECT_EQ(a.node()->requested_device(), "/job:worker");
}

TEST(DeviceSetterTest, OtherJobNames) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions o;
  o.cluster = std::map<std::string, std::vector<std::string>>{
      {"sun", {"sun0:2222", "sun1:2222", "sun2:2222"}}, {"moon", {"moon0:2222", "moon1:2222"}}};
  o.ps_device = "/job:moon";
  o.worker_device = "/job:sun";
  Scope s = WithSetter(root, o);
  Variable v = GetVariable(s, "v", TensorShape({2}));
  Variable w = GetVariable(s, "w", TensorShape({2}));
  Output a = ops::Add(s, v.value(), w.value());
  EXPECT_EQ(DeviceOf(v), "/job:moon/task:0");
  EXPECT_EQ(DeviceOf(w), "/job:moon/task:1");
  EXPECT_EQ(a.node()->requested_device(), "/job:sun");

  Scope root2 = Scope::NewRootScope();
  o.ps_device = "/job:moon/cpu:0";
  Scope s2 = WithSetter(root2, o);
  Variable v2 = GetVariable(s2, "v", TensorShape({2}));
  Variable w2 = GetVariable(s2, "w", TensorShape({2}));
  EXPECT_EQ(DeviceOf(v2), "/job:moon/task:0/device:CPU:0");
  EXPECT_EQ(InitDeviceOf(v2), "/job:moon/task:0/device:CPU:0");
  EXPECT_EQ(DeviceOf(w2), "/job:moon/task:1/device:CPU:0");
}

// u [2,2], v [2,1], w [2,2], x [1,3], all float32.
std::vector<Variable> FourVariables(const Scope& s) {
  return {GetVariable(s, "u", TensorShape({2, 2}), DT_FLOAT, initializers::Zeros()),
          GetVariable(s, "v", TensorShape({2, 1}), DT_FLOAT, initializers::Zeros()),
          GetVariable(s, "w", TensorShape({2, 2}), DT_FLOAT, initializers::Zeros()),
          GetVariable(s, "x", TensorShape({1, 3}), DT_FLOAT, initializers::Zeros())};
}

TEST(DeviceSetterTest, GreedyWithUniformLoadIsRoundRobin) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions o = ClusterOptions();
  o.ps_strategy =
      GreedyLoadBalancingStrategy(2, [](const Node&) -> absl::StatusOr<int64_t> { return 1; });
  Scope s = WithSetter(root, o);
  std::vector<Variable> vars = FourVariables(s);
  Output a = ops::Add(s, vars[1].value(), vars[2].value());
  EXPECT_EQ(DeviceOf(vars[0]), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(vars[1]), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(vars[2]), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(vars[3]), "/job:ps/task:1");
  EXPECT_EQ(a.node()->requested_device(), "/job:worker");
}

TEST(DeviceSetterTest, GreedyByByteSize) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions o = ClusterOptions();
  o.ps_strategy = GreedyLoadBalancingStrategy(2, ByteSizeLoadFn);
  Scope s = WithSetter(root, o);
  std::vector<Variable> vars = FourVariables(s);
  TW_ASSERT_OK(root.status());
  // Loads: u 16 -> task 0; v 8 -> 1; w 16 -> 1 (8 < 16); x 12 -> 0 (16 < 24).
  EXPECT_EQ(DeviceOf(vars[0]), "/job:ps/task:0");
  EXPECT_EQ(InitDeviceOf(vars[0]), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(vars[1]), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(vars[2]), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(vars[3]), "/job:ps/task:0");
  EXPECT_EQ(InitDeviceOf(vars[3]), "/job:ps/task:0");
}

TEST(DeviceSetterTest, GreedyByByteSizeWithScalar) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions o = ClusterOptions();
  o.ps_strategy = GreedyLoadBalancingStrategy(2, ByteSizeLoadFn);
  Variable u = GetVariable(WithSetter(root, o), "u", TensorShape({}), DT_INT32);
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(DeviceOf(u), "/job:ps/task:0");
  EXPECT_EQ(InitDeviceOf(u), "/job:ps/task:0");
}

TEST(DeviceSetterTest, NoPsTasksIsANoOp) {
  Scope root = Scope::NewRootScope();
  Scope s = WithSetter(root, ReplicaDeviceSetterOptions());
  Variable v = GetVariable(s.WithDevice("/gpu:0"), "v", TensorShape({2}));
  EXPECT_EQ(DeviceOf(v), "/device:GPU:0");
}

TEST(DeviceSetterTest, BadOptionsAreErrors) {
  ReplicaDeviceSetterOptions o;
  o.ps_tasks = -1;
  EXPECT_THAT(ReplicaDeviceSetter(o), StatusIs(absl::StatusCode::kInvalidArgument, ">= 0"));
  o.ps_tasks = 1;
  o.worker_device = "/job:wor ker";
  EXPECT_THAT(ReplicaDeviceSetter(o),
              StatusIs(absl::StatusCode::kInvalidArgument, "Could not parse device"));
}

TEST(DeviceSetterTest, ByteSizeOfUnknownShapeIsAnError) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root.WithOpName("p"), DT_FLOAT);
  EXPECT_THAT(ByteSizeLoadFn(*p.node()),
              StatusIs(absl::StatusCode::kInvalidArgument, "not fully defined"));
}

TEST(LocalDeviceSetterTest, VariablesToPsOthersToWorkerInnerWins) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(LocalDeviceSetter("/cpu:1", {"/cpu:0"}));
  Variable v = GetVariable(s, "v", TensorShape({}), DT_FLOAT, initializers::Zeros());
  Output k = ops::Const(s.WithOpName("k"), 1.0f);
  Output pinned = ops::Const(s.WithDevice("/gpu:0").WithOpName("pinned"), 1.0f);
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(DeviceOf(v), "/device:CPU:0");
  EXPECT_EQ(k.node()->requested_device(), "/device:CPU:1");
  EXPECT_EQ(pinned.node()->requested_device(), "/device:GPU:0");
  // A bad device string fails the node it places.
  Scope bad = root.WithDeviceFunction(LocalDeviceSetter("/bogus:1", {"/cpu:0"}));
  ops::Const(bad, 1.0f);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LocalDeviceSetterTest, ASharedStrategyContinuesFromSetterToSetter) {
  Scope root = Scope::NewRootScope();
  const std::vector<std::string> ps = {"/cpu:0", "/cpu:1", "/cpu:2"};
  const PsStrategy shared = RoundRobinStrategy(3);
  Scope tower0 = root.WithDeviceFunction(LocalDeviceSetter("/gpu:0", ps, shared));
  Scope tower1 = root.WithDeviceFunction(LocalDeviceSetter("/gpu:1", ps, shared));
  Variable a = GetVariable(tower0, "a", TensorShape({}));
  Variable b = GetVariable(tower0, "b", TensorShape({}));
  Variable c = GetVariable(tower1, "c", TensorShape({}));
  Variable d = GetVariable(tower1, "d", TensorShape({}));
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(DeviceOf(a), "/device:CPU:0");
  EXPECT_EQ(DeviceOf(b), "/device:CPU:1");
  EXPECT_EQ(DeviceOf(c), "/device:CPU:2");
  EXPECT_EQ(DeviceOf(d), "/device:CPU:0");
  // Each setter alone starts at the first.
  Scope alone = root.WithDeviceFunction(LocalDeviceSetter("/gpu:1", ps));
  Variable e = GetVariable(alone, "e", TensorShape({}));
  EXPECT_EQ(DeviceOf(e), "/device:CPU:0");
  // A strategy choosing outside the devices is an error naming the node.
  Scope wrong = root.WithDeviceFunction(
      LocalDeviceSetter("/gpu:0", ps, [](const Node&) -> absl::StatusOr<int> { return 3; }));
  GetVariable(wrong, "f", TensorShape({}));
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "chose device 3 of 3 for f"));
}

}  // namespace
}  // namespace towerflow
