// Build-time shape inference of the op schemas: one table per op family,
// each case an op, its inputs (shapes, or constant values) and attrs, and
// the expected output shapes or error.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "core/tensor_proto_util.h"
#include "framework/attr_value_util.h"
#include "framework/tensor.h"
#include "graph/op_builder.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/parsing_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/gen/training_ops.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// One input: a placeholder of a shape, or a constant.
struct In {
  PartialTensorShape shape;
  DataType dtype = DT_FLOAT;
  std::optional<TensorProto> value;
};

In P(PartialTensorShape shape, DataType dtype = DT_FLOAT) { return {std::move(shape), dtype}; }
In Unknown(DataType dtype = DT_FLOAT) { return {PartialTensorShape(), dtype}; }
// A scalar placeholder. (`P({})` would be the default PartialTensorShape:
// unknown rank, as in TensorFlow's C++ API.)
In S(DataType dtype = DT_FLOAT) { return {PartialTensorShape::Scalar(), dtype}; }
In I32(std::vector<int32_t> v) {
  TensorProto t = MakeTensorProto<int32_t>(absl::MakeConstSpan(v),
                                           TensorShape({static_cast<int64_t>(v.size())}));
  return {PartialTensorShape(), DT_INT32, t};
}
In ScalarI32(int32_t v) { return {PartialTensorShape(), DT_INT32, MakeScalarTensorProto(v)}; }
In I32Matrix(std::vector<int32_t> v, int64_t rows) {
  const int64_t cols = static_cast<int64_t>(v.size()) / rows;
  return {PartialTensorShape(), DT_INT32,
          MakeTensorProto<int32_t>(absl::MakeConstSpan(v), TensorShape({rows, cols}))};
}
In ScalarF(float v) { return {PartialTensorShape(), DT_FLOAT, MakeScalarTensorProto(v)}; }

using Args = std::vector<std::vector<In>>;  // one entry per op argument
using AttrList = std::vector<std::pair<std::string, AttrValue>>;

template <typename T>
std::pair<std::string, AttrValue> A(const std::string& name, const T& value) {
  AttrValue v;
  SetAttrValue(value, &v);
  return {name, v};
}
std::pair<std::string, AttrValue> A(const std::string& name, const char* value) {
  AttrValue v;
  v.set_s(value);
  return {name, v};
}

struct Case {
  std::string op;
  Args args;
  AttrList attrs;
  // Output shapes joined by "; ", or "error: <substring>".
  std::string expect;
};

std::string Run(const Case& c) {
  Scope root = Scope::NewRootScope();
  const OpDef& op_def = OpRegistry::Global()->Find(c.op)->op_def;
  OpBuilder builder(root, c.op);
  for (size_t a = 0; a < c.args.size(); ++a) {
    std::vector<Input> inputs;
    for (const In& in : c.args[a]) {
      if (in.value.has_value()) {
        inputs.push_back(ops::Const(root, Input::Initializer(*in.value)));
      } else {
        inputs.push_back(ops::Placeholder(root, in.dtype, ops::Placeholder::Shape(in.shape)));
      }
    }
    const OpDef::ArgDef& arg = op_def.input_arg(a);
    if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) {
      builder.Input(InputList(inputs));
    } else {
      builder.Input(inputs.at(0));
    }
  }
  for (const auto& [name, value] : c.attrs) builder.Attr(name, value);
  Node* node = builder.Finalize();
  if (node == nullptr) return absl::StrCat("error: ", root.status().message());
  std::vector<std::string> shapes;
  for (int i = 0; i < node->num_outputs(); ++i)
    shapes.push_back(node->output_shape(i).DebugString());
  return absl::StrJoin(shapes, "; ");
}

void Check(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const std::string got = Run(c);
    if (absl::StartsWith(c.expect, "error: ")) {
      EXPECT_TRUE(absl::StartsWith(got, "error: ") &&
                  got.find(c.expect.substr(7)) != std::string::npos)
          << c.op << ": expected " << c.expect << "\n got " << got;
    } else {
      EXPECT_EQ(got, c.expect) << c.op;
    }
  }
}

TEST(ShapeInferenceTest, MatMulFamily) {
  Check({
      {"MatMul", {{P({2, 3})}, {P({3, 4})}}, {}, "[2,4]"},
      {"MatMul", {{P({3, 2})}, {P({3, 4})}}, {A("transpose_a", true)}, "[2,4]"},
      {"MatMul", {{P({2, 3})}, {P({4, 3})}}, {A("transpose_b", true)}, "[2,4]"},
      {"MatMul", {{P({-1, 784})}, {P({784, 10})}}, {}, "[?,10]"},
      {"MatMul", {{Unknown()}, {P({5, 7})}}, {}, "[?,7]"},
      {"MatMul", {{P({2, 3})}, {P({4, 5})}}, {}, "error: inner dimensions are 3 and 4"},
      {"MatMul", {{P({2, 3, 4})}, {P({4, 5})}}, {}, "error: Shape must be rank 2 but is rank 3"},
      {"BatchMatMulV2", {{P({8, 1, 2, 3})}, {P({5, 3, 4})}}, {}, "[8,5,2,4]"},
      {"BatchMatMulV2", {{P({2, 2, 3})}, {P({3, 3, 4})}}, {}, "error: Incompatible shapes"},
      {"BatchMatMul", {{P({2, 2, 3})}, {P({2, 4, 3})}}, {A("adj_y", true)}, "[2,2,4]"},
  });
}

