// Ops over the last two dimensions of batches of matrices: the diagonal
// ops (MatrixDiag, MatrixDiagPart, MatrixSetDiag in their three versions;
// Note [Diagonal bands] in kernels/cpu/matrix_diag_ops.cc), MatrixBandPart,
// and Diag / DiagPart; dense linear algebra (MatrixInverse, the
// determinants, MatrixSolve, MatrixTriangularSolve, Cholesky;
// kernels/cpu/linalg_ops.cc) and the decompositions (Qr, Svd,
// SelfAdjointEigV2, Lu, MatrixSolveLs; kernels/cpu/decomposition_ops.cc).
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// The constant band [k0, k1] of input `i`, when it is a constant.
absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> ConstantBand(InferenceContext* c,
                                                                        int i) {
  const TensorProto* k = c->input_tensor(i);
  if (k == nullptr) return std::optional<std::pair<int64_t, int64_t>>();
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> v, TensorProtoAsInt64s(*k));
  if (v.empty() || v.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "diag_index must have only one or two elements, received ", v.size(), " elements."));
  }
  const int64_t lower = v[0], upper = v.size() == 2 ? v[1] : v[0];
  if (lower > upper) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lower_diag_index must not be larger than upper_diag_index: ", lower, " > ", upper));
  }
  return std::optional<std::pair<int64_t, int64_t>>({lower, upper});
}

// MatrixDiagV2/V3: diagonal [..., (num_diags,) L] gives [..., M, N].
absl::Status MatrixDiagV2Shape(InferenceContext* c) {
  const PartialTensorShape& diag = c->input(0);
  TW_ASSIGN_OR_RETURN(auto band, ConstantBand(c, 1));
  if (diag.unknown_rank() || !band.has_value()) return absl::OkStatus();
  const bool many = band->second > band->first;
  if (diag.dims() < (many ? 2 : 1)) {
    return absl::InvalidArgumentError(absl::StrCat("diagonal must be at least ", many ? 2 : 1,
                                                   "-dim, received shape: ", diag.DebugString()));
  }
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> rows, c->ConstantScalarInput(2));
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> cols, c->ConstantScalarInput(3));
  const int64_t len = diag.dim_size(diag.dims() - 1);
  int64_t m = -1, n = -1;
  if (len >= 0 && rows.has_value() && cols.has_value()) {
    const int64_t min_rows = len - std::min<int64_t>(band->second, 0);
    const int64_t min_cols = len + std::max<int64_t>(band->first, 0);
    m = *rows, n = *cols;
    if (m == -1 && n == -1) {
      m = n = std::max(min_rows, min_cols);
    } else if (m == -1) {
      m = min_rows;
    } else if (n == -1) {
      n = min_cols;
    }
  }
  std::vector<int64_t> dims(diag.dim_sizes().begin(), diag.dim_sizes().end() - (many ? 2 : 1));
  dims.push_back(m);
  dims.push_back(n);
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// MatrixDiagPartV2/V3: input [..., M, N] gives [..., (num_diags,) L].
absl::Status MatrixDiagPartV2Shape(InferenceContext* c) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &input));
  TW_ASSIGN_OR_RETURN(auto band, ConstantBand(c, 1));
  if (input.unknown_rank() || !band.has_value()) return absl::OkStatus();
  const int64_t m = input.dim_size(input.dims() - 2), n = input.dim_size(input.dims() - 1);
  std::vector<int64_t> dims(input.dim_sizes().begin(), input.dim_sizes().end() - 2);
  if (band->second > band->first) dims.push_back(band->second - band->first + 1);
  dims.push_back(m < 0 || n < 0
                     ? -1
                     : std::max<int64_t>(0, std::min(m + std::min<int64_t>(band->second, 0),
                                                     n - std::max<int64_t>(band->first, 0))));
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status InputShapeAtLeastMatrix(InferenceContext* c) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &input));
  c->set_output(0, input);
  return absl::OkStatus();
}

// ---- Dense linear algebra (kernels/cpu/linalg_ops.cc).

