// Math ops: elementwise unary and binary (with broadcasting), comparisons,
// logic, casts, reductions, arg-max/min, matrix products (and Einsum),
// ranges, selects and segment sums. Counting and bucketing ops are in
// histogram_ops.cc, running sums and products in scan_ops.cc.
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/einsum.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "graph/op_registry.h"
#include "ops/segment_shapes.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

using segment_shapes::SegmentShape;
using segment_shapes::SparseSegmentShape;
using segment_shapes::UnsortedSegmentShape;
using shape_fns::BroadcastBinaryOpShape;
using shape_fns::MatMulShape;
using shape_fns::UnchangedShape;

// Type sets shared by several ops (TensorFlow's lists).
constexpr char kFloatComplex[] = "{bfloat16, half, float, double, complex64, complex128}";
constexpr char kSignedNumbers[] =
    "{bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}";
constexpr char kBinaryArith[] =
    "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, "
    "uint32, uint64, complex64, complex128}";
constexpr char kRealNoComplex[] =
    "{bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, "
    "int64, uint64}";

// An elementwise op: `inputs` named x (and y), output `out`, attr T over
// `types` (or no T when types is null, for the bool-only ops).
void RegisterElementwise(const char* name, std::vector<const char*> inputs, const char* output,
                         const char* types, ShapeFn shape_fn, const char* doc,
                         bool commutative = false) {
  OpDefBuilder b(name, __FILE__);
  for (const char* in : inputs) b.Input(in);
  b.Output(output).Doc(doc).SetShapeFn(std::move(shape_fn));
  if (types != nullptr) b.Attr(absl::StrCat("T: ", types));
  if (commutative) b.SetIsCommutative();
  RegisterOp(b);
}

void RegisterUnary(const char* name, const char* types, const char* doc) {
  RegisterElementwise(name, {"x: T"}, "y: T", types, UnchangedShape, doc);
}

// Gradients of unary ops in terms of their output y.
void RegisterUnaryGrad(const char* name, const char* doc) {
  RegisterElementwise(name, {"y: T", "dy: T"}, "z: T", kFloatComplex,
                      shape_fns::MergeAllInputsShape, doc);
}

void RegisterBinary(const char* name, const char* types, bool commutative, const char* doc) {
  RegisterElementwise(name, {"x: T", "y: T"}, "z: T", types, BroadcastBinaryOpShape, doc,
                      commutative);
}

void RegisterPredicate(const char* name, const char* types, const char* doc) {
  RegisterElementwise(name, {"x: T"}, "y: bool", types, UnchangedShape, doc);
}

void RegisterComparison(const char* name, const char* doc) {
  RegisterElementwise(name, {"x: T", "y: T"}, "z: bool", "realnumbertype", BroadcastBinaryOpShape,
                      doc);
}

void RegisterEquality(const char* name, const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input("x: T")
                 .Input("y: T")
                 .Output("z: bool")
                 .Attr("T: {bfloat16, half, float, double, uint8, int8, int16, int32, "
                       "int64, uint16, uint32, uint64, complex64, quint8, qint8, qint32, "
                       "string, bool, complex128}")
                 .AttrAddedAfterTF1("incompatible_shape_error: bool = true")
                 .SetIsCommutative()
                 .Doc(doc)
                 .SetShapeFn(BroadcastBinaryOpShape));
}

void RegisterReduction(const char* name, const char* input_type, const char* doc) {
  OpDefBuilder b(name, __FILE__);
  if (std::string(input_type) == "bool") {
    b.Input("input: bool").Output("output: bool");
  } else {
    b.Input("input: T").Output("output: T").Attr(absl::StrCat("T: ", input_type));
  }
  b.Input("reduction_indices: Tidx")
      .Attr("keep_dims: bool = false")
      .Attr("Tidx: {int32, int64} = DT_INT32")
      .Doc(doc)
      .SetShapeFn(shape_fns::ReductionShape);
  RegisterOp(b);
}

// ------------------------------------------------------------ shape fns

