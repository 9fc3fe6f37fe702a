// The executor's control flow on graphs written as TensorFlow 1.x writes
// them (Enter, Merge, Switch, NextIteration, Exit, LoopCond by hand), run
// through a Session. Expected values are worked out by hand.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "testing/session_testing.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using ::towerflow::testing::StatusIs;

std::string IntConst(const std::string& name, int value, const std::string& control = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ",
                      control.empty() ? "" : absl::StrCat("input: '^", control, "' "),
                      "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
                      "tensor { dtype: DT_INT32 tensor_shape {} int_val: ",
                      value, " } } } }\n");
}

std::string Node(const std::string& name, const std::string& op,
                 std::initializer_list<std::string> inputs, const std::string& attrs) {
  std::string text = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  for (const std::string& in : inputs) absl::StrAppend(&text, " input: '", in, "'");
  return absl::StrCat(text, " ", attrs, " }\n");
}

const char kInt[] = "attr { key: 'T' value { type: DT_INT32 } }";

std::string Enter(const std::string& name, const std::string& input, const std::string& frame,
                  bool is_constant = false, int parallel_iterations = 10,
                  const std::string& type = "DT_INT32") {
  return Node(
      name, "Enter", {input},
      absl::StrCat(
          "attr { key: 'T' value { type: ", type, " } } attr { key: 'frame_name' value { s: '",
          frame, "' } } attr { key: 'is_constant' value { b: ", is_constant ? "true" : "false",
          " } } attr { key: 'parallel_iterations' value { i: ", parallel_iterations, " } }"));
}

std::string Merge(const std::string& name, const std::string& a, const std::string& b) {
  return Node(name, "Merge", {a, b}, absl::StrCat(kInt, " attr { key: 'N' value { i: 2 } }"));
}

// A TF 1.x while loop over (i, sum): while i < limit: sum += step(i); i += 1,
// in frame `frame`, with `i0`, `sum0` and `limit` from outside. `step` names
// the body's value added to sum, given "<p>/Identity" (i) — or "" for i.
std::string SumLoop(const std::string& p, const std::string& i0, const std::string& sum0,
                    const std::string& limit, int parallel_iterations,
                    const std::string& extra_body = "", const std::string& step = "") {
  const std::string frame = p + "/while_context";
  return absl::StrCat(Enter(p + "/Enter", i0, frame, false, parallel_iterations),
                      Enter(p + "/Enter_1", sum0, frame, false, parallel_iterations),
                      Enter(p + "/limit", limit, frame, true, parallel_iterations),
                      Merge(p + "/Merge", p + "/Enter", p + "/NextIteration"),
                      Merge(p + "/Merge_1", p + "/Enter_1", p + "/NextIteration_1"),
                      Node(p + "/Less", "Less", {p + "/Merge", p + "/limit"}, kInt),
                      Node(p + "/LoopCond", "LoopCond", {p + "/Less"}, ""),
                      Node(p + "/Switch", "Switch", {p + "/Merge", p + "/LoopCond"}, kInt),
                      Node(p + "/Switch_1", "Switch", {p + "/Merge_1", p + "/LoopCond"}, kInt),
                      Node(p + "/Identity", "Identity", {p + "/Switch:1"}, kInt),
                      Node(p + "/Identity_1", "Identity", {p + "/Switch_1:1"}, kInt),
                      IntConst(p + "/one", 1, p + "/Identity"),
                      Node(p + "/next_i", "AddV2", {p + "/Identity", p + "/one"}, kInt), extra_body,
                      Node(p + "/next_sum", "AddV2",
                           {p + "/Identity_1", step.empty() ? p + "/Identity" : step}, kInt),
                      Node(p + "/NextIteration", "NextIteration", {p + "/next_i"}, kInt),
                      Node(p + "/NextIteration_1", "NextIteration", {p + "/next_sum"}, kInt),
                      Node(p + "/Exit", "Exit", {p + "/Switch"}, kInt),
                      Node(p + "/Exit_1", "Exit", {p + "/Switch_1"}, kInt));
}

