#include "data/dataset.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace data {
namespace {

using ::testing::HasSubstr;

// Every element of one pass, component `c` of each as a flat int32 list.
std::vector<std::vector<int32_t>> Drain(const Dataset& d, size_t c = 0) {
  std::vector<std::vector<int32_t>> out;
  std::unique_ptr<Iterator> it = d.MakeIterator();
  for (int guard = 0; guard < 1000; ++guard) {
    absl::StatusOr<std::optional<Element>> e = it->GetNext();
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok() || !e->has_value()) break;
    const Tensor& t = (**e)[c];
    out.emplace_back(t.data<int32_t>(), t.data<int32_t>() + t.NumElements());
  }
  return out;
}

Dataset Range(int n) {
  Tensor t(DT_INT32, TensorShape({n}));
  for (int i = 0; i < n; ++i) t.data<int32_t>()[i] = i;
  absl::StatusOr<Dataset> d = Dataset::FromTensorSlices({t});
  EXPECT_TRUE(d.ok());
  return *d;
}

TEST(DatasetTest, FromTensorSlicesSlicesEveryComponent) {
  TW_ASSERT_OK_AND_ASSIGN(Dataset d,
                          Dataset::FromTensorSlices({Literal<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}),
                                                     Literal<float>({3}, {0.5f, 1.5f, 2.5f})}));
  std::unique_ptr<Iterator> it = d.MakeIterator();
  TW_ASSERT_OK_AND_ASSIGN(std::optional<Element> first, it->GetNext());
  ASSERT_TRUE(first.has_value());
  EXPECT_THAT((*first)[0], TensorIs<int32_t>({2}, {1, 2}));
  EXPECT_THAT((*first)[1], TensorIs<float>({}, {0.5f}));
  EXPECT_EQ(Drain(d), (std::vector<std::vector<int32_t>>{{1, 2}, {3, 4}, {5, 6}}));
  // Errors name what is wrong.
  EXPECT_THAT(
      Dataset::FromTensorSlices({Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({3}, {1, 2, 3})})
          .status()
          .message(),
      HasSubstr("component 1 has 3 rows but component 0 has 2"));
  EXPECT_THAT(Dataset::FromTensorSlices({Scalar<int32_t>(1)}).status().message(),
              HasSubstr("scalar"));
  EXPECT_FALSE(Dataset::FromTensorSlices({}).ok());
}

TEST(DatasetTest, BatchKeepsOrDropsTheRemainder) {
  EXPECT_EQ(Drain(Range(5).Batch(2)), (std::vector<std::vector<int32_t>>{{0, 1}, {2, 3}, {4}}));
  EXPECT_EQ(Drain(Range(5).Batch(2, /*drop_remainder=*/true)),
            (std::vector<std::vector<int32_t>>{{0, 1}, {2, 3}}));
  std::unique_ptr<Iterator> it = Range(5).Batch(2).MakeIterator();
  TW_ASSERT_OK_AND_ASSIGN(std::optional<Element> b, it->GetNext());
  EXPECT_EQ((*b)[0].shape(), TensorShape({2}));
  EXPECT_THAT(Range(2).Batch(0).MakeIterator()->GetNext().status().message(),
              HasSubstr("Batch size must be greater than zero"));
}

TEST(DatasetTest, StackChecksDtypeAndShape) {
  EXPECT_THAT(
      Stack({Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({3}, {1, 2, 3})}).status().message(),
      HasSubstr("cannot stack int32[2] and int32[3]"));
  EXPECT_THAT(
      Stack({Literal<int32_t>({2}, {1, 2}), Literal<float>({2}, {1, 2})}).status().message(),
      HasSubstr("cannot stack int32[2] and float[2]"));
  EXPECT_THAT(Stack({Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({2}, {3, 4})}).value(),
              TensorIs<int32_t>({2, 2}, {1, 2, 3, 4}));
}

TEST(DatasetTest, RepeatTakeAndEmptyInputs) {
  EXPECT_EQ(Drain(Range(2).Repeat(3)),
            (std::vector<std::vector<int32_t>>{{0}, {1}, {0}, {1}, {0}, {1}}));
  EXPECT_EQ(Drain(Range(3).Repeat().Take(7)),
            (std::vector<std::vector<int32_t>>{{0}, {1}, {2}, {0}, {1}, {2}, {0}}));
  EXPECT_EQ(Drain(Range(3).Take(0)).size(), 0u);
  EXPECT_EQ(Drain(Range(3).Take(-1)).size(), 3u);
  // Repeating nothing forever ends instead of spinning.
  EXPECT_EQ(Drain(Range(0).Repeat()).size(), 0u);
  // Each iterator is a fresh pass.
  const Dataset d = Range(3).Take(2);
  EXPECT_EQ(Drain(d), Drain(d));
}

TEST(DatasetTest, ShuffleIsAPermutationDeterministicPerSeed) {
  const Dataset d = Range(20).Shuffle(8, /*seed=*/7);
  const std::vector<std::vector<int32_t>> pass1 = Drain(d), pass2 = Drain(d);
  std::multiset<int32_t> seen;
  for (const auto& e : pass1) seen.insert(e[0]);
  std::multiset<int32_t> all;
  for (int i = 0; i < 20; ++i) all.insert(i);
  EXPECT_EQ(seen, all);
  EXPECT_NE(pass1, Drain(Range(20)));  // shuffled
  EXPECT_NE(pass1, pass2);             // each pass reshuffles
  // Same seed, same order.
  EXPECT_EQ(Drain(Range(20).Shuffle(8, 7)), pass1);
  // A buffer of one keeps the order.
  EXPECT_EQ(Drain(Range(5).Shuffle(1, 3)), Drain(Range(5)));
  EXPECT_FALSE(Range(2).Shuffle(0, 1).MakeIterator()->GetNext().ok());
}

}  // namespace
}  // namespace data
}  // namespace towerflow
