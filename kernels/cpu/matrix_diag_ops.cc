// The diagonal ops over the last two dimensions of a batch of matrices,
// with TensorFlow's semantics (matrix_diag_op.cc): MatrixDiag (V1, V2, V3)
// builds matrices from diagonals, MatrixDiagPart reads them out,
// MatrixSetDiag replaces them; MatrixBandPart keeps a band; Diag and
// DiagPart are the rank-2k forms.
//
// Note [Diagonal bands]
// A band k = [k0, k1] (a scalar k is [k, k]) names diagonals d = j - i of
// an M x N matrix. Diagonal d has length min(M + min(d, 0), N - max(d, 0))
// and its element p is (p, p + d) for d >= 0, (p - d, p) for d < 0. The
// packed form is [..., k1 - k0 + 1, L] (just [..., L] for one diagonal),
// L the longest diagonal's length, diagonal d in row k1 - d; a shorter one
// sits at the left or the right of its row by `align` ("RIGHT_LEFT":
// superdiagonals, d >= 0, at the right, subdiagonals at the left; V1 and V2
// pack LEFT_LEFT), the rest padded.
//
// The kernels move elements as bytes (any fixed-size dtype).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

struct Band {
  int64_t lower = 0, upper = 0;  // k0, k1
  bool left_super = true, left_sub = true;
  int64_t num_diags() const { return upper - lower + 1; }
  // The packed row's offset of diagonal d of length `len` in rows of `max_len`.
  int64_t Offset(int64_t d, int64_t len, int64_t max_len) const {
    return (d >= 0 ? left_super : left_sub) ? 0 : max_len - len;
  }
};

int64_t DiagLength(int64_t d, int64_t rows, int64_t cols) {
  return std::min(rows + std::min<int64_t>(d, 0), cols - std::max<int64_t>(d, 0));
}

absl::StatusOr<Band> ReadBand(const Tensor& k, const std::string& align) {
  if (k.dims() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "diag_index must be a scalar or vector, received shape: ", k.shape().DebugString()));
  }
  if (k.NumElements() < 1 || k.NumElements() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "diag_index must have only one or two elements, received ", k.NumElements(), " elements."));
  }
  if (k.dtype() != DT_INT32) return absl::InvalidArgumentError("diag_index must be int32");
  Band b;
  b.lower = k.data<int32_t>()[0];
  b.upper = k.NumElements() == 2 ? k.data<int32_t>()[1] : b.lower;
  if (b.lower > b.upper) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lower_diag_index must not be larger than upper_diag_index: ", b.lower, " > ", b.upper));
  }
  b.left_super = align == "LEFT_LEFT" || align == "LEFT_RIGHT";
  b.left_sub = align == "LEFT_LEFT" || align == "RIGHT_LEFT";
  return b;
}

absl::Status CheckFixedSize(DataType dtype) {
  if (DataTypeSize(dtype) <= 0) {
    return absl::UnimplementedError(
        absl::StrCat("the diagonal ops take fixed-size dtypes, not ", DataTypeString(dtype)));
  }
  return absl::OkStatus();
}

// Calls fn(matrix_offset, packed_offset) (element indices within one
// matrix and one packed block) for every element of the band of an M x N
// matrix, packed rows of `max_len`.
template <typename Fn>
void ForEachBandElement(const Band& b, int64_t rows, int64_t cols, int64_t max_len, Fn&& fn) {
  for (int64_t d = b.upper; d >= b.lower; --d) {
    const int64_t len = DiagLength(d, rows, cols);
    if (len <= 0) continue;
    const int64_t row = b.upper - d, offset = b.Offset(d, len, max_len);
    for (int64_t p = 0; p < len; ++p) {
      const int64_t i = d >= 0 ? p : p - d, j = d >= 0 ? p + d : p;
      fn(i * cols + j, row * max_len + offset + p);
    }
  }
}

// Copies every band element of `batch` M x N matrices between the
// matrices and their packed form ([batch, num_diags * max_len]):
// into the matrices when `to_matrices`, else out of them.
void CopyBand(const Band& b, int64_t batch, int64_t rows, int64_t cols, int64_t max_len, int elem,
              bool to_matrices, const char* src, char* dst) {
  const int64_t block = b.num_diags() * max_len, matrix = rows * cols;
  for (int64_t n = 0; n < batch; ++n) {
    ForEachBandElement(b, rows, cols, max_len, [&](int64_t m, int64_t p) {
      const int64_t in_matrix = (n * matrix + m) * elem, in_packed = (n * block + p) * elem;
      if (to_matrices) {
        std::memcpy(dst + in_matrix, src + in_packed, elem);
      } else {
        std::memcpy(dst + in_packed, src + in_matrix, elem);
      }
    });
  }
}

