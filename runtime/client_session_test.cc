#include "runtime/client_session.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::StatusIs;

TEST(ClientSessionTest, FeedsLiteralsAndTensorsAndFetchesOutputs) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto y = ops::Mul(root, x, 2.0f);
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, {1, 2}}}, {y}, &out));  // ints converted to float
  EXPECT_THAT(out[0].span<float>(), ElementsAre(2, 4));
  Tensor t(DT_FLOAT, {1});
  t.flat<float>()(0) = 5;
  TW_ASSERT_OK(session.Run({{x, t}}, {y}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(10));
}

TEST(ClientSessionTest, GraphMayGrowBetweenRuns) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, {1.0f, 2.0f});
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({a}, &out));
  auto b = ops::AddV2(root, a, a);
  TW_ASSERT_OK(session.Run({b}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(2, 4));
}

TEST(ClientSessionTest, RunsTargetsAndResourceVariables) {
  Scope root = Scope::NewRootScope();
  auto v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({}));
  auto assign = ops::AssignVariableOp(root, v, 3.0f);
  auto read = ops::ReadVariableOp(root, v, DT_FLOAT);
  ClientSession session(root);
  std::vector<Tensor> out;
  EXPECT_THAT(session.Run({read}, &out),
              StatusIs(absl::StatusCode::kFailedPrecondition, "resource variable v"));
  TW_ASSERT_OK(session.Run({}, {}, {assign.operation}, nullptr));
  TW_ASSERT_OK(session.Run({read}, &out));
  EXPECT_EQ(*out[0].data<float>(), 3.0f);
}

TEST(ClientSessionTest, ScopeErrorsSurfaceAtRun) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, {1.0f, 2.0f});
  auto bad = ops::AddV2(root, a, ops::Const(root, {1.0f, 2.0f, 3.0f}));
  ClientSession session(root);
  std::vector<Tensor> out;
  EXPECT_THAT(session.Run({bad}, &out), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace towerflow
