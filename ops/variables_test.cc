// GetVariable: variable scopes and reuse with TensorFlow's errors, the ops a
// variable is made of, collections, initializers and seeds.
#include "ops/variables.h"

#include <cmath>

#include "core/tensor_proto_util.h"
#include "graph/random_seed.h"
#include "gtest/gtest.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

float ConstValue(const Graph& g, const std::string& name) {
  const Node* n = g.FindNode(name);
  EXPECT_NE(n, nullptr) << name;
  if (n == nullptr) return NAN;
  absl::StatusOr<std::vector<double>> v = TensorProtoAsDoubles(n->FindAttr("value")->tensor());
  EXPECT_TRUE(v.ok() && v->size() == 1) << name;
  return v.ok() ? static_cast<float>((*v)[0]) : NAN;
}

TEST(VariablesTest, CreatesHandleInitializerAndAssign) {
  Scope root = Scope::NewRootScope();
  Variable w = GetVariable(root.WithVariableScope("conv1"), "weights", TensorShape({5, 5, 3, 64}),
                           DT_FLOAT, initializers::TruncatedNormal(0.05));
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(w.name(), "conv1/weights");
  const Node* handle = w.handle().node();
  EXPECT_EQ(handle->name(), "conv1/weights");
  EXPECT_EQ(handle->type_string(), "VarHandleOp");
  std::string shared_name;
  TW_ASSERT_OK(handle->GetAttr("shared_name", &shared_name));
  EXPECT_EQ(shared_name, "conv1/weights");
  EXPECT_EQ(w.initializer().node()->name(), "conv1/weights/Assign");
  EXPECT_EQ(w.initializer().node()->type_string(), "AssignVariableOp");
  EXPECT_EQ(w.initial_value().node()->name(), "conv1/weights/Initializer/truncated_normal");
  EXPECT_FLOAT_EQ(ConstValue(*root.graph(), "conv1/weights/Initializer/truncated_normal/stddev"),
                  0.05f);
  EXPECT_EQ(w.initial_value().shape().DebugString(), "[5,5,3,64]");
  // The initializer is colocated with the handle.
  EXPECT_EQ(w.initializer().node()->FindAttr("_class")->list().s(0), "loc:@conv1/weights");
  // A read has the variable's shape.
  Output r = w.value();
  EXPECT_EQ(r.node()->type_string(), "ReadVariableOp");
  EXPECT_EQ(r.shape().DebugString(), "[5,5,3,64]");
  EXPECT_EQ(r.node()->name(), "conv1/ReadVariableOp");
}

TEST(VariablesTest, ExistingVariableWithoutReuseIsDisallowed) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithVariableScope("foo");
  GetVariable(s, "v", TensorShape({1}));
  Variable again = GetVariable(root.WithVariableScope("foo"), "v", TensorShape({1}));
  EXPECT_FALSE(again.valid());
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Variable foo/v already exists, disallowed. Did you mean to set "
                       "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"));
}

TEST(VariablesTest, ReuseOfAMissingVariableIsAnError) {
  Scope root = Scope::NewRootScope();
  GetVariable(root.WithVariableScope("bar", VariableReuse::kReuse), "v", TensorShape({1}));
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Variable bar/v does not exist, or was not created with "
                       "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                       "VarScope?"));
}

TEST(VariablesTest, SharingChecksShape) {
  Scope root = Scope::NewRootScope();
  GetVariable(root, "v", TensorShape({2, 3}));
  GetVariable(root.WithVariableScope("", VariableReuse::kReuse), "v", TensorShape({3, 3}));
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Trying to share variable v, but specified shape (3, 3) and found "
                       "shape (2, 3)."));
}

TEST(VariablesTest, SharingChecksDtype) {
  Scope root = Scope::NewRootScope();
  GetVariable(root, "v", TensorShape({2}));
  GetVariable(root.WithVariableScope("", VariableReuse::kAutoReuse), "v", TensorShape({2}),
              DT_DOUBLE);
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Trying to share variable v, but specified dtype float64 and found "
                       "dtype float32."));
}

TEST(VariablesTest, ReuseIsInheritedBySubScopes) {
  Scope root = Scope::NewRootScope();
  Variable a =
      GetVariable(root.WithVariableScope("model").WithVariableScope("conv"), "w", TensorShape({3}));
  Scope reuse = root.WithVariableScope("model", VariableReuse::kReuse);
  Variable b = GetVariable(reuse.WithVariableScope("conv"), "w", TensorShape({3}));
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(b.name(), "model/conv/w");
  EXPECT_EQ(a.handle(), b.handle());
  // kAutoReuse inside kReuse stays kReuse (TF: reuse=True holds for sub-scopes).
  EXPECT_EQ(reuse.WithVariableScope("x", VariableReuse::kAutoReuse).variable_scope().reuse(),
            VariableReuse::kReuse);
  EXPECT_EQ(root.variable_scope().reuse(), VariableReuse::kNoReuse);
}

