// Op specs -> OpDefs, attr values and NodeDef helpers.
#include "graph/op_def_builder.h"

#include <limits>

#include "core/proto_io.h"
#include "core/tensor_proto_util.h"
#include "framework/attr_value_util.h"
#include "framework/node_def_util.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

absl::Status Ok(InferenceContext*) { return absl::OkStatus(); }

TEST(OpDefBuilderTest, ParsesTensorFlowSpecs) {
  TW_ASSERT_OK_AND_ASSIGN(OpRegistrationData data,
                          OpDefBuilder("Test", "ops/test_ops.cc")
                              .Input("a: T")
                              .Input("b: N * int64")
                              .Input("c: Ref(T)")
                              .Input("d: types")
                              .Output("out: float")
                              .Attr("T: {float, double} = DT_FLOAT")
                              .Attr("N: int >= 2")
                              .Attr("types: list(type) >= 0")
                              .Attr("padding: {'SAME', 'VALID'} = 'SAME'")
                              .Attr("ksize: list(int) >= 4 = [1, 2, 2, 1]")
                              .Attr("shape: shape = { unknown_rank: true }")
                              .Attr("eps: float = 1e-4")
                              .Attr("name_: string = 'a\\'b'")
                              .AttrAddedAfterTF1("late: bool = false")
                              .AttrAddedAfterTF1("low: float = -inf")
                              .SetIsStateful()
                              .SetShapeFn(Ok)
                              .Finalize());
  const OpDef& op = data.op_def;
  EXPECT_EQ(data.family, "test_ops");
  EXPECT_TRUE(op.is_stateful());
  EXPECT_EQ(op.input_arg(0).type_attr(), "T");
  EXPECT_EQ(op.input_arg(1).number_attr(), "N");
  EXPECT_EQ(op.input_arg(1).type(), DT_INT64);
  EXPECT_TRUE(op.input_arg(2).is_ref());
  EXPECT_EQ(op.input_arg(3).type_list_attr(), "types");
  EXPECT_EQ(op.output_arg(0).type(), DT_FLOAT);
  EXPECT_EQ(op.attr(0).allowed_values().list().type_size(), 2);
  EXPECT_EQ(op.attr(0).default_value().type(), DT_FLOAT);
  EXPECT_EQ(op.attr(1).minimum(), 2);
  EXPECT_EQ(op.attr(3).type(), "string");
  EXPECT_EQ(op.attr(3).allowed_values().list().s(1), "VALID");
  EXPECT_EQ(SummarizeAttrValue(op.attr(4).default_value()), "[1, 2, 2, 1]");
  EXPECT_TRUE(op.attr(5).default_value().shape().unknown_rank());
  EXPECT_FLOAT_EQ(op.attr(6).default_value().f(), 1e-4f);
  EXPECT_EQ(op.attr(7).default_value().s(), "a'b");
  EXPECT_EQ(data.added_after_tf1.count("late"), 1u);
  EXPECT_EQ(op.attr(9).default_value().f(), -std::numeric_limits<float>::infinity());
}

TEST(OpDefBuilderTest, TypeSetsExpand) {
  TW_ASSERT_OK_AND_ASSIGN(OpRegistrationData data, OpDefBuilder("Sets")
                                                       .Attr("T: {numbertype, variant}")
                                                       .Attr("U: realnumbertype")
                                                       .SetShapeFn(Ok)
                                                       .Finalize());
  EXPECT_EQ(data.op_def.attr(0).allowed_values().list().type_size(), 20);
  EXPECT_EQ(data.op_def.attr(1).allowed_values().list().type_size(), 12);
}

TEST(OpDefBuilderTest, BadSpecsAreErrors) {
  const auto fails = [](OpDefBuilder b, const std::string& message) {
    EXPECT_THAT(b.SetShapeFn(Ok).Finalize(), StatusIs(absl::StatusCode::kInvalidArgument, message));
  };
  fails(OpDefBuilder("bad name"), "invalid op name");
  fails(OpDefBuilder("X").Input("a: T"), "'T' in 'a: T' is neither a type nor a type attr");
  fails(OpDefBuilder("X").Attr("T: floaty"), "unknown attr type 'floaty'");
  fails(OpDefBuilder("X").Attr("T: {float, flot}"), "unknown type 'flot'");
  fails(OpDefBuilder("X").Attr("n: int = abc"), "cannot parse 'abc' as a value of type int");
  fails(OpDefBuilder("X").Attr("n: int >= 2 = 1"), "must be at least minimum 2");
  fails(OpDefBuilder("X").Attr("p: {'A', 'B'} = 'C'"), "is not in the list of allowed values");
  fails(OpDefBuilder("X").Attr("n: int").Attr("n: int"), "duplicate attr 'n'");
  fails(OpDefBuilder("X").Attr("T: type").Input("a: N * T"), "must name an int attr");
  fails(OpDefBuilder("X").Input("A: float"), "bad argument name 'A'");
  fails(OpDefBuilder("X").AttrAddedAfterTF1("x: int"), "needs a default");
  EXPECT_THAT(OpDefBuilder("X").Finalize(),
              StatusIs(absl::StatusCode::kInvalidArgument, "no shape function"));
}

