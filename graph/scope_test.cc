// Scope: TensorFlow's naming rules (scope_test.cc), sticky status, control
// dependencies, device scopes and functions, colocation, literal inputs.
#include "graph/scope.h"

#include "core/proto_io.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

TEST(ScopeTest, BasicNames) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(root.GetUniqueNameForOp("add"), "add");
  EXPECT_EQ(root.GetUniqueNameForOp("add"), "add_1");
  EXPECT_EQ(root.GetUniqueNameForOp("add"), "add_2");
  EXPECT_EQ(root.GetUniqueNameForOp("mul"), "mul");
}

TEST(ScopeTest, OpAndScopeNameCollision) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(root.GetUniqueNameForOp("foo"), "foo");
  EXPECT_EQ(root.GetUniqueNameForOp("foo"), "foo_1");
  EXPECT_EQ(root.GetUniqueNameForOp("foo_1"), "foo_1_1");
  EXPECT_EQ(root.GetUniqueNameForOp("foo_2"), "foo_2");
  EXPECT_EQ(root.GetUniqueNameForOp("foo"), "foo_3");
  EXPECT_EQ(root.GetUniqueNameForOp("foo_2"), "foo_2_1");
}

TEST(ScopeTest, HierarchicalNames) {
  Scope root = Scope::NewRootScope();
  Scope child = root.NewSubScope("child");
  EXPECT_EQ(child.GetUniqueNameForOp("add"), "child/add");
  EXPECT_EQ(child.GetUniqueNameForOp("add"), "child/add_1");
  EXPECT_EQ(child.GetUniqueNameForOp("mul"), "child/mul");

  Scope child_1 = root.NewSubScope("child");
  EXPECT_EQ(child_1.GetUniqueNameForOp("add"), "child_1/add");
  EXPECT_EQ(child_1.GetUniqueNameForOp("add"), "child_1/add_1");
  EXPECT_EQ(child_1.GetUniqueNameForOp("mul"), "child_1/mul");

  Scope c_c = root.NewSubScope("c").NewSubScope("c");
  EXPECT_EQ(c_c.GetUniqueNameForOp("add"), "c/c/add");

  Scope c_1 = root.NewSubScope("c");
  Scope c_1_c = c_1.NewSubScope("c");
  EXPECT_EQ(c_1_c.GetUniqueNameForOp("add"), "c_1/c/add");

  Scope c_1_c_1 = c_1.NewSubScope("c");
  EXPECT_EQ(c_1_c_1.GetUniqueNameForOp("add"), "c_1/c_1/add");

  EXPECT_EQ(root.NewSubScope("").NewSubScope("").GetUniqueNameForOp("d"), "d");
  EXPECT_EQ(root.NewSubScope("").GetUniqueNameForOp("d"), "d_1");
  EXPECT_EQ(root.GetUniqueNameForOp("d"), "d_2");
}

TEST(ScopeTest, ScopeAndOpNamesShareANamespace) {
  Scope root = Scope::NewRootScope();
  Scope child = root.NewSubScope("child");
  EXPECT_EQ(child.GetUniqueNameForOp("add"), "child/add");
  EXPECT_EQ(root.GetUniqueNameForOp("child"), "child_1");
  EXPECT_EQ(root.NewSubScope("child").GetUniqueNameForOp("p"), "child_2/p");
}

std::vector<std::string> LinearOp(const Scope& scope) {
  Scope::CompositeOpScopes cop = scope.GetCompositeOpScopes("linear");
  const std::string mul = cop.child.GetUniqueNameForOp("mul");
  const std::string bias_add = cop.child.GetUniqueNameForOp("bias_add");
  return {mul, bias_add, cop.last.GetUniqueNameForOp("Last")};
}

