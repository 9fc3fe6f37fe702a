#include "runtime/update_order.h"

#include <string>
#include <vector>

#include "core/proto_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

GraphDef Parse(const std::string& text) {
  GraphDef def;
  const absl::Status s = ParseTextProto(text, &def);
  EXPECT_TRUE(s.ok()) << s;
  return def;
}

// The control inputs of node `name`.
std::vector<std::string> ControlInputs(const GraphDef& def, const std::string& name) {
  std::vector<std::string> out;
  for (const NodeDef& n : def.node()) {
    if (n.name() != name) continue;
    for (const std::string& in : n.input()) {
      if (!in.empty() && in[0] == '^') out.push_back(in);
    }
  }
  return out;
}

TEST(UpdateOrderTest, AResourceUpdateWaitsForWhatHoldsItsReads) {
  // m and n hold r's buffer (n through the Identity i); r2 reads after the
  // update, so its reader is left alone (an edge would close a cycle).
  GraphDef def = Parse(R"(
    node { name: 'v' op: 'VarHandleOp' }
    node { name: 'h' op: 'Identity' input: 'v' }
    node { name: 'r' op: 'ReadVariableOp' input: 'h' }
    node { name: 'x' op: 'Const' }
    node { name: 'm' op: 'MatMul' input: 'r' input: 'x' }
    node { name: 'i' op: 'Identity' input: 'r' }
    node { name: 'n' op: 'Neg' input: 'i' }
    node { name: 'g' op: 'Neg' input: 'm' }
    node { name: 'u' op: 'AssignAddVariableOp' input: 'v' input: 'g' }
    node { name: 'r2' op: 'ReadVariableOp' input: 'v' input: '^u' }
    node { name: 'm2' op: 'Neg' input: 'r2' }
    node { name: 'init' op: 'VarIsInitializedOp' input: 'v' }
  )");
  TW_ASSERT_OK(OrderUpdatesAfterReads(&def));
  EXPECT_THAT(ControlInputs(def, "u"), UnorderedElementsAre("^m", "^i", "^n"));
  EXPECT_THAT(ControlInputs(def, "r2"), ElementsAre("^u"));
  EXPECT_THAT(ControlInputs(def, "init"), IsEmpty());
}

TEST(UpdateOrderTest, AReferenceVariableUpdateWaitsForItsReaders) {
  GraphDef def = Parse(R"(
    node { name: 'w' op: 'VariableV2' }
    node { name: 'read' op: 'Identity' input: 'w' }
    node { name: 'x' op: 'Const' }
    node { name: 'mm' op: 'MatMul' input: 'read' input: 'x' }
    node { name: 'lr' op: 'Const' }
    node { name: 'grad' op: 'Neg' input: 'mm' }
    node { name: 'back' op: 'MatMul' input: 'grad' input: 'read' }
    node { name: 'update' op: 'ApplyGradientDescent' input: 'w' input: 'lr' input: 'grad' }
  )");
  TW_ASSERT_OK(OrderUpdatesAfterReads(&def));
  EXPECT_THAT(ControlInputs(def, "update"), UnorderedElementsAre("^read", "^mm", "^back"));
}

TEST(UpdateOrderTest, EachVariableOrdersOnlyItsOwnUpdates) {
  GraphDef def = Parse(R"(
    node { name: 'a' op: 'VarHandleOp' }
    node { name: 'b' op: 'VarHandleOp' }
    node { name: 'ra' op: 'ReadVariableOp' input: 'a' }
    node { name: 'rb' op: 'ReadVariableOp' input: 'b' }
    node { name: 'na' op: 'Neg' input: 'ra' }
    node { name: 'nb' op: 'Neg' input: 'rb' }
    node { name: 'ua' op: 'AssignVariableOp' input: 'a' input: 'nb' }
    node { name: 'ub' op: 'AssignVariableOp' input: 'b' input: 'na' }
  )");
  TW_ASSERT_OK(OrderUpdatesAfterReads(&def));
  EXPECT_THAT(ControlInputs(def, "ua"), ElementsAre("^na"));
  EXPECT_THAT(ControlInputs(def, "ub"), ElementsAre("^nb"));
}

TEST(UpdateOrderTest, APartitionWithControlFlowIsLeftAsItIs) {
  GraphDef def = Parse(R"(
    node { name: 'v' op: 'VarHandleOp' }
    node { name: 'r' op: 'ReadVariableOp' input: 'v' }
    node { name: 'p' op: 'Const' }
    node { name: 's' op: 'Switch' input: 'r' input: 'p' }
    node { name: 'n' op: 'Neg' input: 'r' }
    node { name: 'u' op: 'AssignVariableOp' input: 'v' input: 'p' }
  )");
  const std::string before = def.DebugString();
  TW_ASSERT_OK(OrderUpdatesAfterReads(&def));
  EXPECT_EQ(def.DebugString(), before);
}

TEST(UpdateOrderTest, AnInputFromOutsideThePartitionIsAnError) {
  GraphDef def = Parse(R"(
    node { name: 'v' op: 'VarHandleOp' }
    node { name: 'u' op: 'AssignVariableOp' input: 'v' input: 'elsewhere:0' }
  )");
  EXPECT_THAT(OrderUpdatesAfterReads(&def),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "node 'u' reads 'elsewhere:0', which is not in its partition"));
}

}  // namespace
}  // namespace towerflow