// padding_value: one element, its bytes.
absl::StatusOr<std::vector<char>> PaddingBytes(const Tensor& pad) {
  if (pad.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "padding_value must have exactly one element, got shape ", pad.shape().DebugString()));
  }
  const char* bytes = static_cast<const char*>(pad.raw_data());
  return std::vector<char>(bytes, bytes + DataTypeSize(pad.dtype()));
}

// Fills `count` elements of `elem` bytes at `dst` with the value at `value`.
void FillBytes(char* dst, int64_t count, const char* value, int elem) {
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * elem, value, elem);
}

// What the three diagonal kernels share: V3's `align` (V1 and V2 pack
// LEFT_LEFT), and the band V2 and V3 read from input `k_input` (V1: the
// main diagonal).
template <int kVersion>
class DiagKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    if constexpr (kVersion == 3) TW_RETURN_IF_ERROR(c.GetAttr("align", &align_));
    return absl::OkStatus();
  }

 protected:
  absl::StatusOr<Band> BandOf(KernelContext* ctx, int k_input) const {
    if constexpr (kVersion == 1) return Band{};
    return ReadBand(ctx->input(k_input), align_);
  }

 private:
  std::string align_ = "LEFT_LEFT";
};

// MatrixDiag (kVersion 1), MatrixDiagV2 (2), MatrixDiagV3 (3).
template <int kVersion>
class MatrixDiagOp : public DiagKernel<kVersion> {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& diag = ctx->input(0);
    TW_RETURN_IF_ERROR(CheckFixedSize(diag.dtype()));
    TW_ASSIGN_OR_RETURN(const Band b, this->BandOf(ctx, 1));
    int64_t rows = -1, cols = -1;
    const int elem = DataTypeSize(diag.dtype());
    std::vector<char> padding(elem, 0);
    if constexpr (kVersion > 1) {
      TW_ASSIGN_OR_RETURN(rows, IntScalar(ctx->input(2), "num_rows"));
      TW_ASSIGN_OR_RETURN(cols, IntScalar(ctx->input(3), "num_cols"));
      TW_ASSIGN_OR_RETURN(padding, PaddingBytes(ctx->input(4)));
    }
    if (diag.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "diagonal must be at least 1-dim, received shape: ", diag.shape().DebugString()));
    }
    if (b.num_diags() > 1 && diag.dims() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("diagonal must be at least 2-dim for a range of diagonals, received shape: ",
                       diag.shape().DebugString()));
    }
    const int diag_rank = diag.dims();
    if (b.num_diags() > 1 && diag.dim_size(diag_rank - 2) != b.num_diags()) {
      return absl::InvalidArgumentError(
          "The number of diagonals provided in the input does not match the lower_diag_index and "
          "upper_diag_index range.");
    }
    const int64_t max_len = diag.dim_size(diag_rank - 1);
    const int64_t min_rows = max_len - std::min<int64_t>(b.upper, 0);
    const int64_t min_cols = max_len + std::max<int64_t>(b.lower, 0);
    if (rows == -1 && cols == -1) {
      rows = cols = std::max(min_rows, min_cols);
    } else if (rows == -1) {
      rows = min_rows;
    } else if (cols == -1) {
      cols = min_cols;
    }
    if (rows != min_rows && cols != min_cols) {
      return absl::InvalidArgumentError(
          "The number of rows or columns is not consistent with the specified d_lower, d_upper, "
          "and diagonal.");
    }
    if (rows < min_rows) return absl::InvalidArgumentError("The number of rows is too small.");
    if (cols < min_cols) return absl::InvalidArgumentError("The number of columns is too small.");
    std::vector<int64_t> dims(diag.shape().dim_sizes().begin(),
                              diag.shape().dim_sizes().end() - (b.num_diags() > 1 ? 2 : 1));
    const int64_t batch = TensorShape(dims).num_elements();
    dims.push_back(rows);
    dims.push_back(cols);
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    char* dst = static_cast<char*>(out->raw_data());
    const char* src = static_cast<const char*>(diag.raw_data());
    FillBytes(dst, out->NumElements(), padding.data(), elem);
    CopyBand(b, batch, rows, cols, max_len, elem, /*to_matrices=*/true, src, dst);
    return absl::OkStatus();
  }
};