TEST(ShapeInferenceTest, ElementwiseBroadcasting) {
  Check({
      {"Add", {{P({2, 1, 3})}, {P({4, 1})}}, {}, "[2,4,3]"},
      {"AddV2", {{P({-1, 3})}, {P({3})}}, {}, "[?,3]"},
      {"Mul", {{S()}, {P({5})}}, {}, "[5]"},
      {"Sub", {{P({-1})}, {P({1})}}, {}, "[?]"},
      {"Maximum", {{P({-1, 1})}, {P({1, 4})}}, {}, "[?,4]"},
      {"Add", {{P({2, 3})}, {P({4})}}, {}, "error: Incompatible shapes for broadcasting: [2,3]"},
      {"Greater", {{P({3, 1})}, {P({1, 2})}}, {}, "[3,2]"},
      {"Equal", {{Unknown()}, {P({2})}}, {}, "<unknown>"},
      {"Relu", {{P({-1, 28, 28, 32})}}, {}, "[?,28,28,32]"},
      {"ReluGrad", {{P({2, -1})}, {P({-1, 3})}}, {}, "[2,3]"},
      {"AddN", {{P({2, -1}), P({-1, 3}), P({2, 3})}}, {}, "[2,3]"},
      {"AddN",
       {{P({2, 3}), P({3, 2})}},
       {},
       "error: Shapes of all inputs must match: input 1 has shape [3,2]"},
      {"Cast", {{P({4, 2})}}, {A("DstT", DT_INT32)}, "[4,2]"},
      {"Select", {{P({3}, DT_BOOL)}, {P({3, 2})}, {P({3, 2})}}, {}, "[3,2]"},
      {"Select", {{P({2}, DT_BOOL)}, {P({3, 2})}, {P({3, 2})}}, {}, "error: condition must be"},
      {"SelectV2", {{P({3, 1}, DT_BOOL)}, {P({2})}, {S()}}, {}, "[3,2]"},
  });
}

TEST(ShapeInferenceTest, Reductions) {
  Check({
      {"Sum", {{P({2, 3, 4})}, {I32({1})}}, {}, "[2,4]"},
      {"Sum", {{P({2, 3, 4})}, {I32({1})}}, {A("keep_dims", true)}, "[2,1,4]"},
      {"Mean", {{P({2, 3, 4})}, {I32({-1, 0})}}, {}, "[3]"},
      {"Max", {{P({2, 3})}, {I32({})}}, {}, "[2,3]"},
      {"Sum", {{P({2, 3, 4})}, {P({1}, DT_INT32)}}, {A("keep_dims", true)}, "[?,?,?]"},
      {"Sum", {{P({2, 3, 4})}, {P({1}, DT_INT32)}}, {}, "<unknown>"},
      {"Sum",
       {{P({2, 3})}, {I32({3})}},
       {},
       "error: Invalid reduction dimension 3 for input with 2"},
      {"ArgMax", {{P({2, 5})}, {ScalarI32(1)}}, {}, "[2]"},
      {"ArgMax", {{P({2, 5})}, {ScalarI32(2)}}, {}, "error: axis 2 is out of range for rank 2"},
      {"ArgMax", {{S()}, {ScalarI32(0)}}, {}, "error: rank >= 1"},
  });
}

TEST(ShapeInferenceTest, ReshapeAndShapes) {
  Check({
      {"Reshape", {{P({2, 3, 4})}, {I32({-1, 4})}}, {}, "[6,4]"},
      {"Reshape", {{P({-1, 28, 28, 1})}, {I32({-1, 784})}}, {}, "[?,784]"},
      {"Reshape", {{P({6})}, {I32({5, -1})}}, {}, "error: 6 is not a multiple of 5"},
      {"Reshape",
       {{P({6})}, {I32({4})}},
       {},
       "error: Cannot reshape a tensor with 6 elements to shape [4]"},
      {"Reshape",
       {{P({6})}, {I32({-1, -1})}},
       {},
       "error: Only one input size may be -1, not both 0 and 1"},
      {"Reshape", {{P({6})}, {I32({2, -3})}}, {}, "error: dimensions must be >= -1"},
      {"Reshape", {{P({6})}, {P({3}, DT_INT32)}}, {}, "[?,?,?]"},
      {"Reshape",
       {{P({6})}, {I32(std::vector<int32_t>(300, 1))}},
       {},
       "error: Shape tensor of length 300 describes a rank above the maximum 254"},
      {"Shape", {{P({-1, 3})}}, {}, "[2]"},
      {"Shape", {{Unknown()}}, {}, "[?]"},
      {"ShapeN", {{P({1}), P({1, 2})}}, {}, "[1]; [2]"},
      {"Size", {{P({3, 4})}}, {}, "[]"},
      {"ExpandDims", {{P({2, 3})}, {ScalarI32(-1)}}, {}, "[2,3,1]"},
      {"ExpandDims", {{P({2, 3})}, {ScalarI32(0)}}, {}, "[1,2,3]"},
      {"ExpandDims", {{P({2, 3})}, {ScalarI32(3)}}, {}, "error: axis 3 is out of range for rank 3"},
      {"Squeeze", {{P({1, 2, 1, 3})}}, {}, "[2,3]"},
      {"Squeeze", {{P({1, 2, 1, 3})}}, {A("squeeze_dims", std::vector<int64_t>{0})}, "[2,1,3]"},
      {"Squeeze",
       {{P({1, 2})}},
       {A("squeeze_dims", std::vector<int64_t>{1})},
       "error: Can not squeeze dim[1], expected a dimension of 1, got 2"},
      {"Squeeze",
       {{P({1, 2})}},
       {A("squeeze_dims", std::vector<int64_t>{5})},
       "error: Tried to squeeze dim index 5 for tensor with 2 dimensions"},
      {"Transpose", {{P({2, 3, 4})}, {I32({2, 0, 1})}}, {}, "[4,2,3]"},
      {"Transpose", {{P({2, 3, 4})}, {I32({0, 0, 1})}}, {}, "error: is not a permutation"},
      {"Transpose",
       {{P({2, 3})}, {I32({1, 0, 2})}},
       {},
       "error: perm has 3 entries but the input has rank 2"},
  });
}

TEST(ShapeInferenceTest, ShapeValuedInputsFromShapeOps) {
  // Fill(Shape(x), 0) knows x's shape; Reshape(y, Shape(x)) too.
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, 7}));
  Output zeros = ops::Fill(root, ops::Shape(root, x), 0.f);
  EXPECT_EQ(zeros.shape().DebugString(), "[?,7]");
  Output packed = ops::Reshape(root, ops::Placeholder(root, DT_FLOAT),
                               ops::Pack(root, {ops::Const(root, 3), -1}));
  EXPECT_EQ(packed.shape().DebugString(), "[3,?]");
  Output concat =
      ops::Fill(root, ops::ConcatV2(root, {ops::Shape(root, x), ops::Const(root, {5})}, 0), 1.f);
  EXPECT_EQ(concat.shape().DebugString(), "[?,7,5]");
  TW_ASSERT_OK(root.status());
}

