// Array ops: constants, placeholders, identities, shapes, reshaping,
// transposing, filling and broadcasting. (Concatenating, splitting, packing
// and unpacking are in concat_ops.cc; slicing, padding, tiling and gathering
// in index_ops.cc.)
// Schemas are TensorFlow's (see the reference OP_FACTS); each shape function
// rejects only what can never be valid and leaves the rest unknown.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

using shape_fns::CanonicalAxis;

// --------------------------------------------------------------- constants

absl::Status ConstShape(InferenceContext* c) {
  const TensorProto* value;
  DataType dtype;
  TW_RETURN_IF_ERROR(c->GetAttr("value", &value));
  TW_RETURN_IF_ERROR(c->GetAttr("dtype", &dtype));
  if (value->dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat("value has dtype ",
                                                   DataTypeString(value->dtype()),
                                                   " but attr dtype is ", DataTypeString(dtype)));
  }
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorProtoShape(*value));
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status PlaceholderShape(InferenceContext* c) {
  PartialTensorShape shape;
  TW_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  // Graphs older than version 22 wrote "unknown shape" as a scalar shape.
  if (c->graph_def_version() <= 21 && shape.dims() <= 0) return absl::OkStatus();
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status PlaceholderWithDefaultShape(InferenceContext* c) {
  PartialTensorShape shape;
  TW_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  if (!c->input(0).IsCompatibleWith(shape)) {
    return absl::InvalidArgumentError(
        absl::StrCat("The default value's shape ", c->input(0).DebugString(),
                     " is not compatible with the shape attr ", shape.DebugString()));
  }
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status IdentityNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return absl::OkStatus();
}

// ------------------------------------------------------------------ shapes

absl::Status ShapeShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) {
    const PartialTensorShape& in = c->input(i);
    c->set_output(i, PartialTensorShape({in.unknown_rank() ? -1 : in.dims()}));
  }
  return absl::OkStatus();
}

absl::Status ReshapeShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  if (const TensorProto* t = c->input_tensor(1)) {
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> v, TensorProtoAsInt64s(*t));
    std::vector<int> inferred;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == -1) inferred.push_back(static_cast<int>(i));
    }
    if (inferred.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("Only one input size may be -1, not both ",
                                                     inferred[0], " and ", inferred[1]));
    }
  }
  TW_ASSIGN_OR_RETURN(PartialTensorShape target, c->MakeShapeFromShapeTensor(1));
  if (target.unknown_rank()) return absl::OkStatus();
  std::vector<int64_t> dims(target.dim_sizes().begin(), target.dim_sizes().end());
  int unknown = -1, num_unknown = 0;
  int64_t known_product = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      unknown = static_cast<int>(i);
      ++num_unknown;
    } else {
      known_product = MultiplyWithoutOverflow(known_product, dims[i]);
      if (known_product < 0) {
        return absl::InvalidArgumentError(absl::StrCat("Reshape target ", target.DebugString(),
                                                       " has more elements than fit in int64"));
      }
    }
  }
  const int64_t n = input.num_elements();
  if (n >= 0 && num_unknown == 0 && n != known_product) {
    return absl::InvalidArgumentError(absl::StrCat("Cannot reshape a tensor with ", n,
                                                   " elements to shape ", target.DebugString(),
                                                   " (", known_product, " elements)"));
  }
  if (n >= 0 && num_unknown == 1 && known_product > 0) {
    if (n % known_product != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot reshape a tensor with ", n, " elements to shape ",
                       target.DebugString(), ": ", n, " is not a multiple of ", known_product));
    }
    dims[unknown] = n / known_product;
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status ExpandDimsShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dim, c->ConstantIntInput(1));
  if (input.unknown_rank()) return absl::OkStatus();
  if (!dim.has_value()) {
    c->set_output(0, PartialTensorShape::UnknownDims(input.dims() + 1));
    return absl::OkStatus();
  }
  if (dim->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'dim' must be a scalar or hold one element, got ", dim->size()));
  }
  TW_ASSIGN_OR_RETURN(int axis, CanonicalAxis((*dim)[0], input.dims() + 1));
  std::vector<int64_t> dims(input.dim_sizes().begin(), input.dim_sizes().end());
  dims.insert(dims.begin() + axis, 1);
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status SqueezeShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  std::vector<int64_t> squeeze;
  TW_RETURN_IF_ERROR(c->GetAttr("squeeze_dims", &squeeze));
  if (input.unknown_rank()) return absl::OkStatus();
  std::set<int> drop;
  for (int64_t d : squeeze) {
    absl::StatusOr<int> axis = CanonicalAxis(d, input.dims());
    if (!axis.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tried to squeeze dim index ", d, " for tensor with ", input.dims(), " dimensions"));
    }
    drop.insert(*axis);
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < input.dims(); ++i) {
    const int64_t size = input.dim_size(i);
    if (drop.empty()) {
      if (size < 0) return absl::OkStatus();  // might be 1: unknown result
      if (size != 1) dims.push_back(size);
    } else if (drop.count(i) > 0) {
      if (size >= 0 && size != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Can not squeeze dim[", i, "], expected a dimension of 1, got ", size));
      }
    } else {
      dims.push_back(size);
    }
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// ReverseV2: the input's shape; axis is a vector of distinct axes.
absl::Status ReverseV2Shape(InferenceContext* c) {
  PartialTensorShape axis;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &axis));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

