// The cluster and its collectives. The same binary runs as one process
// (bazel test) and under `mpirun -np 2` and `-np 3` (cluster_mpirun_test.sh);
// every process checks the values it must end with.
#include "distribute/cluster.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace distribute {
namespace {

using ::towerflow::testing::StatusIs;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::atoi(v);
}

Cluster* GetCluster() {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *cluster : nullptr;
}

TEST(ClusterTest, RanksAndSizesAreTheLaunchersOrOneProcess) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->size(), EnvInt("OMPI_COMM_WORLD_SIZE", 1));
  EXPECT_EQ(c->rank(), EnvInt("OMPI_COMM_WORLD_RANK", 0));
  EXPECT_EQ(c->uses_mpi(), std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr);
  EXPECT_EQ(c->is_chief(), c->rank() == 0);
  // The processes on this machine (all of them here; one per simulated host
  // in tests/multihost_test.sh), as the launcher counts them.
  EXPECT_EQ(c->local_size(), EnvInt("OMPI_COMM_WORLD_LOCAL_SIZE", 1));
  EXPECT_EQ(c->local_rank(), EnvInt("OMPI_COMM_WORLD_LOCAL_RANK", 0));
  TW_ASSERT_OK_AND_ASSIGN(Cluster * again, Cluster::Get());
  EXPECT_EQ(again, c);
}

TEST(ClusterTest, AllReduceSumAddsEveryProcesssTensor) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int r = c->rank(), n = c->size();
  const int sum = n * (n + 1) / 2;  // of rank + 1 over the ranks
  Tensor f = Literal<float>({2, 2}, {1.f * (r + 1), 0.5f * (r + 1), -1.f * (r + 1), 0});
  TW_ASSERT_OK(c->AllReduceSum(&f));
  EXPECT_THAT(f, TensorIs<float>({2, 2}, {1.f * sum, 0.5f * sum, -1.f * sum, 0}));
  const double tiny = std::ldexp(1.0, -30);  // sums exactly
  Tensor d = Literal<double>({3}, {0.25 * (r + 1), tiny * (r + 1), 3.0});
  TW_ASSERT_OK(c->AllReduceSum(&d));
  EXPECT_THAT(d, TensorIs<double>({3}, {0.25 * sum, tiny * sum, 3.0 * n}));
  Tensor i32 = Literal<int32_t>({2}, {r, 7});
  TW_ASSERT_OK(c->AllReduceSum(&i32));
  EXPECT_THAT(i32, TensorIs<int32_t>({2}, {sum - n, 7 * n}));
  Tensor i64 = Literal<int64_t>({1}, {(int64_t{1} << 40) * (r + 1)});
  TW_ASSERT_OK(c->AllReduceSum(&i64));
  EXPECT_THAT(i64, TensorIs<int64_t>({1}, {(int64_t{1} << 40) * sum}));
  Tensor empty(DT_FLOAT, TensorShape({0, 3}));
  TW_EXPECT_OK(c->AllReduceSum(&empty));
}

// Note [All-reduce pieces]: on one machine a tensor over 512 KiB travels in
// pieces. Every element of several pieces and a ragged last one (float: 3
// pieces and 5 elements; double: 2 and 3) is summed once, and the whole is
// one collective.
TEST(ClusterTest, AllReduceSumOfATensorInPiecesSumsEveryElementOnce) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int r = c->rank(), n = c->size();
  constexpr int64_t kPiece = 512 << 10;
  Tensor f(DT_FLOAT, TensorShape({3 * kPiece / 4 + 5}));
  for (int64_t i = 0; i < f.NumElements(); ++i) {
    f.data<float>()[i] = static_cast<float>(i % 1000) + 1000.f * r;
  }
  Tensor d(DT_DOUBLE, TensorShape({2 * kPiece / 8 + 3}));
  for (int64_t i = 0; i < d.NumElements(); ++i) d.data<double>()[i] = i * (r + 1.0);
  const int64_t before = c->collectives();
  TW_ASSERT_OK(c->AllReduceSum(&f));
  TW_ASSERT_OK(c->AllReduceSum(&d));
  EXPECT_EQ(c->collectives() - before, c->uses_mpi() ? 2 : 0);
  // Sums of integers below 2^24 (float) and 2^53 (double): exact.
  const float ranks = 1000.f * (n * (n - 1) / 2);
  int64_t wrong = 0;
  for (int64_t i = 0; i < f.NumElements(); ++i) {
    wrong += f.data<float>()[i] != n * static_cast<float>(i % 1000) + ranks;
  }
  const double factor = n * (n + 1) / 2.0;
  for (int64_t i = 0; i < d.NumElements(); ++i) wrong += d.data<double>()[i] != i * factor;
  EXPECT_EQ(wrong, 0);
}

