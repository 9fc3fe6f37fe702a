// The generated ops:: builders: every registered op has one (its family is
// generated), and builders with list outputs, optional attrs and required
// attrs work.
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/conv_ops.h"
#include "ops/gen/math_ops.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// The families BUILD generates builders for, passed as the test's args.
std::set<std::string>* GeneratedFamilies() {
  static auto* const kFamilies = new std::set<std::string>;
  return kFamilies;
}

TEST(OpBuildersTest, EveryPublicOpHasAGeneratedBuilder) {
  ASSERT_FALSE(GeneratedFamilies()->empty()) << "run through Bazel, which passes the families";
  for (const std::string& name : OpRegistry::Global()->ListOps()) {
    if (absl::StartsWith(name, "_")) continue;  // internal ops have no builder
    const std::string& family = OpRegistry::Global()->Find(name)->family;
    EXPECT_EQ(GeneratedFamilies()->count(family), 1u)
        << "op " << name << " is registered in " << family
        << ".cc, which is not in OP_FAMILIES in ops/BUILD";
  }
}

TEST(OpBuildersTest, ListOutputsOptionalAndRequiredAttrs) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({6, 4}));
  ops::Split split(root, 0, x, 3);
  ASSERT_EQ(split.output.size(), 3u);
  EXPECT_EQ(split[2].index(), 2);
  EXPECT_EQ(split[1].shape().DebugString(), "[2,4]");
  ops::ShapeN shapes(root, {x, split[0]}, ops::ShapeN::OutType(DT_INT64));
  EXPECT_EQ(shapes.output[1].type(), DT_INT64);
  ops::Unpack rows(root, x, 6, ops::Unpack::Axis(0));
  EXPECT_EQ(rows.output.size(), 6u);
  ops::IdentityN both(root, {x, ops::Cast(root, x, DT_INT32)});
  EXPECT_EQ(both.output[1].type(), DT_INT32);
  // Chained optional attrs.
  Output m = ops::MatMul(root, x, x, ops::MatMul::TransposeA(true).TransposeB(false));
  EXPECT_EQ(m.shape().DebugString(), "[4,4]");
  // Required attrs come after the inputs; ops with no outputs convert to Operation.
  Output c =
      ops::Conv2D(root, ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({1, 8, 8, 3})),
                  ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({3, 3, 3, 5})),
                  {1, 2, 2, 1}, "SAME", ops::Conv2D::DataFormat("NHWC"));
  EXPECT_EQ(c.shape().DebugString(), "[1,4,4,5]");
  Operation noop = ops::NoOp(root);
  EXPECT_TRUE(noop.valid());
  TW_EXPECT_OK(root.status());
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) towerflow::GeneratedFamilies()->insert(argv[i]);
  return RUN_ALL_TESTS();
}
