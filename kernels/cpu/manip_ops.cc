// Roll, ReverseSequence, BroadcastArgs, Empty, DeepCopy, CompareAndBitpack,
// InplaceUpdate/Add/Sub and UnravelIndex (ops/manip_ops.cc).
// Roll and ReverseSequence only move elements: they run on an unsigned type
// as wide as the element (strings as strings), copying contiguous runs.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// Calls f(U{}) with U the element type to move the elements of `dtype` as:
// an unsigned integer of their width (complex128 for 16 bytes), or
// std::string.
template <typename F>
absl::Status VisitMovable(absl::string_view op, DataType dtype, F&& f) {
  if (dtype == DT_STRING) return f(std::string{});
  absl::Status status = UnsupportedDtype(op, dtype);
  VisitByElementSizeCpu(dtype, [&](auto u) { status = f(u); });
  return status;
}

// The contiguous run of elements [from, from + n) of `in` to `to` of `out`.
template <typename U>
void CopyRun(const U* in, int64_t from, U* out, int64_t to, int64_t n) {
  std::copy(in + from, in + from + n, out + to);
}

// Roll(input, shift, axis): output[..., (i + shift) mod n, ...] =
// input[..., i, ...] along each axis, the shifts of a repeated axis added.
//
// With k the innermost rolled axis, each block [n_k, inner] of the input
// moves whole (its place given by the outer axes' shifts) as two runs: the
// first n_k - s_k rows to the end, the last s_k to the front.
class RollOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& shift_t = ctx->input(1);
    const Tensor& axis_t = ctx->input(2);
    if (in.dims() < 1) return absl::InvalidArgumentError("input must be 1-D or higher");
    for (const auto& [name, t] : {std::pair{"shift", &shift_t}, {"axis", &axis_t}}) {
      if (t->dims() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, " must be a scalar or a 1-D vector. Found: ", t->shape().DebugString()));
      }
    }
    if (shift_t.NumElements() != axis_t.NumElements()) {
      return absl::InvalidArgumentError("shift and axis must have the same size");
    }
    const int rank = in.dims();
    std::vector<int64_t> shift(rank, 0);
    for (int64_t j = 0; j < axis_t.NumElements(); ++j) {
      int64_t a = IntAt(axis_t, j);
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) {
        return absl::InvalidArgumentError(
            absl::StrCat("axis ", IntAt(axis_t, j), " is out of range"));
      }
      const int64_t n = in.shape().dim_size(static_cast<int>(a));
      if (n == 0) continue;
      // Wrapped into [0, n) as the shifts add, so no sum can overflow.
      shift[a] = ((shift[a] + IntAt(shift_t, j) % n) % n + n) % n;
    }
    int k = rank - 1;
    while (k >= 0 && shift[k] == 0) --k;
    if (k < 0 || in.NumElements() == 0) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    int64_t inner = 1, outer = 1;
    for (int d = k + 1; d < rank; ++d) inner *= in.shape().dim_size(d);
    for (int d = 0; d < k; ++d) outer *= in.shape().dim_size(d);
    const int64_t n = in.shape().dim_size(k), s = shift[k], block = n * inner;
    return VisitMovable("Roll", in.dtype(), [&]<typename U>(U) {
      const U* src = RawData<U>(in);
      U* dst = RawData<U>(*out);
      ctx->intra_op_pool()->ParallelFor(outer, block, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          // The block's place in the output: each outer index shifted.
          int64_t rest = o, to = 0, stride = 1;
          for (int d = k - 1; d >= 0; --d) {
            const int64_t size = in.shape().dim_size(d);
            to += ((rest % size + shift[d]) % size) * stride;
            stride *= size;
            rest /= size;
          }
          CopyRun(src, o * block, dst, to * block + s * inner, (n - s) * inner);
          CopyRun(src, o * block + (n - s) * inner, dst, to * block, s * inner);
        }
      });
      return absl::OkStatus();
    });
  }
};