// Reverse (v1): the input's shape; dims is a bool per input dimension.
absl::Status ReverseShape(InferenceContext* c) {
  PartialTensorShape dims;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &dims));
  const PartialTensorShape& input = c->input(0);
  if (!input.unknown_rank() && dims.dim_size(0) >= 0 && dims.dim_size(0) != input.dims()) {
    return absl::InvalidArgumentError(absl::StrCat("dims has ", dims.dim_size(0),
                                                   " entries for an input of rank ", input.dims()));
  }
  c->set_output(0, input);
  return absl::OkStatus();
}

// Where: one row of coordinates per true element, [?, rank].
absl::Status WhereShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  c->set_output(0, PartialTensorShape({-1, input.unknown_rank() ? -1 : input.dims()}));
  return absl::OkStatus();
}

absl::Status TransposeShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  PartialTensorShape perm_shape;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &perm_shape));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> perm, c->ConstantIntInput(1));
  if (!perm.has_value()) {
    if (!input.unknown_rank()) {
      c->set_output(0, PartialTensorShape::UnknownDims(input.dims()));
    } else if (perm_shape.dim_size(0) >= 0 && perm_shape.dim_size(0) <= kMaxTensorRank) {
      c->set_output(0, PartialTensorShape::UnknownDims(static_cast<int>(perm_shape.dim_size(0))));
    }
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(perm->size());
  if (!input.unknown_rank() && input.dims() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("perm has ", rank, " entries but the input has rank ", input.dims()));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= rank || seen[p]) {
      return absl::InvalidArgumentError(absl::StrCat("perm [", absl::StrJoin(*perm, ","),
                                                     "] is not a permutation of 0..", rank - 1));
    }
    seen[p] = true;
  }
  std::vector<int64_t> dims(rank, -1);
  if (!input.unknown_rank()) {
    for (int i = 0; i < rank; ++i) dims[i] = input.dim_size((*perm)[i]);
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// ----------------------------------------------------------------- filling

absl::Status FillShape(InferenceContext* c) {
  PartialTensorShape scalar;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
  return shape_fns::ShapeFromShapeTensorInput(c, 0);
}

absl::Status BroadcastToShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape target, c->MakeShapeFromShapeTensor(1));
  const PartialTensorShape& input = c->input(0);
  if (!target.unknown_rank() && !input.unknown_rank()) {
    if (input.dims() > target.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("Cannot broadcast a tensor of shape ",
                                                     input.DebugString(), " to the smaller rank ",
                                                     target.DebugString()));
    }
    const int offset = target.dims() - input.dims();
    for (int i = 0; i < input.dims(); ++i) {
      const int64_t in = input.dim_size(i), out = target.dim_size(i + offset);
      if (in >= 0 && out >= 0 && in != 1 && in != out) {
        return absl::InvalidArgumentError(absl::StrCat("Cannot broadcast a tensor of shape ",
                                                       input.DebugString(), " to shape ",
                                                       target.DebugString()));
      }
    }
  }
  c->set_output(0, target);
  return absl::OkStatus();
}