// The band's checks against an M x N input: in range, ordered.
absl::Status CheckBandFits(const Band& b, int64_t rows, int64_t cols) {
  const auto in_range = [&](int64_t d) { return (-rows < d && d < cols) || d == 0; };
  if (!in_range(b.lower)) {
    return absl::InvalidArgumentError(absl::StrCat("lower_diag_index is out of bound: ", b.lower,
                                                   ". It must be between ", -rows, " and ", cols));
  }
  if (!in_range(b.upper)) {
    return absl::InvalidArgumentError(absl::StrCat("upper_diag_index is out of bound: ", b.upper,
                                                   " It must be between ", -rows, " and ", cols));
  }
  return absl::OkStatus();
}

// The packed shape of input's band: [..., (num_diags,) max_len].
struct Packed {
  Band band;
  int64_t rows = 0, cols = 0, max_len = 0, batch = 0;
  std::vector<int64_t> dims;
};
absl::StatusOr<Packed> PackedShape(const Tensor& input, const Band& band) {
  if (input.dims() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("input must be at least 2-dim, received shape: ",
                                                   input.shape().DebugString()));
  }
  Packed p;
  p.band = band;
  p.rows = input.dim_size(input.dims() - 2);
  p.cols = input.dim_size(input.dims() - 1);
  TW_RETURN_IF_ERROR(CheckBandFits(band, p.rows, p.cols));
  p.max_len = std::max<int64_t>(0, std::min(p.rows + std::min<int64_t>(band.upper, 0),
                                            p.cols - std::max<int64_t>(band.lower, 0)));
  p.dims.assign(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end() - 2);
  p.batch = TensorShape(p.dims).num_elements();
  if (band.num_diags() > 1) p.dims.push_back(band.num_diags());
  p.dims.push_back(p.max_len);
  return p;
}

// MatrixDiagPart (1), V2, V3.
template <int kVersion>
class MatrixDiagPartOp : public DiagKernel<kVersion> {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    TW_RETURN_IF_ERROR(CheckFixedSize(input.dtype()));
    const int elem = DataTypeSize(input.dtype());
    TW_ASSIGN_OR_RETURN(const Band b, this->BandOf(ctx, 1));
    std::vector<char> padding(elem, 0);
    if constexpr (kVersion > 1) {
      TW_ASSIGN_OR_RETURN(padding, PaddingBytes(ctx->input(2)));
    }
    TW_ASSIGN_OR_RETURN(Packed p, PackedShape(input, b));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(p.dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    char* dst = static_cast<char*>(out->raw_data());
    const char* src = static_cast<const char*>(input.raw_data());
    FillBytes(dst, out->NumElements(), padding.data(), elem);
    CopyBand(b, p.batch, p.rows, p.cols, p.max_len, elem, /*to_matrices=*/false, src, dst);
    return absl::OkStatus();
  }
};

// MatrixSetDiag (1), V2, V3.
template <int kVersion>
class MatrixSetDiagOp : public DiagKernel<kVersion> {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& diag = ctx->input(1);
    TW_RETURN_IF_ERROR(CheckFixedSize(input.dtype()));
    TW_ASSIGN_OR_RETURN(const Band b, this->BandOf(ctx, 2));
    TW_ASSIGN_OR_RETURN(Packed p, PackedShape(input, b));
    if (diag.shape() != TensorShape(p.dims)) {
      return absl::InvalidArgumentError(
          "Either first dimensions of diagonal don't match input.shape[:-2], or "
          "diagonal.shape[:-1] is not equal to the longests diagonal in range "
          "[lower_diag_index:upper_diag_index].");
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, input.shape()));
    if (out->NumElements() == 0) return absl::OkStatus();
    const int elem = DataTypeSize(input.dtype());
    char* dst = static_cast<char*>(out->raw_data());
    if (out->raw_data() != input.raw_data()) std::memcpy(dst, input.raw_data(), input.TotalBytes());
    CopyBand(b, p.batch, p.rows, p.cols, p.max_len, elem, /*to_matrices=*/true,
             static_cast<const char*>(diag.raw_data()), dst);
    return absl::OkStatus();
  }
};