// ReverseSequence(input, seq_lengths): along seq_dim, the first
// seq_lengths[b] elements of batch entry b (b along batch_dim) reversed, the
// rest kept. The tensor is walked as runs of the axes after both of them.
class ReverseSequenceOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("seq_dim", &seq_dim_));
    TW_RETURN_IF_ERROR(c.GetAttr("batch_dim", &batch_dim_));
    if (seq_dim_ < 0) return absl::InvalidArgumentError(absl::StrCat("Invalid seq_dim ", seq_dim_));
    if (batch_dim_ < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid batch_dim ", batch_dim_));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& lengths_t = ctx->input(1);
    if (lengths_t.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("seq_lengths must be 1-dim, not ", lengths_t.dims()));
    }
    if (batch_dim_ == seq_dim_) {
      return absl::InvalidArgumentError(absl::StrCat("batch_dim == seq_dim == ", seq_dim_));
    }
    for (const auto& [name, dim] : {std::pair{"seq_dim", seq_dim_}, {"batch_dim", batch_dim_}}) {
      if (dim >= in.dims()) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " must be < input rank ( ", dim, " vs. ", in.dims(), ")"));
      }
    }
    const int sd = static_cast<int>(seq_dim_), bd = static_cast<int>(batch_dim_);
    if (lengths_t.NumElements() != in.shape().dim_size(bd)) {
      return absl::InvalidArgumentError(absl::StrCat("Length of seq_lengths != input.dims(", bd,
                                                     "), (", lengths_t.NumElements(), " vs. ",
                                                     in.shape().dim_size(bd), ")"));
    }
    std::vector<int64_t> lengths(lengths_t.NumElements());
    for (int64_t b = 0; b < lengths_t.NumElements(); ++b) {
      lengths[b] = IntAt(lengths_t, b);
      if (lengths[b] < 0) return absl::InvalidArgumentError(absl::StrCat("seq_lens(", b, ") < 0"));
      if (lengths[b] > in.shape().dim_size(sd)) {
        return absl::InvalidArgumentError(absl::StrCat("seq_lens(", b, ") > input.dims(", sd, ")"));
      }
    }
    if (in.NumElements() == 0) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const int last = std::max(sd, bd);
    int64_t inner = 1, runs = 1;
    for (int d = last + 1; d < in.dims(); ++d) inner *= in.shape().dim_size(d);
    for (int d = 0; d <= last; ++d) runs *= in.shape().dim_size(d);
    // The stride of seq_dim in runs.
    int64_t seq_stride = 1;
    for (int d = sd + 1; d <= last; ++d) seq_stride *= in.shape().dim_size(d);
    return VisitMovable("ReverseSequence", in.dtype(), [&]<typename U>(U) {
      const U* src = RawData<U>(in);
      U* dst = RawData<U>(*out);
      ctx->intra_op_pool()->ParallelFor(runs, inner, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t b = 0, t = 0, rest = r;
          for (int d = last; d >= 0; --d) {
            const int64_t size = in.shape().dim_size(d);
            if (d == bd) b = rest % size;
            if (d == sd) t = rest % size;
            rest /= size;
          }
          const int64_t from = t < lengths[b] ? r + (lengths[b] - 1 - 2 * t) * seq_stride : r;
          CopyRun(src, from * inner, dst, r * inner, inner);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  int64_t seq_dim_ = 0, batch_dim_ = 0;
};

// BroadcastArgs(s0, s1): the shape both broadcast to, aligned at the right.
template <typename T>
class BroadcastArgsOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    std::vector<int64_t> shapes[2];
    for (int i = 0; i < 2; ++i) {
      const Tensor& s = ctx->input(i);
      if (s.dims() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("In[", i, "] must be a vector.", s.shape().DebugString()));
      }
      shapes[i].resize(s.NumElements());
      for (int64_t j = 0; j < s.NumElements(); ++j) shapes[i][j] = IntAt(s, j);
    }
    const auto& a = shapes[0];
    const auto& b = shapes[1];
    const size_t rank = std::max(a.size(), b.size());
    std::vector<int64_t> out(rank);
    for (size_t j = 0; j < rank; ++j) {
      const int64_t x = j < rank - a.size() ? 1 : a[j - (rank - a.size())];
      const int64_t y = j < rank - b.size() ? 1 : b[j - (rank - b.size())];
      if (x != y && x != 1 && y != 1) {
        return absl::InvalidArgumentError(absl::StrCat("Incompatible shapes: [",
                                                       absl::StrJoin(a, ","), "] vs. [",
                                                       absl::StrJoin(b, ","), "]"));
      }
      out[j] = x == 1 ? y : x;
    }
    TW_ASSIGN_OR_RETURN(Tensor * r, ctx->allocate_output(0, TensorShape({int64_t(rank)})));
    return WriteInts(out, r);
  }
};

