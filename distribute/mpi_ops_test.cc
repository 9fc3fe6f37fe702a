// MpiAllReduce in a graph: the sums over the processes, with tensor fusion
// and without, and how many collectives each makes. The same binary runs as
// one process (bazel test) and under mpirun -np 2 and 3
// (cluster_mpirun_test.sh); every process checks what it must end with.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distribute/cluster.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace distribute {
namespace {

using ::towerflow::testing::StatusIs;

Cluster* GetCluster() {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *cluster : nullptr;
}

// Seven tensors of three dtypes (one empty); process r contributes r + 1
// times each.
std::vector<Output> Inputs(const Scope& s, int rank) {
  const float f = static_cast<float>(rank + 1);
  return {
      ops::Const(s, {1 * f, 2 * f, 3 * f}),
      ops::Const(s, {{-1 * f, 0.5f * f}, {0.25f * f, 8 * f}}),
      ops::Const(s, {100 * f}),
      ops::Const(s, MakeTensorProto<float>({}, TensorShape({0}))),
      ops::Const(s, {f, f, f, f, f}),
      ops::Const(s, {0.5 * (rank + 1), -2.0 * (rank + 1)}),
      ops::Const(s, {int64_t{1} << 35}),
  };
}

TEST(MpiAllReduceTest, SumsEveryProcesssTensorsFusedOrNot) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int n = c->size();
  const float sum = static_cast<float>(n * (n + 1) / 2);  // of rank + 1
  for (const int64_t threshold : {int64_t{64} << 20, int64_t{16}, int64_t{0}}) {
    SCOPED_TRACE(threshold);
    Scope root = Scope::NewRootScope();
    ops::MpiAllReduce sums(root, Inputs(root, c->rank()),
                           ops::MpiAllReduce::FusionThresholdBytes(threshold));
    TW_ASSERT_OK(root.status());
    ClientSession session(root);
    std::vector<Tensor> got;
    const int64_t before = c->collectives(), agreements_before = c->agreements();
    TW_ASSERT_OK(session.Run(sums.sum, &got));
    const int64_t collectives = c->collectives() - before;
    // However many buffers, the run checks the processes' arguments once.
    EXPECT_EQ(c->agreements() - agreements_before, n == 1 ? 0 : 1);
    EXPECT_THAT(got[0], TensorIs<float>({3}, {sum, 2 * sum, 3 * sum}));
    EXPECT_THAT(got[1], TensorIs<float>({2, 2}, {-sum, 0.5f * sum, 0.25f * sum, 8 * sum}));
    EXPECT_THAT(got[2], TensorIs<float>({1}, {100 * sum}));
    EXPECT_EQ(got[3].shape(), TensorShape({0}));
    EXPECT_THAT(got[4], TensorIs<float>({5}, {sum, sum, sum, sum, sum}));
    EXPECT_THAT(got[5], TensorIs<double>({2}, {0.5 * sum, -2.0 * sum}));
    EXPECT_THAT(got[6], TensorIs<int64_t>({1}, {(int64_t{1} << 35) * n}));
    if (n == 1) {
      EXPECT_EQ(collectives, 0);  // one process sends nothing
    } else if (threshold == (int64_t{64} << 20)) {
      EXPECT_EQ(collectives, 3);  // one buffer per dtype
    } else if (threshold == 16) {
      // Floats: [3] (12 bytes); [2,2] (16); [1] and the empty one; [5]
      // alone (20 bytes > 16). Then the double and the int64.
      EXPECT_EQ(collectives, 6);
    } else {
      EXPECT_EQ(collectives, 6);  // one per non-empty tensor
    }
  }
}