absl::Status ArgMinMaxShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  PartialTensorShape dim_shape;
  TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(1), 1, &dim_shape));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dim, c->ConstantIntInput(1));
  if (input.unknown_rank()) return absl::OkStatus();
  if (input.dims() == 0) {
    return absl::InvalidArgumentError("ArgMax/ArgMin need an input of rank >= 1");
  }
  if (!dim.has_value()) {
    c->set_output(0, PartialTensorShape::UnknownDims(input.dims() - 1));
    return absl::OkStatus();
  }
  if (dim->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'dimension' must hold one value, got ", dim->size()));
  }
  TW_ASSIGN_OR_RETURN(int axis, shape_fns::CanonicalAxis((*dim)[0], input.dims()));
  std::vector<int64_t> dims(input.dim_sizes().begin(), input.dim_sizes().end());
  dims.erase(dims.begin() + axis);
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// Batch matmul; `broadcast` is BatchMatMulV2's batch-dim broadcasting.
absl::Status BatchMatMulShapeImpl(InferenceContext* c, bool broadcast) {
  PartialTensorShape x, y;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &x));
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(1), 2, &y));
  if (x.unknown_rank() || y.unknown_rank()) return absl::OkStatus();
  bool adj_x, adj_y;
  TW_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  TW_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  const int rx = x.dims(), ry = y.dims();
  const int64_t m = x.dim_size(adj_x ? rx - 1 : rx - 2);
  const int64_t kx = x.dim_size(adj_x ? rx - 2 : rx - 1);
  const int64_t ky = y.dim_size(adj_y ? ry - 1 : ry - 2);
  const int64_t n = y.dim_size(adj_y ? ry - 2 : ry - 1);
  if (kx >= 0 && ky >= 0 && kx != ky) {
    return absl::InvalidArgumentError(
        absl::StrCat("Matrix size-incompatible: inner dimensions are ", kx, " and ", ky));
  }
  const PartialTensorShape bx(x.dim_sizes().subspan(0, rx - 2));
  const PartialTensorShape by(y.dim_sizes().subspan(0, ry - 2));
  PartialTensorShape batch;
  if (broadcast) {
    TW_ASSIGN_OR_RETURN(batch, shape_fns::BroadcastShapes(bx, by));
  } else {
    TW_RETURN_IF_ERROR(c->Merge(bx, by, &batch));
  }
  c->set_output(0, batch.Concatenate(PartialTensorShape({m, n})));
  return absl::OkStatus();
}

absl::Status RangeShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) {
    PartialTensorShape scalar;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
  }
  std::vector<double> v(3);
  for (int i = 0; i < 3; ++i) {
    const TensorProto* t = c->input_tensor(i);
    if (t == nullptr) {
      c->set_output(0, PartialTensorShape({-1}));
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(std::vector<double> x, TensorProtoAsDoubles(*t));
    v[i] = x[0];
  }
  const double start = v[0], limit = v[1], delta = v[2];
  if (delta == 0) return absl::InvalidArgumentError("Requires delta != 0");
  if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
    return absl::InvalidArgumentError("Range needs finite start, limit and delta");
  }
  if (delta > 0 && start > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("Requires start <= limit when delta > 0: ", start, "/", limit));
  }
  if (delta < 0 && start < limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("Requires start >= limit when delta < 0: ", start, "/", limit));
  }
  // The length as the kernel computes it, in the inputs' type (TF's
  // RangeSize<T>): Range(0.0f, 0.3f, 0.1f) has 3 elements, where the same
  // float values in double arithmetic would give 4.
  double size;
  if (DataTypeIsInteger(c->input_type(0))) {
    size = std::ceil(std::abs((limit - start) / delta));
  } else if (c->input_type(0) == DT_FLOAT) {
    const float f = std::ceil(std::abs((static_cast<float>(limit) - static_cast<float>(start)) /
                                       static_cast<float>(delta)));
    size = f;
  } else {
    size = std::ceil(std::abs((limit - start) / delta));
  }
  if (!(size <= static_cast<double>(int64_t{1} << 62))) {
    return absl::InvalidArgumentError(absl::StrCat("Range of ", size, " elements is too large"));
  }
  c->set_output(0, PartialTensorShape({static_cast<int64_t>(size)}));
  return absl::OkStatus();
}

absl::Status SelectShape(InferenceContext* c) {
  PartialTensorShape data;
  TW_RETURN_IF_ERROR(c->Merge(c->input(1), c->input(2), &data));
  const PartialTensorShape& cond = c->input(0);
  if (!cond.unknown_rank() && !data.unknown_rank() && cond.dims() != 0) {
    const bool same = cond.IsCompatibleWith(data);
    const bool vector = cond.dims() == 1 && data.dims() >= 1 &&
                        PartialTensorShape({cond.dim_size(0)})
                            .IsCompatibleWith(PartialTensorShape({data.dim_size(0)}));
    if (!same && !vector) {
      return absl::InvalidArgumentError(
          absl::StrCat("condition must be a scalar, a vector over the first dimension, or of "
                       "the shape of t and e; got ",
                       cond.DebugString(), " for ", data.DebugString()));
    }
  }
  c->set_output(0, data);
  return absl::OkStatus();
}

