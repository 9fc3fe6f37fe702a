// Resource and TF1 reference variables through Session::Run, and the real
// TF 1.8 Deep MNIST graph's variables.
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "testing/session_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::towerflow::testing::StatusIs;

constexpr char kResourceGraph[] = R"pb(
  node {
    name: 'v'
    op: 'VarHandleOp'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
    attr {
      key: 'shape'
      value { shape { dim { size: 2 } } }
    }
  }
  node {
    name: 'init_value'
    op: 'Const'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
    attr {
      key: 'value'
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape { dim { size: 2 } }
          float_val: 1
          float_val: 2
        }
      }
    }
  }
  node {
    name: 'init'
    op: 'AssignVariableOp'
    input: 'v'
    input: 'init_value'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
  }
  node {
    name: 'add'
    op: 'AssignAddVariableOp'
    input: 'v'
    input: 'init_value'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
  }
  node {
    name: 'sub'
    op: 'AssignSubVariableOp'
    input: 'v'
    input: 'init_value'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
  }
  node {
    name: 'read'
    op: 'ReadVariableOp'
    input: 'v'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
  }
  node { name: 'is_init' op: 'VarIsInitializedOp' input: 'v' }
  node { name: 'no_copy' op: 'DisableCopyOnRead' input: 'v' }
)pb";

TEST(ResourceVariableTest, ReadBeforeAssignIsFailedPreconditionNamingIt) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(kResourceGraph));
  std::vector<Tensor> out;
  EXPECT_THAT(s->Run({}, {"read"}, {}, &out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "Error while reading resource variable v from Container: localhost. This "
                       "could mean that the variable was uninitialized."));
  TW_ASSERT_OK(s->Run({}, {"is_init"}, {}, &out));
  EXPECT_FALSE(*out[0].data<bool>());
}

// TF 2's savers run DisableCopyOnRead first: a no-op on a variable that
// exists (Towerflow's have no copy-on-read mode), NotFound before.
TEST(ResourceVariableTest, DisableCopyOnReadNeedsTheVariable) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(kResourceGraph));
  EXPECT_THAT(s->Run({}, {}, {"no_copy"}, nullptr), StatusIs(absl::StatusCode::kNotFound));
  TW_ASSERT_OK(s->Run({}, {}, {"init"}, nullptr));
  TW_ASSERT_OK(s->Run({}, {}, {"no_copy"}, nullptr));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"read"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(1, 2));
}

TEST(ResourceVariableTest, AssignAddSubAndReadPersistAcrossRuns) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(kResourceGraph));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {}, {"init"}, nullptr));
  TW_ASSERT_OK(s->Run({}, {"read", "is_init"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(1, 2));
  EXPECT_TRUE(*out[1].data<bool>());
  const Tensor before = out[0];
  TW_ASSERT_OK(s->Run({}, {}, {"add"}, nullptr));
  TW_ASSERT_OK(s->Run({}, {}, {"add"}, nullptr));
  TW_ASSERT_OK(s->Run({}, {"read"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(3, 6));
  // A value read earlier is not changed by later updates (copy-on-write).
  EXPECT_THAT(before.span<float>(), ElementsAre(1, 2));
  TW_ASSERT_OK(s->Run({}, {}, {"sub"}, nullptr));
  TW_ASSERT_OK(s->Run({}, {"read"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(2, 4));
}

TEST(ResourceVariableTest, ConcurrentAssignAddsAreNotLost) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(kResourceGraph));
  TW_ASSERT_OK(s->Run({}, {}, {"init"}, nullptr));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) EXPECT_TRUE(s->Run({}, {}, {"add"}, nullptr).ok());
    });
  }
  for (auto& th : threads) th.join();
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {"read"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(401, 802));  // 1 + 400, 2 + 800
}