// Note [Fusion buffer] (distribute/mpi_ops.cc): once a run has laid the
// buffer out, the producers of the next runs write their outputs straight
// into their slots, so a steady step copies nothing into the buffer; the
// sums stay right, and outputs kept from a run keep their values through the
// next runs (the buffer is reused only once nothing holds them).
TEST(MpiAllReduceTest, ProducersWriteStraightIntoTheFusionBuffer) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int n = c->size();
  Scope root = Scope::NewRootScope();
  Output scale = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({}));
  std::vector<Output> inputs;
  for (const Tensor& values : {Literal<float>({3}, {1, 2, 3}), Literal<float>({2, 2}, {5, 6, 7, 8}),
                               Literal<float>({1}, {-10})}) {
    inputs.push_back(ops::Mul(root, ops::Const(root, values.AsProto()), scale));
  }
  // Through a Reshape, its input's producer writes into the buffer.
  inputs.push_back(
      ops::Reshape(root, ops::Mul(root, ops::Const(root, {{4.0f, 5.0f}}), scale), {2}));
  // An empty tensor last in its buffer.
  inputs.push_back(
      ops::Mul(root, ops::Const(root, MakeTensorProto<float>({}, TensorShape({0}))), scale));
  const Output scale_double = ops::Cast(root, scale, DT_DOUBLE);
  inputs.push_back(ops::Mul(root, ops::Const(root, {1.5, 2.5}), scale_double));
  inputs.push_back(ops::Mul(root, ops::Const(root, {-1.0}), scale_double));
  ops::MpiAllReduce sums(root, inputs);
  TW_ASSERT_OK(root.status());
  ClientSession session(root);
  // The sums of every input for a scale of s.
  const auto check = [n](const std::vector<Tensor>& got, float s) {
    const float x = s * static_cast<float>(n);
    EXPECT_THAT(got[0], TensorIs<float>({3}, {x, 2 * x, 3 * x}));
    EXPECT_THAT(got[1], TensorIs<float>({2, 2}, {5 * x, 6 * x, 7 * x, 8 * x}));
    EXPECT_THAT(got[2], TensorIs<float>({1}, {-10 * x}));
    EXPECT_THAT(got[3], TensorIs<float>({2}, {4 * x, 5 * x}));
    EXPECT_EQ(got[4].shape(), TensorShape({0}));
    EXPECT_THAT(got[5], TensorIs<double>({2}, {1.5 * x, 2.5 * x}));
    EXPECT_THAT(got[6], TensorIs<double>({1}, {-x}));
  };
  std::vector<Tensor> first, later;
  for (int run = 1; run <= 4; ++run) {
    SCOPED_TRACE(run);
    const float s = static_cast<float>(run);
    const int64_t before = c->fusion_copy_bytes();
    later.clear();  // the run before lets go of its outputs, as a step's go
    TW_ASSERT_OK(
        session.Run({{scale, Literal<float>({}, {s})}}, sums.sum, run == 1 ? &first : &later));
    check(run == 1 ? first : later, s);
    // The first run lays the buffers out and copies (40 bytes of floats and
    // 24 of doubles); the second, whose outputs `first` still holds, gets new
    // buffers and copies again; from the third on the producers write in place.
    const int64_t copied = c->fusion_copy_bytes() - before;
    if (n == 1) {
      EXPECT_EQ(copied, 0);  // one process fuses nothing
    } else {
      EXPECT_EQ(copied, run <= 2 ? 64 : 0);
    }
  }
  // The first run's outputs, views of the buffer it reduced in, kept
  // their values through the runs after it.
  check(first, 1);
}