std::string SumTo(int limit, int parallel_iterations) {
  return absl::StrCat(IntConst("i0", 1), IntConst("sum0", 0), IntConst("limit", limit),
                      SumLoop("while", "i0", "sum0", "limit", parallel_iterations));
}

absl::StatusOr<std::vector<Tensor>> RunGraph(
    const std::string& graph, const std::vector<std::string>& fetches,
    const std::vector<std::pair<std::string, Tensor>>& feeds = {}) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, MakeSession(graph));
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(session->Run(feeds, fetches, {}, &out));
  return out;
}

TEST(ControlFlowTest, WhileLoopSumsOneToTen) {
  // i from 1 while i < 11: sum = 1 + 2 + ... + 10 = 55; i ends at 11.
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          RunGraph(SumTo(11, 10), {"while/Exit_1", "while/Exit"}));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 55);
  EXPECT_EQ(out[1].scalar<int32_t>()(), 11);
}

TEST(ControlFlowTest, ParallelIterationsDoNotChangeTheResult) {
  for (int parallel : {1, 2, 10, 32}) {
    TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                            RunGraph(SumTo(101, parallel), {"while/Exit_1"}));
    EXPECT_EQ(out[0].scalar<int32_t>()(), 5050) << "parallel_iterations " << parallel;
  }
}

TEST(ControlFlowTest, LoopThatNeverIteratesReturnsItsInputs) {
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          RunGraph(SumTo(0, 10), {"while/Exit_1", "while/Exit"}));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 0);
  EXPECT_EQ(out[1].scalar<int32_t>()(), 1);
}

TEST(ControlFlowTest, ManyStepsReuseIterationsWithoutGrowth) {
  // 10,000 iterations through a ring of 11 iteration states.
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunGraph(SumTo(10001, 10), {"while/Exit"}));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 10001);
}

TEST(ControlFlowTest, LoopReadsAResourceVariableThroughALoopInvariantEnter) {
  // As TF's while_loop_var_handle_op graph: the handle enters the loop as a
  // constant and is read in each iteration: sum of v (= 3) over i = 1..10.
  const std::string graph = absl::StrCat(
      IntConst("i0", 1), IntConst("sum0", 0), IntConst("limit", 11), IntConst("three", 3),
      Node("v", "VarHandleOp", {},
           "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'shape' value { shape "
           "{} } } attr { key: 'shared_name' value { s: 'v' } }"),
      Node("init", "AssignVariableOp", {"v", "three"},
           "attr { key: 'dtype' value { type: DT_INT32 } }"),
      Node("while/v", "Enter", {"v"},
           "attr { key: 'T' value { type: DT_RESOURCE } } attr { key: 'frame_name' value { s: "
           "'while/while_context' } } attr { key: 'is_constant' value { b: true } }"),
      SumLoop("while", "i0", "sum0", "limit", 10,
              Node("while/read", "ReadVariableOp", {"while/v", "^while/Identity"},
                   "attr { key: 'dtype' value { type: DT_INT32 } }"),
              "while/read"));
  // The read inside the loop knows the variable's shape through the Enter.
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(graph, &def));
  Graph imported;
  TW_ASSERT_OK(ImportGraphDef(def, &imported));
  EXPECT_EQ(imported.FindNode("while/read")->output_shape(0).DebugString(), "[]");
  EXPECT_EQ(imported.FindNode("while/next_sum")->output_shape(0).DebugString(), "[]");
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(graph));
  TW_ASSERT_OK(session->Run({}, {}, {"init"}, nullptr));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, {"while/Exit_1"}, {}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 30);
}