absl::Status SelectV2Shape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape te, shape_fns::BroadcastShapes(c->input(1), c->input(2)));
  TW_ASSIGN_OR_RETURN(PartialTensorShape all, shape_fns::BroadcastShapes(c->input(0), te));
  c->set_output(0, all);
  return absl::OkStatus();
}

// Betainc: a, b and x of one shape, or scalars (which broadcast).
absl::Status BetaincShape(InferenceContext* c) {
  const char* names[] = {"a", "b", "x"};
  PartialTensorShape out;  // unknown until a non-scalar is seen
  bool all_scalars = true;
  const char* first = nullptr;
  for (int i = 0; i < 3; ++i) {
    const PartialTensorShape& s = c->input(i);
    if (s.dims() == 0) continue;
    all_scalars = false;
    absl::StatusOr<PartialTensorShape> merged = out.MergeWith(s);
    if (!merged.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Shapes of ", first ? first : "a", " and ", names[i],
                       " are inconsistent: ", out.DebugString(), " vs. ", s.DebugString()));
    }
    if (first == nullptr && s.dims() > 0) first = names[i];
    out = *std::move(merged);
  }
  c->set_output(0, all_scalars ? PartialTensorShape::Scalar() : out);
  return absl::OkStatus();
}

// --------------------------------------------------------------- schemas