// What the fusion buffer must not do: sum in place a tensor someone else
// also reads. An input another node consumes too is copied; so is one its
// producer shares with another output (the CPU NcclAllReduce's members share
// one result), which only the count of the buffer's holders reveals; and an
// input whose slot moved because an earlier input grew is copied from where
// its producer wrote it.
TEST(MpiAllReduceTest, TheFusionBufferNeverSumsWhatOthersRead) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const float n = static_cast<float>(c->size());
  {
    SCOPED_TRACE("an input also fetched, and one shared by two all-reduce members");
    Scope root = Scope::NewRootScope().WithDevice("/cpu:0");
    Output scale = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({}));
    Output read_too = ops::Mul(root, ops::Const(root, {1.0f, 2.0f}), scale);
    Output member0 = ops::NcclAllReduce(root, ops::Mul(root, ops::Const(root, {3.0f}), scale),
                                        "sum", 2, "members");
    Output member1 = ops::NcclAllReduce(root.WithDevice("/cpu:1"), ops::Const(root, {4.0f}), "sum",
                                        2, "members");
    ops::MpiAllReduce sums(root, {read_too, member0});
    TW_ASSERT_OK(root.status());
    SessionOptions options;
    options.device_count["CPU"] = 2;
    ClientSession session(root, options);
    for (int run = 1; run <= 4; ++run) {
      SCOPED_TRACE(run);
      const float s = static_cast<float>(run);
      std::vector<Tensor> got;
      TW_ASSERT_OK(session.Run({{scale, Literal<float>({}, {s})}},
                               {sums.sum[0], sums.sum[1], read_too, member1}, &got));
      EXPECT_THAT(got[0], TensorIs<float>({2}, {s * n, 2 * s * n}));
      EXPECT_THAT(got[1], TensorIs<float>({1}, {(3 * s + 4) * n}));
      EXPECT_THAT(got[2], TensorIs<float>({2}, {s, 2 * s}));
      EXPECT_THAT(got[3], TensorIs<float>({1}, {3 * s + 4}));
    }
  }
  {
    SCOPED_TRACE("slots that move");
    // x and z fed, of 3 or 20 floats (a 16- or 32-float slot); y's slot
    // follows x's, so it moves when x grows, though y keeps its shape.
    Scope root = Scope::NewRootScope();
    Output scale = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({}));
    Output x = ops::Placeholder(root, DT_FLOAT), z = ops::Placeholder(root, DT_FLOAT);
    ops::MpiAllReduce sums(
        root, {ops::Mul(root, x, scale), ops::Mul(root, ops::Const(root, {7.0f, 8.0f}), scale),
               ops::Mul(root, z, scale)});
    TW_ASSERT_OK(root.status());
    ClientSession session(root);
    const auto values = [](int size, float start) {
      std::vector<float> v(size);
      for (int i = 0; i < size; ++i) v[i] = start + static_cast<float>(i);
      return v;
    };
    for (const auto& [x_size, z_size] :
         std::vector<std::pair<int, int>>{{3, 20}, {3, 20}, {20, 3}, {20, 3}, {3, 20}}) {
      SCOPED_TRACE(absl::StrCat("x ", x_size, ", z ", z_size));
      std::vector<Tensor> got;
      TW_ASSERT_OK(session.Run({{scale, Literal<float>({}, {2})},
                                {x, Literal<float>({x_size}, values(x_size, 1))},
                                {z, Literal<float>({z_size}, values(z_size, -5))}},
                               sums.sum, &got));
      const auto times = [&](std::vector<float> v) {
        for (float& e : v) e *= 2 * n;
        return v;
      };
      EXPECT_THAT(got[0], TensorIs<float>({x_size}, times(values(x_size, 1))));
      EXPECT_THAT(got[1], TensorIs<float>({2}, {14 * n, 16 * n}));
      EXPECT_THAT(got[2], TensorIs<float>({z_size}, times(values(z_size, -5))));
    }
  }
}

TEST(MpiAllReduceTest, AHundredSmallVariablesMakeOneCollective) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  Scope root = Scope::NewRootScope();
  std::vector<Output> grads;
  for (int i = 0; i < 100; ++i) {
    grads.push_back(ops::Const(root, {static_cast<float>(i), static_cast<float>(c->rank())}));
  }
  ops::MpiAllReduce sums(root, grads);
  TW_ASSERT_OK(root.status());
  ClientSession session(root);
  std::vector<Tensor> got;
  const int64_t before = c->collectives();
  TW_ASSERT_OK(session.Run(sums.sum, &got));
  EXPECT_EQ(c->collectives() - before, c->size() == 1 ? 0 : 1);
  const int n = c->size();
  const float ranks = static_cast<float>(n * (n - 1) / 2);
  for (int i = 0; i < 100; ++i) {
    EXPECT_THAT(got[i], TensorIs<float>({2}, {static_cast<float>(i * n), ranks}));
  }
}