// Empty(shape): a tensor of `shape`, zeroed whatever `init` says (TF may
// leave it uninitialized; Towerflow never hands out stale memory).
class EmptyOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    if (shape_t.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("shape must be a vector of int32, got shape ",
                                                     shape_t.shape().DebugString()));
    }
    TensorShape shape;
    for (int64_t i = 0; i < shape_t.NumElements(); ++i) {
      const int64_t d = IntAt(shape_t, i);
      if (d < 0) return absl::InvalidArgumentError(absl::StrCat("Dimension ", d, " must be >= 0"));
      TW_RETURN_IF_ERROR(shape.AddDim(d));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->dtype() != DT_STRING && out->NumElements() > 0) {
      std::memset(out->raw_data(), 0, out->TotalBytes());
    }
    return absl::OkStatus();
  }
};

// DeepCopy(x): x in a new buffer (an output never aliases its input).
class DeepCopyOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return absl::OkStatus();
    return VisitMovable("DeepCopy", x.dtype(), [&]<typename U>(U) {
      CopyRun(RawData<U>(x), 0, RawData<U>(*y), 0, x.NumElements());
      return absl::OkStatus();
    });
  }
};

// CompareAndBitpack(input [..., 8k], threshold) = [..., k] bytes, bit 7 - i
// of each set where element i of its eight is > threshold (for bool, is
// true: the threshold is ignored, as TF's).
template <typename T>
class CompareAndBitpackOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& threshold = ctx->input(1);
    if (threshold.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Compare must be a scalar, but saw shape: ",
                                                     threshold.shape().DebugString()));
    }
    if (in.dims() < 1) {
      return absl::InvalidArgumentError("Input should be at least a vector, but saw a scalar.");
    }
    if (in.shape().dim_size(in.dims() - 1) % 8 != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Inner dimension of input should be divisible by 8, but saw shape: ",
                       in.shape().DebugString()));
    }
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    dims.back() /= 8;
    const TensorShape shape(dims);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const T* x = in.data<T>();
    const T t = *threshold.data<T>();
    uint8_t* o = out->data<uint8_t>();
    ctx->intra_op_pool()->ParallelFor(out->NumElements(), 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        uint8_t byte = 0;
        for (int k = 0; k < 8; ++k) {
          bool bit;
          if constexpr (std::is_same_v<T, bool>) {
            bit = x[8 * i + k];
          } else {
            bit = x[8 * i + k] > t;
          }
          byte |= static_cast<uint8_t>(bit) << (7 - k);
        }
        o[i] = byte;
      }
    });
    return absl::OkStatus();
  }
};

// InplaceUpdate/Add/Sub(x, i, v): x with row i[j] (wrapped into range, as
// TF's) set to, added or subtracted v's row j, in order (repeated rows
// accumulate). TF writes into x's buffer, so other readers of x see the
// change; here y is a new tensor and x is left as it was.
enum class Inplace { kAdd, kSub };

// y (x copied, or x's buffer when no one else reads it), the rows of y that
// v's rows go to (none when there is nothing to write) and a row's length.
struct InplacePlan {
  Tensor* y = nullptr;
  std::vector<int64_t> rows;
  int64_t row = 0;
};

absl::StatusOr<InplacePlan> InplaceStart(KernelContext* ctx) {
  const Tensor& x = ctx->input(0);
  const Tensor& i = ctx->input(1);
  const Tensor& v = ctx->input(2);
  if (i.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("i must be a vector. ", i.shape().DebugString()));
  }
  if (x.dims() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("x must have rows (rank >= 1), got shape ", x.shape().DebugString()));
  }
  if (x.dims() != v.dims()) {
    return absl::InvalidArgumentError(
        absl::StrCat("x and v shape doesn't match (ranks differ): ", x.shape().DebugString(),
                     " vs. ", v.shape().DebugString()));
  }
  for (int d = 1; d < x.dims(); ++d) {
    if (x.dim_size(d) != v.dim_size(d)) {
      return absl::InvalidArgumentError(absl::StrCat("x and v shape doesn't match at index ", d,
                                                     " : ", x.shape().DebugString(), " vs. ",
                                                     v.shape().DebugString()));
    }
  }
  if (i.dim_size(0) != v.dim_size(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("i and x shape doesn't match at index 0: ", i.shape().DebugString(), " vs. ",
                     v.shape().DebugString()));
  }
  TW_ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
  if (y->raw_data() != x.raw_data()) {
    TW_RETURN_IF_ERROR(VisitMovable("Inplace", x.dtype(), [&]<typename U>(U) {
      CopyRun(RawData<U>(x), 0, RawData<U>(*y), 0, x.NumElements());
      return absl::OkStatus();
    }));
  }
  InplacePlan plan{y, {}, 0};
  if (x.NumElements() == 0 || v.NumElements() == 0) return plan;
  plan.row = v.NumElements() / v.dim_size(0);
  const int64_t rows = x.dim_size(0);
  for (int64_t j = 0; j < i.NumElements(); ++j) {
    plan.rows.push_back((i.data<int32_t>()[j] % rows + rows) % rows);
  }
  return plan;
}

class InplaceUpdateOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const InplacePlan p, InplaceStart(ctx));
    const Tensor& v = ctx->input(2);
    return VisitMovable("InplaceUpdate", v.dtype(), [&]<typename U>(U) {
      for (size_t j = 0; j < p.rows.size(); ++j) {
        CopyRun(RawData<U>(v), static_cast<int64_t>(j) * p.row, RawData<U>(*p.y), p.rows[j] * p.row,
                p.row);
      }
      return absl::OkStatus();
    });
  }
};

template <typename T, Inplace kMode>
class InplaceArithOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const InplacePlan p, InplaceStart(ctx));
    const T* vs = ctx->input(2).data<T>();
    T* ys = p.y->data<T>();
    for (size_t j = 0; j < p.rows.size(); ++j) {
      T* to = ys + p.rows[j] * p.row;
      const T* from = vs + static_cast<int64_t>(j) * p.row;
      for (int64_t k = 0; k < p.row; ++k) {
        to[k] = kMode == Inplace::kAdd ? to[k] + from[k] : to[k] - from[k];
      }
    }
    return absl::OkStatus();
  }
};
template <typename T>
using InplaceAddOp = InplaceArithOp<T, Inplace::kAdd>;
template <typename T>
using InplaceSubOp = InplaceArithOp<T, Inplace::kSub>;

// UnravelIndex(indices, dims): for each flat index of an array of shape
// dims (row-major), its coordinates: [len(dims)] for a scalar index,
// [len(dims), n] for n indices.
template <typename T>
class UnravelIndexOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& dims_t = ctx->input(1);
    if (dims_t.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("The indices can only be 1-D, got \"", dims_t.shape().DebugString(), "\""));
    }
    if (indices.dims() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "The indices can only be scalar or vector, got \"", indices.shape().DebugString(), "\""));
    }
    const T* dims = dims_t.data<T>();
    const int64_t rank = dims_t.NumElements();
    int64_t size = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[d] == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Input dims cannot contain a dim of zero, but dims contains zero at index ", d));
      }
      if (dims[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input dims cannot be negative. Got dim = ", dims[d], " at index ", d));
      }
      size = MultiplyWithoutOverflow(size, dims[d]);
    }
    const int64_t n = indices.NumElements();
    const T* idx = indices.data<T>();
    for (int64_t j = 0; j < n; ++j) {
      if (size >= 0 && idx[j] >= size) {
        return absl::InvalidArgumentError("index is out of bound as with dims");
      }
    }
    const TensorShape shape = indices.dims() == 0 ? TensorShape({rank}) : TensorShape({rank, n});
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    T* o = out->data<T>();
    for (int64_t j = 0; j < n; ++j) {
      // TF's C++ division and remainder: a negative index gives negative
      // coordinates, as TF's kernel does.
      T rest = idx[j];
      for (int64_t d = rank - 1; d >= 0; --d) {
        o[d * n + j] = rest % dims[d];
        rest /= dims[d];
      }
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(manip_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("Roll"), MakeFactory<RollOp>());
  RegisterKernel(cpu("ReverseSequence"), MakeFactory<ReverseSequenceOp>());
  RegisterTypedKernels<BroadcastArgsOp, int32_t, int64_t>(cpu("BroadcastArgs"), "T");
  RegisterKernel(cpu("Empty"), MakeFactory<EmptyOp>());
  RegisterKernel(cpu("DeepCopy"), MakeFactory<DeepCopyOp>());
  RegisterKernel(cpu("InplaceUpdate"), MakeFactory<InplaceUpdateOp>());
  RegisterTypedKernels<InplaceAddOp, float, double, int32_t, int64_t, complex64, complex128>(
      cpu("InplaceAdd"), "T");
  RegisterTypedKernels<InplaceSubOp, float, double, int32_t, int64_t, complex64, complex128>(
      cpu("InplaceSub"), "T");
  RegisterTypedKernels<UnravelIndexOp, int32_t, int64_t>(cpu("UnravelIndex"), "Tidx");
  RegisterTypedKernels<CompareAndBitpackOp, bool, float, double, int32_t, int64_t>(
      cpu("CompareAndBitpack"), "T");
}

}  // namespace
}  // namespace towerflow
