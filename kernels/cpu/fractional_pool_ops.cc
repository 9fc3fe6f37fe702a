// Fractional pooling (Graham, "Fractional Max-Pooling", 2014):
// FractionalMaxPool and FractionalAvgPool, NHWC, with their gradient ops
// FractionalMaxPoolGrad and FractionalAvgPoolGrad, TF's windows and numbers.
//
// Rows (and columns) are cut into out = floor(in / ratio) windows whose
// starts are a pooling sequence [out + 1] from 0 to in; a window covers
// [start_i, start_{i+1}) (overlapping: [start_i, start_{i+1}]), the last
// clipped to the input. The steps are in / out or one more: shuffled
// (random) or from one uniform u (pseudo_random: start_i = ceil(alpha (i +
// u)) - 1 with alpha = in / out), drawn from TF's Philox stream for the
// node's seed and seed2, afresh each run with the same seeds (deterministic)
// or from fresh random bits (seeds 0), as TF's kernels.
//
// The gradient ops take the sequences as inputs, so every window is checked
// to lie in the input and hold an element (TF's kernel crashes otherwise).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"
#include "kernels/random_op_base.h"

namespace towerflow {
namespace {

// The steps of `out` windows over `in` elements, TF's draws from `random`.
std::vector<int64_t> PoolingSteps(int64_t in, int64_t out, bool pseudo_random,
                                  GuardedPhilox* random) {
  const int64_t k = in / out;
  std::vector<int64_t> steps(out, k);
  if (pseudo_random) {
    // a_i = ceil(alpha (i + u)) for 0 < i < out, a_0 = 1 and a_out = in + 1,
    // u in [0, min of the bounds that keep every step k or k + 1).
    const double alpha = static_cast<double>(in) / out;
    const double max_u =
        std::min((k + 2) / alpha - 1, (in + 1 - k) / alpha - static_cast<double>(out - 1));
    PhiloxStream stream = random->Reserve(1);  // 2 words
    PhiloxWords words(&stream);
    const uint32_t hi = words.Next();
    const double u = PhiloxDouble(hi, words.Next()) * max_u;
    std::vector<int64_t> a(out + 1);
    a[0] = 1;
    a[out] = in + 1;
    for (int64_t i = 1; i < out; ++i) a[i] = static_cast<int>(std::ceil(alpha * (i + u)));
    for (int64_t i = 0; i < out; ++i) steps[i] = a[i + 1] - a[i];
    return steps;
  }
  // in % out steps of k + 1 first, then shuffled: swap i with i + word %
  // (out - i), a word each, out words reserved.
  for (int64_t i = 0; i < in % out; ++i) ++steps[i];
  PhiloxStream stream = random->Reserve((static_cast<uint64_t>(out) + 3) / 4);
  PhiloxWords words(&stream);
  for (int64_t i = 0; i + 1 < out; ++i) {
    std::swap(steps[i],
              steps[i + static_cast<int64_t>(words.Next() % static_cast<uint32_t>(out - i))]);
  }
  return steps;
}

// The windows of one dimension: [first[i], last[i]] in the input.
struct Windows {
  std::vector<int64_t> first, last;
};

// The windows of `sequence` over `in` elements; every one must hold an
// element of the input (the gradient ops read sequences from their inputs).
absl::StatusOr<Windows> WindowsOf(const int64_t* sequence, int64_t out, int64_t in,
                                  bool overlapping, const char* name) {
  Windows w;
  w.first.resize(out);
  w.last.resize(out);
  for (int64_t i = 0; i < out; ++i) {
    w.first[i] = sequence[i];
    w.last[i] = std::min(overlapping ? sequence[i + 1] : sequence[i + 1] - 1, in - 1);
    if (w.first[i] < 0 || w.first[i] > w.last[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " ", i, " gives the window [", sequence[i], ", ", sequence[i + 1],
                       overlapping ? "]" : ")", ", which holds no element of a dimension of ", in));
    }
  }
  return w;
}

// out = TF's pooling of in [batch, rows, cols, depth] over the windows:
// max, or the mean (a sum, then divided; integer division for integers).
template <typename T, bool kMax>
void Pool(const T* in, int64_t batch, int64_t rows, int64_t cols, int64_t depth, const Windows& r,
          const Windows& c, T* out) {
  const int64_t out_rows = r.first.size(), out_cols = c.first.size();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < out_rows; ++i) {
      for (int64_t j = 0; j < out_cols; ++j) {
        T* o = out + ((b * out_rows + i) * out_cols + j) * depth;
        std::fill(o, o + depth, kMax ? std::numeric_limits<T>::lowest() : T(0));
        for (int64_t y = r.first[i]; y <= r.last[i]; ++y) {
          for (int64_t x = c.first[j]; x <= c.last[j]; ++x) {
            const T* p = in + ((b * rows + y) * cols + x) * depth;
            for (int64_t d = 0; d < depth; ++d) o[d] = kMax ? std::max(o[d], p[d]) : o[d] + p[d];
          }
        }
        if (!kMax) {
          const T count =
              static_cast<T>((r.last[i] - r.first[i] + 1) * (c.last[j] - c.first[j] + 1));
          for (int64_t d = 0; d < depth; ++d) o[d] /= count;
        }
      }
    }
  }
}