absl::Status BroadcastGradientArgsShape(InferenceContext* c) {
  for (int i = 0; i < 2; ++i) {
    PartialTensorShape v;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &v));
    c->set_output(i, PartialTensorShape({-1}));
  }
  return absl::OkStatus();
}

absl::Status ListDiffShape(InferenceContext* c) {
  PartialTensorShape x, y;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &x));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &y));
  c->set_output(0, PartialTensorShape({-1}));
  c->set_output(1, PartialTensorShape({-1}));
  return absl::OkStatus();
}

absl::Status UniqueShape(InferenceContext* c) {
  PartialTensorShape x;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &x));
  c->set_output(0, PartialTensorShape({-1}));
  c->set_output(1, x);
  return absl::OkStatus();
}

// UniqueV2 and UniqueWithCountsV2: y of x's rank, the axis dimension
// unknown; idx as long as that dimension (the axis a constant [1], or none).
absl::Status UniqueV2Shape(InferenceContext* c) {
  const PartialTensorShape& x = c->input(0);
  PartialTensorShape axis;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &axis));
  const int outputs = c->num_outputs();
  c->set_output(1, PartialTensorShape({-1}));
  if (outputs == 3) c->set_output(2, PartialTensorShape({-1}));
  if (x.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> a, c->ConstantIntInput(1));
  if (!a.has_value() || a->size() > 1 || (a->empty() && x.dims() != 1)) {
    c->set_output(0, PartialTensorShape::UnknownDims(x.dims()));
    return absl::OkStatus();
  }
  int64_t axis_value = a->empty() ? 0 : (*a)[0];
  if (axis_value < 0) axis_value += x.dims();
  if (axis_value < 0 || axis_value >= x.dims()) {
    return absl::InvalidArgumentError(absl::StrCat("axis has to be between [0, ", x.dims(), ")"));
  }
  c->set_output(1, PartialTensorShape({x.dim_size(static_cast<int>(axis_value))}));
  std::vector<int64_t> y(x.dim_sizes().begin(), x.dim_sizes().end());
  y[axis_value] = -1;
  c->set_output(0, PartialTensorShape(absl::Span<const int64_t>(y)));
  return absl::OkStatus();
}

absl::Status InvertPermutationShape(InferenceContext* c) {
  PartialTensorShape v;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &v));
  c->set_output(0, v);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- schemas

TW_REGISTER_OP("Const")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .Doc("A constant tensor.")
    .SetShapeFn(ConstShape);

// TF's HostConst: a Const whose value stays in host memory on every device
// (replayed steps fold a GPU partition's shape arithmetic into them).
TW_REGISTER_OP("HostConst")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .Doc("A constant tensor in host memory.")
    .SetShapeFn(ConstShape);

TW_REGISTER_OP("Placeholder")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape = { unknown_rank: true }")
    .Doc("A value that must be fed when the graph runs.")
    .SetShapeFn(PlaceholderShape);

TW_REGISTER_OP("PlaceholderV2")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Doc("Placeholder with a required shape (TF 1.0's form).")
    .SetShapeFn(PlaceholderShape);

TW_REGISTER_OP("PlaceholderWithDefault")
    .Input("input: dtype")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Doc("Passes `input` through unless the output is fed.")
    .SetShapeFn(PlaceholderWithDefaultShape);