TEST(ScopeTest, CompositeOpScopes) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(LinearOp(root), (std::vector<std::string>{"linear/mul", "linear/bias_add", "linear"}));
  EXPECT_EQ(root.GetUniqueNameForOp("linear"), "linear_1");
  EXPECT_EQ(LinearOp(root),
            (std::vector<std::string>{"linear_2/mul", "linear_2/bias_add", "linear_2"}));
  EXPECT_EQ(LinearOp(root.WithOpName("c")), (std::vector<std::string>{"c/mul", "c/bias_add", "c"}));
  EXPECT_EQ(
      LinearOp(root.NewSubScope("outer")),
      (std::vector<std::string>{"outer/linear/mul", "outer/linear/bias_add", "outer/linear"}));
}

TEST(ScopeTest, SingleUseScopeCanNameOneOpOnly) {
  Scope root = Scope::NewRootScope();
  Scope::CompositeOpScopes cop = root.GetCompositeOpScopes("cop");
  EXPECT_EQ(cop.last.GetUniqueNameForOp("foo"), "cop");
  cop.last.GetUniqueNameForOp("foo");
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Cannot get a unique name"));
}

TEST(ScopeTest, WithOpNameNamesTheNextOpAndUniquifies) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output b = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output c = ops::Placeholder(root.NewSubScope("t").WithOpName("x", "_", 7), DT_FLOAT);
  EXPECT_EQ(a.node()->name(), "x");
  EXPECT_EQ(b.node()->name(), "x_1");
  EXPECT_EQ(c.node()->name(), "t/x_7");
  EXPECT_EQ(a.name(), "x:0");
}

TEST(ScopeTest, NamesAlreadyInTheGraphAreSkipped) {
  Scope root = Scope::NewRootScope();
  // A node named from outside the scope's name table (as variables are).
  NodeDef def;
  def.set_name("a/Placeholder");
  def.set_op("Placeholder");
  (*def.mutable_attr())["dtype"].set_type(DT_FLOAT);
  TW_ASSERT_OK(root.AddNode(def));
  Output p = ops::Placeholder(root.NewSubScope("a"), DT_FLOAT);
  EXPECT_EQ(p.node()->name(), "a/Placeholder_1");
}

TEST(ScopeTest, ControlDependenciesAccumulateAndBecomeEdges) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT);
  Output b = ops::Placeholder(root.WithOpName("b"), DT_FLOAT);
  Scope c = root.WithControlDependencies({a.op()});
  Scope cc = c.WithControlDependencies(b);
  EXPECT_EQ(c.control_deps().size(), 1u);
  EXPECT_EQ(cc.control_deps().size(), 2u);
  ops::Identity(cc.WithOpName("x"), a);
  TW_ASSERT_OK_AND_ASSIGN(GraphDef def, root.ToGraphDef());
  const NodeDef& xd = def.node(2);
  EXPECT_EQ(xd.name(), "x");
  EXPECT_EQ(std::vector<std::string>(xd.input().begin(), xd.input().end()),
            (std::vector<std::string>{"a", "^a", "^b"}));
  EXPECT_TRUE(cc.WithNoControlDependencies().control_deps().empty());
}

TEST(ScopeTest, FirstErrorIsStickyAndLaterBuildersDoNothing) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({2, 3}));
  Output b = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({4, 5}));
  ops::MatMul bad(root.WithOpName("bad"), a, b);
  EXPECT_FALSE(bad.product.valid());
  const int nodes = root.graph()->num_nodes();
  ops::Placeholder(root.WithDevice("/bogus:device"), DT_FLOAT);
  ops::Relu(root, a);
  EXPECT_EQ(root.graph()->num_nodes(), nodes);
  GraphDef def;
  EXPECT_THAT(root.ToGraphDef(&def),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Node 'bad' (op 'MatMul') with input shapes [2,3], [4,5]: Matrix "
                       "size-incompatible: inner dimensions are 3 and 4"));
  // Derived scopes share the status.
  EXPECT_THAT(root.NewSubScope("x").status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Matrix size-incompatible: inner dimensions are 3 and 4"));
}