template <bool kMax>
struct FractionalPool {
  template <typename T>
  class Op : public OpKernel {
   public:
    absl::Status Init(const KernelConstruction& c) override {
      TW_RETURN_IF_ERROR(c.GetAttr("pooling_ratio", &ratio_));
      TW_RETURN_IF_ERROR(c.GetAttr("pseudo_random", &pseudo_random_));
      TW_RETURN_IF_ERROR(c.GetAttr("overlapping", &overlapping_));
      bool deterministic = false;
      TW_RETURN_IF_ERROR(c.GetAttr("deterministic", &deterministic));
      TW_RETURN_IF_ERROR(c.GetAttr("seed", &seed_));
      TW_RETURN_IF_ERROR(c.GetAttr("seed2", &seed2_));
      if (ratio_.size() != 4) {
        return absl::InvalidArgumentError("pooling_ratio field must specify 4 dimensions");
      }
      for (const float r : ratio_) {
        if (!(r >= 1)) {
          return absl::InvalidArgumentError(
              absl::StrCat("pooling_ratio cannot be smaller than 1, got: ", r));
        }
      }
      if (ratio_[0] != 1 || ratio_[3] != 1) {
        return absl::UnimplementedError(
            "Fractional pooling is not yet supported on the batch nor channel dimension.");
      }
      if (!deterministic && (seed_ != 0 || seed2_ != 0)) {
        return absl::InvalidArgumentError(
            "Both seed and seed2 should be 0 if deterministic is false.");
      }
      if (deterministic && seed_ == 0 && seed2_ == 0) {  // fixed now, for every run
        std::random_device device;
        seed_ = (static_cast<int64_t>(device()) << 32) | device();
        seed2_ = (static_cast<int64_t>(device()) << 32) | device();
      }
      return absl::OkStatus();
    }