TEST(ShapeInferenceTest, ConcatSplitPack) {
  Check({
      {"ConcatV2", {{P({2, 3}), P({2, 5})}, {ScalarI32(1)}}, {}, "[2,8]"},
      {"ConcatV2", {{P({2, 3}), P({-1, 5})}, {ScalarI32(-1)}}, {}, "[2,8]"},
      {"ConcatV2", {{P({2, 3}), P({2, -1})}, {ScalarI32(1)}}, {}, "[2,?]"},
      {"ConcatV2", {{P({2, 3}), P({4, 3})}, {ScalarI32(0)}}, {}, "[6,3]"},
      {"ConcatV2", {{P({2, 3}), P({4, 3})}, {ScalarI32(1)}}, {}, "error: Dimension 0 of input 1"},
      {"ConcatV2", {{S(), S()}, {ScalarI32(0)}}, {}, "error: Can't concatenate scalars"},
      {"ConcatV2", {{P({2, 3}), P({2, 3})}, {S(DT_INT32)}}, {}, "[?,?]"},
      {"Concat", {{ScalarI32(0)}, {P({1, 3}), P({2, 3})}}, {}, "[3,3]"},
      {"Split", {{ScalarI32(1)}, {P({4, 6})}}, {A("num_split", int64_t{3})}, "[4,2]; [4,2]; [4,2]"},
      {"Split",
       {{ScalarI32(1)}, {P({4, 6})}},
       {A("num_split", int64_t{4})},
       "error: Number of ways to split should evenly divide the split dimension, but got "
       "split_dim 1 (size = 6) and num_split 4"},
      {"SplitV",
       {{P({5, 2})}, {I32({2, -1})}, {ScalarI32(0)}},
       {A("num_split", int64_t{2})},
       "[2,2]; [3,2]"},
      {"SplitV",
       {{P({5, 2})}, {I32({2, 2})}, {ScalarI32(0)}},
       {A("num_split", int64_t{2})},
       "error: size_splits sum to 4 but the split dimension has size 5"},
      // Sizes known at run time: only the split dimension is unknown.
      {"SplitV",
       {{P({-1, 28, 3})}, {P({2}, DT_INT32)}, {ScalarI32(0)}},
       {A("num_split", int64_t{2})},
       "[?,28,3]; [?,28,3]"},
      {"SplitV",
       {{P({4, 6})}, {P({2}, DT_INT32)}, {S(DT_INT32)}},
       {A("num_split", int64_t{2})},
       "[?,?]; [?,?]"},
      {"Pack", {{P({2}), P({2}), P({-1})}}, {}, "[3,2]"},
      {"Pack", {{P({2}), P({2}), P({2})}}, {A("axis", int64_t{1})}, "[2,3]"},
      {"Pack", {{P({2}), P({3})}}, {}, "error: Shapes of all inputs must match"},
      {"Unpack", {{P({3, 4})}}, {A("num", int64_t{3})}, "[4]; [4]; [4]"},
      {"Unpack",
       {{P({3, 4})}},
       {A("num", int64_t{2})},
       "error: Dimension 0 has size 3 but num is 2"},
  });
}

TEST(ShapeInferenceTest, Slicing) {
  Check({
      {"Slice", {{P({5, 6})}, {I32({1, 2})}, {I32({-1, 3})}}, {}, "[4,3]"},
      {"Slice",
       {{P({5, 6})}, {I32({1, 2})}, {I32({2, 5})}},
       {},
       "error: Expected size[1] in [0, 4], but got 5"},
      {"Slice",
       {{P({5, 6})}, {I32({6, 0})}, {I32({0, 0})}},
       {},
       "error: Expected begin[0] in [0, 5], but got 6"},
      {"Slice", {{P({5, 6})}, {P({2}, DT_INT32)}, {I32({2, 3})}}, {}, "[2,3]"},
      {"StridedSlice",
       {{P({5, 3})}, {I32({1})}, {I32({0})}, {I32({1})}},
       {A("end_mask", int64_t{1})},
       "[4,3]"},
      {"StridedSlice",
       {{P({4})}, {I32({0})}, {I32({1})}, {I32({1})}},
       {A("shrink_axis_mask", int64_t{1})},
       "[]"},
      {"StridedSlice",
       {{P({5})}, {I32({0})}, {I32({1})}, {I32({0})}},
       {},
       "error: strides[0] must be non-zero"},
      {"Pad", {{P({2, 3})}, {I32Matrix({1, 1, 2, 2}, 2)}}, {}, "[4,7]"},
      {"Pad",
       {{P({2, 3})}, {I32Matrix({1, -1, 2, 2}, 2)}},
       {},
       "error: Paddings must be non-negative: 1 -1"},
      {"Pad",
       {{P({2, 3})}, {I32Matrix({1, 1}, 1)}},
       {},
       "error: paddings has 1 rows but the input has rank 2"},
      {"Tile", {{P({2, 3})}, {I32({2, 1})}}, {}, "[4,3]"},
      {"Tile", {{P({2, 3})}, {I32({2, -1})}}, {}, "error: Expected multiples[1] >= 0, but got -1"},
      {"Fill", {{I32({2, 3})}, {ScalarF(1)}}, {}, "[2,3]"},
      {"Fill",
       {{I32({2, -1})}, {ScalarF(1)}},
       {},
       "error: Dimension 1 of the requested shape is -1"},
      {"Fill", {{I32({2})}, {P({2})}}, {}, "error: Shape must be rank 0 but is rank 1"},
  });
}

