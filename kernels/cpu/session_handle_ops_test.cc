// TF 1's tensor handles (session_handle_ops.cc) in a session, as TF 2.21's
// tf.compat.v1 gives them: "node;id;device" handles counting from 0, the
// kept tensor read back by a later run, deleted, and TF's messages.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/gen/math_ops.h"
#include "runtime/client_session.h"
#include "testing/status_matchers.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

TEST(SessionHandleTest, KeepsATensorBetweenRunsAsTensorFlow) {
  Scope root = Scope::NewRootScope();
  const Output a = ops::Const(root, {1.0f, 2.0f});
  const Output h = ops::GetSessionHandle(root.WithOpName("h"), ops::Mul(root, a, 3.0f));
  const Output p = ops::Placeholder(root, DT_STRING);
  const Output t = ops::GetSessionTensor(root, p, DT_FLOAT);
  const Operation d = ops::DeleteSessionTensor(root, p).operation;
  const Output v2 = ops::GetSessionHandleV2(root.WithOpName("h2"), a);
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({h}, &out));
  const std::string first = *out[0].data<std::string>();
  EXPECT_EQ(first, "h;0;/job:localhost/replica:0/task:0/device:CPU:0");
  TW_ASSERT_OK(session.Run({h}, &out));
  EXPECT_EQ(*out[0].data<std::string>(), "h;1;/job:localhost/replica:0/task:0/device:CPU:0");
  TW_ASSERT_OK(session.Run({{p, Literal<std::string>({}, {first})}}, {t}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({2}, {3, 6}));
  // V2's handle is a resource named by the same string.
  TW_ASSERT_OK(session.Run({v2}, &out));
  EXPECT_EQ(out[0].dtype(), DT_RESOURCE);
  EXPECT_EQ(out[0].data<ResourceHandle>()->name,
            "h2;2;/job:localhost/replica:0/task:0/device:CPU:0");

  TW_ASSERT_OK(session.Run({{p, Literal<std::string>({}, {first})}}, {}, {d}, &out));
  EXPECT_THAT(
      session.Run({{p, Literal<std::string>({}, {first})}}, {t}, &out),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "The tensor with handle 'h;0;/job:localhost/replica:0/task:0/device:CPU:0' is not "
               "in the session store."));
  EXPECT_THAT(session.Run({{p, Literal<std::string>({}, {"bogus"})}}, {}, {d}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Failed to delete a tensor with handle 'bogus' in the session store."));
}

}  // namespace
}  // namespace towerflow