    absl::Status Compute(KernelContext* ctx) override {
      const Tensor& in = ctx->input(0);
      if (in.dims() != 4) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor_in must be 4-dimensional, got ", in.shape().DebugString()));
      }
      int64_t out_dims[4];
      for (int i = 0; i < 4; ++i) {
        const float d = static_cast<float>(in.dim_size(i));
        if (d < ratio_[i]) {
          return absl::InvalidArgumentError(
              absl::StrCat("Pooling ratio is higher than input dimension size for dimension ", i,
                           ". Input dim size: ", in.dim_size(i), " pooling ratio: ", ratio_[i]));
        }
        out_dims[i] = static_cast<int64_t>(std::floor(d / ratio_[i]));  // >= 1
      }
      // A stream of the seeds per run (TF's generator is the run's own).
      GuardedPhilox random;
      random.Init(SeededStream(seed_, seed2_));
      const std::vector<int64_t> row_steps =
          PoolingSteps(in.dim_size(1), out_dims[1], pseudo_random_, &random);
      const std::vector<int64_t> col_steps =
          PoolingSteps(in.dim_size(2), out_dims[2], pseudo_random_, &random);
      TW_ASSIGN_OR_RETURN(
          Tensor * out, ctx->allocate_output(
                            0, TensorShape({out_dims[0], out_dims[1], out_dims[2], out_dims[3]})));
      TW_ASSIGN_OR_RETURN(Tensor * row_seq,
                          ctx->allocate_output(1, TensorShape({out_dims[1] + 1})));
      TW_ASSIGN_OR_RETURN(Tensor * col_seq,
                          ctx->allocate_output(2, TensorShape({out_dims[2] + 1})));
      for (auto [seq, steps] : {std::pair{row_seq, &row_steps}, std::pair{col_seq, &col_steps}}) {
        int64_t* s = seq->template data<int64_t>();
        s[0] = 0;
        for (size_t i = 0; i < steps->size(); ++i) s[i + 1] = s[i] + (*steps)[i];
      }
      TW_ASSIGN_OR_RETURN(
          Windows r, WindowsOf(row_seq->data<int64_t>(), out_dims[1], in.dim_size(1), overlapping_,
                               "row_pooling_sequence"));
      TW_ASSIGN_OR_RETURN(
          Windows c, WindowsOf(col_seq->data<int64_t>(), out_dims[2], in.dim_size(2), overlapping_,
                               "col_pooling_sequence"));
      Pool<T, kMax>(in.data<T>(), in.dim_size(0), in.dim_size(1), in.dim_size(2), in.dim_size(3), r,
                    c, out->data<T>());
      return absl::OkStatus();
    }

   private:
    std::vector<float> ratio_;
    bool pseudo_random_ = false, overlapping_ = false;
    int64_t seed_ = 0, seed2_ = 0;
  };
};

// The windows of the gradient ops' sequences for an input of `in_shape`
// and an output gradient of `grad_shape` (both 4-D, checked).
absl::Status GradWindows(const TensorShape& in_shape, const Tensor& grad, const Tensor& row_seq,
                         const Tensor& col_seq, bool overlapping, Windows* r, Windows* c) {
  if (grad.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("out_backprop must be 4-dimensional, got ", grad.shape().DebugString()));
  }
  if (grad.dim_size(0) != in_shape.dim_size(0) || grad.dim_size(3) != in_shape.dim_size(3)) {
    return absl::InvalidArgumentError(absl::StrCat("out_backprop ", grad.shape().DebugString(),
                                                   " and the input ", in_shape.DebugString(),
                                                   " differ in their batch or depth"));
  }
  for (const auto& [seq, dim, name] : {std::tuple{&row_seq, 1, "row_pooling_sequence"},
                                       std::tuple{&col_seq, 2, "col_pooling_sequence"}}) {
    if (seq->dims() != 1 || seq->dim_size(0) != grad.dim_size(dim) + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " must be a vector one longer than dimension ", dim, " of out_backprop ",
          grad.shape().DebugString(), ", got ", seq->shape().DebugString()));
    }
  }
  TW_ASSIGN_OR_RETURN(*r, WindowsOf(row_seq.data<int64_t>(), grad.dim_size(1), in_shape.dim_size(1),
                                    overlapping, "row_pooling_sequence"));
  TW_ASSIGN_OR_RETURN(*c, WindowsOf(col_seq.data<int64_t>(), grad.dim_size(2), in_shape.dim_size(2),
                                    overlapping, "col_pooling_sequence"));
  return absl::OkStatus();
}