TEST(MpiBroadcastTest, EveryProcessGetsTheRootsTensorsOfAnyDtype) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int root = c->size() - 1, r = c->rank();
  for (const int64_t threshold : {int64_t{64} << 20, int64_t{0}}) {
    SCOPED_TRACE(threshold);
    Scope root_scope = Scope::NewRootScope();
    const std::vector<Output> mine = {
        ops::Const(root_scope, {1.5f * r, -1.0f * r}),
        ops::Const(root_scope, {int64_t{10} * r}),
        ops::Const(root_scope, {r == root, r != root, true}),
        ops::Const(root_scope, {{0.25 * r}}),
    };
    ops::MpiBroadcast broadcast(root_scope, mine,
                                ops::MpiBroadcast::RootRank(root).FusionThresholdBytes(threshold));
    TW_ASSERT_OK(root_scope.status());
    ClientSession session(root_scope);
    std::vector<Tensor> got;
    const int64_t before = c->collectives();
    TW_ASSERT_OK(session.Run(broadcast.output, &got));
    EXPECT_THAT(got[0], TensorIs<float>({2}, {1.5f * root, -1.0f * root}));
    EXPECT_THAT(got[1], TensorIs<int64_t>({1}, {int64_t{10} * root}));
    EXPECT_TRUE(got[2].data<bool>()[0]);
    EXPECT_FALSE(got[2].data<bool>()[1]);
    EXPECT_THAT(got[3], TensorIs<double>({1, 1}, {0.25 * root}));
    // Fused: one buffer for all four dtypes; unfused: one per tensor.
    EXPECT_EQ(c->collectives() - before, c->size() == 1 ? 0 : (threshold == 0 ? 4 : 1));
  }
}

// A sparse gradient's rows crossing processes: process r has r + 1 rows
// of values and their int32 indices; the shape function leaves the rows
// unknown.
TEST(MpiAllGatherTest, EveryProcessGetsEveryProcesssRowsInRankOrder) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int r = c->rank(), n = c->size();
  std::vector<float> values;
  std::vector<int32_t> indices;
  for (int i = 0; i <= r; ++i) {
    values.insert(values.end(), {static_cast<float>(r), 0.5f * i});
    indices.push_back(10 * r + i);
  }
  Scope root = Scope::NewRootScope();
  ops::MpiAllGather gathered(
      root, {ops::Const(root, MakeTensorProto<float>(values, TensorShape({r + 1, 2}))),
             ops::Const(root, MakeTensorProto<int32_t>(indices, TensorShape({r + 1})))});
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(gathered.gathered[0].node()->output_shape(0).DebugString(), "[?,2]");
  ClientSession session(root);
  std::vector<Tensor> got;
  TW_ASSERT_OK(session.Run(gathered.gathered, &got));
  std::vector<float> all_values;
  std::vector<int32_t> all_indices;
  for (int p = 0; p < n; ++p) {
    for (int i = 0; i <= p; ++i) {
      all_values.insert(all_values.end(), {static_cast<float>(p), 0.5f * i});
      all_indices.push_back(10 * p + i);
    }
  }
  const int64_t rows = n * (n + 1) / 2;
  EXPECT_THAT(got[0], TensorIs<float>({rows, 2}, all_values));
  EXPECT_THAT(got[1], TensorIs<int32_t>({rows}, all_indices));
}

// loss = sum(w * gather(x)) with w the same on every process: each
// process's dx is its rows of the sum of every process's w, n * w (process
// r has r + 1 rows, so its rows start at r (r + 1) / 2).
TEST(MpiAllGatherTest, GradientIsThisProcesssRowsOfTheSummedGradient) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int r = c->rank(), n = c->size();
  const int rows = n * (n + 1) / 2;
  std::vector<double> w;
  for (int i = 0; i < 2 * rows; ++i) w.push_back(0.5 * i - 1);
  Scope root = Scope::NewRootScope();
  const Output x = ops::Const(root, MakeTensorProto<double>(std::vector<double>(2 * (r + 1), 1.0),
                                                            TensorShape({r + 1, 2})));
  const Output gathered = ops::MpiAllGather(root, {x}).gathered[0];
  const Output loss = ops::Sum(
      root, ops::Mul(root, gathered, ops::Const(root, Literal<double>({rows, 2}, w).AsProto())),
      {0, 1});
  std::vector<Output> dx;
  TW_ASSERT_OK(AddSymbolicGradients(root, {loss}, {x}, &dx));
  ClientSession session(root);
  std::vector<Tensor> got;
  TW_ASSERT_OK(session.Run({dx[0], ops::MpiRank(root)}, &got));
  const int first = r * (r + 1) / 2;
  std::vector<double> want;
  for (int i = 2 * first; i < 2 * (first + r + 1); ++i) want.push_back(n * w[i]);
  EXPECT_THAT(got[0], TensorIs<double>({r + 1, 2}, want));
  EXPECT_THAT(got[1], TensorIs<int32_t>({}, {r}));
}