TEST(ShapeInferenceTest, Gathering) {
  Check({
      {"GatherV2", {{P({5, 3})}, {P({7}, DT_INT32)}, {ScalarI32(0)}}, {}, "[7,3]"},
      {"GatherNd", {{P({5, 3, 2})}, {P({4, 1}, DT_INT32)}}, {}, "[4,3,2]"},
      {"GatherNd", {{P({5, 3, 2})}, {P({4, -1}, DT_INT32)}}, {}, "<unknown>"},
      {"GatherNd",
       {{P({5, 3})}, {P({4, 3}, DT_INT32)}},
       {},
       "error: indices.shape[-1] must be <= params.rank"},
      {"ScatterNd", {{P({4, 1}, DT_INT32)}, {P({4, 3})}, {I32({8, 3})}}, {}, "[8,3]"},
      {"ScatterNd",
       {{P({4, 1}, DT_INT32)}, {P({4, 2})}, {I32({8, 3})}},
       {},
       "error: updates has shape [4,2] but indices [4,1] into [8,3] need [4,3]"},
      {"TensorScatterUpdate", {{P({8, 3})}, {P({2, 1}, DT_INT32)}, {P({2, 3})}}, {}, "[8,3]"},
      {"GatherV2", {{P({5, 3})}, {P({2, 7}, DT_INT32)}, {ScalarI32(1)}}, {}, "[5,2,7]"},
      {"GatherV2",
       {{P({5, 3})}, {P({7}, DT_INT32)}, {ScalarI32(2)}},
       {},
       "error: axis 2 is out of range for rank 2"},
      {"OneHot", {{P({4}, DT_INT64)}, {ScalarI32(10)}, {ScalarF(1)}, {ScalarF(0)}}, {}, "[4,10]"},
      {"OneHot",
       {{P({4}, DT_INT64)}, {ScalarI32(10)}, {ScalarF(1)}, {ScalarF(0)}},
       {A("axis", int64_t{0})},
       "[10,4]"},
      {"OneHot",
       {{P({4}, DT_INT64)}, {ScalarI32(-3)}, {ScalarF(1)}, {ScalarF(0)}},
       {},
       "error: depth must be non-negative, got -3"},
      {"BroadcastTo", {{P({3})}, {I32({2, 3})}}, {}, "[2,3]"},
      {"BroadcastTo",
       {{P({4})}, {I32({2, 3})}},
       {},
       "error: Cannot broadcast a tensor of shape [4] to shape [2,3]"},
      {"Range", {{ScalarI32(0)}, {ScalarI32(10)}, {ScalarI32(3)}}, {}, "[4]"},
      // Computed in float, as TF: 0.3f / 0.1f is 2.9999998f, not double's 3.0000001.
      {"Range", {{ScalarF(0)}, {ScalarF(0.3f)}, {ScalarF(0.1f)}}, {}, "[3]"},
      {"Range",
       {{ScalarI32(0)}, {ScalarI32(10)}, {ScalarI32(0)}},
       {},
       "error: Requires delta != 0"},
      {"Range",
       {{ScalarI32(5)}, {ScalarI32(3)}, {ScalarI32(1)}},
       {},
       "error: Requires start <= limit when delta > 0: 5/3"},
      {"UnsortedSegmentSum", {{P({6, 4})}, {P({6}, DT_INT32)}, {ScalarI32(3)}}, {}, "[3,4]"},
      {"DynamicStitch",
       {{P({2}, DT_INT32), P({3}, DT_INT32)}, {P({2, 5}), P({3, 5})}},
       {},
       "[?,5]"},
      {"DynamicStitch",
       {{P({2}, DT_INT32)}, {P({3, 5})}},
       {},
       "error: data[0].shape [3,5] must start with indices[0].shape [2]"},
      {"UnsortedSegmentSum",
       {{P({6, 4})}, {P({5}, DT_INT32)}, {ScalarI32(3)}},
       {},
       "error: segment_ids shape [5] is not a prefix of data shape [6,4]"},
      {"DynamicPartition",
       {{P({4, 3})}, {P({4}, DT_INT32)}},
       {A("num_partitions", int64_t{2})},
       "[?,3]; [?,3]"},
      {"DynamicPartition",
       {{P({4, 3})}, {P({4, 3, 1}, DT_INT32)}},
       {A("num_partitions", int64_t{2})},
       "error: data.shape [4,3] must start with partitions.shape [4,3,1]"},
  });
}

