#include "runtime/client_session.h"

#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"
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

// A session that counts the nodes each Extend sends, over a real one.
class CountingSession : public Session {
 public:
  explicit CountingSession(std::vector<int>* extends) : extends_(extends) {
    session_ = *NewSession(SessionOptions());
  }
  absl::Status Create(const GraphDef& graph) override { return session_->Create(graph); }
  absl::Status Extend(const GraphDef& graph) override {
    extends_->push_back(graph.node_size());
    return session_->Extend(graph);
  }
  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_names,
                   std::vector<Tensor>* outputs) override {
    return session_->Run(inputs, output_names, target_names, outputs);
  }
  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_names, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override {
    return session_->Run(run_options, inputs, output_names, target_names, outputs, run_metadata);
  }
  std::vector<DeviceAttributes> ListDevices() const override { return session_->ListDevices(); }
  absl::Status Close() override { return session_->Close(); }

 private:
  std::vector<int>* extends_;
  std::unique_ptr<Session> session_;
};

TEST(ClientSessionTest, SendsEachNodeOnceAndOnlyWhenTheGraphGrew) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, {1.0f, 2.0f});
  auto b = ops::AddV2(root, a, a);
  std::vector<int> extends;  // the nodes each Extend sent
  ClientSession session(root, std::make_unique<CountingSession>(&extends));
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) TW_ASSERT_OK(session.Run({b}, &out));
  EXPECT_THAT(extends, ElementsAre(2));  // a steady loop of steps sends nothing more
  auto c = ops::Mul(root, b, b);
  TW_ASSERT_OK(session.Run({c}, &out));
  TW_ASSERT_OK(session.Run({c}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(4, 16));
  EXPECT_THAT(extends, ElementsAre(2, 1));
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
