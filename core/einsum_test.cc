// Einsum equations: parsing, implicit outputs, ellipsis expansion.
#include "core/einsum.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::StatusIs;

TEST(EinsumTest, ImplicitOutputIsTheEllipsisThenSingleLettersSorted) {
  TW_ASSERT_OK_AND_ASSIGN(EinsumEquation eq, ParseEinsum("ba,cb", 2));
  EXPECT_THAT(eq.output.labels, ElementsAre('a', 'c'));
  TW_ASSERT_OK_AND_ASSIGN(eq, ParseEinsum("...ij,...jk", 2));
  EXPECT_THAT(eq.output.labels, ElementsAre(kEllipsisLabel, 'i', 'k'));
}

TEST(EinsumTest, ResolvingExpandsAndBroadcastsEllipses) {
  TW_ASSERT_OK_AND_ASSIGN(EinsumEquation eq, ParseEinsum("...ij,j...->i...", 2));
  TW_ASSERT_OK_AND_ASSIGN(EinsumDims r, ResolveEinsum(eq, {{5, 1, 2, 3}, {3, 4}}));
  EXPECT_THAT(r.inputs[0], ElementsAre(kEllipsisLabel + 1, kEllipsisLabel, 'i', 'j'));
  EXPECT_THAT(r.inputs[1], ElementsAre('j', kEllipsisLabel));
  EXPECT_THAT(r.output, ElementsAre('i', kEllipsisLabel + 1, kEllipsisLabel));
  EXPECT_THAT(r.output_dims, ElementsAre(2, 5, 4));
  // Unknown sizes stay unknown unless another input knows them.
  TW_ASSERT_OK_AND_ASSIGN(r, ResolveEinsum(eq, {{-1, 2, 3}, {3, -1}}));
  EXPECT_THAT(r.output_dims, ElementsAre(2, -1));
}

TEST(EinsumTest, RepeatedLabelsAreDiagonals) {
  TW_ASSERT_OK_AND_ASSIGN(EinsumEquation eq, ParseEinsum("bii->bi", 1));
  TW_ASSERT_OK_AND_ASSIGN(EinsumDims r, ResolveEinsum(eq, {{4, 3, -1}}));
  EXPECT_THAT(r.inputs[0], ElementsAre('b', 'i', 'i'));
  EXPECT_THAT(r.output_dims, ElementsAre(4, 3));  // the known dim of 'i' wins
  TW_ASSERT_OK_AND_ASSIGN(eq, ParseEinsum("i->ii", 1));
  TW_ASSERT_OK_AND_ASSIGN(r, ResolveEinsum(eq, {{5}}));
  EXPECT_THAT(r.output_dims, ElementsAre(5, 5));
  TW_ASSERT_OK_AND_ASSIGN(eq, ParseEinsum("ii", 1));  // implicit: the trace
  EXPECT_TRUE(eq.output.labels.empty());
  TW_ASSERT_OK_AND_ASSIGN(eq, ParseEinsum("ij->ii", 1));
  EXPECT_TRUE(ResolveEinsum(eq, {{2, 3}}).ok());
  TW_ASSERT_OK_AND_ASSIGN(eq, ParseEinsum("ii->i", 1));
  EXPECT_THAT(ResolveEinsum(eq, {{2, 3}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "sizes 2 and 3; they must be equal"));
}

TEST(EinsumTest, LettersRenameLabels) {
  TW_ASSERT_OK_AND_ASSIGN(
      std::string e, EinsumLetters({{kEllipsisLabel, 'x'}, {'x', 'y'}}, {kEllipsisLabel, 'y'}));
  EXPECT_EQ(e, "ab,bc->ac");
}

TEST(EinsumTest, BadEquationsAreInvalidArgument) {
  EXPECT_THAT(ParseEinsum("ij,jk->ik", 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "2 input terms for 1 inputs"));
  EXPECT_THAT(ParseEinsum("i...j...->", 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "two ellipses"));
  EXPECT_THAT(ParseEinsum("a->b->c", 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "more than one '->'"));
  EXPECT_THAT(ParseEinsum("a,b,c", 3).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "1 or 2 inputs"));
  TW_ASSERT_OK_AND_ASSIGN(EinsumEquation eq, ParseEinsum("...ij->i", 1));
  EXPECT_THAT(ResolveEinsum(eq, {{3}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "has rank 1 but its term names 2"));
  TW_ASSERT_OK_AND_ASSIGN(eq, ParseEinsum("...i,...i->...", 2));
  EXPECT_THAT(ResolveEinsum(eq, {{2, 3}, {4, 3}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "sizes must match or be 1"));
}

}  // namespace
}  // namespace towerflow
