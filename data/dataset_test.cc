#include "data/dataset.h"

#include <chrono>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/tensor_testing.h"
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
  EXPECT_THAT(Dataset::FromTensorSlices({}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "FromTensorSlices needs at least one component"));
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

// tf.data's documented example: Dataset.range(1, 6).interleave(lambda x:
// Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4).
TEST(DatasetTest, InterleaveCyclesAsTensorFlowDoes) {
  const InterleaveFn six = [](const Element& e) -> absl::StatusOr<Dataset> {
    Tensor x(DT_INT32, TensorShape({1}));
    x.data<int32_t>()[0] = e[0].data<int32_t>()[0] + 1;
    TW_ASSIGN_OR_RETURN(Dataset d, Dataset::FromTensorSlices({x}));
    return d.Repeat(6);
  };
  std::vector<int32_t> got;
  for (const auto& e : Drain(Range(5).Interleave(six, 2, 4))) got.push_back(e[0]);
  EXPECT_EQ(got, (std::vector<int32_t>{1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3,
                                       3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5}));
  // An element that opens an empty dataset, and bad lengths.
  const InterleaveFn none = [](const Element&) -> absl::StatusOr<Dataset> {
    return Range(3).Take(0);
  };
  EXPECT_TRUE(Drain(Range(3).Interleave(none, 2)).empty());
  EXPECT_THAT(Range(3).Interleave(six, 0).MakeIterator()->GetNext().status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "cycle_length"));
}