TEST(ShapeInferenceTest, ConvolutionAndPooling) {
  const auto ints = [](std::vector<int64_t> v) { return v; };
  Check({
      // MNIST's first conv layer.
      {"Conv2D",
       {{P({-1, 28, 28, 1})}, {P({5, 5, 1, 32})}},
       {A("strides", ints({1, 1, 1, 1})), A("padding", "SAME")},
       "[?,28,28,32]"},
      {"Conv2D",
       {{P({1, 7, 7, 3})}, {P({3, 3, 3, 8})}},
       {A("strides", ints({1, 2, 2, 1})), A("padding", "VALID")},
       "[1,3,3,8]"},
      {"Conv2D",
       {{P({8, 3, 32, 32})}, {P({5, 5, 3, 64})}},
       {A("strides", ints({1, 1, 2, 2})), A("padding", "SAME"), A("data_format", "NCHW")},
       "[8,64,16,16]"},
      {"Conv2D",
       {{P({1, 5, 5, 1})}, {P({3, 3, 1, 1})}},
       {A("strides", ints({1, 1, 1, 1})), A("padding", "EXPLICIT"),
        A("explicit_paddings", ints({0, 0, 1, 2, 1, 2, 0, 0}))},
       "[1,6,6,1]"},
      {"Conv2D",
       {{P({1, 5, 5, 1})}, {P({3, 3, 1, 1})}},
       {A("strides", ints({1, 1, 1})), A("padding", "SAME")},
       "error: The strides attribute must contain 4 values, but got 3"},
      {"Conv2D",
       {{P({1, 5, 5, 1})}, {P({3, 3, 1, 1})}},
       {A("strides", ints({1, 0, 1, 1})), A("padding", "SAME")},
       "error: strides[1] is 0"},
      {"Conv2D",
       {{P({1, 5, 5, 5})}, {P({3, 3, 2, 4})}},
       {A("strides", ints({1, 1, 1, 1})), A("padding", "SAME")},
       "error: Depth of input (5) is not a multiple of input depth of filter (2)"},
      // TF advisory 2022-124: an empty filter depth is an error, not SIGFPE.
      {"Conv2D",
       {{P({1, 0, 2, 1})}, {P({1, 1, 0, 1})}},
       {A("strides", ints({1, 1, 1, 1})), A("padding", "SAME")},
       "error: Depth of filter must not be 0"},
      {"Conv2D",
       {{P({1, 3, 3, 1})}, {P({5, 5, 1, 1})}},
       {A("strides", ints({1, 1, 1, 1})), A("padding", "VALID")},
       "error: Computed output size would be negative"},
      {"Conv2DBackpropInput",
       {{I32({8, 28, 28, 3})}, {P({5, 5, 3, 16})}, {P({8, 28, 28, 16})}},
       {A("strides", ints({1, 1, 1, 1})), A("padding", "SAME")},
       "[8,28,28,3]"},
      {"Conv2DBackpropFilter",
       {{P({8, 28, 28, 3})}, {I32({5, 5, 3, 16})}, {P({8, 28, 28, 16})}},
       {A("strides", ints({1, 1, 1, 1})), A("padding", "SAME")},
       "[5,5,3,16]"},
      {"MaxPool",
       {{P({-1, 28, 28, 32})}},
       {A("ksize", ints({1, 2, 2, 1})), A("strides", ints({1, 2, 2, 1})), A("padding", "SAME")},
       "[?,14,14,32]"},
      // The CIFAR-10 tutorial's pool: 3x3 window, stride 2, SAME.
      {"MaxPool",
       {{P({128, 24, 24, 64})}},
       {A("ksize", ints({1, 3, 3, 1})), A("strides", ints({1, 2, 2, 1})), A("padding", "SAME")},
       "[128,12,12,64]"},
      {"MaxPool",
       {{P({1, 4, 4, 1})}},
       {A("ksize", ints({1, 0, 2, 1})), A("strides", ints({1, 2, 2, 1})), A("padding", "SAME")},
       "error: ksize[1] is 0"},
      {"MaxPool",
       {{P({2, 4, 4, 1})}},
       {A("ksize", ints({2, 2, 2, 1})), A("strides", ints({1, 2, 2, 1})), A("padding", "SAME")},
       "error: Pooling is not supported on the batch dimension"},
      // As TF's shape function (its kernel alone would give an empty output).
      {"MaxPool",
       {{P({1, 4, 4, 2})}},
       {A("ksize", ints({1, 5, 5, 1})), A("strides", ints({1, 1, 1, 1})), A("padding", "VALID")},
       "error: Negative dimension size caused by subtracting 5 from 4"},
      {"AvgPool",
       {{P({1, 6, 6, 3})}},
       {A("ksize", ints({1, 3, 3, 1})), A("strides", ints({1, 3, 3, 1})), A("padding", "VALID")},
       "[1,2,2,3]"},
      // TF advisory 2022-100: a negative orig_input_shape.
      {"AvgPoolGrad",
       {{I32({-536870912, -536870912, -536870912, -536870912})}, {P({1, 2, 2, 3})}},
       {A("ksize", ints({1, 3, 3, 1})), A("strides", ints({1, 3, 3, 1})), A("padding", "VALID")},
       "error: dimensions must be >= -1"},
      {"MaxPoolGrad",
       {{P({1, 6, 6, 3})}, {P({1, 3, 3, 3})}, {P({1, 3, 3, 3})}},
       {A("ksize", ints({1, 2, 2, 1})), A("strides", ints({1, 2, 2, 1})), A("padding", "VALID")},
       "[1,6,6,3]"},
  });
}

TEST(ShapeInferenceTest, QuantizedInference) {
  const In r = S();  // a range end
  Check({
      {"QuantizedConv2D",
       {{P({1, 5, 6, 2}, DT_QUINT8)}, {P({3, 3, 2, 4}, DT_QUINT8)}, {r}, {r}, {r}, {r}},
       {A("strides", std::vector<int64_t>{1, 2, 2, 1}), A("padding", "SAME")},
       "[1,3,3,4]; []; []"},
      {"QuantizedConv2D",
       {{P({1, 5, 6, 2}, DT_QUINT8)}, {P({3, 3, 2, 4}, DT_QUINT8)}, {P({2})}, {r}, {r}, {r}},
       {A("strides", std::vector<int64_t>{1, 1, 1, 1}), A("padding", "VALID")},
       "error: Shape must be rank 0 but is rank 1"},
      {"QuantizedMaxPool",
       {{P({2, -1, 6, 3}, DT_QUINT8)}, {r}, {r}},
       {A("ksize", std::vector<int64_t>{1, 2, 2, 1}),
        A("strides", std::vector<int64_t>{1, 2, 2, 1}), A("padding", "VALID")},
       "[2,?,3,3]; []; []"},
      {"QuantizedMatMul",
       {{P({2, 3}, DT_QUINT8)}, {P({4, 3}, DT_QUINT8)}, {r}, {r}, {r}, {r}},
       {A("transpose_b", true)},
       "[2,4]; []; []"},
      {"QuantizedAdd",
       {{P({2, 3}, DT_QUINT8)}, {P({3}, DT_QUINT8)}, {r}, {r}, {r}, {r}},
       {},
       "[2,3]; []; []"},
      {"QuantizedBiasAdd",
       {{P({2, 3}, DT_QUINT8)}, {P({3}, DT_QUINT8)}, {r}, {r}, {r}, {r}},
       {A("out_type", DT_QINT32)},
       "[2,3]; []; []"},
      {"QuantizedConcat",
       {{ScalarI32(1)}, {P({2, 3}, DT_QUINT8), P({2, 5}, DT_QUINT8)}, {r, r}, {r, r}},
       {},
       "[2,8]; []; []"},
      {"QuantizedConcat",
       {{ScalarI32(1)}, {P({2, 3}, DT_QUINT8), P({3, 5}, DT_QUINT8)}, {r, r}, {r, r}},
       {},
       "error: Dimensions must be equal"},
      {"QuantizedReshape", {{P({2, 6}, DT_QUINT8)}, {I32({3, -1})}, {r}, {r}}, {}, "[3,4]; []; []"},
      {"Requantize",
       {{P({4, 2}, DT_QINT32)}, {r}, {r}, {r}, {r}},
       {A("out_type", DT_QUINT8)},
       "[4,2]; []; []"},
      {"RequantizationRange", {{P({4, 2}, DT_QINT32)}, {r}, {r}}, {}, "[]; []"},
  });
}

