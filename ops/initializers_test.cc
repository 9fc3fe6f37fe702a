// Initializers: TensorFlow's fan computation and the constants its
// variance-scaling formulas produce.
#include "ops/initializers.h"

#include <cmath>

#include "core/tensor_proto_util.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

double ConstScalar(const Graph& g, const std::string& name) {
  const Node* n = g.FindNode(name);
  EXPECT_NE(n, nullptr) << name;
  if (n == nullptr) return NAN;
  return (*TensorProtoAsDoubles(n->FindAttr("value")->tensor()))[0];
}

TEST(InitializersTest, FansFollowTensorFlow) {
  double in, out;
  initializers::ComputeFans(TensorShape({}), &in, &out);
  EXPECT_EQ(in, 1);
  EXPECT_EQ(out, 1);
  initializers::ComputeFans(TensorShape({7}), &in, &out);
  EXPECT_EQ(in, 7);
  EXPECT_EQ(out, 7);
  initializers::ComputeFans(TensorShape({784, 10}), &in, &out);
  EXPECT_EQ(in, 784);
  EXPECT_EQ(out, 10);
  initializers::ComputeFans(TensorShape({5, 5, 3, 64}), &in, &out);
  EXPECT_EQ(in, 75);
  EXPECT_EQ(out, 1600);
}

TEST(InitializersTest, HeNormalStddevIsCorrectedForTruncation) {
  Scope root = Scope::NewRootScope();
  Output w = initializers::HeNormal()(root, TensorShape({5, 5, 3, 64}), DT_FLOAT);
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(w.shape().DebugString(), "[5,5,3,64]");
  // sqrt(2 / fan_in) / 0.8796..., fan_in = 75.
  EXPECT_NEAR(ConstScalar(*root.graph(), "variance_scaling/truncated_normal/stddev"),
              std::sqrt(2.0 / 75) / 0.87962566103423978, 1e-7);
}

TEST(InitializersTest, UniformRangesAndNormalParameters) {
  Scope root = Scope::NewRootScope();
  initializers::RandomUniform(-2, 6)(root, TensorShape({3}), DT_DOUBLE);
  initializers::RandomNormal(1.5, 0.25)(root, TensorShape({3}), DT_FLOAT);
  TW_ASSERT_OK(root.status());
  const Graph& g = *root.graph();
  EXPECT_EQ(ConstScalar(g, "random_uniform/min"), -2);
  EXPECT_EQ(ConstScalar(g, "random_uniform/range"), 8);
  EXPECT_EQ(g.FindNode("random_uniform")->output_type(0), DT_DOUBLE);
  EXPECT_EQ(ConstScalar(g, "random_normal/mean"), 1.5);
  EXPECT_EQ(ConstScalar(g, "random_normal/stddev"), 0.25);
}

TEST(InitializersTest, ConstantsFillOrMatch) {
  Scope root = Scope::NewRootScope();
  Output fill = initializers::Constant(0.1)(root, TensorShape({784, 10}), DT_FLOAT);
  Output exact = initializers::Constant({1, 2, 3, 4})(root, TensorShape({2, 2}), DT_INT64);
  Output ones = initializers::Ones()(root, TensorShape({3}), DT_INT32);
  TW_ASSERT_OK(root.status());
  const TensorProto& f = fill.node()->FindAttr("value")->tensor();
  EXPECT_EQ(f.float_val_size(), 1);  // compact, as tf.constant(0.1, shape=...) writes it
  EXPECT_FLOAT_EQ(f.float_val(0), 0.1f);
  EXPECT_EQ(fill.shape().DebugString(), "[784,10]");
  EXPECT_EQ(exact.type(), DT_INT64);
  EXPECT_EQ(exact.shape().DebugString(), "[2,2]");
  EXPECT_EQ(*TensorProtoAsInt64s(exact.node()->FindAttr("value")->tensor()),
            (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(*TensorProtoAsInt64s(ones.node()->FindAttr("value")->tensor()),
            (std::vector<int64_t>{1, 1, 1}));
}

TEST(InitializersTest, BadRequestsAreScopeErrors) {
  Scope root = Scope::NewRootScope();
  initializers::Constant(0.5)(root, TensorShape({2}), DT_INT32);
  EXPECT_THAT(root.status(), ::towerflow::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                            "not an exact int32"));
  Scope r2 = Scope::NewRootScope();
  initializers::VarianceScaling(-1)(r2, TensorShape({2}), DT_FLOAT);
  EXPECT_THAT(r2.status(),
              ::towerflow::testing::StatusIs(absl::StatusCode::kInvalidArgument, "positive scale"));
}

}  // namespace
}  // namespace towerflow