TEST(ControlFlowTest, NestedLoops) {
  // For i = 1..4: inner loop sums j = 1..i into s_i; outer sum adds s_i:
  // 1 + 3 + 6 + 10 = 20.
  const std::string inner = absl::StrCat(
      IntConst("outer/zero", 0, "outer/Identity"), IntConst("outer/j0", 1, "outer/Identity"),
      Node("outer/inner_limit", "AddV2", {"outer/Identity", "outer/one"}, kInt),
      SumLoop("outer/inner", "outer/j0", "outer/zero", "outer/inner_limit", 10));
  const std::string graph =
      absl::StrCat(IntConst("i0", 1), IntConst("sum0", 0), IntConst("limit", 5),
                   SumLoop("outer", "i0", "sum0", "limit", 10, inner, "outer/inner/Exit_1"));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunGraph(graph, {"outer/Exit_1"}));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 20);
}

// Switch on a fed predicate, an Add on each side, Merge.
std::string CondGraph() {
  return absl::StrCat(
      Node("pred", "Placeholder", {},
           "attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'shape' value { shape {} "
           "} }"),
      IntConst("x", 5), Node("sw", "Switch", {"x", "pred"}, kInt), IntConst("ten", 10),
      IntConst("hundred", 100), Node("if_false", "AddV2", {"sw:0", "ten"}, kInt),
      Node("if_true", "AddV2", {"sw:1", "hundred"}, kInt), Merge("merge", "if_false", "if_true"));
}

TEST(ControlFlowTest, SwitchAndMergeTakeTheFedBranch) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(CondGraph()));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(true)}}, {"merge:0", "merge:1"}, {}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 105);
  EXPECT_EQ(out[1].scalar<int32_t>()(), 1);
  TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(false)}}, {"merge:0", "merge:1"}, {}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 15);
  EXPECT_EQ(out[1].scalar<int32_t>()(), 0);
}

TEST(ControlFlowTest, FetchingADeadTensorIsAClearError) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(CondGraph()));
  std::vector<Tensor> out;
  EXPECT_THAT(session->Run({{"pred", Scalar<bool>(false)}}, {"if_true"}, {}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument, "'if_true:0' is dead"));
  // The live side of the same step is fine.
  TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(false)}}, {"if_false"}, {}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 15);
}

TEST(ControlFlowTest, DeadnessCrossesDevices) {
  // The untaken side is computed on another device: its dead value crosses
  // through _Send/_Recv and the Merge still takes the live one.
  std::string graph = CondGraph();
  graph = absl::StrReplaceAll(
      graph, {{"name: 'if_true' op: 'AddV2'", "name: 'if_true' op: 'AddV2' device: '/cpu:1'"}});
  SessionOptions options;
  options.device_count["CPU"] = 2;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(graph, options));
  std::vector<Tensor> out;
  for (bool pred : {false, true}) {
    TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(pred)}}, {"merge"}, {}, &out));
    EXPECT_EQ(out[0].scalar<int32_t>()(), pred ? 105 : 15);
  }
}

TEST(ControlFlowTest, ControlTriggerRunsAfterEitherBranch) {
  const std::string graph =
      absl::StrCat(CondGraph(), Node("trigger", "ControlTrigger", {"^if_false", "^if_true"}, ""),
                   IntConst("after", 7, "trigger"));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          RunGraph(graph, {"after"}, {{"pred", Scalar<bool>(true)}}));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 7);
}

TEST(ControlFlowTest, LoopInAnUntakenBranchIsDead) {
  // The loop's inputs come from the false side of a Switch; with pred true
  // its Exits are dead and the Merge after takes the true side.
  const std::string graph = absl::StrCat(
      Node("pred", "Placeholder", {},
           "attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'shape' value { shape {} "
           "} }"),
      IntConst("i0", 1), IntConst("sum0", 0), IntConst("limit", 11),
      Node("sw_i", "Switch", {"i0", "pred"}, kInt),
      Node("sw_sum", "Switch", {"sum0", "pred"}, kInt),
      SumLoop("while", "sw_i:0", "sw_sum:0", "limit", 10),
      Node("pivot_t", "Identity", {"sw_i:1"}, kInt), IntConst("other", -1, "pivot_t"),
      Merge("result", "while/Exit_1", "other"));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(graph));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(false)}}, {"result"}, {}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 55);
  TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(true)}}, {"result"}, {}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), -1);
}