// Registered from a function so the type-set strings can be shared.
[[maybe_unused]] const bool kRegistered = [] {
  // Unary.
  RegisterUnary("Abs", "{bfloat16, half, float, double, int8, int16, int32, int64}", "|x|");
  RegisterUnary("Neg", kSignedNumbers, "-x");
  RegisterUnary("Square", kSignedNumbers, "x * x");
  RegisterUnary("Reciprocal", kSignedNumbers, "1 / x");
  RegisterUnary("Inv", kSignedNumbers, "1 / x (deprecated name of Reciprocal)");
  RegisterUnary("Sign", "{bfloat16, half, float, double, int32, int64, complex64, complex128}",
                "-1, 0 or 1 by the sign of x");
  RegisterUnary("Sqrt", kFloatComplex, "sqrt(x)");
  RegisterUnary("Rsqrt", kFloatComplex, "1 / sqrt(x)");
  RegisterUnary("Exp", kFloatComplex, "e^x");
  RegisterUnary("Expm1", kFloatComplex, "e^x - 1");
  RegisterUnary("Log", kFloatComplex, "natural logarithm of x");
  RegisterUnary("Log1p", kFloatComplex, "log(1 + x)");
  RegisterUnary("Erf", "{bfloat16, half, float, double}", "the Gauss error function (GELU's)");
  RegisterUnary("Tanh", kFloatComplex, "tanh(x)");
  RegisterUnary("Sigmoid", kFloatComplex, "1 / (1 + e^-x)");
  RegisterUnary("Sin", kFloatComplex, "sin(x)");
  RegisterUnary("Cos", kFloatComplex, "cos(x)");
  RegisterUnary("Tan", kFloatComplex, "tan(x)");
  RegisterUnary("Asin", kFloatComplex, "asin(x)");
  RegisterUnary("Acos", kFloatComplex, "acos(x)");
  RegisterUnary("Atan", kFloatComplex, "atan(x)");
  RegisterUnary("Sinh", kFloatComplex, "sinh(x)");
  RegisterUnary("Cosh", kFloatComplex, "cosh(x)");
  RegisterUnary("Asinh", kFloatComplex, "asinh(x)");
  RegisterUnary("Acosh", kFloatComplex, "acosh(x)");
  RegisterUnary("Atanh", kFloatComplex, "atanh(x)");
  RegisterUnary("Erfc", "{bfloat16, half, float, double}", "1 - erf(x)");
  RegisterUnary("Floor", "{bfloat16, half, float, double}", "largest integer <= x");
  RegisterUnary("Rint", "{bfloat16, half, float, double}", "the nearest integer, halves to even");
  RegisterUnary("Ceil", "{bfloat16, half, float, double}", "smallest integer >= x");
  RegisterUnary("Round", "{bfloat16, half, float, double, int32, int64, complex64, complex128}",
                "x rounded half to even");
  RegisterPredicate("IsNan", "{bfloat16, half, float, double}", "x is NaN");
  RegisterPredicate("IsInf", "{bfloat16, half, float, double}", "x is +-Inf");
  RegisterPredicate("IsFinite", "{bfloat16, half, float, double}", "x is finite");
  RegisterElementwise("LogicalNot", {"x: bool"}, "y: bool", nullptr, UnchangedShape, "!x");
  // Gradients of unary ops, in terms of the op's output y.
  RegisterUnaryGrad("SqrtGrad", "dy * 0.5 / y, for y = sqrt(x)");
  RegisterUnaryGrad("RsqrtGrad", "dy * -0.5 * y^3, for y = rsqrt(x)");
  RegisterUnaryGrad("TanhGrad", "dy * (1 - y^2), for y = tanh(x)");
  RegisterUnaryGrad("SigmoidGrad", "dy * y * (1 - y), for y = sigmoid(x)");
  RegisterUnaryGrad("ReciprocalGrad", "-dy * y^2, for y = 1 / x");
  RegisterUnaryGrad("InvGrad", "-dy * y^2, for y = 1 / x (ReciprocalGrad's old name)");

  // Binary, broadcasting.
  RegisterBinary("Add",
                 "{bfloat16, half, float, double, uint8, int8, int16, int32, int64, "
                 "complex64, complex128, string}",
                 false, "x + y");
  RegisterBinary("AddV2", kBinaryArith, true, "x + y");
  RegisterBinary("Sub", kBinaryArith, false, "x - y");
  RegisterBinary("Mul", kBinaryArith, true, "x * y");
  RegisterBinary("RealDiv", kBinaryArith, false, "x / y for real types");
  RegisterBinary("Div", kBinaryArith, false, "x / y (integer division truncates)");
  RegisterBinary("DivNoNan", "{half, float, bfloat16, double, complex64, complex128}", false,
                 "x / y, or 0 where y is 0");
  RegisterBinary("MulNoNan", "{bfloat16, half, float, double, complex64, complex128}", false,
                 "x * y, or 0 where y is 0 (even where x is NaN or infinite)");
  RegisterBinary("Xlogy", "{half, bfloat16, float, double, complex64, complex128}", false,
                 "x * log(y), or 0 where x is 0");
  RegisterBinary("Xlog1py", "{half, bfloat16, float, double, complex64, complex128}", false,
                 "x * log1p(y), or 0 where x is 0");
  RegisterBinary("Xdivy", "{half, bfloat16, float, double, complex64, complex128}", false,
                 "x / y, or 0 where x is 0");
  RegisterBinary("FloorDiv", kBinaryArith, false, "floor(x / y)");
  RegisterBinary("FloorMod",
                 "{int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                 "bfloat16, half, float, double}",
                 false, "x - floor(x / y) * y");
  RegisterBinary("Mod", "{int32, int64, bfloat16, half, float, double}", false,
                 "x % y, the sign of x");
  RegisterBinary("TruncateDiv", kBinaryArith, false, "x / y rounded toward zero");
  RegisterBinary("TruncateMod", "{int32, int64, bfloat16, half, float, double}", false,
                 "x % y, the sign of x (C's remainder)");
  RegisterBinary("Maximum", kRealNoComplex, true, "max(x, y)");
  RegisterBinary("Minimum", kRealNoComplex, true, "min(x, y)");
  // Bits.
  constexpr char kBitTypes[] = "{int8, int16, int32, int64, uint8, uint16, uint32, uint64}";
  RegisterBinary("BitwiseAnd", kBitTypes, true, "x & y");
  RegisterBinary("BitwiseOr", kBitTypes, true, "x | y");
  RegisterBinary("BitwiseXor", kBitTypes, true, "x ^ y");
  RegisterBinary("LeftShift", kBitTypes, false, "x << y (y clamped to [0, bits - 1])");
  RegisterBinary("RightShift", kBitTypes, false,
                 "x >> y (arithmetic for signed x; y clamped to [0, bits - 1])");
  RegisterUnary("Invert", kBitTypes, "~x");
  RegisterElementwise("PopulationCount", {"x: T"}, "y: uint8", kBitTypes, UnchangedShape,
                      "the number of set bits of each element");
  RegisterElementwise("Atan2", {"y: T", "x: T"}, "z: T", "{bfloat16, half, float, double}",
                      BroadcastBinaryOpShape, "atan2(y, x): the angle of the point (x, y)");
  // Special functions (Eigen's, as TF's kernels).
  constexpr char kFloats[] = "{bfloat16, half, float, double}";
  RegisterUnary("Lgamma", kFloats, "log |Gamma(x)|");
  RegisterUnary("Digamma", kFloats, "d/dx log Gamma(x)");
  RegisterUnary("Erfinv", kFloats, "the inverse of erf");
  RegisterUnary("Ndtri", kFloats, "the inverse of the standard normal distribution function");
  RegisterUnary("BesselI0", kFloats, "the modified Bessel function of order 0");
  RegisterUnary("BesselI1", kFloats, "the modified Bessel function of order 1");
  RegisterUnary("BesselI0e", kFloats, "exp(-|x|) I0(x)");
  RegisterUnary("BesselI1e", kFloats, "exp(-|x|) I1(x)");
  RegisterUnary("BesselJ0", kFloats, "the Bessel function of the first kind of order 0");
  RegisterUnary("BesselJ1", kFloats, "the Bessel function of the first kind of order 1");
  RegisterUnary("BesselY0", kFloats, "the Bessel function of the second kind of order 0");
  RegisterUnary("BesselY1", kFloats, "the Bessel function of the second kind of order 1");
  RegisterUnary("BesselK0", kFloats, "the modified Bessel function of the second kind of order 0");
  RegisterUnary("BesselK1", kFloats, "the modified Bessel function of the second kind of order 1");
  RegisterUnary("BesselK0e", kFloats, "exp(x) K0(x)");
  RegisterUnary("BesselK1e", kFloats, "exp(x) K1(x)");
  RegisterUnary("Dawsn", kFloats, "Dawson's integral exp(-x^2) int_0^x exp(t^2) dt");
  RegisterUnary("Expint", kFloats, "the exponential integral Ei(x)");
  RegisterUnary("FresnelCos", kFloats, "the Fresnel integral int_0^x cos(pi t^2 / 2) dt");
  RegisterUnary("FresnelSin", kFloats, "the Fresnel integral int_0^x sin(pi t^2 / 2) dt");
  RegisterUnary("Spence", kFloats, "Spence's function int_1^x log t / (1 - t) dt");
  RegisterElementwise("Igamma", {"a: T", "x: T"}, "z: T", kFloats, BroadcastBinaryOpShape,
                      "the regularized lower incomplete gamma function P(a, x)");
  RegisterElementwise("Igammac", {"a: T", "x: T"}, "z: T", kFloats, BroadcastBinaryOpShape,
                      "the regularized upper incomplete gamma function Q(a, x)");
  RegisterElementwise("IgammaGradA", {"a: T", "x: T"}, "z: T", "{float, double}",
                      BroadcastBinaryOpShape, "d/da of Igamma(a, x)");
  RegisterElementwise("RandomGammaGrad", {"alpha: T", "sample: T"}, "output: T", "{float, double}",
                      BroadcastBinaryOpShape,
                      "d sample / d alpha of a Gamma(alpha, 1) sample, implicitly through its CDF");
  RegisterElementwise("Zeta", {"x: T", "q: T"}, "z: T", "{float, double}", BroadcastBinaryOpShape,
                      "the Hurwitz zeta function sum_n (n + q)^-x");
  RegisterElementwise("Polygamma", {"a: T", "x: T"}, "z: T", "{float, double}",
                      BroadcastBinaryOpShape, "the a-th derivative of digamma at x");
  RegisterElementwise("Betainc", {"a: T", "b: T", "x: T"}, "z: T", "{float, double}", BetaincShape,
                      "the regularized incomplete beta function I_x(a, b)");
  RegisterBinary("Pow", "{bfloat16, float, half, double, int32, int64, complex64, complex128}",
                 false, "x ^ y");
  RegisterBinary("SquaredDifference",
                 "{bfloat16, half, float, double, int32, int64, complex64, complex128}", true,
                 "(x - y)^2");
  RegisterElementwise("LogicalAnd", {"x: bool", "y: bool"}, "z: bool", nullptr,
                      BroadcastBinaryOpShape, "x && y", /*commutative=*/true);
  RegisterElementwise("LogicalOr", {"x: bool", "y: bool"}, "z: bool", nullptr,
                      BroadcastBinaryOpShape, "x || y", /*commutative=*/true);
  RegisterEquality("Equal", "x == y");
  RegisterEquality("NotEqual", "x != y");
  RegisterComparison("Greater", "x > y");
  RegisterComparison("GreaterEqual", "x >= y");
  RegisterComparison("Less", "x < y");
  RegisterComparison("LessEqual", "x <= y");

  // Reductions.
  RegisterReduction("Sum", "numbertype", "Sum over reduction_indices.");
  RegisterReduction("Mean", "numbertype", "Mean over reduction_indices.");
  RegisterReduction("Prod", "numbertype", "Product over reduction_indices.");
  RegisterReduction("Max", "numbertype", "Maximum over reduction_indices.");
  RegisterReduction("Min", "numbertype", "Minimum over reduction_indices.");
  RegisterReduction("EuclideanNorm", "numbertype",
                    "Square root of the sum of |x|^2 over reduction_indices.");
  RegisterReduction("All", "bool", "Logical and over reduction_indices.");
  RegisterReduction("Any", "bool", "Logical or over reduction_indices.");
  return true;
}();