// [..., N, N] square matrices: the input checked, its batch dims returned.
absl::StatusOr<std::vector<int64_t>> SquareBatch(InferenceContext* c, int i) {
  PartialTensorShape in;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(i), 2, &in));
  if (in.unknown_rank()) return std::vector<int64_t>();
  const int64_t m = in.dim_size(in.dims() - 2), n = in.dim_size(in.dims() - 1);
  if (m >= 0 && n >= 0 && m != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input matrix must be square, got shape ", in.DebugString()));
  }
  return std::vector<int64_t>(in.dim_sizes().begin(), in.dim_sizes().end() - 2);
}

absl::Status SquareMatrixShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(SquareBatch(c, 0).status());
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status DeterminantShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> batch, SquareBatch(c, 0));
  if (c->input(0).unknown_rank()) return absl::OkStatus();
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape(batch));
  return absl::OkStatus();
}

absl::Status SolveShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(SquareBatch(c, 0).status());
  PartialTensorShape rhs;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(1), 2, &rhs));
  c->set_output(0, rhs);
  return absl::OkStatus();
}

// BandedTriangularSolve: rhs's matrices, with the batch dimensions of both
// inputs broadcast.
absl::Status BandedSolveShape(InferenceContext* c) {
  PartialTensorShape matrix, rhs;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &matrix));
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(1), 2, &rhs));
  if (matrix.unknown_rank() || rhs.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  const auto batch = [](const PartialTensorShape& s) {
    std::vector<int64_t> d(s.dim_sizes().begin(), s.dim_sizes().end() - 2);
    return PartialTensorShape(d);
  };
  TW_ASSIGN_OR_RETURN(PartialTensorShape out,
                      shape_fns::BroadcastShapes(batch(matrix), batch(rhs)));
  std::vector<int64_t> d(out.dim_sizes().begin(), out.dim_sizes().end());
  d.push_back(rhs.dim_size(rhs.dims() - 2));
  d.push_back(rhs.dim_size(rhs.dims() - 1));
  c->set_output(0, PartialTensorShape(d));
  return absl::OkStatus();
}

// TridiagonalSolve, TridiagonalMatMul: the shape of rhs (the last input).
absl::Status TridiagonalShape(InferenceContext* c) {
  for (int i = 0; i + 1 < c->num_inputs(); ++i) {
    PartialTensorShape diagonals;
    TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(i), 2, &diagonals));
  }
  PartialTensorShape rhs;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(c->num_inputs() - 1), 2, &rhs));
  c->set_output(0, rhs);
  return absl::OkStatus();
}

constexpr char kLinalgTypes[] = "T: {double, float, half, complex64, complex128}";

constexpr char kAlign[] =
    "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'";

// Matrices [..., m, n]: the batch dims, m and n (-1 unknown); nullopt when
// the rank is unknown.
struct MatrixDims {
  std::vector<int64_t> batch;
  int64_t m = -1, n = -1;
  PartialTensorShape With(std::initializer_list<int64_t> inner) const {
    std::vector<int64_t> d = batch;
    d.insert(d.end(), inner);
    return PartialTensorShape(d);
  }
};
absl::StatusOr<std::optional<MatrixDims>> MatrixDimsOf(InferenceContext* c, int i) {
  PartialTensorShape s;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(i), 2, &s));
  if (s.unknown_rank()) return std::optional<MatrixDims>();
  MatrixDims d;
  d.batch.assign(s.dim_sizes().begin(), s.dim_sizes().end() - 2);
  d.m = s.dim_size(s.dims() - 2);
  d.n = s.dim_size(s.dims() - 1);
  return std::optional<MatrixDims>(d);
}
int64_t MinDim(int64_t a, int64_t b) {
  if (a >= 0 && b >= 0) return std::min(a, b);
  return a == 0 || b == 0 ? 0 : -1;
}

absl::Status QrShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(std::optional<MatrixDims> d, MatrixDimsOf(c, 0));
  if (!d.has_value()) return shape_fns::UnknownShape(c);
  bool full = false;
  TW_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full));
  const int64_t cols = full ? d->m : MinDim(d->m, d->n);
  c->set_output(0, d->With({d->m, cols}));
  c->set_output(1, d->With({cols, d->n}));
  return absl::OkStatus();
}

