// The TensorList ops through a session, with TensorFlow's values and
// messages (TF 2.21, tf.raw_ops), and the value semantics of lists: a list
// that two consumers share is never changed under either of them.
#include <string>
#include <vector>

#include "core/status_macros.h"
#include "framework/memory_limits.h"
#include "framework/tensor_list.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/control_flow.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/list_ops.h"
#include "ops/gen/math_ops.h"
#include "runtime/client_session.h"
#include "testing/gradient_checker.h"
#include "testing/status_matchers.h"
#include "testing/tensor_testing.h"

namespace towerflow {
namespace {

using ::towerflow::testing::IsOk;
using ::towerflow::testing::StatusIs;

MATCHER_P(IsOkAndHolds, inner,
          "is OK and holds a value that " + ::testing::DescribeMatcher<Tensor>(inner)) {
  if (!arg.ok()) {
    *result_listener << "whose status is " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(inner, *arg, result_listener);
}

class ListOpsTest : public ::testing::Test {
 protected:
  absl::StatusOr<Tensor> Fetch(const Output& out) {
    ClientSession session(root_);
    std::vector<Tensor> got;
    TW_RETURN_IF_ERROR(session.Run({out}, &got));
    return got[0];
  }
  // The rows [[1,2],[3,4],[5,6]] as a list of [2] elements.
  Output Rows() {
    return ops::TensorListFromTensor(root_, ops::Const(root_, {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}),
                                     ops::Const(root_, {2}));
  }
  Output Stack(const Output& list, Input shape = {2}) {
    return ops::TensorListStack(root_, list, shape, DT_FLOAT);
  }
  Output Reserve(Input shape, int n) { return ops::TensorListReserve(root_, shape, n, DT_FLOAT); }

  Scope root_ = Scope::NewRootScope();
};

Tensor Floats(const TensorShape& shape, std::initializer_list<float> v) {
  return Literal<float>(shape, v);
}

TEST_F(ListOpsTest, FromTensorReadsAsTensorFlowDoes) {
  const Output l = Rows();
  EXPECT_THAT(Fetch(ops::TensorListLength(root_, l)), IsOkAndHolds(TensorEq(Scalar<int32_t>(3))));
  EXPECT_THAT(Fetch(ops::TensorListElementShape(root_, l, DT_INT32)),
              IsOkAndHolds(TensorEq(Literal<int32_t>({1}, {2}))));
  EXPECT_THAT(Fetch(ops::TensorListGetItem(root_, l, 1, {2}, DT_FLOAT)),
              IsOkAndHolds(TensorEq(Floats({2}, {3, 4}))));
  EXPECT_THAT(Fetch(Stack(l)), IsOkAndHolds(TensorEq(Floats({3, 2}, {1, 2, 3, 4, 5, 6}))));
  EXPECT_THAT(Fetch(ops::TensorListGather(root_, l, {2, 0}, {2}, DT_FLOAT)),
              IsOkAndHolds(TensorEq(Floats({2, 2}, {5, 6, 1, 2}))));
  EXPECT_THAT(Fetch(ops::TensorListResize(root_, l, 2)).status(), IsOk());
  EXPECT_THAT(Fetch(Stack(ops::TensorListResize(root_, l, 2))),
              IsOkAndHolds(TensorEq(Floats({2, 2}, {1, 2, 3, 4}))));
}

TEST_F(ListOpsTest, ReservedElementsReadAsZerosOfAKnownShape) {
  const Output r = Reserve({-1}, 3);
  EXPECT_THAT(Fetch(ops::TensorListGetItem(root_, r, 0, {3}, DT_FLOAT)),
              IsOkAndHolds(TensorEq(Floats({3}, {0, 0, 0}))));
  EXPECT_THAT(Fetch(ops::TensorListGetItem(root_, r, 0, -1, DT_FLOAT)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Trying to read an uninitialized tensor but element_shape is not fully "
                       "defined: [?] and no list element is set."));
  EXPECT_THAT(Fetch(Stack(r, -1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Tried to stack list which only contains uninitialized tensors and has a "
                       "non-fully-defined element_shape: [?]"));
  // One set element gives the others' shape.
  const Output r2 = ops::TensorListSetItem(root_, r, 1, ops::Const(root_, {7.f, 8.f}));
  EXPECT_THAT(Fetch(Stack(r2, -1)), IsOkAndHolds(TensorEq(Floats({3, 2}, {0, 0, 7, 8, 0, 0}))));
  EXPECT_THAT(Fetch(ops::TensorListGetItem(root_, r2, 0, -1, DT_FLOAT)),
              IsOkAndHolds(TensorEq(Floats({2}, {0, 0}))));
  const Output grown =
      ops::TensorListSetItem(root_, r, 4, ops::Const(root_, {7.f, 8.f}),
                             ops::TensorListSetItem::ResizeIfIndexOutOfBounds(true));
  EXPECT_THAT(Fetch(Stack(grown)),
              IsOkAndHolds(TensorEq(Floats({5, 2}, {0, 0, 0, 0, 0, 0, 0, 0, 7, 8}))));
}

TEST_F(ListOpsTest, PushPopAndLimits) {
  const Output e = ops::EmptyTensorList(root_, {2}, 2, DT_FLOAT);
  const Output p1 = ops::TensorListPushBack(root_, e, ops::Const(root_, {1.f, 2.f}));
  const Output p2 = ops::TensorListPushBack(root_, p1, ops::Const(root_, {3.f, 4.f}));
  EXPECT_THAT(Fetch(ops::TensorListPopBack(root_, p2, {2}, DT_FLOAT).tensor),
              IsOkAndHolds(TensorEq(Floats({2}, {3, 4}))));
  EXPECT_THAT(Fetch(ops::TensorListLength(
                  root_, ops::TensorListPopBack(root_, p2, {2}, DT_FLOAT).output_handle)),
              IsOkAndHolds(TensorEq(Scalar<int32_t>(1))));
  EXPECT_THAT(Fetch(ops::TensorListPushBack(root_, p2, ops::Const(root_, {5.f, 6.f}))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Tried to push item into a full list list size: 2 max_num_elements: 2"));
  EXPECT_THAT(Fetch(ops::TensorListPushBack(root_, e, ops::Const(root_, {5.f, 6.f, 7.f}))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Tried to append a tensor with incompatible shape to a list. Op element "
                       "shape: [3] list shape: [2]"));
  EXPECT_THAT(Fetch(ops::TensorListPopBack(root_, e, {2}, DT_FLOAT).tensor),
              StatusIs(absl::StatusCode::kInvalidArgument, "Trying to pop from an empty list."));
  EXPECT_THAT(Fetch(Stack(e)), IsOkAndHolds(TensorEq(Tensor(DT_FLOAT, TensorShape({0, 2})))));
  const Output unknown = ops::EmptyTensorList(root_, -1, -1, DT_FLOAT);
  EXPECT_THAT(Fetch(Stack(unknown, -1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Tried to stack elements of an empty list with non-fully-defined "
                       "element_shape: <unknown>"));
  EXPECT_THAT(Fetch(ops::TensorListElementShape(root_, unknown, DT_INT64)),
              IsOkAndHolds(TensorEq(Scalar<int64_t>(-1))));
}

TEST_F(ListOpsTest, ScatterSplitAndConcat) {
  const Output x = ops::Const(root_, {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  EXPECT_THAT(Fetch(Stack(ops::TensorListScatter(root_, x, {3, 0, 1}, {2}))),
              IsOkAndHolds(TensorEq(Floats({4, 2}, {3, 4, 5, 6, 0, 0, 1, 2}))));
  EXPECT_THAT(
      Fetch(ops::TensorListLength(root_, ops::TensorListScatterV2(root_, x, {3, 0, 1}, {2}, 6))),
      IsOkAndHolds(TensorEq(Scalar<int32_t>(6))));
  EXPECT_THAT(Fetch(ops::TensorListScatterV2(root_, x, {3, 0, 1}, {2}, 2)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "TensorListScatter: Trying to scatter at index 3 in list with size 2"));
  EXPECT_THAT(Fetch(ops::TensorListScatter(root_, x, {-1, 0, 1}, {2})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Indices in TensorListScatter must all be non-negative."));
  EXPECT_THAT(Fetch(ops::TensorListScatter(root_, x, {0, 1}, {2})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Invalid number of rows in input tensor. Expected: 2 Actual: 3"));
  EXPECT_THAT(Fetch(Stack(ops::TensorListScatterIntoExistingList(
                  root_, Rows(), ops::Const(root_, {{9.f, 9.f}}), {1}))),
              IsOkAndHolds(TensorEq(Floats({3, 2}, {1, 2, 9, 9, 5, 6}))));

  const Output column = ops::Const(root_, {{1.f}, {2.f}, {3.f}, {4.f}});
  const Output split =
      ops::TensorListSplit(root_, column, {-1, 1}, ops::Const(root_, {int64_t{1}, int64_t{3}}));
  EXPECT_THAT(Fetch(ops::TensorListGetItem(root_, split, 1, {-1, 1}, DT_FLOAT)),
              IsOkAndHolds(TensorEq(Floats({3, 1}, {2, 3, 4}))));
  const auto concat = ops::TensorListConcatV2(
      root_, split, {-1, 1}, ops::Const(root_, Tensor(DT_INT64, TensorShape({0})).AsProto()),
      DT_FLOAT);
  EXPECT_THAT(Fetch(concat.tensor), IsOkAndHolds(TensorEq(Floats({4, 1}, {1, 2, 3, 4}))));
  EXPECT_THAT(Fetch(concat.lengths), IsOkAndHolds(TensorEq(Literal<int64_t>({2}, {1, 3}))));
  EXPECT_THAT(Fetch(ops::TensorListConcat(root_, split, DT_FLOAT).tensor),
              IsOkAndHolds(TensorEq(Floats({4, 1}, {1, 2, 3, 4}))));
  EXPECT_THAT(Fetch(ops::TensorListSplit(root_, column, {-1, 1},
                                         ops::Const(root_, {int64_t{1}, int64_t{2}}))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Unused values in tensor. Length of tensor: 4 Values used: 3"));
  EXPECT_THAT(Fetch(ops::TensorListSplit(root_, column, {-1, 2},
                                         ops::Const(root_, {int64_t{1}, int64_t{3}}))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "tensor shape [4,1] is not compatible with element_shape [?,2]"));
  // Unset elements take their first dimension from leading_dims.
  const Output partly =
      ops::TensorListSetItem(root_, Reserve({-1, 2}, 3), 1, ops::Const(root_, {{1.f, 2.f}}));
  EXPECT_THAT(Fetch(ops::TensorListConcatV2(root_, partly, {-1, 2},
                                            ops::Const(root_, {int64_t{2}, int64_t{1}, int64_t{1}}),
                                            DT_FLOAT)
                        .tensor),
              IsOkAndHolds(TensorEq(Floats({4, 2}, {0, 0, 0, 0, 1, 2, 0, 0}))));
}

TEST_F(ListOpsTest, BadInputsGetTensorFlowsMessages) {
  const Output l = Rows();
  EXPECT_THAT(Fetch(ops::TensorListGetItem(root_, l, 3, {2}, DT_FLOAT)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Trying to access element 3 in a list with 3 elements."));
  EXPECT_THAT(Fetch(ops::TensorListGetItem(root_, l, -1, {2}, DT_FLOAT)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Trying to access element -1 in a list with 3 elements."));
  EXPECT_THAT(Fetch(ops::TensorListGetItem(root_, l, 1, {2}, DT_INT32)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Invalid data types; op elements int32 but list elements float"));
  EXPECT_THAT(
      Fetch(ops::TensorListStack(root_, l, {2}, DT_FLOAT, ops::TensorListStack::NumElements(4))),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Operation expected a list with 4 elements but got a list with 3 elements."));
  EXPECT_THAT(Fetch(ops::TensorListSetItem(root_, l, 0, ops::Const(root_, {7.f, 8.f, 9.f}))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Tried to set a tensor with incompatible shape at a list index. Item "
                       "element shape: [3] list shape: [2]"));
  EXPECT_THAT(Fetch(ops::TensorListSetItem(root_, l, 5, ops::Const(root_, {7.f, 8.f}))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Trying to modify element 5 in a list with 3 elements."));
  EXPECT_THAT(Fetch(ops::TensorListGather(root_, l, {3}, {2}, DT_FLOAT)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Index 3 out o range; list only has 3 elements."));
  EXPECT_THAT(Fetch(ops::TensorListResize(root_, l, -1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "TensorListSlice expects size to be non-negative. Got: -1"));
  EXPECT_THAT(Fetch(ops::TensorListFromTensor(root_, ops::Const(root_, 1.f), -1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Tensor must be at least a vector, but saw shape: []"));
  EXPECT_THAT(Fetch(ops::TensorListFromTensor(root_, ops::Const(root_, {{1.f, 2.f}}), {3})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Specified a list with shape [3] from a tensor with shape [2]"));
  EXPECT_THAT(Fetch(Reserve({-1}, -2)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "The num_elements to reserve must be a non negative number, but got -2"));
  EXPECT_THAT(Fetch(Reserve(3, 2)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "The only valid scalar shape tensor is the fully unknown shape specified "
                       "as -1."));
  EXPECT_THAT(Fetch(ops::TensorListConcat(
                        root_, ops::TensorListFromTensor(root_, ops::Const(root_, {1.f, 2.f}), -1),
                        DT_FLOAT)
                        .tensor),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Concat saw a scalar shape at index 0 but requires at least vectors."));
  // Sizes from a graph cannot make a list of billions of bookkeeping entries.
  EXPECT_THAT(Fetch(Reserve({-1}, 2000000000)),
              StatusIs(absl::StatusCode::kInvalidArgument, "a list may hold"));
  // Nor a reserve whose bookkeeping the session's host budget has no room
  // for (1M elements of about 64 bytes, in a 1 MB budget).
  {
    SessionOptions small;
    small.host_memory_budget_bytes = 1 << 20;
    ClientSession session(root_, small);
    std::vector<Tensor> got;
    EXPECT_THAT(session.Run({Reserve({-1}, 1000000)}, &got),
                StatusIs(absl::StatusCode::kResourceExhausted, "1000000 list elements"));
  }
  // A variant that is not a list.
  EXPECT_THAT(Fetch(ops::TensorListLength(root_, ops::ZerosLike(root_, ops::Const(root_, 1.f)))),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ListOpsTest, ZerosLikeAndAddNOfLists) {
  const Output r2 =
      ops::TensorListSetItem(root_, Reserve({-1}, 3), 1, ops::Const(root_, {7.f, 8.f}));
  EXPECT_THAT(Fetch(Stack(ops::ZerosLike(root_, r2))),
              IsOkAndHolds(TensorEq(Floats({3, 2}, {0, 0, 0, 0, 0, 0}))));
  const Output l = Rows();
  EXPECT_THAT(Fetch(Stack(ops::AddN(root_, {l, l}))),
              IsOkAndHolds(TensorEq(Floats({3, 2}, {2, 4, 6, 8, 10, 12}))));
  EXPECT_THAT(Fetch(Stack(ops::AddN(root_, {r2, r2}))),
              IsOkAndHolds(TensorEq(Floats({3, 2}, {0, 0, 14, 16, 0, 0}))));
  const Output two = ops::TensorListResize(root_, l, 2);
  EXPECT_THAT(Fetch(ops::AddN(root_, {l, two})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Trying to add two lists of tensors with different lengths. One is 3 and "
                       "the other is 2"));
}

// A list consumed twice is shared: changing it for one consumer must not
// change what the other sees (the kernels change a list in place only when
// their input is the only reference).
TEST_F(ListOpsTest, ASharedListIsNeverChangedUnderItsOtherConsumer) {
  const Output l = Rows();
  const Output set = ops::TensorListSetItem(root_, l, 0, ops::Const(root_, {9.f, 9.f}));
  const Output pushed = ops::TensorListPushBack(root_, l, ops::Const(root_, {7.f, 7.f}));
  const Output popped = ops::TensorListPopBack(root_, l, {2}, DT_FLOAT).output_handle;
  ClientSession session(root_);
  std::vector<Tensor> got;
  TW_ASSERT_OK(session.Run({Stack(l), Stack(set), Stack(pushed), Stack(popped)}, &got));
  EXPECT_THAT(got[0], TensorEq(Floats({3, 2}, {1, 2, 3, 4, 5, 6})));
  EXPECT_THAT(got[1], TensorEq(Floats({3, 2}, {9, 9, 3, 4, 5, 6})));
  EXPECT_THAT(got[2], TensorEq(Floats({4, 2}, {1, 2, 3, 4, 5, 6, 7, 7})));
  EXPECT_THAT(got[3], TensorEq(Floats({2, 2}, {1, 2, 3, 4})));
}

// A chain of changes, each list used once: every step may reuse the list.
TEST_F(ListOpsTest, AChainOfChangesBuildsTheList) {
  Output l = Reserve({2}, 4);
  for (int i = 0; i < 4; ++i) {
    l = ops::TensorListSetItem(root_, l, i,
                               ops::Const(root_, {static_cast<float>(i), static_cast<float>(-i)}));
  }
  EXPECT_THAT(Fetch(Stack(l)), IsOkAndHolds(TensorEq(Floats({4, 2}, {0, 0, 1, -1, 2, -2, 3, -3}))));
}

// A while loop carries a list as a loop variable (through Enter, Merge,
// Switch, NextIteration and Exit), writing a running sum of squares per
// step; the gradient through the loop keeps each iteration's list on the
// loop's stacks and matches finite differences.
TEST_F(ListOpsTest, AWhileLoopWritesAListAndItsGradientFlows) {
  const Output x = ops::Placeholder(root_, DT_FLOAT, ops::Placeholder::Shape({4, 3}));
  const Output n = ops::Const(root_, 4);
  absl::StatusOr<std::vector<Output>> loop = ops::WhileLoop(
      root_,
      {ops::Const(root_, 0), ops::ZerosLike(root_, ops::Gather(root_, x, 0)), Reserve({3}, 4)},
      [&](const Scope& c, const std::vector<Output>& v) -> absl::StatusOr<Output> {
        return ops::Less(c, v[0], n);
      },
      [&](const Scope& b, const std::vector<Output>& v) -> absl::StatusOr<std::vector<Output>> {
        const Output row = ops::Gather(b, x, v[0]);
        const Output total = ops::Add(b, v[1], ops::Mul(b, row, row));
        return std::vector<Output>{ops::Add(b, v[0], 1), total,
                                   ops::TensorListSetItem(b, v[2], v[0], total)};
      });
  TW_ASSERT_OK(loop.status());
  const Output stacked = Stack((*loop)[2], {3});
  const Tensor x_value =
      Floats({4, 3}, {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75});
  ClientSession session(root_);
  std::vector<Tensor> got;
  TW_ASSERT_OK(session.Run({{x, x_value}}, {stacked}, &got));
  // TF's values (the tf.function of the same loop).
  EXPECT_THAT(got[0], TensorEq(Floats({4, 3}, {0, 0.0625, 0.25, 0.5625, 1.0625, 1.8125, 2.8125,
                                               4.125, 5.8125, 7.875, 10.375, 13.375})));
  TW_ASSERT_OK_AND_ASSIGN(double error,
                          ComputeGradientError<float>(root_, {x}, {x_value}, {stacked}));
  EXPECT_LT(error, 2e-3);
}

// TF's encoding (Note [TensorList's encoding]): a list fetched as a
// TensorProto decodes to the same list, unset elements included.
TEST(TensorListTest, EncodeDecodeRoundTrip) {
  TensorList list(DT_FLOAT, PartialTensorShape({-1, 2}));
  list.max_num_elements = 5;
  list.tensors.push_back(Floats({1, 2}, {1, 2}));
  list.tensors.emplace_back();
  list.tensors.push_back(Floats({2, 2}, {3, 4, 5, 6}));
  Tensor t(DT_VARIANT, TensorShape({}));
  *t.data<Variant>() = Variant(list);
  const TensorProto proto = t.AsProto();
  ASSERT_EQ(proto.variant_val_size(), 1);
  EXPECT_EQ(proto.variant_val(0).type_name(), "tensorflow::TensorList");
  EXPECT_EQ(proto.variant_val(0).tensors_size(), 2);
  TW_ASSERT_OK_AND_ASSIGN(Tensor back, Tensor::FromProto(proto));
  const TensorList* got = back.data<Variant>()->get<TensorList>();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->element_dtype, DT_FLOAT);
  EXPECT_EQ(got->element_shape, PartialTensorShape({-1, 2}));
  EXPECT_EQ(got->max_num_elements, 5);
  ASSERT_EQ(got->tensors.size(), 3u);
  EXPECT_THAT(got->tensors[0], TensorEq(Floats({1, 2}, {1, 2})));
  EXPECT_FALSE(got->tensors[1].IsInitialized());
  EXPECT_THAT(got->tensors[2], TensorEq(Floats({2, 2}, {3, 4, 5, 6})));
  EXPECT_EQ(back.DebugString(),
            "Tensor<type: variant shape: [] values: TensorList<float, [?,2], 3 elements>>");

  // Corrupt encodings are refused, never read past their end.
  TensorProto bad = proto;
  bad.mutable_variant_val(0)->set_metadata("\x05");
  EXPECT_THAT(Tensor::FromProto(bad).status(), StatusIs(absl::StatusCode::kInvalidArgument));
  bad = proto;
  bad.mutable_variant_val(0)->set_type_name("tensorflow::Other");
  EXPECT_THAT(Tensor::FromProto(bad).status(), StatusIs(absl::StatusCode::kInvalidArgument));
  bad = proto;
  bad.mutable_variant_val(0)->clear_tensors();
  EXPECT_THAT(Tensor::FromProto(bad).status(), StatusIs(absl::StatusCode::kInvalidArgument));

  // An element that is a splat of 2^40 floats is refused before it is made
  // (as a Const or a fuzz input is checked), alone or as a sum.
  const MemoryLimits limits{/*max_tensor_bytes=*/int64_t{1} << 30,
                            /*host_budget_bytes=*/int64_t{1} << 30};
  TW_ASSERT_OK(CheckTensorProtoBytes(proto, limits));
  TensorProto huge = proto;
  huge.mutable_variant_val(0)->mutable_tensors(0)->mutable_tensor_shape()->mutable_dim(1)->set_size(
      int64_t{1} << 40);
  huge.mutable_variant_val(0)->mutable_tensors(0)->clear_tensor_content();
  huge.mutable_variant_val(0)->mutable_tensors(0)->add_float_val(1);
  EXPECT_THAT(CheckTensorProtoBytes(huge, limits), StatusIs(absl::StatusCode::kResourceExhausted));
  TensorProto many = proto;
  for (int i = 0; i < 3; ++i) {
    TensorProto* big = many.mutable_variant_val(0)->add_tensors();
    big->set_dtype(DT_FLOAT);
    big->mutable_tensor_shape()->add_dim()->set_size(int64_t{100} << 20);  // 400 MB each
    big->add_float_val(1);
  }
  EXPECT_THAT(CheckTensorProtoBytes(many, limits),
              StatusIs(absl::StatusCode::kResourceExhausted, "elements' tensors"));

  // Empty variants round-trip.
  Tensor empty(DT_VARIANT, TensorShape({2}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor empty_back, Tensor::FromProto(empty.AsProto()));
  EXPECT_TRUE(empty_back.data<Variant>()[1].is_empty());
}

}  // namespace
}  // namespace towerflow