TW_REGISTER_OP("Cross")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("T: realnumbertype")
    .Doc("Cross products of the 3-element vectors along the last dimension.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape a, b, merged;
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &a));
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(1), 1, &b));
      TW_RETURN_IF_ERROR(c->Merge(a, b, &merged));
      if (!merged.unknown_rank()) {
        const int64_t last = merged.dim_size(merged.dims() - 1);
        if (last >= 0 && last != 3) {
          return absl::InvalidArgumentError(
              absl::StrCat("Dimension must be 3 but is ", last, " for the cross product"));
        }
      }
      c->set_output(0, merged);
      return absl::OkStatus();
    });

TW_REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr("T: {numbertype, variant}")
    .SetIsCommutative()
    .SetIsAggregate()
    .Doc("Elementwise sum of N tensors of one shape.")
    .SetShapeFn(shape_fns::MergeAllInputsShape);

TW_REGISTER_OP("AccumulateNV2")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
        "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}")
    .Attr("shape: shape")
    .SetIsCommutative()
    .SetIsAggregate()
    .Doc("AddN's sum (TF rewrites it into an accumulator; Towerflow adds as AddN).")
    .SetShapeFn([](InferenceContext* c) {
      TW_ASSIGN_OR_RETURN(PartialTensorShape merged,
                          shape_fns::MergeInputShapes(c, 0, c->num_inputs()));
      PartialTensorShape shape, out;
      TW_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
      TW_RETURN_IF_ERROR(c->Merge(merged, shape, &out));
      c->set_output(0, out);
      return absl::OkStatus();
    });