TEST(ScopeTest, DeviceStringsAreNormalised) {
  Scope root = Scope::NewRootScope();
  const auto device = [&](const std::string& spec) {
    return ops::NoOp(root.WithDevice(spec)).node()->requested_device();
  };
  EXPECT_EQ(device("/gpu:0"), "/device:GPU:0");
  EXPECT_EQ(device("/GPU:0"), "/device:GPU:0");
  EXPECT_EQ(device("/cpu:1"), "/device:CPU:1");
  EXPECT_EQ(device("GPU:1"), "/device:GPU:1");
  EXPECT_EQ(device("/device:gpu:2"), "/device:GPU:2");
  EXPECT_EQ(device("/job:worker/replica:0/task:3/device:CPU:0"),
            "/job:worker/replica:0/task:3/device:CPU:0");
  EXPECT_EQ(device("/device:CPU:*"), "/device:CPU:*");
  EXPECT_EQ(device(""), "");
  TW_EXPECT_OK(root.status());
}

TEST(ScopeTest, InnerDeviceFieldsWinAndOuterFieldsFillIn) {
  Scope root = Scope::NewRootScope();
  const auto device = [](const Scope& s) { return ops::NoOp(s).node()->requested_device(); };
  EXPECT_EQ(device(root.WithDevice("/job:ps").WithDevice("/cpu:0")), "/job:ps/device:CPU:0");
  EXPECT_EQ(device(root.WithDevice("/job:worker/task:1").WithDevice("/job:ps")), "/job:ps/task:1");
  EXPECT_EQ(device(root.WithDevice("/gpu:0").WithDevice("/gpu:1")), "/device:GPU:1");
  // Fields merge one by one, as in TensorFlow: the inner type, the outer index.
  EXPECT_EQ(device(root.WithDevice("/gpu:1").WithDevice("/device:CPU:*")), "/device:CPU:1");
  // An empty spec changes nothing; ClearDevice stops the outer ones.
  EXPECT_EQ(device(root.WithDevice("/gpu:1").WithDevice("")), "/device:GPU:1");
  EXPECT_EQ(device(root.WithDevice("/gpu:1").ClearDevice()), "");
  EXPECT_EQ(device(root.WithDevice("/gpu:1").ClearDevice().WithDevice("/job:w")), "/job:w");
}