TEST(OpRegistryTest, DuplicateRegistrationIsAlreadyExists) {
  OpRegistry registry;
  TW_ASSERT_OK(registry.Register(OpDefBuilder("Once").SetShapeFn(Ok)));
  EXPECT_THAT(registry.Register(OpDefBuilder("Once").SetShapeFn(Ok)),
              StatusIs(absl::StatusCode::kAlreadyExists, "registered twice"));
  EXPECT_EQ(registry.registration_errors().size(), 1u);
  EXPECT_THAT(registry.LookUp("Twice"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(registry.ListOps(), std::vector<std::string>{"Once"});
}

TEST(AttrValueTest, TypeChecks) {
  AttrValue v;
  SetAttrValue(std::vector<int64_t>{1, 2}, &v);
  TW_EXPECT_OK(AttrValueHasType(v, "list(int)"));
  EXPECT_THAT(AttrValueHasType(v, "list(float)"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "a value of type 'list(int)' where 'list(float)' is expected"));
  AttrValue empty_list;
  empty_list.mutable_list();
  TW_EXPECT_OK(AttrValueHasType(empty_list, "list(shape)"));
  AttrValue mixed;
  mixed.mutable_list()->add_i(1);
  mixed.mutable_list()->add_f(2);
  EXPECT_THAT(AttrValueHasType(mixed, "list(int)"),
              StatusIs(absl::StatusCode::kInvalidArgument, "mixes values of types int and float"));
  AttrValue unset;
  EXPECT_THAT(AttrValueHasType(unset, "int"),
              StatusIs(absl::StatusCode::kInvalidArgument, "no value set"));
  AttrValue bad_shape;
  bad_shape.mutable_shape()->add_dim()->set_size(-7);
  EXPECT_THAT(AttrValueHasType(bad_shape, "shape"),
              StatusIs(absl::StatusCode::kInvalidArgument, "-7"));
}

TEST(AttrValueTest, Summaries) {
  AttrValue v;
  SetAttrValue(PartialTensorShape({-1, 784}), &v);
  EXPECT_EQ(SummarizeAttrValue(v), "[?,784]");
  SetAttrValue(DT_INT64, &v);
  EXPECT_EQ(SummarizeAttrValue(v), "int64");
  SetAttrValue("NHWC", &v);
  EXPECT_EQ(SummarizeAttrValue(v), "\"NHWC\"");
  SetAttrValue(MakeTensorProto<float>({1, 2}, TensorShape({2})), &v);
  EXPECT_EQ(SummarizeAttrValue(v), "float [2] {1, 2}");
  AttrValue a, b;
  SetAttrValue(std::vector<std::string>{"x"}, &a);
  SetAttrValue(std::vector<std::string>{"x"}, &b);
  EXPECT_TRUE(AreAttrValuesEqual(a, b));
}

TEST(NodeDefUtilTest, ParseTensorNames) {
  TW_ASSERT_OK_AND_ASSIGN(TensorId a, ParseTensorName("a/b:3"));
  EXPECT_EQ(a.node, "a/b");
  EXPECT_EQ(a.index, 3);
  TW_ASSERT_OK_AND_ASSIGN(TensorId c, ParseTensorName("^c"));
  EXPECT_TRUE(c.IsControl());
  EXPECT_EQ(TensorIdString("x", 0), "x");
  EXPECT_EQ(TensorIdString("x", 2), "x:2");
  EXPECT_EQ(TensorIdString("x", kControlSlot), "^x");
  for (const char* bad : {"", "^", ":1"}) {
    EXPECT_THAT(ParseTensorName(bad),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "names no node"))
        << bad;
  }
  for (const char* bad : {"x:", "x:1.5", "x:99999999999"}) {
    EXPECT_THAT(ParseTensorName(bad),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "has a bad output index"))
        << bad;
  }
}

TEST(NodeDefUtilTest, NameRules) {
  EXPECT_TRUE(IsValidNodeName("tower_1/conv1/Conv2D"));
  EXPECT_TRUE(IsValidNodeName(".hidden>x"));
  EXPECT_TRUE(IsValidNodeName("infeed-enqueue-image-0"));  // TF allows dashes after the first
  EXPECT_FALSE(IsValidNodeName("-leading"));
  EXPECT_FALSE(IsValidNodeName("_leading"));
  EXPECT_FALSE(IsValidNodeName("a b"));
  EXPECT_FALSE(IsValidNodeName("a:0"));
  EXPECT_TRUE(IsValidOpName("_Send"));
  EXPECT_FALSE(IsValidOpName("Mat Mul"));
}

TEST(NodeDefUtilTest, TypedAttrReads) {
  NodeDef def;
  TW_ASSERT_OK(ParseTextProto(
      "attr { key: 'big' value { i: 5000000000 } } attr { key: 'k' value { list { i: 1 i: 3 } } "
      "} attr { key: 's' value { s: 'x' } }",
      &def));
  int32_t small;
  EXPECT_THAT(GetNodeAttr(def, "big", &small),
              StatusIs(absl::StatusCode::kInvalidArgument, "does not fit in int32"));
  std::vector<int32_t> k;
  TW_ASSERT_OK(GetNodeAttr(def, "k", &k));
  EXPECT_EQ(k, (std::vector<int32_t>{1, 3}));
  float f;
  EXPECT_THAT(GetNodeAttr(def, "s", &f),
              StatusIs(absl::StatusCode::kInvalidArgument, "where 'float' is expected"));
  EXPECT_THAT(GetNodeAttr(def, "missing", &f),
              StatusIs(absl::StatusCode::kInvalidArgument, "No attr named 'missing'"));
}

}  // namespace
}  // namespace towerflow