TW_REGISTER_OP("Identity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Doc("Returns the input unchanged.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("Snapshot")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Doc("Returns a copy of the input.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("GuaranteeConst")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("Returns the input, promising it is the same every step (tf.guarantee_const).")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("RefIdentity")
    .Input("input: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetAllowsUninitializedInput()
    .Doc("Returns the ref unchanged.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("IdentityN")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 1")
    .Doc("Returns the inputs unchanged.")
    .SetShapeFn(IdentityNShape);

TW_REGISTER_OP("StopGradient")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Doc("Identity that blocks gradients.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("PreventGradient")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("message: string = ''")
    .Doc("Identity whose gradient is an error.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("CheckNumerics")
    .Input("tensor: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("message: string")
    .SetIsStateful()
    .Doc("Fails with `message` when the tensor holds NaN or Inf.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("CheckNumericsV2")
    .Input("tensor: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("message: string")
    .SetIsStateful()
    .Doc("CheckNumerics telling -Inf from +Inf in its message.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("EnsureShape")
    .Input("input: T")
    .Output("output: T")
    .Attr("shape: shape")
    .Attr("T: type")
    .Doc("Passes `input` through, failing when its shape is not compatible with `shape`.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape shape, merged;
      TW_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
      TW_RETURN_IF_ERROR(c->Merge(c->input(0), shape, &merged));
      c->set_output(0, merged);
      return absl::OkStatus();
    });

// Bitcast: equal element sizes keep the shape; a wider input gains a last
// dimension of the ratio; a narrower one must end in a dimension of the
// ratio, which goes.
absl::Status BitcastShape(InferenceContext* c) {
  DataType from, to;
  TW_RETURN_IF_ERROR(c->GetAttr("T", &from));
  TW_RETURN_IF_ERROR(c->GetAttr("type", &to));
  const int in = DataTypeSize(from), out = DataTypeSize(to);
  const PartialTensorShape& input = c->input(0);
  if (in <= 0 || out <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot bitcast ", DataTypeString(from), " to ", DataTypeString(to)));
  }
  if (input.unknown_rank()) return absl::OkStatus();
  std::vector<int64_t> dims(input.dim_sizes().begin(), input.dim_sizes().end());
  if (in > out) {
    dims.push_back(in / out);
  } else if (in < out) {
    if (dims.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Cannot bitcast a scalar ", DataTypeString(from), " to the wider ", DataTypeString(to)));
    }
    if (dims.back() >= 0 && dims.back() != out / in) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot bitcast ", DataTypeString(from), input.DebugString(), " to ",
                       DataTypeString(to), ": the last dimension must be ", out / in));
    }
    dims.pop_back();
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

TW_REGISTER_OP("Bitcast")
    .Input("input: T")
    .Output("output: type")
    .Attr(
        "T: {bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, "
        "int16, complex64, complex128, qint8, quint8, qint16, quint16, qint32}")
    .Attr(
        "type: {bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, "
        "int8, int16, complex64, complex128, qint8, quint8, qint16, quint16, qint32}")
    .Doc("The input's bytes as elements of `type` (no copy).")
    .SetShapeFn(BitcastShape);

TW_REGISTER_OP("Reshape")
    .Input("tensor: T")
    .Input("shape: Tshape")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .Doc("The tensor's elements in a new shape; one dimension may be -1.")
    .SetShapeFn(ReshapeShape);

TW_REGISTER_OP("Shape")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .Doc("The shape of the input as a 1-D tensor.")
    .SetShapeFn(ShapeShape);

TW_REGISTER_OP("ShapeN")
    .Input("input: N * T")
    .Output("output: N * out_type")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .Doc("The shapes of N tensors.")
    .SetShapeFn(ShapeShape);

TW_REGISTER_OP("Size")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .Doc("The number of elements of the input.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("Rank")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: type")
    .Doc("The rank of the input.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("ExpandDims")
    .Input("input: T")
    .Input("dim: Tdim")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tdim: {int32, int64} = DT_INT32")
    .Doc("Inserts a dimension of size 1 at `dim`.")
    .SetShapeFn(ExpandDimsShape);

TW_REGISTER_OP("Squeeze")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("squeeze_dims: list(int) >= 0 = []")
    .Doc("Removes dimensions of size 1 (those in squeeze_dims, or all).")
    .SetShapeFn(SqueezeShape);

TW_REGISTER_OP("Transpose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {int32, int64} = DT_INT32")
    .Doc("Permutes the dimensions: y.shape[i] = x.shape[perm[i]].")
    .SetShapeFn(TransposeShape);

TW_REGISTER_OP("ConjugateTranspose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {int32, int64} = DT_INT32")
    .Doc("Transpose, complex values conjugated (tf.linalg.adjoint).")
    .SetShapeFn(TransposeShape);

TW_REGISTER_OP("ReverseV2")
    .Input("tensor: T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("T: type")
    .Doc("Reverses the order of elements along each dimension in axis.")
    .SetShapeFn(ReverseV2Shape);

TW_REGISTER_OP("Reverse")
    .Input("tensor: T")
    .Input("dims: bool")
    .Output("output: T")
    .Attr(
        "T: {uint8, int8, uint16, int16, uint32, int32, uint64, int64, bool, bfloat16, half, "
        "float, double, complex64, complex128, string}")
    .Doc("Reverses the dimensions where dims is true (ReverseV2's first version).")
    .SetShapeFn(ReverseShape);

TW_REGISTER_OP("Where")
    .Input("input: T")
    .Output("index: int64")
    .Attr("T: {numbertype, bool} = DT_BOOL")
    .Doc("The coordinates of the true (non-zero) elements, in row-major order.")
    .SetShapeFn(WhereShape);

TW_REGISTER_OP("InvertPermutation")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .Doc("The inverse of a permutation.")
    .SetShapeFn(InvertPermutationShape);

TW_REGISTER_OP("ListDiff")
    .Input("x: T")
    .Input("y: T")
    .Output("out: T")
    .Output("idx: out_idx")
    .Attr("T: type")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .Doc("The values of x not in y, in x's order, and their positions in x.")
    .SetShapeFn(ListDiffShape);

TW_REGISTER_OP("Unique")
    .Input("x: T")
    .Output("y: T")
    .Output("idx: out_idx")
    .Attr("T: type")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .Doc("The distinct values of x in order of first appearance, and where each x[i] is in y.")
    .SetShapeFn(UniqueShape);

TW_REGISTER_OP("UniqueV2")
    .Input("x: T")
    .Input("axis: Taxis")
    .Output("y: T")
    .Output("idx: out_idx")
    .Attr("T: type")
    .Attr("Taxis: {int32, int64} = DT_INT64")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .Doc("Unique over the slices of x along axis [1] (empty: x a vector).")
    .SetShapeFn(UniqueV2Shape);

TW_REGISTER_OP("UniqueWithCountsV2")
    .Input("x: T")
    .Input("axis: Taxis")
    .Output("y: T")
    .Output("idx: out_idx")
    .Output("count: out_idx")
    .Attr("T: type")
    .Attr("Taxis: {int32, int64} = DT_INT64")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .Doc("UniqueV2's outputs and how often each distinct slice occurs.")
    .SetShapeFn(UniqueV2Shape);

TW_REGISTER_OP("Fill")
    .Input("dims: index_type")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index_type: {int32, int64} = DT_INT32")
    .Doc("A tensor of shape `dims` filled with the scalar `value`.")
    .SetShapeFn(FillShape);

TW_REGISTER_OP("ZerosLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: type")
    .Doc("Zeros of the input's shape and type.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("OnesLike")
    .Input("x: T")
    .Output("y: T")
    .Attr(
        "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
        "uint32, int64, uint64, complex64, complex128, bool}")
    .Doc("Ones of the input's shape and type.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("BroadcastTo")
    .Input("input: T")
    .Input("shape: Tidx")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Doc("Broadcasts the input to `shape`.")
    .SetShapeFn(BroadcastToShape);

TW_REGISTER_OP("BroadcastGradientArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Output("r1: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .Doc("The axes along which each input of a broadcasting op was broadcast.")
    .SetShapeFn(BroadcastGradientArgsShape);

}  // namespace
}  // namespace towerflow