TEST(ScopeTest, BadDeviceSpecIsAStickyError) {
  Scope root = Scope::NewRootScope();
  root.WithDevice("/gpu:zero");
  EXPECT_THAT(root.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Could not parse device specification '/gpu:zero'"));
}

TEST(ScopeTest, DeviceFunctionsSeeTheNodeAndTheDeviceSoFar) {
  Scope root = Scope::NewRootScope();
  std::vector<std::string> seen;
  DeviceFunction fn = [&seen](const Node& node) -> absl::StatusOr<std::string> {
    seen.push_back(absl::StrCat(node.type_string(), "@", node.requested_device()));
    return node.IsOp("Placeholder") ? "/job:ps" : "/job:worker";
  };
  // Applied innermost first: the inner /cpu:0, then the function, then /task:2.
  Scope s = root.WithDevice("/task:2").WithDeviceFunction(fn).WithDevice("/cpu:0");
  Output p = ops::Placeholder(s, DT_FLOAT);
  Output r = ops::Relu(s, p);
  EXPECT_EQ(p.node()->requested_device(), "/job:ps/task:2");
  EXPECT_EQ(r.node()->requested_device(), "/job:worker/task:2");
  EXPECT_EQ(seen, (std::vector<std::string>{"Placeholder@/device:CPU:0", "Relu@/device:CPU:0"}));
}

TEST(ScopeTest, FailingDeviceFunctionFailsTheNode) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction([](const Node&) -> absl::StatusOr<std::string> {
    return absl::InvalidArgumentError("no device for you");
  });
  ops::NoOp(s.WithOpName("n"));
  EXPECT_THAT(root.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Device function for node 'n': no device for you"));
  EXPECT_EQ(root.graph()->FindNode("n"), nullptr);
}

TEST(ScopeTest, ColocationCopiesDeviceAndClassAndIgnoresOuterDevices) {
  Scope root = Scope::NewRootScope();
  Output v = ops::Placeholder(root.WithDevice("/job:ps/task:1").WithOpName("v"), DT_FLOAT);
  Scope worker = root.WithDevice("/job:worker");
  Output read = ops::Identity(worker.ColocateWith(v).WithOpName("read"), v);
  EXPECT_EQ(read.node()->requested_device(), "/job:ps/task:1");
  const AttrValue* cls = read.node()->FindAttr("_class");
  ASSERT_NE(cls, nullptr);
  EXPECT_EQ(cls->list().s(0), "loc:@v");
  // Colocating with a colocated op joins its group.
  Output read2 = ops::Identity(root.ColocateWith(read), read);
  EXPECT_EQ(read2.node()->FindAttr("_class")->list().s(0), "loc:@v");
  // ClearColocation drops both.
  Output free = ops::Identity(worker.ColocateWith(v).ClearColocation(), v);
  EXPECT_EQ(free.node()->FindAttr("_class"), nullptr);
}

TEST(ScopeTest, LiteralsTakeTheDtypeTheOpNeeds) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT);
  Output y = ops::Mul(root, x, 0.5);  // a double literal for a float op
  TW_ASSERT_OK(root.status());
  const Node* c = y.node()->input_node(1);
  EXPECT_EQ(c->type_string(), "Const");
  EXPECT_EQ(c->output_type(0), DT_FLOAT);
  // The literal may come first.
  Output z = ops::Sub(root, 1, x);
  EXPECT_EQ(z.node()->input_node(0)->output_type(0), DT_FLOAT);
  // Literals alone keep their own type.
  Output i = ops::Add(root, 1, 2);
  EXPECT_EQ(i.type(), DT_INT32);
  // Nested lists make shaped constants.
  Output m = ops::Const(root, {{1.f, 2.f}, {3.f, 4.f}});
  EXPECT_EQ(m.shape().DebugString(), "[2,2]");
  TW_ASSERT_OK(root.status());
}

TEST(ScopeTest, InexactLiteralConversionIsAnError) {
  Scope root = Scope::NewRootScope();
  Output n = ops::Placeholder(root, DT_INT32);
  ops::Add(root, n, 2.5);
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "a literal where int32 is expected"));
}

TEST(ScopeTest, OutputsFromAnotherGraphAreRejected) {
  Scope a = Scope::NewRootScope();
  Scope b = Scope::NewRootScope();
  Output x = ops::Placeholder(a, DT_FLOAT);
  ops::Relu(b, x);
  EXPECT_THAT(b.status(), StatusIs(absl::StatusCode::kInvalidArgument, "another graph"));
}

GraphDef BuildSmallModel() {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({-1, 3}));
  Output w = ops::Const(root, {{1.f}, {2.f}, {3.f}});
  Output y = ops::MatMul(root.NewSubScope("layer"), x, w);
  ops::Relu(root.WithDevice("/gpu:1").WithControlDependencies(x), y);
  GraphDef def;
  EXPECT_TRUE(root.ToGraphDef(&def).ok());
  return def;
}

TEST(ScopeTest, ExportIsDeterministic) {
  const GraphDef a = BuildSmallModel();
  const GraphDef b = BuildSmallModel();
  EXPECT_EQ(SerializeDeterministic(a), SerializeDeterministic(b));
  EXPECT_EQ(PrintTextProto(a), PrintTextProto(b));
  EXPECT_EQ(a.versions().producer(), kGraphDefVersion);
}

}  // namespace
}  // namespace towerflow