// A group of tensors of several dtypes, an empty one among them, is summed
// tensor by tensor after one agreement.
TEST(ClusterTest, AllReduceSumOfAGroupSumsEachTensorAfterOneAgreement) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int r = c->rank(), n = c->size();
  const int sum = n * (n + 1) / 2;  // of rank + 1 over the ranks
  Tensor f = Literal<float>({2}, {1.f * (r + 1), -2.f * (r + 1)});
  Tensor empty(DT_FLOAT, TensorShape({0}));
  Tensor i64 = Literal<int64_t>({1, 1}, {(int64_t{1} << 40) + r});
  Tensor d = Literal<double>({3}, {0.5, 0.25 * (r + 1), -1});
  Tensor* const group[] = {&f, &empty, &i64, &d};
  const int64_t collectives = c->collectives(), agreements = c->agreements();
  TW_ASSERT_OK(c->AllReduceSum(group));
  EXPECT_THAT(f, TensorIs<float>({2}, {1.f * sum, -2.f * sum}));
  EXPECT_EQ(empty.shape(), TensorShape({0}));
  EXPECT_THAT(i64, TensorIs<int64_t>({1, 1}, {(int64_t{1} << 40) * n + sum - n}));
  EXPECT_THAT(d, TensorIs<double>({3}, {0.5 * n, 0.25 * sum, -1.0 * n}));
  EXPECT_EQ(c->agreements() - agreements, c->uses_mpi() ? 1 : 0);
  EXPECT_EQ(c->collectives() - collectives, c->uses_mpi() ? 3 : 0);  // the empty one moves nothing
}

// The last process passes a group of another order (the same tensors), then
// one tensor fewer: every process refuses both before any data moves.
TEST(ClusterTest, ProcessesPassingDifferentGroupsAllGetTheSameError) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const bool last = c->rank() == c->size() - 1;
  Tensor a = Literal<float>({2}, {1, 2});
  Tensor b = Literal<int32_t>({2}, {3, 4});
  Tensor* const in_order[] = {&a, &b};
  Tensor* const swapped[] = {&b, &a};
  const absl::Status order =
      c->AllReduceSum(last ? absl::MakeSpan(swapped) : absl::MakeSpan(in_order));
  const absl::Status count =
      c->AllReduceSum(last ? absl::MakeSpan(in_order).subspan(0, 1) : absl::MakeSpan(in_order));
  if (c->size() == 1) {
    TW_EXPECT_OK(order);
    TW_EXPECT_OK(count);
    return;
  }
  EXPECT_THAT(order, StatusIs(absl::StatusCode::kInvalidArgument,
                              "AllReduceSum: the processes passed tensors of different dtypes or "
                              "shapes"));
  EXPECT_THAT(order.message(), ::testing::HasSubstr(last ? "passed 2 tensors: int32[2], float[2]"
                                                         : "passed 2 tensors: float[2], int32[2]"));
  EXPECT_THAT(count, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(count.message(), ::testing::HasSubstr("tensor counts range over [1, 2], element "
                                                    "counts range over [2, 4]"));
  // Nothing moved: every process still holds its own values.
  EXPECT_THAT(a, TensorIs<float>({2}, {1, 2}));
  EXPECT_THAT(b, TensorIs<int32_t>({2}, {3, 4}));
}

// Process r passes r + 1 rows of floats and r rows of int64 indices (none
// on rank 0), and an empty [0, 2]: the rows in rank order.
TEST(ClusterTest, AllGatherConcatenatesEveryProcesssRowsInRankOrder) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int r = c->rank(), n = c->size();
  Tensor values(DT_FLOAT, TensorShape({r + 1, 2}));
  for (int i = 0; i < 2 * (r + 1); ++i) values.data<float>()[i] = 10.f * r + i;
  Tensor indices(DT_INT64, TensorShape({r}));
  for (int i = 0; i < r; ++i) indices.data<int64_t>()[i] = 100 * r + i;
  const Tensor empty(DT_FLOAT, TensorShape({0, 2}));
  const int64_t agreements = c->agreements();
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, c->AllGather({values, indices, empty}));
  ASSERT_EQ(got.size(), 3u);
  std::vector<float> all_values;
  std::vector<int64_t> all_indices;
  for (int p = 0; p < n; ++p) {
    for (int i = 0; i < 2 * (p + 1); ++i) all_values.push_back(10.f * p + i);
    for (int i = 0; i < p; ++i) all_indices.push_back(100 * p + i);
  }
  EXPECT_THAT(got[0], TensorIs<float>({n * (n + 1) / 2, 2}, all_values));
  EXPECT_THAT(got[1], TensorIs<int64_t>({n * (n - 1) / 2}, all_indices));
  EXPECT_EQ(got[2].shape(), TensorShape({0, 2}));
  EXPECT_EQ(c->agreements() - agreements, c->uses_mpi() ? 1 : 0);
}

