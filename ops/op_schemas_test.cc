// The op registry: every schema registered cleanly, and the schemas agree
// with TensorFlow's OpDefs (names, argument order, attr types and defaults,
// allowed values) where graphs depend on them.
#include <set>

#include "absl/strings/str_join.h"
#include "framework/attr_value_util.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

TEST(OpSchemasTest, EveryRegistrationSucceeded) {
  EXPECT_TRUE(OpRegistry::Global()->registration_errors().empty())
      << ::testing::PrintToString(OpRegistry::Global()->registration_errors());
  EXPECT_GT(OpRegistry::Global()->ListOps().size(), 190u);
}

const OpDef& Op(const std::string& name) {
  const OpRegistrationData* data = OpRegistry::Global()->Find(name);
  EXPECT_NE(data, nullptr) << name;
  static const OpDef* const kEmpty = new OpDef;
  return data == nullptr ? *kEmpty : data->op_def;
}

std::string Args(const google::protobuf::RepeatedPtrField<OpDef::ArgDef>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::string t = !a.type_list_attr().empty() ? a.type_list_attr()
                    : !a.type_attr().empty()    ? a.type_attr()
                                                : DataTypeString(a.type());
    if (!a.number_attr().empty()) t = a.number_attr() + "*" + t;
    if (a.is_ref()) t = "Ref(" + t + ")";
    out.push_back(a.name() + ":" + t);
  }
  return absl::StrJoin(out, ", ");
}

// "name:type=default" for each attr, in order.
std::string Attrs(const OpDef& op) {
  std::vector<std::string> out;
  for (const auto& a : op.attr()) {
    std::string s = a.name() + ":" + a.type();
    if (a.has_default_value()) s += "=" + SummarizeAttrValue(a.default_value());
    out.push_back(s);
  }
  return absl::StrJoin(out, ", ");
}

struct Signature {
  const char* op;
  const char* inputs;
  const char* outputs;
  const char* attrs;
};