TEST(VariablesTest, UniqueVariableScopesCountPerEntryOfTheirVariableScope) {
  Scope root = Scope::NewRootScope();
  // TF: variable_scope(None, default_name="dense") gives dense, dense_1; an
  // explicitly named scope counts as used.
  EXPECT_EQ(root.WithUniqueVariableScope("dense").variable_scope().name(), "dense");
  EXPECT_EQ(root.NewSubScope("x").WithUniqueVariableScope("dense").variable_scope().name(),
            "dense_1");
  Scope named = root.WithVariableScope("dense_2");
  EXPECT_EQ(root.WithUniqueVariableScope("dense").variable_scope().name(), "dense_3");
  // Inside another variable scope the count starts afresh.
  EXPECT_EQ(named.WithUniqueVariableScope("dense").variable_scope().name(), "dense_2/dense");
  // A tower entering the root's variable scope again to reuse it counts
  // afresh too, so its layers find the first tower's variables.
  Scope tower = root.NewSubScope("tower_1").WithVariableScope("", VariableReuse::kReuse);
  Scope first = tower.WithUniqueVariableScope("dense");
  EXPECT_EQ(first.variable_scope().name(), "dense");
  EXPECT_EQ(first.variable_scope().reuse(), VariableReuse::kReuse);
  EXPECT_EQ(tower.WithUniqueVariableScope("dense").variable_scope().name(), "dense_1");
  // The name scope is uniquified on its own: tower_1/dense/.
  EXPECT_EQ(first.name(), "tower_1/dense");
  TW_EXPECT_OK(root.status());
}

TEST(VariablesTest, AutoReuseCreatesOrReturns) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithVariableScope("s", VariableReuse::kAutoReuse);
  Variable a = GetVariable(s, "v", TensorShape({1}));
  Variable b = GetVariable(s, "v", TensorShape({1}));
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(a.handle(), b.handle());
  EXPECT_EQ(GetVariables(*root.graph()).size(), 1u);
}

TEST(VariablesTest, TowersShareVariablesButNotNameScopes) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> reads;
  for (int tower = 0; tower < 2; ++tower) {
    Scope t = tower == 0 ? root : root.NewSubScope(absl::StrCat("tower_", tower));
    Scope reuse =
        t.WithVariableScope("", tower == 0 ? VariableReuse::kInherit : VariableReuse::kReuse);
    Scope conv = reuse.WithVariableScope("conv1");
    Variable w = GetVariable(conv, "weights", TensorShape({3, 3}));
    Output read = w.value();
    reads.push_back(ops::MatMul(conv, read, read));
  }
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(reads[0].node()->name(), "conv1/MatMul");
  EXPECT_EQ(reads[1].node()->name(), "tower_1/conv1/MatMul");
  EXPECT_EQ(reads[1].node()->input_node(0)->name(), "tower_1/conv1/ReadVariableOp");
  EXPECT_EQ(reads[1].node()->input_node(0)->input_node(0)->name(), "conv1/weights");
  EXPECT_EQ(GetVariables(*root.graph(), GraphKeys::kTrainableVariables).size(), 1u);
}

TEST(VariablesTest, ReenteringAVariableScopeGetsANewNameScope) {
  Scope root = Scope::NewRootScope();
  Scope first = root.WithVariableScope("conv1");
  Scope second = root.WithVariableScope("conv1", VariableReuse::kReuse);
  EXPECT_EQ(first.name(), "conv1");
  EXPECT_EQ(second.name(), "conv1_1");
  EXPECT_EQ(second.variable_scope().name(), "conv1");
}

TEST(VariablesTest, CollectionsAndTrainability) {
  Scope root = Scope::NewRootScope();
  GetVariable(root, "w", TensorShape({2}));
  VariableOptions local;
  local.trainable = false;
  local.collections = {GraphKeys::kLocalVariables, GraphKeys::kMetricVariables};
  GetVariable(root, "count", TensorShape({}), DT_FLOAT, initializers::Zeros(), local);
  VariableOptions frozen;
  frozen.trainable = false;
  GetVariable(root, "global_step", TensorShape({}), DT_INT64, {}, frozen);
  TW_ASSERT_OK(root.status());
  const Graph& g = *root.graph();
  const auto names = [&](absl::string_view key) {
    std::vector<std::string> out;
    for (const Variable& v : GetVariables(g, key)) out.push_back(v.name());
    return out;
  };
  EXPECT_EQ(names(GraphKeys::kGlobalVariables), (std::vector<std::string>{"w", "global_step"}));
  EXPECT_EQ(names(GraphKeys::kTrainableVariables), (std::vector<std::string>{"w"}));
  EXPECT_EQ(names(GraphKeys::kLocalVariables), (std::vector<std::string>{"count"}));
  EXPECT_EQ(names(GraphKeys::kMetricVariables), (std::vector<std::string>{"count"}));
  EXPECT_FALSE(GetVariables(g, GraphKeys::kGlobalVariables)[1].trainable());
}