// FractionalMaxPoolGrad(orig_input, orig_output, out_backprop, row_seq,
// col_seq): each gradient to its window's first maximum (TF's scan: rows,
// then columns; a later element only if larger).
template <typename T>
class FractionalMaxPoolGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("overlapping", &overlapping_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& orig_out = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    if (in.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("orig_input should be a tensor of rank 4, got ", in.shape().DebugString()));
    }
    if (orig_out.shape() != grad.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("orig_output ", orig_out.shape().DebugString(), " and out_backprop ",
                       grad.shape().DebugString(), " must have the same shape"));
    }
    Windows r, c;
    TW_RETURN_IF_ERROR(
        GradWindows(in.shape(), grad, ctx->input(3), ctx->input(4), overlapping_, &r, &c));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    T* dx = out->data<T>();
    std::fill(dx, dx + out->NumElements(), T(0));
    const T* x = in.data<T>();
    const T* dy = grad.data<T>();
    const int64_t batch = in.dim_size(0), rows = in.dim_size(1), cols = in.dim_size(2),
                  depth = in.dim_size(3);
    const int64_t out_rows = grad.dim_size(1), out_cols = grad.dim_size(2);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < out_rows; ++i) {
        for (int64_t j = 0; j < out_cols; ++j) {
          const int64_t o = ((b * out_rows + i) * out_cols + j) * depth;
          for (int64_t d = 0; d < depth; ++d) {
            int64_t arg = -1;
            for (int64_t y = r.first[i]; y <= r.last[i]; ++y) {
              for (int64_t xx = c.first[j]; xx <= c.last[j]; ++xx) {
                const int64_t at = ((b * rows + y) * cols + xx) * depth + d;
                if (arg < 0 || x[arg] < x[at]) arg = at;
              }
            }
            dx[arg] += dy[o + d];
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  bool overlapping_ = false;
};

// FractionalAvgPoolGrad(orig_input_tensor_shape, out_backprop, row_seq,
// col_seq): each gradient spread evenly over its window, summed in double.
template <typename T>
class FractionalAvgPoolGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("overlapping", &overlapping_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    if (shape_t.dims() != 1 || shape_t.NumElements() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("Original input tensor shape must be 1-dimensional and 4 elements, got ",
                       shape_t.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(shape_t, "orig_input_tensor_shape"));
    TW_ASSIGN_OR_RETURN(TensorShape in_shape, TensorShape::FromDims(dims));
    const Tensor& grad = ctx->input(1);
    Windows r, c;
    TW_RETURN_IF_ERROR(
        GradWindows(in_shape, grad, ctx->input(2), ctx->input(3), overlapping_, &r, &c));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in_shape));
    std::vector<double> sum(out->NumElements(), 0.0);
    const T* dy = grad.data<T>();
    const int64_t batch = in_shape.dim_size(0), rows = in_shape.dim_size(1),
                  cols = in_shape.dim_size(2), depth = in_shape.dim_size(3);
    const int64_t out_rows = grad.dim_size(1), out_cols = grad.dim_size(2);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < out_rows; ++i) {
        for (int64_t j = 0; j < out_cols; ++j) {
          const int64_t o = ((b * out_rows + i) * out_cols + j) * depth;
          const int64_t count = (r.last[i] - r.first[i] + 1) * (c.last[j] - c.first[j] + 1);
          for (int64_t y = r.first[i]; y <= r.last[i]; ++y) {
            for (int64_t x = c.first[j]; x <= c.last[j]; ++x) {
              double* s = sum.data() + ((b * rows + y) * cols + x) * depth;
              for (int64_t d = 0; d < depth; ++d) s[d] += static_cast<double>(dy[o + d]) / count;
            }
          }
        }
      }
    }
    T* dx = out->data<T>();
    for (size_t i = 0; i < sum.size(); ++i) dx[i] = static_cast<T>(sum[i]);
    return absl::OkStatus();
  }

 private:
  bool overlapping_ = false;
};

TW_REGISTER_KERNELS(fractional_pool_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<FractionalPool<true>::Op, float, double, int32_t, int64_t>(
      cpu("FractionalMaxPool"), "T");
  RegisterTypedKernels<FractionalPool<false>::Op, float, double, int32_t, int64_t>(
      cpu("FractionalAvgPool"), "T");
  RegisterTypedKernels<FractionalMaxPoolGradOp, float, double, int32_t, int64_t>(
      cpu("FractionalMaxPoolGrad"), "T");
  RegisterTypedKernels<FractionalAvgPoolGradOp, float, double, int32_t, int64_t>(
      cpu("FractionalAvgPoolGrad").HostMemory("orig_input_tensor_shape"), "T");
}

}  // namespace
}  // namespace towerflow