TEST(ShapeInferenceTest, NeuralNetworkLayers) {
  Check({
      {"BiasAdd", {{P({-1, 5, 5, 16})}, {P({16})}}, {}, "[?,5,5,16]"},
      {"BiasAdd", {{P({8, 16, 5, 5})}, {P({16})}}, {A("data_format", "NCHW")}, "[8,16,5,5]"},
      {"BiasAdd", {{P({2, 3})}, {P({4})}}, {}, "error: Must provide as many biases"},
      {"BiasAddGrad", {{P({8, 5, 5, 16})}}, {}, "[16]"},
      {"Softmax", {{P({8, 10})}}, {}, "[8,10]"},
      {"Softmax", {{S()}}, {}, "error: Shape must be at least rank 1"},
      {"SoftmaxCrossEntropyWithLogits", {{P({8, 10})}, {P({8, 10})}}, {}, "[8]; [8,10]"},
      {"SparseSoftmaxCrossEntropyWithLogits",
       {{P({8, 10})}, {P({8}, DT_INT64)}},
       {},
       "[8]; [8,10]"},
      {"SparseSoftmaxCrossEntropyWithLogits",
       {{P({8, 10})}, {P({7}, DT_INT64)}},
       {},
       "error: logits and labels must have the same first dimension"},
      {"LRN", {{P({128, 24, 24, 64})}}, {A("depth_radius", int64_t{4})}, "[128,24,24,64]"},
      {"LRN", {{P({1, 2, 2, 3})}}, {A("depth_radius", int64_t{-1})}, "error: depth_radius"},
      {"FusedBatchNormV3",
       {{P({8, 4, 4, 16})}, {P({16})}, {P({16})}, {P({0})}, {P({0})}},
       {},
       "[8,4,4,16]; [16]; [16]; [16]; [16]; <unknown>"},
      {"FusedBatchNormV3",
       {{P({8, 4, 4, 16})}, {P({15})}, {P({16})}, {P({16})}, {P({16})}},
       {},
       "error: Input 1 has shape [15] but x has 16 channels"},
      {"FusedBatchNormGradV3",
       {{P({8, 4, 4, 16})}, {P({8, 4, 4, 16})}, {P({16})}, {P({16})}, {P({16})}, {P({16})}},
       {},
       "[8,4,4,16]; [16]; [16]; [0]; [0]"},
      {"L2Loss", {{P({3, 4})}}, {}, "[]"},
      {"InTopKV2", {{P({8, 10})}, {P({8}, DT_INT32)}, {ScalarI32(5)}}, {}, "[8]"},
      {"TopKV2", {{P({3, 5})}, {ScalarI32(2)}}, {}, "[3,2]; [3,2]"},
      {"ReverseV2", {{P({3, -1})}, {I32({1})}}, {}, "[3,?]"},
      {"Where", {{P({3, 5}, DT_BOOL)}}, {}, "[?,2]"},
      {"DepthToSpace", {{P({2, 3, 4, 8})}}, {A("block_size", int64_t{2})}, "[2,6,8,2]"},
      {"SpaceToBatchND",
       {{P({2, 2, 4, 1})}, {I32({2, 2})}, {I32Matrix({0, 0, 2, 0}, 2)}},
       {},
       "[8,1,3,1]"},
      {"SpaceToBatchND",
       {{P({2, 2, 4, 1})}, {P({2}, DT_INT32)}, {P({2, 2}, DT_INT32)}},
       {},
       "[?,?,?,1]"},
      {"SpaceToBatchND",
       {{P({2, 3, 4, 1})}, {I32({2, 2})}, {I32Matrix({0, 0, 0, 0}, 2)}},
       {},
       "error: padded input dimension 1 (3 + 0 + 0) is not divisible by block_shape[0] = 2"},
      {"BatchToSpaceND",
       {{P({8, 1, 3, 1})}, {I32({2, 2})}, {I32Matrix({0, 0, 2, 0}, 2)}},
       {},
       "[2,2,4,1]"},
      {"BatchToSpaceND",
       {{P({6, 1, 3, 1})}, {I32({2, 2})}, {I32Matrix({0, 0, 0, 0}, 2)}},
       {},
       "error: batch 6 is not divisible by the product of block_shape, 4"},
      {"ResizeBilinear", {{P({2, 5, 5, 3})}, {I32({7, 9})}}, {}, "[2,7,9,3]"},
      {"ResizeNearestNeighbor", {{P({2, 5, 5, 3})}, {P({2}, DT_INT32)}}, {}, "[2,?,?,3]"},
      {"ResizeBilinear", {{P({5, 5, 3})}, {I32({7, 9})}}, {}, "error: rank"},
      {"ResizeBilinearGrad", {{P({2, 7, 9, 3})}, {P({2, 5, 5, 3})}}, {}, "[2,5,5,3]"},
      {"DepthwiseConv2dNative",
       {{P({1, 8, 8, 3})}, {P({3, 3, 3, 2})}},
       {A("strides", std::vector<int64_t>{1, 2, 2, 1}), A("padding", "SAME")},
       "[1,4,4,6]"},
      {"DepthwiseConv2dNative",
       {{P({1, 8, 8, 3})}, {P({3, 3, 4, 2})}},
       {A("strides", std::vector<int64_t>{1, 1, 1, 1}), A("padding", "SAME")},
       "error: Depth of input (3) is not a multiple of input depth of filter (4)"},
      {"DepthwiseConv2dNative",
       {{P({1, 8, 8, 4})}, {P({3, 3, 2, 2})}},
       {A("strides", std::vector<int64_t>{1, 1, 1, 1}), A("padding", "SAME")},
       "error: must equal the filter's in_channels (2)"},
      {"FusedBatchNormV2",
       {{P({8, 4, 4, 16})}, {P({16})}, {P({16})}, {P({0})}, {P({0})}},
       {},
       "[8,4,4,16]; [16]; [16]; [16]; [16]"},
      {"SpaceToDepth", {{P({2, 4, -1, 3})}}, {A("block_size", int64_t{2})}, "[2,2,?,12]"},
      {"SpaceToDepth",
       {{P({2, 3, 4, 3})}},
       {A("block_size", int64_t{2})},
       "error: Image dimension 3 must be divisible by block_size 2"},
      {"TopKV2",
       {{P({3, 5})}, {ScalarI32(7)}},
       {},
       "error: input must have at least k columns. Had 5, needed 7"},
  });
}