TW_REGISTER_OP("LinSpace")
    .Input("start: T")
    .Input("stop: T")
    .Input("num: Tidx")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Doc("num evenly spaced values from start to stop, both included.")
    .SetShapeFn([](InferenceContext* c) {
      for (int i = 0; i < 3; ++i) {
        PartialTensorShape scalar;
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
      }
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> num, c->ConstantScalarInput(2));
      if (num.has_value() && *num <= 0) {
        return absl::InvalidArgumentError(absl::StrCat("Requires num > 0: ", *num));
      }
      c->set_output(0, PartialTensorShape({num.value_or(-1)}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("Cast")
    .Input("x: SrcT")
    .Output("y: DstT")
    .Attr("SrcT: type")
    .Attr("DstT: type")
    .Attr("Truncate: bool = false")
    .Doc("Converts x to DstT.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("ArgMax")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("output_type: {int32, int64} = DT_INT64")
    .Doc("Index of the largest value along `dimension`.")
    .SetShapeFn(ArgMinMaxShape);

TW_REGISTER_OP("ArgMin")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("output_type: {int32, int64} = DT_INT64")
    .Doc("Index of the smallest value along `dimension`.")
    .SetShapeFn(ArgMinMaxShape);

TW_REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr(
        "T: {bfloat16, half, float, double, int32, int64, uint8, uint16, uint32, "
        "uint64, complex64, complex128}")
    .AttrAddedAfterTF1("grad_a: bool = false")
    .AttrAddedAfterTF1("grad_b: bool = false")
    .Doc("Matrix product of a and b, optionally transposed.")
    .SetShapeFn(MatMulShape);

TW_REGISTER_OP("SparseMatMul")
    .Input("a: Ta")
    .Input("b: Tb")
    .Output("product: float")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("a_is_sparse: bool = false")
    .Attr("b_is_sparse: bool = false")
    .Attr("Ta: {float, bfloat16} = DT_FLOAT")
    .Attr("Tb: {float, bfloat16} = DT_FLOAT")
    .Doc("MatMul in float of float or bfloat16 operands (the sparsity hints change nothing here).")
    .SetShapeFn(MatMulShape);

// Made by the session's remapper (runtime/graph_optimizer.h), not by
// builders: TF's schema of MatMul + fused_ops on `args`.
TW_REGISTER_OP("_FusedMatMul")
    .Input("a: T")
    .Input("b: T")
    .Input("args: num_args * T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {float, double}")
    .Attr("num_args: int >= 0")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .AttrAddedAfterTF1("leakyrelu_alpha: float = 0.2")
    .Doc("MatMul followed by fused_ops: BiasAdd, then optionally Relu or Relu6, on args.")
    .SetShapeFn(MatMulShape);

TW_REGISTER_OP("BatchMatMul")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .AttrAddedAfterTF1("grad_x: bool = false")
    .AttrAddedAfterTF1("grad_y: bool = false")
    .Doc("Matrix products over matching batch dimensions.")
    .SetShapeFn([](InferenceContext* c) { return BatchMatMulShapeImpl(c, false); });

TW_REGISTER_OP("BatchMatMulV2")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int16, int32, int64, complex64, complex128}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .AttrAddedAfterTF1("grad_x: bool = false")
    .AttrAddedAfterTF1("grad_y: bool = false")
    .Doc("Matrix products over broadcast batch dimensions.")
    .SetShapeFn([](InferenceContext* c) { return BatchMatMulShapeImpl(c, true); });

TW_REGISTER_OP("BatchMatMulV3")
    .Input("x: Ta")
    .Input("y: Tb")
    .Output("output: Tout")
    .Attr(
        "Ta: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
        "complex128}")
    .Attr(
        "Tb: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
        "complex128}")
    .Attr("Tout: {bfloat16, half, float, double, int16, int32, int64, complex64, complex128}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .Attr("grad_x: bool = false")
    .Attr("grad_y: bool = false")
    .Doc("BatchMatMulV2 with operand and product types of their own (int8 x int8 -> int32).")
    .SetShapeFn([](InferenceContext* c) { return BatchMatMulShapeImpl(c, true); });

TW_REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr(
        "Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, "
        "uint32} = DT_INT32")
    .Doc("start, start + delta, ... up to but excluding limit.")
    .SetShapeFn(RangeShape);

TW_REGISTER_OP("ClipByValue")
    .Input("t: T")
    .Input("clip_value_min: T")
    .Input("clip_value_max: T")
    .Output("output: T")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
        "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}")
    .Doc("max(min(t, clip_value_max), clip_value_min); each bound a scalar or t's shape.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("Select")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .Doc("Elements of t where condition, else of e (condition may be per row).")
    .SetShapeFn(SelectShape);

TW_REGISTER_OP("SelectV2")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .Doc("Elements of t where condition, else of e, with broadcasting.")
    .SetShapeFn(SelectV2Shape);

TW_REGISTER_OP("UnsortedSegmentSum")
    .Input("data: T")
    .Input("segment_ids: Tindices")
    .Input("num_segments: Tnumsegments")
    .Output("output: T")
    .Attr("T: numbertype")
    .Attr("Tindices: {int16, int32, int64}")
    .Attr("Tnumsegments: {int32, int64} = DT_INT32")
    .Doc("Sums of data rows grouped by segment id.")
    .SetShapeFn(UnsortedSegmentShape);

[[maybe_unused]] const bool kSegmentsRegistered = [] {
  // TF's types less the quantized ones; Max and Min also less complex.
  constexpr char kNumbers[] =
      "T: {float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, "
      "complex128, half, uint32, uint64}";
  constexpr char kReals[] =
      "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
      "uint64}";
  const struct {
    const char* name;
    const char* types;
    const char* doc;
  } reductions[] = {{"Sum", kNumbers, "Sums"},
                    {"Mean", kNumbers, "Means"},
                    {"Prod", kNumbers, "Products"},
                    {"Max", kReals, "Maxima"},
                    {"Min", kReals, "Minima"}};
  for (const auto& r : reductions) {
    RegisterOp(OpDefBuilder(absl::StrCat("Segment", r.name), __FILE__)
                   .Input("data: T")
                   .Input("segment_ids: Tindices")
                   .Output("output: T")
                   .Attr(r.types)
                   .Attr("Tindices: {int32, int64}")
                   .Doc(absl::StrCat(r.doc, " of data rows over sorted segment ids"))
                   .SetShapeFn(SegmentShape));
    if (std::string(r.name) == "Sum" || std::string(r.name) == "Mean") continue;
    RegisterOp(OpDefBuilder(absl::StrCat("UnsortedSegment", r.name), __FILE__)
                   .Input("data: T")
                   .Input("segment_ids: Tindices")
                   .Input("num_segments: Tnumsegments")
                   .Output("output: T")
                   .Attr(r.types)
                   .Attr("Tindices: {int32, int64}")
                   .Attr("Tnumsegments: {int32, int64} = DT_INT32")
                   .Doc(absl::StrCat(r.doc, " of data rows grouped by segment id"))
                   .SetShapeFn(UnsortedSegmentShape));
  }
  return true;
}();

absl::Status SparseSegmentGradV2Shape(InferenceContext* c) {
  const PartialTensorShape& grad = c->input(0);
  PartialTensorShape out = PartialTensorShape::Unknown();
  if (!grad.unknown_rank()) {
    if (grad.dims() < 1) return absl::InvalidArgumentError("grad must be at least 1-D");
    std::vector<int64_t> dims(grad.dim_sizes().begin(), grad.dim_sizes().end());
    dims[0] = -1;
    out = PartialTensorShape(dims);
  }
  c->set_output(0, out);
  c->set_output(1, PartialTensorShape({-1}));
  return absl::OkStatus();
}

[[maybe_unused]] const bool kSparseSegmentsRegistered = [] {
  constexpr char kFloats[] = "T: {bfloat16, half, float, double}";
  constexpr char kReals[] =
      "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
      "uint64}";
  for (const char* reduction : {"Sum", "Mean", "SqrtN"}) {
    for (const bool counted : {false, true}) {
      OpDefBuilder b(absl::StrCat("SparseSegment", reduction, counted ? "WithNumSegments" : ""),
                     __FILE__);
      b.Input("data: T").Input("indices: Tidx").Input("segment_ids: Tsegmentids");
      if (counted) b.Input("num_segments: Tnumsegments");
      b.Output("output: T")
          .Attr(std::string(reduction) == "Sum" ? kReals : kFloats)
          .Attr("Tidx: {int32, int64} = DT_INT32");
      if (counted) b.Attr("Tnumsegments: {int32, int64} = DT_INT32");
      b.AttrAddedAfterTF1("Tsegmentids: {int32, int64} = DT_INT32")
          .AttrAddedAfterTF1("sparse_gradient: bool = false")
          .Doc(absl::StrCat("The ", reduction,
                            " of the data rows indices picks, by sorted segment_ids"))
          .SetShapeFn(SparseSegmentShape);
      RegisterOp(b);
    }
    RegisterOp(OpDefBuilder(absl::StrCat("SparseSegment", reduction, "Grad"), __FILE__)
                   .Input("grad: T")
                   .Input("indices: Tidx")
                   .Input("segment_ids: Tsegmentids")
                   .Input("output_dim0: int32")
                   .Output("output: T")
                   .Attr(kFloats)
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .AttrAddedAfterTF1("Tsegmentids: {int32, int64} = DT_INT32")
                   .Doc(absl::StrCat("The gradient of SparseSegment", reduction,
                                     ": each segment's gradient, scaled, added to the rows "
                                     "its indices picked"))
                   .SetShapeFn(SparseSegmentShape));
    RegisterOp(OpDefBuilder(absl::StrCat("SparseSegment", reduction, "GradV2"), __FILE__)
                   .Input("grad: T")
                   .Input("indices: Tidx")
                   .Input("segment_ids: Tsegmentids")
                   .Input("dense_output_dim0: int32")
                   .Output("output: T")
                   .Output("sorted_unique_indices: Tidx")
                   .Attr(kFloats)
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .Attr("Tsegmentids: {int32, int64} = DT_INT32")
                   .Doc(absl::StrCat("SparseSegment", reduction,
                                     "Grad's rows for the sorted unique indices only (TF 2's "
                                     "gradient), and those indices"))
                   .SetShapeFn(SparseSegmentGradV2Shape));
  }
  return true;
}();

// Einsum: the output dims follow from the equation (core/einsum.h); an
// input of unknown rank leaves the output unknown.
absl::Status EinsumShape(InferenceContext* c) {
  std::string equation;
  TW_RETURN_IF_ERROR(c->GetAttr("equation", &equation));
  TW_ASSIGN_OR_RETURN(EinsumEquation eq, ParseEinsum(equation, c->num_inputs()));
  std::vector<std::vector<int64_t>> dims;
  for (int i = 0; i < c->num_inputs(); ++i) {
    if (c->input(i).unknown_rank()) return absl::OkStatus();
    dims.emplace_back(c->input(i).dim_sizes().begin(), c->input(i).dim_sizes().end());
  }
  TW_ASSIGN_OR_RETURN(EinsumDims r, ResolveEinsum(eq, dims));
  c->set_output(0, PartialTensorShape(r.output_dims));
  return absl::OkStatus();
}

TW_REGISTER_OP("Einsum")
    .Input("inputs: N * T")
    .Output("output: T")
    .Attr("equation: string")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Doc(
        "Sums of products over the labels of an Einstein-summation equation "
        "(\"ab,bc->ac\").")
    .SetShapeFn(EinsumShape);

}  // namespace
}  // namespace towerflow