TEST(ControlFlowTest, MalformedLoopsAreRefused) {
  // A tensor used inside the loop without an Enter.
  std::string graph = absl::StrCat(SumTo(11, 10), IntConst("outside", 2),
                                   Node("bad", "AddV2", {"while/Identity", "outside"}, kInt));
  EXPECT_THAT(RunGraph(graph, {"bad"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "has inputs from different frames"));
  // Fetching a tensor of an iteration.
  EXPECT_THAT(RunGraph(SumTo(11, 10), {"while/next_sum"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "inside while loop"));
  // A Merge fed only by a NextIteration.
  graph =
      absl::StrCat(IntConst("c", 1), Merge("m", "n", "n"), Node("n", "NextIteration", {"m"}, kInt));
  EXPECT_THAT(MakeSession(graph).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "has only NextIteration inputs"));
  // parallel_iterations out of range.
  graph = absl::StrReplaceAll(SumTo(11, 10), {{"i: 10 }", "i: 0 }"}});
  EXPECT_THAT(RunGraph(graph, {"while/Exit"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "parallel_iterations"));
  // Exit outside any loop.
  graph = absl::StrCat(IntConst("c", 1), Node("e", "Exit", {"c"}, kInt));
  EXPECT_THAT(RunGraph(graph, {"e"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not inside a while loop"));
}

TEST(ControlFlowTest, ImportedLoopShapesAreRelaxedAcrossIterations) {
  // A loop variable that grows each iteration: [1] on entry, [2] after one
  // iteration; the Merge's inferred shape must be [?], not [1].
  const std::string graph = absl::StrCat(
      IntConst("limit", 3), IntConst("i0", 0),
      "node { name: 'x0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { "
      "key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: "
      "7 } } } }\n",
      Enter("w/Enter", "i0", "w/ctx"), Enter("w/Enter_1", "x0", "w/ctx"),
      Enter("w/limit", "limit", "w/ctx", true), Merge("w/Merge", "w/Enter", "w/NextIteration"),
      Merge("w/Merge_1", "w/Enter_1", "w/NextIteration_1"),
      Node("w/Less", "Less", {"w/Merge", "w/limit"}, kInt),
      Node("w/LoopCond", "LoopCond", {"w/Less"}, ""),
      Node("w/Switch", "Switch", {"w/Merge", "w/LoopCond"}, kInt),
      Node("w/Switch_1", "Switch", {"w/Merge_1", "w/LoopCond"}, kInt),
      Node("w/Identity", "Identity", {"w/Switch:1"}, kInt),
      Node("w/Identity_1", "Identity", {"w/Switch_1:1"}, kInt), IntConst("w/one", 1, "w/Identity"),
      IntConst("w/axis", 0, "w/Identity"), Node("w/next_i", "AddV2", {"w/Identity", "w/one"}, kInt),
      Node("w/next_x", "ConcatV2", {"w/Identity_1", "w/Identity_1", "w/axis"},
           absl::StrCat(kInt,
                        " attr { key: 'N' value { i: 2 } } attr { key: 'Tidx' value { "
                        "type: DT_INT32 } }")),
      Node("w/NextIteration", "NextIteration", {"w/next_i"}, kInt),
      Node("w/NextIteration_1", "NextIteration", {"w/next_x"}, kInt),
      Node("w/Exit", "Exit", {"w/Switch"}, kInt), Node("w/Exit_1", "Exit", {"w/Switch_1"}, kInt));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunGraph(graph, {"w/Exit_1"}));
  EXPECT_EQ(out[0].NumElements(), 8);  // doubled three times
  EXPECT_EQ(out[0].flat<int32_t>()(7), 7);
}

}  // namespace
}  // namespace towerflow