TEST(VariablesTest, GlobalVariablesInitializerDependsOnEveryInitializer) {
  Scope root = Scope::NewRootScope();
  GetVariable(root, "a", TensorShape({2}));
  GetVariable(root, "b", TensorShape({2}));
  Operation init = GlobalVariablesInitializer(root);
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(init.name(), "init");
  std::vector<std::string> deps;
  for (const Edge* e : init.node()->in_edges()) {
    if (e->IsControlEdge()) deps.push_back(e->src()->name());
  }
  EXPECT_EQ(deps, (std::vector<std::string>{"a/Assign", "b/Assign"}));
}

TEST(VariablesTest, VariableOpsIgnoreTheCallersControlDependencies) {
  Scope root = Scope::NewRootScope();
  ops::NoOp gate(root.WithOpName("gate"));
  Variable v = GetVariable(root.WithControlDependencies({gate.operation}), "v", TensorShape({2}));
  TW_ASSERT_OK(root.status());
  EXPECT_TRUE(v.handle().node()->in_edges().empty());
  EXPECT_EQ(v.initializer().node()->in_edges().size(), 2u);  // handle, value
  // The caller's later ops still get the dependency.
  Output read = v.value();
  EXPECT_EQ(read.node()->in_edges().size(), 2u);  // handle, ^gate
}

TEST(VariablesTest, DefaultInitializersAreGlorotAndZeros) {
  Scope root = Scope::NewRootScope();
  Variable w = GetVariable(root, "w", TensorShape({784, 10}));
  Variable n = GetVariable(root, "n", TensorShape({3}), DT_INT32);
  TW_ASSERT_OK(root.status());
  // Glorot uniform: limit = sqrt(6 / (784 + 10)).
  const double limit = std::sqrt(6.0 / 794.0);
  const Graph& g = *root.graph();
  EXPECT_FLOAT_EQ(ConstValue(g, "w/Initializer/variance_scaling/random_uniform/min"),
                  static_cast<float>(-limit));
  EXPECT_FLOAT_EQ(ConstValue(g, "w/Initializer/variance_scaling/random_uniform/range"),
                  static_cast<float>(2 * limit));
  EXPECT_EQ(n.initial_value().node()->type_string(), "Const");
  EXPECT_EQ(n.initial_value().type(), DT_INT32);
  EXPECT_EQ(n.initial_value().shape().DebugString(), "[3]");
}

TEST(VariablesTest, StringVariablesNeedAnInitializer) {
  Scope root = Scope::NewRootScope();
  GetVariable(root, "s", TensorShape({}), DT_STRING);
  EXPECT_THAT(root.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "An initializer for variable s of type string is required"));
}

TEST(VariablesTest, BadShapesAndTypesAreErrors) {
  Scope root = Scope::NewRootScope();
  GetVariable(root, "v", TensorShape({-3, 2}));
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Variable v: Dimension 0"));
  Scope root2 = Scope::NewRootScope();
  GetVariable(root2, "r", TensorShape({}), DT_RESOURCE);
  EXPECT_THAT(root2.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "cannot have dtype resource"));
  Scope root3 = Scope::NewRootScope();
  GetVariable(root3, "i", TensorShape({2}), DT_INT32, initializers::TruncatedNormal());
  EXPECT_THAT(root3.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       "needs a floating-point dtype, got int32"));
  Scope root4 = Scope::NewRootScope();
  GetVariable(root4, "c", TensorShape({3}), DT_FLOAT, initializers::Constant({1.f, 2.f}));
  EXPECT_THAT(root4.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "2 values cannot have shape [3]"));
}