// Note [Collective order] (runtime/step_graph.cc): three collectives that
// nothing orders each wait for the one made before them, the middle one on
// another device too, so every process issues them in one order.
TEST(MpiCollectivesTest, AStepIssuesItsCollectivesInOneOrder) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int r = c->rank(), n = c->size();
  for (const std::string middle_device : {"/cpu:0", "/cpu:1"}) {
    SCOPED_TRACE(middle_device);
    Scope root = Scope::NewRootScope().WithDevice("/cpu:0");
    const Output first =
        ops::MpiAllGather(root.WithOpName("first"), {ops::Const(root, {1.0f * r, 2.0f})})
            .gathered[0];
    const Output second = ops::MpiAllReduce(root.WithDevice(middle_device).WithOpName("second"),
                                            {ops::Const(root, {3.0f, 1.0f * r})})
                              .sum[0];
    const Output third =
        ops::MpiAllGather(root.WithOpName("third"), {ops::Const(root, {4.0f, 1.0f * r})})
            .gathered[0];
    TW_ASSERT_OK(root.status());
    SessionOptions options;
    options.device_count["CPU"] = 2;
    ClientSession session(root, options);
    RunOptions run_options;
    run_options.output_partition_graphs = true;
    RunMetadata metadata;
    std::vector<Tensor> got;
    TW_ASSERT_OK(session.Run(run_options, {}, {third, first, second}, {}, &got, &metadata));
    std::vector<float> firsts, thirds;
    for (int p = 0; p < n; ++p) {
      firsts.insert(firsts.end(), {1.0f * p, 2.0f});
      thirds.insert(thirds.end(), {4.0f, 1.0f * p});
    }
    EXPECT_THAT(got[0], TensorIs<float>({2 * n}, thirds));
    EXPECT_THAT(got[1], TensorIs<float>({2 * n}, firsts));
    EXPECT_THAT(got[2], TensorIs<float>({2}, {3.0f * n, n * (n - 1) / 2.0f}));
    std::map<std::string, std::vector<std::string>> controls;  // node -> its control inputs
    for (const GraphDef& g : metadata.partition_graphs) {
      for (const NodeDef& node : g.node()) {
        for (const std::string& in : node.input()) {
          if (absl::StartsWith(in, "^")) controls[node.name()].push_back(in);
        }
      }
    }
    EXPECT_THAT(controls["first"], ::testing::IsEmpty());
    if (middle_device == "/cpu:0") {
      EXPECT_THAT(controls["second"], ::testing::ElementsAre("^first"));
      EXPECT_THAT(controls["third"], ::testing::ElementsAre("^second"));
    } else {
      // Across devices the wait is a received dummy.
      EXPECT_THAT(controls["second"], ::testing::ElementsAre(::testing::StartsWith("^_recv_")));
      EXPECT_THAT(controls["third"], ::testing::ElementsAre(::testing::StartsWith("^_recv_")));
    }
  }
}

TEST(MpiAllReduceTest, RefusesNegativeThresholds) {
  Scope root = Scope::NewRootScope();
  ops::MpiAllReduce sums(root, {ops::Const(root, {1.0f})},
                         ops::MpiAllReduce::FusionThresholdBytes(-1));
  TW_ASSERT_OK(root.status());
  ClientSession session(root);
  std::vector<Tensor> got;
  EXPECT_THAT(session.Run(sums.sum, &got),
              StatusIs(absl::StatusCode::kInvalidArgument, "fusion_threshold_bytes must be >= 0"));
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