// From OP_FACTS.md (TensorFlow's ops_history / REGISTER_OP).
const Signature kSignatures[] = {
    {"MatMul", "a:T, b:T", "product:T",
     "transpose_a:bool=false, transpose_b:bool=false, T:type, grad_a:bool=false, "
     "grad_b:bool=false"},
    {"Placeholder", "", "output:dtype", "dtype:type, shape:shape=<unknown>"},
    {"Const", "", "output:dtype", "value:tensor, dtype:type"},
    {"VariableV2", "", "ref:Ref(dtype)",
     "shape:shape, dtype:type, container:string=\"\", shared_name:string=\"\""},
    {"Assign", "ref:Ref(T), value:T", "output_ref:Ref(T)",
     "T:type, validate_shape:bool=true, use_locking:bool=true"},
    {"VarHandleOp", "", "resource:resource",
     "container:string=\"\", shared_name:string=\"\", debug_name:string=\"\", dtype:type, "
     "shape:shape, allowed_devices:list(string)=[]"},
    {"ReadVariableOp", "resource:resource", "value:dtype", "dtype:type"},
    {"AssignVariableOp", "resource:resource, value:dtype", "",
     "dtype:type, validate_shape:bool=false"},
    {"Sum", "input:T, reduction_indices:Tidx", "output:T",
     "T:type, keep_dims:bool=false, Tidx:type=int32"},
    {"ArgMax", "input:T, dimension:Tidx", "output:output_type",
     "T:type, Tidx:type=int32, output_type:type=int64"},
    {"Cast", "x:SrcT", "y:DstT", "SrcT:type, DstT:type, Truncate:bool=false"},
    {"ConcatV2", "values:N*T, axis:Tidx", "output:T", "N:int, T:type, Tidx:type=int32"},
    {"Split", "split_dim:int32, value:T", "output:num_split*T", "num_split:int, T:type"},
    {"SplitV", "value:T, size_splits:Tlen, split_dim:int32", "output:num_split*T",
     "num_split:int, T:type, Tlen:type=int64"},
    {"Squeeze", "input:T", "output:T", "T:type, squeeze_dims:list(int)=[]"},
    {"StridedSlice", "input:T, begin:Index, end:Index, strides:Index", "output:T",
     "T:type, Index:type, begin_mask:int=0, end_mask:int=0, ellipsis_mask:int=0, "
     "new_axis_mask:int=0, shrink_axis_mask:int=0"},
    {"Fill", "dims:index_type, value:T", "output:T", "T:type, index_type:type=int32"},
    {"GatherV2", "params:Tparams, indices:Tindices, axis:Taxis", "output:Tparams",
     "batch_dims:int=0, Tparams:type, Tindices:type, Taxis:type"},
    {"Conv2D", "input:T, filter:T", "output:T",
     "T:type, strides:list(int), use_cudnn_on_gpu:bool=true, padding:string, "
     "explicit_paddings:list(int)=[], data_format:string=\"NHWC\", "
     "dilations:list(int)=[1, 1, 1, 1]"},
    {"Conv2DBackpropInput", "input_sizes:int32, filter:T, out_backprop:T", "output:T",
     "T:type, strides:list(int), use_cudnn_on_gpu:bool=true, padding:string, "
     "explicit_paddings:list(int)=[], data_format:string=\"NHWC\", "
     "dilations:list(int)=[1, 1, 1, 1]"},
    {"MaxPool", "input:T", "output:T",
     "T:type=float, ksize:list(int), strides:list(int), padding:string, "
     "explicit_paddings:list(int)=[], data_format:string=\"NHWC\""},
    {"AvgPoolGrad", "orig_input_shape:int32, grad:T", "output:T",
     "ksize:list(int), strides:list(int), padding:string, data_format:string=\"NHWC\", "
     "T:type"},
    {"LRN", "input:T", "output:T",
     "depth_radius:int=5, bias:float=1, alpha:float=1, beta:float=0.5, T:type=float"},
    {"FusedBatchNormV3", "x:T, scale:U, offset:U, mean:U, variance:U",
     "y:T, batch_mean:U, batch_variance:U, reserve_space_1:U, reserve_space_2:U, "
     "reserve_space_3:U",
     "T:type, U:type, epsilon:float=0.0001, exponential_avg_factor:float=1, "
     "data_format:string=\"NHWC\", is_training:bool=true"},
    {"SparseSoftmaxCrossEntropyWithLogits", "features:T, labels:Tlabels", "loss:T, backprop:T",
     "T:type, Tlabels:type=int64"},
    {"ApplyAdam",
     "var:Ref(T), m:Ref(T), v:Ref(T), beta1_power:T, beta2_power:T, lr:T, beta1:T, beta2:T, "
     "epsilon:T, grad:T",
     "out:Ref(T)", "T:type, use_locking:bool=false, use_nesterov:bool=false"},
    {"ResourceApplyMomentum", "var:resource, accum:resource, lr:T, grad:T, momentum:T", "",
     "T:type, use_locking:bool=false, use_nesterov:bool=false"},
    {"ApplyGradientDescent", "var:Ref(T), alpha:T, delta:T", "out:Ref(T)",
     "T:type, use_locking:bool=false"},
    {"TruncatedNormal", "shape:T", "output:dtype", "seed:int=0, seed2:int=0, dtype:type, T:type"},
    {"Print", "input:T, data:U", "output:T",
     "T:type, U:list(type), message:string=\"\", first_n:int=-1, summarize:int=3"},
    {"ScalarSummary", "tags:string, values:T", "summary:string", "T:type"},
    {"HistogramSummary", "tag:string, values:T", "summary:string", "T:type=float"},
    {"MergeSummary", "inputs:N*string", "summary:string", "N:int"},
    {"SaveV2", "prefix:string, tensor_names:string, shape_and_slices:string, tensors:dtypes", "",
     "dtypes:list(type)"},
    {"_Recv", "", "tensor:tensor_type",
     "tensor_type:type, tensor_name:string, send_device:string, send_device_incarnation:int, "
     "recv_device:string, client_terminated:bool=false"},
    {"BroadcastGradientArgs", "s0:T, s1:T", "r0:T, r1:T", "T:type=int32"},
    {"Select", "condition:bool, t:T, e:T", "output:T", "T:type"},
    {"NcclAllReduce", "input:T", "data:T",
     "reduction:string, T:type, num_devices:int, shared_name:string"},
    {"StackV2", "max_size:int32", "handle:resource", "elem_type:type, stack_name:string=\"\""},
    {"StackPushV2", "handle:resource, elem:T", "output:T", "T:type, swap_memory:bool=false"},
    {"StackPopV2", "handle:resource", "elem:elem_type", "elem_type:type"},
    {"StackCloseV2", "handle:resource", "", ""},
};