TEST(VariablesTest, ANonVariableNodeOfTheSameNameBlocksCreation) {
  Scope root = Scope::NewRootScope();
  ops::NoOp(root.WithOpName("v"));
  GetVariable(root, "v", TensorShape({1}));
  EXPECT_THAT(root.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Cannot create variable v: a node of that name"));
}

TEST(VariablesTest, GraphSeedMakesInitializersDeterministic) {
  const auto seeds_of = [](std::optional<int64_t> graph_seed) {
    Scope root = Scope::NewRootScope();
    if (graph_seed) root.graph()->set_seed(*graph_seed);
    GetVariable(root, "w", TensorShape({2, 2}), DT_FLOAT, initializers::RandomNormal());
    const Node* rnd = root.graph()->FindNode("w/Initializer/random_normal/RandomStandardNormal");
    int64_t seed = -1, seed2 = -1;
    EXPECT_TRUE(rnd->GetAttr("seed", &seed).ok());
    EXPECT_TRUE(rnd->GetAttr("seed2", &seed2).ok());
    return std::make_pair(seed, seed2);
  };
  EXPECT_EQ(seeds_of(std::nullopt), std::make_pair(int64_t{0}, int64_t{0}));
  const auto a = seeds_of(42), b = seeds_of(42);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.first, 42);
  EXPECT_NE(a.second, 0);
}

TEST(VariablesTest, ACreatorServesGetVariableRequests) {
  Scope root = Scope::NewRootScope();
  Variable w = GetVariable(root, "w", TensorShape({2}));
  std::vector<std::string> seen;
  {
    // Hands out "<name>/copy" instead, made without a creator, and makes
    // new variables local.
    ScopedVariableCreator creator(
        [&](const Scope& s, const VariableRequest& r, const VariableGetter& next) {
          seen.push_back(r.full_name);
          const Variable v = next(s, r);
          VariableRequest copy = r;
          copy.full_name = r.full_name + "/copy";
          copy.reuse = VariableReuse::kAutoReuse;
          copy.options.collections = {GraphKeys::kLocalVariables};
          return v.valid() ? GetVariableByFullName(s, copy.full_name, copy.reuse, copy.shape,
                                                   copy.dtype, initializers::Zeros(), copy.options)
                           : v;
        });
    Scope reuse = root.WithVariableScope("", VariableReuse::kReuse);
    EXPECT_EQ(GetVariable(reuse, "w", TensorShape({2})).name(), "w/copy");
    EXPECT_EQ(GetVariable(reuse, "w", TensorShape({2})).name(), "w/copy");
    EXPECT_EQ(GetVariableByFullName(root, "b", VariableReuse::kAutoReuse, TensorShape({})).name(),
              "b/copy");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"w", "w", "b"}));
  Scope reuse = root.WithVariableScope("", VariableReuse::kReuse);
  EXPECT_EQ(GetVariable(reuse, "w", TensorShape({2})).name(), "w");
  std::vector<std::string> local;
  for (const Variable& v : GetVariables(*root.graph(), GraphKeys::kLocalVariables)) {
    local.push_back(v.name());
  }
  EXPECT_EQ(local, (std::vector<std::string>{"w/copy", "b/copy"}));
  TW_EXPECT_OK(root.status());
}

TEST(CollectionsTest, TensorsAndOpsKeepTheirOrderAndKind) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT);
  Output b = ops::Placeholder(root.WithOpName("b"), DT_FLOAT);
  ops::NoOp update(root.WithOpName("update"));
  Graph* g = root.graph();
  AddToCollection(g, GraphKeys::kLosses, b);
  AddToCollection(g, GraphKeys::kLosses, a);
  AddToCollection(g, GraphKeys::kUpdateOps, update.operation);
  AddToCollection(g, GraphKeys::kUpdateOps, a);
  EXPECT_EQ(GetCollection(*g, GraphKeys::kLosses), (std::vector<Output>{b, a}));
  // Op entries are not tensors; every entry has an op.
  EXPECT_EQ(GetCollection(*g, GraphKeys::kUpdateOps), (std::vector<Output>{a}));
  EXPECT_EQ(GetCollectionOps(*g, GraphKeys::kUpdateOps),
            (std::vector<Operation>{update.operation, a.op()}));
  EXPECT_TRUE(GetCollection(*g, GraphKeys::kSummaries).empty());
  EXPECT_EQ(g->collections().Keys(),
            (std::vector<std::string>{GraphKeys::kLosses, GraphKeys::kUpdateOps}));
  // Removing a node drops its entries.
  g->RemoveNode(b.node());
  EXPECT_EQ(GetCollection(*g, GraphKeys::kLosses), (std::vector<Output>{a}));
}

TEST(RandomSeedTest, TensorFlowRules) {
  Graph g;
  EXPECT_EQ(GetSeeds(g, std::nullopt), std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(GetSeeds(g, 7), std::make_pair(kDefaultGraphSeed, int64_t{7}));
  g.set_seed(0);
  // (0, 0) would mean "nondeterministic": seed2 becomes 2^31 - 1.
  EXPECT_EQ(GetSeeds(g, 0), std::make_pair(int64_t{0}, (int64_t{1} << 31) - 1));
  g.set_seed((int64_t{1} << 31) + 4);
  EXPECT_EQ(GetSeeds(g, 1).first, 5);
}

}  // namespace
}  // namespace towerflow