constexpr char kRefGraph[] = R"pb(
  node {
    name: 'w'
    op: 'VariableV2'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
    attr {
      key: 'shape'
      value { shape { dim { size: 2 } } }
    }
  }
  node {
    name: 'c'
    op: 'Const'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
    attr {
      key: 'value'
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape { dim { size: 2 } }
          float_val: 10
          float_val: 20
        }
      }
    }
  }
  node {
    name: 'p'
    op: 'Placeholder'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
    attr {
      key: 'shape'
      value { shape { unknown_rank: true } }
    }
  }
  node {
    name: 'w/Assign'
    op: 'Assign'
    input: 'w'
    input: 'c'
    attr {
      key: 'T'
      value { type: DT_FLOAT }
    }
  }
  node {
    name: 'w/AssignBad'
    op: 'Assign'
    input: 'w'
    input: 'p'
    attr {
      key: 'T'
      value { type: DT_FLOAT }
    }
  }
  node {
    name: 'w/AssignAdd'
    op: 'AssignAdd'
    input: 'w'
    input: 'c'
    attr {
      key: 'T'
      value { type: DT_FLOAT }
    }
  }
  node {
    name: 'w/AssignSub'
    op: 'AssignSub'
    input: 'w'
    input: 'c'
    attr {
      key: 'T'
      value { type: DT_FLOAT }
    }
  }
  node {
    name: 'w/read'
    op: 'Identity'
    input: 'w'
    attr {
      key: 'T'
      value { type: DT_FLOAT }
    }
  }
  node {
    name: 'w/IsInit'
    op: 'IsVariableInitialized'
    input: 'w'
    attr {
      key: 'dtype'
      value { type: DT_FLOAT }
    }
  }
)pb";

TEST(RefVariableTest, ReadingUninitializedValueIsFailedPrecondition) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(kRefGraph));
  std::vector<Tensor> out;
  EXPECT_THAT(
      s->Run({}, {"w/read"}, {}, &out),
      StatusIs(absl::StatusCode::kFailedPrecondition, "Attempting to use uninitialized value w"));
  TW_ASSERT_OK(s->Run({}, {"w/IsInit"}, {}, &out));
  EXPECT_FALSE(*out[0].data<bool>());
}

TEST(RefVariableTest, AssignAddSubThroughRefs) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(kRefGraph));
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({}, {}, {"w/Assign"}, nullptr));
  TW_ASSERT_OK(s->Run({}, {"w/AssignAdd", "w/read"}, {}, &out));
  TW_ASSERT_OK(s->Run({}, {"w/read", "w/IsInit"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(20, 40));
  EXPECT_TRUE(*out[1].data<bool>());
  TW_ASSERT_OK(s->Run({}, {}, {"w/AssignSub"}, nullptr));
  TW_ASSERT_OK(s->Run({}, {"w/read"}, {}, &out));
  EXPECT_THAT(out[0].span<float>(), ElementsAre(10, 20));
  EXPECT_THAT(s->Run({{"p", Tensor(DT_FLOAT, {3})}}, {}, {"w/AssignBad"}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Assign requires shapes of both tensors to match. lhs shape= [2] rhs "
                       "shape= [3]"));
}

TEST(RefVariableTest, TensorFlowDeepMnistBiasesInitialiseAndRead) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_deep_cnn_before.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef g, ReadGraphDef(path));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(g));
  std::vector<Tensor> out;
  EXPECT_THAT(s->Run({}, {"conv1/Variable_1/read"}, {}, &out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "Attempting to use uninitialized value conv1/Variable_1"));
  // The biases are Const-initialised (tf.constant(0.1, shape=...)): one
  // float_val repeated over the shape.
  TW_ASSERT_OK(s->Run({}, {},
                      {"conv1/Variable_1/Assign", "conv2/Variable_1/Assign",
                       "fc1/Variable_1/Assign", "fc2/Variable_1/Assign"},
                      nullptr));
  TW_ASSERT_OK(s->Run({},
                      {"conv1/Variable_1/read", "conv2/Variable_1/read", "fc1/Variable_1/read",
                       "fc2/Variable_1/read"},
                      {}, &out));
  const std::vector<int64_t> sizes = {32, 64, 1024, 10};
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(out[i].shape(), TensorShape({sizes[i]}));
    EXPECT_THAT(out[i].span<float>(), Each(FloatEq(0.1f)));
  }
}

}  // namespace
}  // namespace towerflow