TEST(OpSchemasTest, SignaturesMatchTensorFlow) {
  for (const Signature& s : kSignatures) {
    const OpDef& op = Op(s.op);
    EXPECT_EQ(Args(op.input_arg()), s.inputs) << s.op;
    EXPECT_EQ(Args(op.output_arg()), s.outputs) << s.op;
    EXPECT_EQ(Attrs(op), s.attrs) << s.op;
  }
}

std::vector<std::string> AllowedStrings(const std::string& op, const std::string& attr) {
  for (const auto& a : Op(op).attr()) {
    if (a.name() == attr) {
      return std::vector<std::string>(a.allowed_values().list().s().begin(),
                                      a.allowed_values().list().s().end());
    }
  }
  return {};
}

TEST(OpSchemasTest, AllowedValuesMatchTensorFlow) {
  EXPECT_EQ(AllowedStrings("Conv2D", "padding"),
            (std::vector<std::string>{"SAME", "VALID", "EXPLICIT"}));
  EXPECT_EQ(AllowedStrings("AvgPool", "padding"), (std::vector<std::string>{"SAME", "VALID"}));
  EXPECT_EQ(AllowedStrings("NcclAllReduce", "reduction"),
            (std::vector<std::string>{"min", "max", "prod", "sum"}));
  EXPECT_EQ(AllowedStrings("FusedBatchNormV3", "data_format"),
            (std::vector<std::string>{"NHWC", "NCHW", "NDHWC", "NCDHW"}));
  const OpDef& softmax = Op("Softmax");
  std::set<int> types(softmax.attr(0).allowed_values().list().type().begin(),
                      softmax.attr(0).allowed_values().list().type().end());
  EXPECT_EQ(types, (std::set<int>{DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE}));
}

TEST(OpSchemasTest, FlagsMatchTensorFlow) {
  EXPECT_TRUE(Op("VariableV2").is_stateful());
  EXPECT_TRUE(Op("RandomUniform").is_stateful());
  EXPECT_TRUE(Op("NcclAllReduce").is_stateful());
  EXPECT_TRUE(Op("StackPopV2").is_stateful());
  EXPECT_FALSE(Op("MatMul").is_stateful());
  EXPECT_TRUE(Op("AddN").is_aggregate());
  EXPECT_TRUE(Op("AddN").is_commutative());
  EXPECT_TRUE(Op("Mul").is_commutative());
  EXPECT_FALSE(Op("Sub").is_commutative());
  EXPECT_TRUE(Op("Assign").allows_uninitialized_input());
}