TEST(ShapeInferenceTest, Einsum) {
  const auto eq = [](const char* e, int64_t n) { return AttrList{A("equation", e), A("N", n)}; };
  Check({
      {"Einsum", {{P({2, 3}), P({3, 5})}}, eq("ij,jk->ik", 2), "[2,5]"},
      {"Einsum", {{P({2, 3}), P({3, 5})}}, eq("ij,jk", 2), "[2,5]"},
      {"Einsum", {{P({7, 1, 2, 3}), P({4, 3, 5})}}, eq("...ij,...jk->...ik", 2), "[7,4,2,5]"},
      {"Einsum", {{P({-1, 3}), P({3, 5})}}, eq("ij,jk->ki", 2), "[5,?]"},
      {"Einsum", {{P({2, 3})}}, eq("ij->", 1), "[]"},
      {"Einsum", {{P({2, 3}), P({4, 5})}}, eq("ij,jk->ik", 2), "error: label 'j' has size 3"},
      {"Einsum", {{P({2, 3})}}, eq("ij,jk->ik", 1), "error: 2 input terms for 1 inputs"},
  });
}

TEST(ShapeInferenceTest, RandomOps) {
  Check({
      {"RandomUniform", {{I32({2, 3})}}, {A("dtype", DT_FLOAT)}, "[2,3]"},
      {"TruncatedNormal", {{P({4}, DT_INT32)}}, {A("dtype", DT_FLOAT)}, "[?,?,?,?]"},
      {"RandomStandardNormal",
       {{I32({2, -5})}},
       {A("dtype", DT_FLOAT)},
       "error: dimensions must be >= -1"},
      {"RandomUniform",
       {{I32({65536, 65536, 65536, 65536})}},
       {A("dtype", DT_FLOAT)},
       "error: more elements than fit in int64"},
  });
}

TEST(ShapeInferenceTest, ConstAndPlaceholders) {
  Check({
      {"Identity", {{P({3, -1})}}, {}, "[3,?]"},
      {"PlaceholderWithDefault",
       {{P({3})}},
       {A("dtype", DT_FLOAT), A("shape", PartialTensorShape({-1}))},
       "[?]"},
      {"PlaceholderWithDefault",
       {{P({3})}},
       {A("dtype", DT_FLOAT), A("shape", PartialTensorShape({2}))},
       "error: The default value's shape [3] is not compatible with the shape attr [2]"},
  });
}

TEST(ShapeInferenceTest, VariablesAndUpdates) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root, DT_FLOAT, PartialTensorShape({3, 4}));
  EXPECT_EQ(ops::ReadVariableOp(root, v, DT_FLOAT).value.shape().DebugString(), "[3,4]");
  Output idx = ops::Placeholder(root, DT_INT32, ops::Placeholder::Shape({5}));
  EXPECT_EQ(ops::ResourceGather(root, v, idx, DT_FLOAT).output.shape().DebugString(), "[5,4]");
  TW_ASSERT_OK(root.status());
  ops::AssignVariableOp(root, v, ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({2})),
                        ops::AssignVariableOp::ValidateShape(true));
  EXPECT_THAT(root.status(),
              ::towerflow::testing::StatusIs(
                  absl::StatusCode::kInvalidArgument,
                  "Cannot assign a value of shape [2] to a variable of shape [3,4]"));

  Scope r2 = Scope::NewRootScope();
  Output var = ops::VariableV2(r2, PartialTensorShape({3}), DT_FLOAT);
  Output accum = ops::VariableV2(r2, PartialTensorShape({3}), DT_FLOAT);
  Output out = ops::ApplyMomentum(
      r2, var, accum, 0.1f, ops::Placeholder(r2, DT_FLOAT, ops::Placeholder::Shape({3})), 0.9f);
  EXPECT_EQ(out.shape().DebugString(), "[3]");
  ops::ApplyMomentum(r2, var, accum, 0.1f,
                     ops::Placeholder(r2, DT_FLOAT, ops::Placeholder::Shape({4})), 0.9f);
  EXPECT_THAT(r2.status(),
              ::towerflow::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                             "grad has shape [4] but the variable has shape [3]"));
  Scope r3 = Scope::NewRootScope();
  ops::ApplyGradientDescent(r3, ops::VariableV2(r3, PartialTensorShape({3}), DT_FLOAT),
                            ops::Const(r3, {0.1f}), ops::Placeholder(r3, DT_FLOAT));
  EXPECT_THAT(r3.status(), ::towerflow::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                          "alpha must be a scalar, got shape [1]"));
}

TEST(ShapeInferenceTest, SummariesAndAsserts) {
  Check({
      {"ScalarSummary", {{S(DT_STRING)}, {S()}}, {}, "[]"},
      {"ScalarSummary",
       {{P({2}, DT_STRING)}, {P({3})}},
       {},
       "error: tags and values must have the same shape"},
      {"HistogramSummary", {{S(DT_STRING)}, {P({10, 10})}}, {}, "[]"},
      {"MergeSummary", {{S(DT_STRING), S(DT_STRING)}}, {}, "[]"},
      // Vectors of summaries too, as TF's.
      {"MergeSummary", {{S(DT_STRING), P({2}, DT_STRING)}}, {}, "[]"},
  });
}