absl::Status SvdShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(std::optional<MatrixDims> d, MatrixDimsOf(c, 0));
  if (!d.has_value()) return shape_fns::UnknownShape(c);
  bool uv = true, full = false;
  TW_RETURN_IF_ERROR(c->GetAttr("compute_uv", &uv));
  TW_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full));
  const int64_t p = MinDim(d->m, d->n);
  c->set_output(0, d->With({p}));
  // Without compute_uv, u and v hold one placeholder per matrix.
  c->set_output(1, uv ? d->With({d->m, full ? d->m : p}) : d->With({}));
  c->set_output(2, uv ? d->With({d->n, full ? d->n : p}) : d->With({}));
  return absl::OkStatus();
}

absl::Status SelfAdjointEigShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(std::optional<MatrixDims> d, MatrixDimsOf(c, 0));
  if (!d.has_value()) return shape_fns::UnknownShape(c);
  int64_t n = 0;
  TW_RETURN_IF_ERROR(c->MergeDim(d->m, d->n, &n));
  bool v = true;
  TW_RETURN_IF_ERROR(c->GetAttr("compute_v", &v));
  c->set_output(0, d->With({n}));
  c->set_output(1, v ? d->With({n, n}) : d->With({}));
  return absl::OkStatus();
}

absl::Status LuShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(std::optional<MatrixDims> d, MatrixDimsOf(c, 0));
  if (!d.has_value()) return shape_fns::UnknownShape(c);
  int64_t n = 0;
  TW_RETURN_IF_ERROR(c->MergeDim(d->m, d->n, &n));
  c->set_output(0, d->With({n, n}));
  c->set_output(1, d->With({n}));
  return absl::OkStatus();
}