TEST(OpSchemasTest, OpsOfTheSeedModelsAndTheirGradientsAreAllRegistered) {
  // Issue 4's op list, the ops of the TF fixtures, and the Send/Recv pairs.
  for (const char* op : {"Const",
                         "Identity",
                         "IdentityN",
                         "Placeholder",
                         "PlaceholderWithDefault",
                         "Reshape",
                         "Shape",
                         "ShapeN",
                         "Size",
                         "Rank",
                         "ExpandDims",
                         "Squeeze",
                         "Transpose",
                         "ConcatV2",
                         "Split",
                         "SplitV",
                         "Pack",
                         "Unpack",
                         "Slice",
                         "StridedSlice",
                         "Pad",
                         "Tile",
                         "Fill",
                         "ZerosLike",
                         "OnesLike",
                         "Cast",
                         "GatherV2",
                         "ResourceGather",
                         "OneHot",
                         "BroadcastTo",
                         "BroadcastGradientArgs",
                         "StopGradient",
                         "PreventGradient",
                         "Select",
                         "SelectV2",
                         "Add",
                         "AddV2",
                         "AddN",
                         "Sub",
                         "Mul",
                         "RealDiv",
                         "Div",
                         "FloorDiv",
                         "Maximum",
                         "Minimum",
                         "Neg",
                         "Abs",
                         "Square",
                         "Sqrt",
                         "Rsqrt",
                         "Exp",
                         "Log",
                         "Pow",
                         "Sigmoid",
                         "Tanh",
                         "Reciprocal",
                         "Sign",
                         "Equal",
                         "NotEqual",
                         "Greater",
                         "GreaterEqual",
                         "Less",
                         "LessEqual",
                         "LogicalAnd",
                         "LogicalOr",
                         "LogicalNot",
                         "Sum",
                         "Mean",
                         "Max",
                         "Min",
                         "Prod",
                         "ArgMax",
                         "ArgMin",
                         "MatMul",
                         "BatchMatMulV2",
                         "BiasAdd",
                         "BiasAddGrad",
                         "Relu",
                         "ReluGrad",
                         "Relu6",
                         "Elu",
                         "Softmax",
                         "LogSoftmax",
                         "SoftmaxCrossEntropyWithLogits",
                         "SparseSoftmaxCrossEntropyWithLogits",
                         "Conv2D",
                         "Conv2DBackpropInput",
                         "Conv2DBackpropFilter",
                         "MaxPool",
                         "MaxPoolGrad",
                         "AvgPool",
                         "AvgPoolGrad",
                         "LRN",
                         "LRNGrad",
                         "FusedBatchNormV3",
                         "FusedBatchNormGradV3",
                         "L2Loss",
                         "InTopKV2",
                         "TruncatedNormal",
                         "RandomStandardNormal",
                         "RandomUniform",
                         "RandomUniformInt",
                         "RandomShuffle",
                         "ApplyGradientDescent",
                         "ResourceApplyGradientDescent",
                         "ApplyMomentum",
                         "ResourceApplyMomentum",
                         "ApplyAdam",
                         "ResourceApplyAdam",
                         "ApplyAdagrad",
                         "ResourceApplyAdagrad",
                         "ApplyRMSProp",
                         "ResourceApplyRMSProp",
                         "CheckNumerics",
                         "Assert",
                         "NoOp",
                         "Print",
                         "ScalarSummary",
                         "HistogramSummary",
                         "MergeSummary",
                         "VariableV2",
                         "Assign",
                         "AssignAdd",
                         "AssignSub",
                         "VarHandleOp",
                         "ReadVariableOp",
                         "AssignVariableOp",
                         "AssignAddVariableOp",
                         "AssignSubVariableOp",
                         "VarIsInitializedOp",
                         "_Send",
                         "_Recv",
                         "Send",
                         "Recv",
                         "SaveV2",
                         "RestoreV2",
                         "DynamicStitch",
                         "UnsortedSegmentSum",
                         "Range",
                         "InvertPermutation",
                         "StridedSliceGrad",
                         "SqrtGrad",
                         "RsqrtGrad",
                         "TanhGrad",
                         "SigmoidGrad",
                         "ReciprocalGrad",
                         "Relu6Grad",
                         "EluGrad",
                         "ResourceScatterAdd",
                         "ResourceSparseApplyMomentum",
                         "ResourceSparseApplyRMSProp"}) {
    EXPECT_NE(OpRegistry::Global()->Find(op), nullptr) << op;
  }
}

TEST(OpSchemasTest, LateAttrsAreMarkedForStripping) {
  const OpRegistrationData* conv = OpRegistry::Global()->Find("Conv2D");
  EXPECT_EQ(conv->added_after_tf1.count("explicit_paddings"), 1u);
  EXPECT_EQ(conv->added_after_tf1.count("padding"), 0u);
  EXPECT_EQ(OpRegistry::Global()->Find("Equal")->added_after_tf1.count("incompatible_shape_error"),
            1u);
}

TEST(OpSchemasTest, FamiliesNameTheirSchemaFiles) {
  EXPECT_EQ(OpRegistry::Global()->Find("MatMul")->family, "math_ops");
  EXPECT_EQ(OpRegistry::Global()->Find("Conv2D")->family, "conv_ops");
  EXPECT_EQ(OpRegistry::Global()->Find("Relu")->family, "nn_ops");
  EXPECT_EQ(OpRegistry::Global()->Find("ResizeBilinear")->family, "image_ops");
  EXPECT_EQ(OpRegistry::Global()->Find("Reshape")->family, "array_ops");
  EXPECT_EQ(OpRegistry::Global()->Find("StackV2")->family, "data_flow_ops");
}

}  // namespace
}  // namespace towerflow