// MatrixBandPart(input, num_lower, num_upper): element (i, j) kept where
// (num_lower < 0 or i - j <= num_lower) and (num_upper < 0 or j - i <=
// num_upper), else zero.
class MatrixBandPartOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    TW_RETURN_IF_ERROR(CheckFixedSize(input.dtype()));
    if (input.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input must be at least 2-dim, received shape: ", input.shape().DebugString()));
    }
    const int64_t rows = input.dim_size(input.dims() - 2), cols = input.dim_size(input.dims() - 1);
    TW_ASSIGN_OR_RETURN(int64_t lower, IntScalar(ctx->input(1), "num_lower"));
    TW_ASSIGN_OR_RETURN(int64_t upper, IntScalar(ctx->input(2), "num_upper"));
    if (lower > rows) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_lower must be negative or less or equal to number of rows (", rows,
                       ") got: ", lower));
    }
    if (upper > cols) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_upper must be negative or less or equal to number of columns (", cols,
                       ") got: ", upper));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, input.shape()));
    if (out->NumElements() == 0) return absl::OkStatus();
    const int elem = DataTypeSize(input.dtype());
    char* dst = static_cast<char*>(out->raw_data());
    const char* src = static_cast<const char*>(input.raw_data());
    const int64_t matrices = input.NumElements() / (rows * cols);
    for (int64_t n = 0; n < matrices; ++n) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t base = (n * rows + i) * cols;
        // Kept: j in [i - lower, i + upper] clipped.
        const int64_t j0 = lower < 0 ? 0 : std::max<int64_t>(0, i - lower);
        const int64_t j1 = upper < 0 ? cols : std::min(cols, i + upper + 1);
        if (dst != src) {
          if (j1 > j0)
            std::memcpy(dst + (base + j0) * elem, src + (base + j0) * elem, (j1 - j0) * elem);
        }
        if (j0 > 0) std::memset(dst + base * elem, 0, std::min(j0, cols) * elem);
        if (j1 < cols)
          std::memset(dst + (base + std::max(j1, int64_t{0})) * elem, 0,
                      (cols - std::max(j1, int64_t{0})) * elem);
      }
    }
    return absl::OkStatus();
  }
};

// Diag: diagonal of shape D gives D + D with the values where the two
// index halves agree. DiagPart: the inverse, for an input of shape D + D.
template <bool kPart>
class DiagOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_RETURN_IF_ERROR(CheckFixedSize(in.dtype()));
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    if constexpr (kPart) {
      const int rank = in.dims();
      if (rank % 2 != 0 || rank == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("The rank of the tensor should be even and positive, got shape ",
                         in.shape().DebugString()));
      }
      for (int i = 0; i < rank / 2; ++i) {
        if (dims[i] != dims[i + rank / 2]) {
          return absl::InvalidArgumentError(absl::StrCat("Invalid shape ", in.shape().DebugString(),
                                                         ": dimensions ", i, " and ", i + rank / 2,
                                                         " do not match."));
        }
      }
      dims.resize(rank / 2);
    } else {
      if (in.dims() < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input must be at least rank 1, got ", in.dims()));
      }
      dims.insert(dims.end(), dims.begin(), dims.end());
    }
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const int64_t n = kPart ? out->NumElements() : in.NumElements();
    const int elem = DataTypeSize(in.dtype());
    char* dst = static_cast<char*>(out->raw_data());
    const char* src = static_cast<const char*>(in.raw_data());
    if (!kPart && out->TotalBytes() > 0) std::memset(dst, 0, out->TotalBytes());
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (kPart) {
        std::memcpy(dst + i * elem, src + (i * n + i) * elem, elem);
      } else {
        std::memcpy(dst + (i * n + i) * elem, src + i * elem, elem);
      }
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(matrix_diag_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("MatrixDiag"), MakeFactory<MatrixDiagOp<1>>());
  RegisterKernel(cpu("MatrixDiagV2"), MakeFactory<MatrixDiagOp<2>>());
  RegisterKernel(cpu("MatrixDiagV3"), MakeFactory<MatrixDiagOp<3>>());
  RegisterKernel(cpu("MatrixDiagPart"), MakeFactory<MatrixDiagPartOp<1>>());
  RegisterKernel(cpu("MatrixDiagPartV2"), MakeFactory<MatrixDiagPartOp<2>>());
  RegisterKernel(cpu("MatrixDiagPartV3"), MakeFactory<MatrixDiagPartOp<3>>());
  RegisterKernel(cpu("MatrixSetDiag"), MakeFactory<MatrixSetDiagOp<1>>());
  RegisterKernel(cpu("MatrixSetDiagV2"), MakeFactory<MatrixSetDiagOp<2>>());
  RegisterKernel(cpu("MatrixSetDiagV3"), MakeFactory<MatrixSetDiagOp<3>>());
  RegisterKernel(cpu("MatrixBandPart"), MakeFactory<MatrixBandPartOp>());
  RegisterKernel(cpu("Diag"), MakeFactory<DiagOp<false>>());
  RegisterKernel(cpu("DiagPart"), MakeFactory<DiagOp<true>>());
}

}  // namespace
}  // namespace towerflow