// The tf.sets ops (TF 2.21's shapes and messages in graph mode).
TEST(ShapeInferenceTest, SetOperations) {
  const AttrList u = {A("set_operation", "union"), A("T", DT_INT32)};
  const auto sparse = [](int64_t rank) {
    return Args{{P({-1, rank}, DT_INT64)}, {P({-1}, DT_INT32)}, {P({rank}, DT_INT64)}};
  };
  const auto concat = [](Args a, const Args& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  Check({
      {"DenseToDenseSetOperation",
       {{P({2, 3, 4}, DT_INT32)}, {P({2, 3, 5}, DT_INT32)}},
       u,
       "[?,3]; [?]; [3]"},
      {"DenseToDenseSetOperation",
       {{Unknown(DT_INT32)}, {P({2, 3, 5}, DT_INT32)}},
       u,
       "[?,3]; [?]; [3]"},
      {"DenseToDenseSetOperation",
       {{P({2, 4}, DT_INT32)}, {P({3, 5}, DT_INT32)}},
       u,
       "error: Shapes [2] and [3] are incompatible: dimension 0 is 2 vs 3"},
      {"DenseToDenseSetOperation",
       {{P({2, 4}, DT_INT32)}, {P({1, 3, 5}, DT_INT32)}},
       u,
       "error: Shape must be rank 2 but is rank 3"},
      {"DenseToDenseSetOperation",
       {{P({4}, DT_INT32)}, {P({5}, DT_INT32)}},
       u,
       "error: Shape must be at least rank 2 but is rank 1"},
      {"DenseToSparseSetOperation", concat({{P({2, 4}, DT_INT32)}}, sparse(2)), u,
       "[?,2]; [?]; [2]"},
      {"DenseToSparseSetOperation", concat({{P({2, 4}, DT_INT32)}}, sparse(3)), u,
       "error: Dimension must be 2 but is 3"},
      {"DenseToSparseSetOperation", concat({{Unknown(DT_INT32)}}, sparse(-1)), u,
       "[?,?]; [?]; [?]"},
      {"SparseToSparseSetOperation", concat(sparse(3), sparse(-1)), u, "[?,3]; [?]; [3]"},
      {"SparseToSparseSetOperation", concat(sparse(3), sparse(2)), u,
       "error: Dimension must be 3 but is 2"},
      {"SparseToSparseSetOperation", concat(sparse(1), sparse(1)), u,
       "error: Input 0, expected rank >= 2, got 1."},
      {"SparseToSparseSetOperation", concat(sparse(-1), sparse(1)), u,
       "error: Input 1, expected rank >= 2, got 1."},
      {"SetSize", sparse(3), {A("T", DT_INT32)}, "<unknown>"},
  });
}

// ParseExampleV2: a batch keeps its dimension, a scalar has none; sparse
// outputs are rank + 1 wide.
TEST(ShapeInferenceTest, ParseExampleV2) {
  for (const PartialTensorShape& in : {PartialTensorShape({-1}), PartialTensorShape({})}) {
    Scope s = Scope::NewRootScope();
    const Output serialized = ops::Placeholder(s, DT_STRING, ops::Placeholder::Shape(in));
    const Output no_keys =
        ops::Const(s, Input::Initializer(Tensor(DT_STRING, TensorShape({0})).AsProto()));
    const Output x_key =
        ops::Const(s, Input::Initializer(Tensor(DT_STRING, TensorShape({1})).AsProto()));
    const Output x_default =
        ops::Const(s, Input::Initializer(Tensor(DT_FLOAT, TensorShape({0})).AsProto()));
    ops::ParseExampleV2 parse(s, serialized, no_keys, x_key, x_key, no_keys, {x_default}, 1,
                              {DT_INT64}, {}, {}, {PartialTensorShape({3})});
    ASSERT_TRUE(s.ok()) << s.status();
    const bool scalar = in.dims() == 0;
    EXPECT_EQ(parse.dense_values[0].shape(),
              scalar ? PartialTensorShape({3}) : PartialTensorShape({-1, 3}));
    EXPECT_EQ(parse.sparse_indices[0].shape(), PartialTensorShape({-1, scalar ? 1 : 2}));
    EXPECT_EQ(parse.sparse_shapes[0].shape(), PartialTensorShape({scalar ? 1 : 2}));
    EXPECT_EQ(parse.sparse_values[0].shape(), PartialTensorShape({-1}));
  }
}

// ParseSequenceExampleV2: a batch of [3] keeps its dimension before a
// feature list's steps; ragged splits are one longer than the batch (a
// scalar's are scalars, as TF's); sparse outputs of feature lists are one
// wider than the context's.
TEST(ShapeInferenceTest, ParseSequenceExampleV2) {
  for (const PartialTensorShape& in : {PartialTensorShape({3}), PartialTensorShape({})}) {
    Scope s = Scope::NewRootScope();
    const Output serialized = ops::Placeholder(s, DT_STRING, ops::Placeholder::Shape(in));
    const auto keys = [&](int64_t n) {
      return ops::Const(s, Input::Initializer(Tensor(DT_STRING, TensorShape({n})).AsProto()));
    };
    const Output empty =
        ops::Const(s, Input::Initializer(Tensor(DT_BOOL, TensorShape({1})).AsProto()));
    const Output no_names = keys(0);
    const Output one = keys(1);
    ops::ParseSequenceExampleV2 parse(s, serialized, no_names, one, no_names, one, one, one, one,
                                      empty, {},
                                      ops::ParseSequenceExampleV2::NcontextSparse(1)
                                          .ContextSparseTypes({DT_INT64})
                                          .ContextRaggedValueTypes({DT_FLOAT})
                                          .ContextRaggedSplitTypes({DT_INT64})
                                          .NfeatureListSparse(1)
                                          .NfeatureListDense(1)
                                          .FeatureListDenseTypes({DT_FLOAT})
                                          .FeatureListSparseTypes({DT_STRING})
                                          .FeatureListRaggedValueTypes({DT_INT64})
                                          .FeatureListRaggedSplitTypes({DT_INT32})
                                          .FeatureListDenseShapes({PartialTensorShape({2})}));
    ASSERT_TRUE(s.ok()) << s.status();
    const bool scalar = in.dims() == 0;
    EXPECT_EQ(parse.context_sparse_indices[0].shape(), PartialTensorShape({-1, scalar ? 1 : 2}));
    EXPECT_EQ(parse.context_ragged_row_splits[0].shape(),
              scalar ? PartialTensorShape::Scalar() : PartialTensorShape({4}));
    EXPECT_EQ(parse.feature_list_sparse_shapes[0].shape(), PartialTensorShape({scalar ? 2 : 3}));
    EXPECT_EQ(parse.feature_list_dense_values[0].shape(),
              scalar ? PartialTensorShape({-1, 2}) : PartialTensorShape({3, -1, 2}));
    EXPECT_EQ(parse.feature_list_dense_lengths[0].shape(), in);
    EXPECT_EQ(parse.feature_list_ragged_inner_splits[0].shape(), PartialTensorShape({-1}));
  }
}

}  // namespace
}  // namespace towerflow