TEST(DatasetTest, ShardTakesEveryNthElementFromItsIndex) {
  EXPECT_EQ(Drain(Range(7).Shard(3, 0)), (std::vector<std::vector<int32_t>>{{0}, {3}, {6}}));
  EXPECT_EQ(Drain(Range(7).Shard(3, 2)), (std::vector<std::vector<int32_t>>{{2}, {5}}));
  EXPECT_EQ(Drain(Range(4).Shard(1, 0)).size(), 4u);
  // Sharded, then batched: each worker's batches hold its own elements.
  EXPECT_EQ(Drain(Range(8).Shard(2, 1).Batch(2)),
            (std::vector<std::vector<int32_t>>{{1, 3}, {5, 7}}));
  // More shards than elements: some workers get nothing.
  EXPECT_EQ(Drain(Range(2).Shard(3, 2)).size(), 0u);
  for (const auto& [n, i] : {std::pair{0, 0}, std::pair{2, 2}, std::pair{2, -1}}) {
    EXPECT_THAT(Range(4).Shard(n, i).MakeIterator()->GetNext().status(),
                testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                  "Shard needs num_shards > 0 and 0 <= index < num_shards"));
  }
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
  EXPECT_THAT(Range(2).Shuffle(0, 1).MakeIterator()->GetNext(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Shuffle buffer size must be greater than zero, got 0"));
}

TEST(DatasetTest, ConcatJoinsAlongTheFirstDimension) {
  TW_ASSERT_OK_AND_ASSIGN(Tensor joined, Concat({Literal<int32_t>({1, 2}, {1, 2}),
                                                 Literal<int32_t>({2, 2}, {3, 4, 5, 6})}));
  EXPECT_THAT(joined, TensorIs<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(Concat({Literal<int32_t>({1, 2}, {1, 2}), Literal<int32_t>({1, 3}, {1, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "cannot concatenate int32[1,2] and int32[1,3]"));
  EXPECT_THAT(Concat({Scalar<int32_t>(1)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "scalars"));
}

// Adds `k` to the element's first component (int32).
MapFn AddK(int32_t k) {
  return [k](Element e) -> absl::StatusOr<Element> {
    Tensor out(DT_INT32, e[0].shape());
    for (int64_t i = 0; i < out.NumElements(); ++i)
      out.data<int32_t>()[i] = e[0].data<int32_t>()[i] + k;
    return Element{out};
  };
}

TEST(DatasetTest, MapKeepsOrderWithParallelCalls) {
  const std::vector<std::vector<int32_t>> expected = Drain(Range(50).Map(AddK(100)));
  ASSERT_EQ(expected.size(), 50u);
  EXPECT_EQ(expected[0], std::vector<int32_t>{100});
  EXPECT_EQ(expected[49], std::vector<int32_t>{149});
  // Calls that finish out of order still come out in order.
  MapFn slow_evens = [](Element e) -> absl::StatusOr<Element> {
    if (e[0].data<int32_t>()[0] % 2 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return AddK(100)(std::move(e));
  };
  EXPECT_EQ(Drain(Range(50).Map(slow_evens, 4)), expected);
  EXPECT_EQ(Drain(Range(50).Map(AddK(100), 3).Batch(7)), Drain(Range(50).Map(AddK(100)).Batch(7)));
}

TEST(DatasetTest, MapErrorEndsThePass) {
  MapFn fail_at_3 = [](Element e) -> absl::StatusOr<Element> {
    if (e[0].data<int32_t>()[0] == 3) return absl::InvalidArgumentError("bad element 3");
    return e;
  };
  for (int parallel : {1, 4}) {
    std::unique_ptr<Iterator> it = Range(10).Map(fail_at_3, parallel).MakeIterator();
    for (int i = 0; i < 3; ++i) {
      TW_ASSERT_OK_AND_ASSIGN(std::optional<Element> e, it->GetNext());
      ASSERT_TRUE(e.has_value());
      EXPECT_EQ((*e)[0].data<int32_t>()[0], i);
    }
    EXPECT_THAT(it->GetNext(),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "bad element 3"));
    TW_ASSERT_OK_AND_ASSIGN(std::optional<Element> after, it->GetNext());
    EXPECT_FALSE(after.has_value()) << parallel;
  }
  EXPECT_THAT(Range(2).Map(AddK(1), 0).MakeIterator()->GetNext(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "num_parallel_calls"));
}

TEST(DatasetTest, RandomMapDependsOnSeedPassAndIndexOnly) {
  RandomMapFn noise = [](Element e, std::mt19937_64* rng) -> absl::StatusOr<Element> {
    return AddK(static_cast<int32_t>((*rng)() % 1000))(std::move(e));
  };
  const Dataset d = Range(40).RandomMap(noise, /*seed=*/5);
  const std::vector<std::vector<int32_t>> pass1 = Drain(d), pass2 = Drain(d);
  EXPECT_NE(pass1, pass2);  // each pass (epoch) draws afresh
  // The same seed gives the same passes, whatever the parallelism.
  const Dataset parallel = Range(40).RandomMap(noise, 5, 4);
  EXPECT_EQ(Drain(parallel), pass1);
  EXPECT_EQ(Drain(parallel), pass2);
  EXPECT_NE(Drain(Range(40).RandomMap(noise, 6)), pass1);
}

TEST(DatasetTest, PrefetchRunsAheadAndStopsCleanly) {
  const Dataset base = Range(30).Map(AddK(1));
  EXPECT_EQ(Drain(base.Prefetch(4)), Drain(base));
  EXPECT_EQ(Drain(base.Prefetch(1).Batch(4).Prefetch(2)), Drain(base.Batch(4)));
  // The producer fills the buffer without a consumer...
  absl::Mutex mu;
  int produced = 0;
  MapFn count = [&mu, &produced](Element e) -> absl::StatusOr<Element> {
    absl::MutexLock lock(&mu);
    ++produced;
    return e;
  };
  {
    std::unique_ptr<Iterator> it = Range(1000).Repeat().Map(count).Prefetch(5).MakeIterator();
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n >= 5; }, &produced));
    // ...and no further than the buffer and the element in hand.
    EXPECT_LE(produced, 6);
  }  // destroying the iterator of an endless input joins its thread
  // An input error arrives after the elements before it, then the pass ends.
  MapFn fail_at_2 = [](Element e) -> absl::StatusOr<Element> {
    if (e[0].data<int32_t>()[0] == 2) return absl::DataLossError("element 2");
    return e;
  };
  std::unique_ptr<Iterator> it = Range(5).Map(fail_at_2).Prefetch(3).MakeIterator();
  TW_ASSERT_OK(it->GetNext());
  TW_ASSERT_OK(it->GetNext());
  EXPECT_THAT(it->GetNext(), testing::StatusIs(absl::StatusCode::kDataLoss, "element 2"));
  TW_ASSERT_OK_AND_ASSIGN(std::optional<Element> after, it->GetNext());
  EXPECT_FALSE(after.has_value());
}

}  // namespace
}  // namespace data
}  // namespace towerflow