absl::Status SolveLsShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(std::optional<MatrixDims> a, MatrixDimsOf(c, 0));
  TW_ASSIGN_OR_RETURN(std::optional<MatrixDims> b, MatrixDimsOf(c, 1));
  PartialTensorShape scalar;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
  if (!a.has_value() || !b.has_value()) return shape_fns::UnknownShape(c);
  int64_t m = 0;
  TW_RETURN_IF_ERROR(c->MergeDim(a->m, b->m, &m));
  c->set_output(0, a->With({a->n, b->n}));
  return absl::OkStatus();
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp(OpDefBuilder("MatrixDiag", __FILE__)
                 .Input("diagonal: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .Doc("Matrices with `diagonal`'s rows on their main diagonals.")
                 .SetShapeFn([](InferenceContext* c) {
                   PartialTensorShape diag;
                   TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &diag));
                   if (diag.unknown_rank()) return absl::OkStatus();
                   std::vector<int64_t> dims(diag.dim_sizes().begin(), diag.dim_sizes().end());
                   dims.push_back(dims.back());
                   c->set_output(0, PartialTensorShape(dims));
                   return absl::OkStatus();
                 }));
  for (const char* version : {"MatrixDiagV2", "MatrixDiagV3"}) {
    OpDefBuilder b(version, __FILE__);
    b.Input("diagonal: T")
        .Input("k: int32")
        .Input("num_rows: int32")
        .Input("num_cols: int32")
        .Input("padding_value: T")
        .Output("output: T")
        .Attr("T: type")
        .Doc("Matrices with the diagonals k[0]..k[1] from `diagonal`, the rest padding_value.")
        .SetShapeFn(MatrixDiagV2Shape);
    if (std::string(version) == "MatrixDiagV3") b.Attr(kAlign);
    RegisterOp(b);
  }
  RegisterOp(OpDefBuilder("MatrixDiagPart", __FILE__)
                 .Input("input: T")
                 .Output("diagonal: T")
                 .Attr("T: type")
                 .Doc("The main diagonals of a batch of matrices.")
                 .SetShapeFn([](InferenceContext* c) {
                   PartialTensorShape input;
                   TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &input));
                   if (input.unknown_rank()) return absl::OkStatus();
                   std::vector<int64_t> dims(input.dim_sizes().begin(),
                                             input.dim_sizes().end() - 1);
                   const int64_t m = dims.back(), n = input.dim_size(input.dims() - 1);
                   dims.back() = m < 0 || n < 0 ? -1 : std::min(m, n);
                   c->set_output(0, PartialTensorShape(dims));
                   return absl::OkStatus();
                 }));
  for (const char* version : {"MatrixDiagPartV2", "MatrixDiagPartV3"}) {
    OpDefBuilder b(version, __FILE__);
    b.Input("input: T")
        .Input("k: int32")
        .Input("padding_value: T")
        .Output("diagonal: T")
        .Attr("T: type")
        .Doc("The diagonals k[0]..k[1] of a batch of matrices, padded with padding_value.")
        .SetShapeFn(MatrixDiagPartV2Shape);
    if (std::string(version) == "MatrixDiagPartV3") b.Attr(kAlign);
    RegisterOp(b);
  }
  RegisterOp(OpDefBuilder("MatrixSetDiag", __FILE__)
                 .Input("input: T")
                 .Input("diagonal: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .Doc("`input` with its main diagonals replaced by `diagonal`.")
                 .SetShapeFn(InputShapeAtLeastMatrix));
  for (const char* version : {"MatrixSetDiagV2", "MatrixSetDiagV3"}) {
    OpDefBuilder b(version, __FILE__);
    b.Input("input: T")
        .Input("diagonal: T")
        .Input("k: int32")
        .Output("output: T")
        .Attr("T: type")
        .Doc("`input` with its diagonals k[0]..k[1] replaced by `diagonal`.")
        .SetShapeFn(InputShapeAtLeastMatrix);
    if (std::string(version) == "MatrixSetDiagV3") b.Attr(kAlign);
    RegisterOp(b);
  }
  RegisterOp(OpDefBuilder("MatrixBandPart", __FILE__)
                 .Input("input: T")
                 .Input("num_lower: Tindex")
                 .Input("num_upper: Tindex")
                 .Output("band: T")
                 .Attr("T: type")
                 .Attr("Tindex: {int32, int64} = DT_INT64")
                 .Doc("The band num_lower below to num_upper above the main diagonal (negative: "
                      "all), the rest zero.")
                 .SetShapeFn(InputShapeAtLeastMatrix));
  constexpr char kDiagTypes[] =
      "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}";
  RegisterOp(OpDefBuilder("Diag", __FILE__)
                 .Input("diagonal: T")
                 .Output("output: T")
                 .Attr(kDiagTypes)
                 .Doc("A tensor of shape D + D with `diagonal` (of shape D) on its diagonal.")
                 .SetShapeFn([](InferenceContext* c) {
                   PartialTensorShape in;
                   TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &in));
                   if (in.unknown_rank()) return absl::OkStatus();
                   std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
                   dims.insert(dims.end(), in.dim_sizes().begin(), in.dim_sizes().end());
                   c->set_output(0, PartialTensorShape(dims));
                   return absl::OkStatus();
                 }));
  RegisterOp(OpDefBuilder("DiagPart", __FILE__)
                 .Input("input: T")
                 .Output("diagonal: T")
                 .Attr(kDiagTypes)
                 .Doc("The diagonal of a tensor of shape D + D.")
                 .SetShapeFn([](InferenceContext* c) {
                   const PartialTensorShape& in = c->input(0);
                   if (in.unknown_rank()) return absl::OkStatus();
                   if (in.dims() % 2 != 0 || in.dims() == 0) {
                     return absl::InvalidArgumentError(absl::StrCat(
                         "Input must have even and non-zero rank, input rank is ", in.dims()));
                   }
                   std::vector<int64_t> dims(in.dim_sizes().begin(),
                                             in.dim_sizes().begin() + in.dims() / 2);
                   for (int i = 0; i < in.dims() / 2; ++i) {
                     const int64_t b = in.dim_size(i + in.dims() / 2);
                     if (dims[i] >= 0 && b >= 0 && dims[i] != b) {
                       return absl::InvalidArgumentError(
                           absl::StrCat("Invalid shape ", in.DebugString(), ": dimensions ", i,
                                        " and ", i + in.dims() / 2, " do not match."));
                     }
                     if (dims[i] < 0) dims[i] = b;
                   }
                   c->set_output(0, PartialTensorShape(dims));
                   return absl::OkStatus();
                 }));
  RegisterOp(OpDefBuilder("MatrixInverse", __FILE__)
                 .Input("input: T")
                 .Output("output: T")
                 .Attr("adjoint: bool = false")
                 .Attr(kLinalgTypes)
                 .Doc("The inverses of square matrices (of their adjoints with `adjoint`).")
                 .SetShapeFn(SquareMatrixShape));
  RegisterOp(OpDefBuilder("MatrixSquareRoot", __FILE__)
                 .Input("input: T")
                 .Output("output: T")
                 .Attr(kLinalgTypes)
                 .Doc("The principal square roots of square matrices (tf.linalg.sqrtm).")
                 .SetShapeFn(SquareMatrixShape));
  RegisterOp(OpDefBuilder("MatrixDeterminant", __FILE__)
                 .Input("input: T")
                 .Output("output: T")
                 .Attr("T: {half, float, double, complex64, complex128}")
                 .Doc("The determinants of square matrices.")
                 .SetShapeFn(DeterminantShape));
  RegisterOp(OpDefBuilder("LogMatrixDeterminant", __FILE__)
                 .Input("input: T")
                 .Output("sign: T")
                 .Output("log_abs_determinant: T")
                 .Attr("T: {half, float, double, complex64, complex128}")
                 .Doc("The signs and log absolute values of square matrices' determinants.")
                 .SetShapeFn(DeterminantShape));
  RegisterOp(OpDefBuilder("MatrixSolve", __FILE__)
                 .Input("matrix: T")
                 .Input("rhs: T")
                 .Output("output: T")
                 .Attr("adjoint: bool = false")
                 .Attr(kLinalgTypes)
                 .Doc("x with matrix x = rhs (adjoint(matrix) x = rhs with `adjoint`).")
                 .SetShapeFn(SolveShape));
  RegisterOp(OpDefBuilder("MatrixTriangularSolve", __FILE__)
                 .Input("matrix: T")
                 .Input("rhs: T")
                 .Output("output: T")
                 .Attr("lower: bool = true")
                 .Attr("adjoint: bool = false")
                 .Attr("T: {bfloat16, double, float, half, complex64, complex128}")
                 .Doc("x with T x = rhs for T the lower (or upper) triangle of matrix, or its "
                      "adjoint.")
                 .SetShapeFn(SolveShape));
  RegisterOp(OpDefBuilder("Cholesky", __FILE__)
                 .Input("input: T")
                 .Output("output: T")
                 .Attr(kLinalgTypes)
                 .Doc("The lower Cholesky factors of symmetric positive definite matrices (their "
                      "lower triangles read).")
                 .SetShapeFn(SquareMatrixShape));
  RegisterOp(OpDefBuilder("CholeskyGrad", __FILE__)
                 .Input("l: T")
                 .Input("grad: T")
                 .Output("output: T")
                 .Attr("T: {half, float, double}")
                 .Doc("The symmetric gradient of a = l l^T given l (lower Cholesky factors) and "
                      "the gradient of l (its lower triangle read): TF 1's Cholesky gradient op.")
                 .SetShapeFn(SquareMatrixShape));
  RegisterOp(OpDefBuilder("MatrixLogarithm", __FILE__)
                 .Input("input: T")
                 .Output("output: T")
                 .Attr("T: {complex64, complex128}")
                 .Doc("The principal logarithm of each square complex matrix (tf.linalg.logm).")
                 .SetShapeFn(SquareMatrixShape));
  RegisterOp(OpDefBuilder("Qr", __FILE__)
                 .Input("input: T")
                 .Output("q: T")
                 .Output("r: T")
                 .Attr("full_matrices: bool = false")
                 .Attr(kLinalgTypes)
                 .Doc("QR factors of matrices [..., M, N]: q [..., M, P], r [..., P, N], P = "
                      "min(M, N) (M with full_matrices).")
                 .SetShapeFn(QrShape));
  RegisterOp(OpDefBuilder("Svd", __FILE__)
                 .Input("input: T")
                 .Output("s: T")
                 .Output("u: T")
                 .Output("v: T")
                 .Attr("compute_uv: bool = true")
                 .Attr("full_matrices: bool = false")
                 .Attr(kLinalgTypes)
                 .Doc("Singular values (descending) and vectors: input = u diag(s) v^T.")
                 .SetShapeFn(SvdShape));
  RegisterOp(OpDefBuilder("SelfAdjointEigV2", __FILE__)
                 .Input("input: T")
                 .Output("e: T")
                 .Output("v: T")
                 .Attr("compute_v: bool = true")
                 .Attr(kLinalgTypes)
                 .Doc("Ascending eigenvalues and eigenvectors (columns) of self-adjoint matrices "
                      "(their lower triangles read).")
                 .SetShapeFn(SelfAdjointEigShape));
  RegisterOp(OpDefBuilder("Lu", __FILE__)
                 .Input("input: T")
                 .Output("lu: T")
                 .Output("p: output_idx_type")
                 .Attr(kLinalgTypes)
                 .Attr("output_idx_type: {int32, int64} = DT_INT32")
                 .Doc("LU factors with partial pivoting, L (unit lower) and U in one matrix, and "
                      "the row permutation p: input[p] = L U.")
                 .SetShapeFn(LuShape));
  RegisterOp(OpDefBuilder("MatrixSolveLs", __FILE__)
                 .Input("matrix: T")
                 .Input("rhs: T")
                 .Input("l2_regularizer: double")
                 .Output("output: T")
                 .Attr(kLinalgTypes)
                 .Attr("fast: bool = true")
                 .Doc("Least-squares solutions x [..., N, K] of matrix [..., M, N] x = rhs [..., "
                      "M, K], with an L2 penalty.")
                 .SetShapeFn(SolveLsShape));
  // TF 2's banded and tridiagonal systems (tf.linalg.banded_triangular_solve,
  // tridiagonal_solve, tridiagonal_matmul), in TF's compact forms.
  RegisterOp(OpDefBuilder("BandedTriangularSolve", __FILE__)
                 .Input("matrix: T")
                 .Input("rhs: T")
                 .Output("output: T")
                 .Attr("lower: bool = true")
                 .Attr("adjoint: bool = false")
                 .Attr("T: {double, float, half, complex64, complex128}")
                 .Doc("x with A x = rhs for A triangular with K bands, given as matrix [..., K, "
                      "M] in matrix_diag_part's LEFT_RIGHT layout (the main diagonal first when "
                      "lower, last when upper); batch dimensions broadcast.")
                 .SetShapeFn(BandedSolveShape));
  RegisterOp(OpDefBuilder("TridiagonalSolve", __FILE__)
                 .Input("diagonals: T")
                 .Input("rhs: T")
                 .Output("output: T")
                 .Attr("partial_pivoting: bool = true")
                 .Attr("perturb_singular: bool = false")
                 .Attr("T: {double, float, complex64, complex128}")
                 .Doc("x with A x = rhs [..., M, K] for the tridiagonal A whose superdiagonal, "
                      "diagonal and subdiagonal are the rows of diagonals [..., 3, M] (the "
                      "superdiagonal's last and the subdiagonal's first element unread). A "
                      "singular A gives NaN, as TF's.")
                 .SetShapeFn(TridiagonalShape));
  RegisterOp(OpDefBuilder("TridiagonalMatMul", __FILE__)
                 .Input("superdiag: T")
                 .Input("maindiag: T")
                 .Input("subdiag: T")
                 .Input("rhs: T")
                 .Output("output: T")
                 .Attr("T: {double, float, complex64, complex128}")
                 .Doc("A rhs for the tridiagonal A of the diagonals [..., 1, M] (the "
                      "superdiagonal's last and the subdiagonal's first element unread).")
                 .SetShapeFn(TridiagonalShape));
  return true;
}();

}  // namespace
}  // namespace towerflow