TEST(ClusterTest, AllGatherRefusesRowsOfDifferentShapesOnEveryProcess) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  // The last process's rows have 3 elements, the others' 2.
  const bool last = c->rank() == c->size() - 1;
  const Tensor t(DT_FLOAT, TensorShape({1, last ? 3 : 2}));
  const absl::StatusOr<std::vector<Tensor>> got = c->AllGather({t});
  if (c->size() == 1) {
    TW_EXPECT_OK(got.status());
  } else {
    EXPECT_THAT(got.status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "AllGather: the processes passed tensors of different dtypes or shapes "
                         "past the first dimension"));
    EXPECT_THAT(got.status().message(), ::testing::HasSubstr("elements per row range over [2, 3]"));
  }
  // Scalars have no rows, strings no plain elements: refused before any
  // message, on every process alike.
  EXPECT_THAT(c->AllGather({Literal<float>({}, {1})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "AllGather concatenates rows, so it takes tensors of rank >= 1; tensor 0 is "
                       "float[]"));
  EXPECT_THAT(c->AllGather({Tensor(DT_STRING, TensorShape({1}))}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "AllGather takes tensors of plain elements, got string"));
}

TEST(ClusterTest, BroadcastCopiesTheRootsTensor) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int root = c->size() - 1;
  const int r = c->rank();
  Tensor t = Literal<float>({3}, {10.f * r, 10.f * r + 1, 10.f * r + 2});
  TW_ASSERT_OK(c->Broadcast(&t, root));
  EXPECT_THAT(t, TensorIs<float>({3}, {10.f * root, 10.f * root + 1, 10.f * root + 2}));
  Tensor b = Literal<bool>({2}, {r == 0, r != 0});
  TW_ASSERT_OK(c->Broadcast(&b, 0));
  EXPECT_TRUE(b.data<bool>()[0]);
  EXPECT_FALSE(b.data<bool>()[1]);
  TW_EXPECT_OK(c->Barrier());
}

TEST(ClusterTest, ProcessesThatDisagreeAllGetTheSameError) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  // Rank 0 passes 3 elements, the others 4: every process learns it before
  // any data moves (with one process there is nothing to disagree with).
  Tensor t(DT_FLOAT, TensorShape({c->rank() == 0 ? 3 : 4}));
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = 1;
  const absl::Status status = c->AllReduceSum(&t);
  if (c->size() == 1) {
    TW_EXPECT_OK(status);
  } else {
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                                 "AllReduceSum: the processes passed tensors of different dtypes "
                                 "or shapes"));
    EXPECT_THAT(status.message(), ::testing::HasSubstr("element counts range over [3, 4]"));
  }
  // The cluster is still usable.
  Tensor one = Literal<int32_t>({1}, {1});
  TW_ASSERT_OK(c->AllReduceSum(&one));
  EXPECT_THAT(one, TensorIs<int32_t>({1}, {c->size()}));
}

TEST(ClusterTest, CheckSameValuesFindsAnyDifference) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  TW_EXPECT_OK(c->CheckSameValues("plan", {1, 7, -3}));
  // The last process has another second value; then another count.
  const bool last = c->rank() == c->size() - 1;
  const absl::Status values = c->CheckSameValues("plan", {1, last ? 8 : 7, -3});
  const absl::Status count = c->CheckSameValues(
      "plan", last ? std::vector<int64_t>{1, 7} : std::vector<int64_t>{1, 7, -3});
  if (c->size() == 1) {
    TW_EXPECT_OK(values);
    TW_EXPECT_OK(count);
  } else {
    EXPECT_THAT(values, StatusIs(absl::StatusCode::kInvalidArgument,
                                 "plan: the processes disagree on value 1"));
    EXPECT_THAT(values.message(), ::testing::HasSubstr("range over [7, 8]"));
    EXPECT_THAT(count,
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "plan: the processes passed tensors of different dtypes or shapes"));
  }
}

TEST(ClusterTest, BadArgumentsAreRefusedBeforeAnyMessage) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  Tensor b = Literal<bool>({1}, {true});
  EXPECT_THAT(c->AllReduceSum(&b),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "AllReduceSum takes float, double, int32 or int64 tensors, got bool"));
  Tensor f = Literal<float>({1}, {1});
  EXPECT_THAT(c->Broadcast(&f, c->size()),
              StatusIs(absl::StatusCode::kInvalidArgument, "Broadcast from rank"));
  EXPECT_THAT(c->Broadcast(&f, -1),
              StatusIs(absl::StatusCode::kInvalidArgument, "Broadcast from rank -1"));
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
