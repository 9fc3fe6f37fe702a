// Einsum as one batched GEMM (TensorFlow's own strategy).
//
// Note [Einsum as GEMM]
// With the equation resolved (core/einsum.h), every label of inputs A and B
// is one of:
//   batch:    in A, B and the output    -> the GEMM's batch
//   free A:   in A and the output only  -> its rows (M)
//   free B:   in B and the output only  -> its columns (N)
//   contract: not in the output         -> its inner dimension (K)
// A label summed away in one input only is a contract label that the other
// input broadcasts (sum_k a_k * b = b * sum_k a_k), and one-input Einsum is
// A against a B of ones, so every equation is C[bt] = A'[bt] B'[bt] with
// A' = [batch, freeA, contract], B' = [batch, contract, freeB], each
// gathered from its input by strides (0 where it broadcasts) unless it is
// already laid out so, and C permuted into the output's label order.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/einsum.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/blas.h"

namespace towerflow {
namespace {

// An operand: its data and one label and size per dim.
template <typename T>
struct Operand {
  const T* data;
  std::vector<int> labels;
  std::vector<int64_t> dims;
};

// Strides of `op` along `labels` of sizes `sizes`: 0 where op lacks the
// label or broadcasts it (size 1).
template <typename T>
std::vector<int64_t> StridesFor(const Operand<T>& op, const std::vector<int>& labels,
                                const std::vector<int64_t>& sizes) {
  std::vector<int64_t> own(op.dims.size(), 1);
  for (int d = static_cast<int>(op.dims.size()) - 2; d >= 0; --d) {
    own[d] = own[d + 1] * op.dims[d + 1];
  }
  std::vector<int64_t> strides(labels.size(), 0);
  for (size_t i = 0; i < labels.size(); ++i) {
    const auto it = std::find(op.labels.begin(), op.labels.end(), labels[i]);
    if (it == op.labels.end()) continue;
    const size_t d = it - op.labels.begin();
    if (op.dims[d] == sizes[i]) strides[i] = own[d];
  }
  return strides;
}

// Whether `strides` walk a contiguous row-major array of `sizes`.
bool Contiguous(const std::vector<int64_t>& strides, const std::vector<int64_t>& sizes) {
  int64_t expect = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expect) return false;
    expect *= sizes[i];
  }
  return true;
}

// dst (row-major over `sizes`) = src read at `strides`.
template <typename T>
void Gather(const T* src, const std::vector<int64_t>& strides, const std::vector<int64_t>& sizes,
            T* dst) {
  if (sizes.empty()) {
    *dst = *src;
    return;
  }
  const int rank = static_cast<int>(sizes.size());
  const int64_t inner = sizes.back(), inner_stride = strides.back();
  int64_t outer = 1;
  for (int i = 0; i + 1 < rank; ++i) outer *= sizes[i];
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* s = src + offset;
    for (int64_t j = 0; j < inner; ++j) dst[j] = s[j * inner_stride];
    dst += inner;
    for (int d = rank - 2; d >= 0; --d) {  // odometer over the outer dims
      offset += strides[d];
      if (++index[d] < sizes[d]) break;
      offset -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
}

// `op` laid out over `labels` (of `sizes`): its own data when it already
// is, else a gathered copy in `scratch`.
template <typename T>
absl::StatusOr<const T*> Arrange(KernelContext* ctx, const Operand<T>& op,
                                 const std::vector<int>& labels, const std::vector<int64_t>& sizes,
                                 Tensor* scratch) {
  const std::vector<int64_t> strides = StridesFor(op, labels, sizes);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  int64_t own = 1;
  for (int64_t d : op.dims) own *= d;
  if (own == n && Contiguous(strides, sizes)) return op.data;
  TW_ASSIGN_OR_RETURN(*scratch, ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({n})));
  Gather(op.data, strides, sizes, scratch->data<T>());
  return scratch->data<T>();
}

template <typename T>
class EinsumOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string equation;
    int64_t n = 0;
    TW_RETURN_IF_ERROR(c.GetAttr("equation", &equation));
    TW_RETURN_IF_ERROR(c.GetAttr("N", &n));
    TW_ASSIGN_OR_RETURN(eq_, ParseEinsum(equation, static_cast<int>(n)));
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const int num = ctx->num_inputs();
    std::vector<std::vector<int64_t>> dims;
    for (int i = 0; i < num; ++i) {
      const auto& d = ctx->input(i).shape().dim_sizes();
      dims.emplace_back(d.begin(), d.end());
    }
    TW_ASSIGN_OR_RETURN(EinsumDims r, ResolveEinsum(eq_, dims));
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(r.output_dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return absl::OkStatus();

    const T one = T(1);
    Operand<T> a{ctx->input(0).data<T>(), r.inputs[0], dims[0]};
    Operand<T> b{&one, {}, {}};
    if (num == 2) b = Operand<T>{ctx->input(1).data<T>(), r.inputs[1], dims[1]};
    std::map<int, int64_t>& size = r.sizes;
    const auto has = [](const Operand<T>& op, int label) {
      return std::find(op.labels.begin(), op.labels.end(), label) != op.labels.end();
    };
    std::vector<int> batch, free_a, free_b, contract;
    for (int label : r.output) {
      (has(a, label) && has(b, label) ? batch : has(a, label) ? free_a : free_b).push_back(label);
    }
    for (const Operand<T>* op : {&a, &b}) {
      for (int label : op->labels) {
        if (std::find(r.output.begin(), r.output.end(), label) == r.output.end() &&
            std::find(contract.begin(), contract.end(), label) == contract.end()) {
          contract.push_back(label);
        }
      }
    }
    const auto sizes_of = [&](std::initializer_list<const std::vector<int>*> groups,
                              std::vector<int>* labels) {
      std::vector<int64_t> sizes;
      for (const std::vector<int>* g : groups) {
        for (int label : *g) {
          labels->push_back(label);
          sizes.push_back(size[label]);
        }
      }
      return sizes;
    };
    const auto product = [&](const std::vector<int>& g) {
      int64_t p = 1;
      for (int label : g) p *= size[label];
      return p;
    };
    const int64_t bt = product(batch), m = product(free_a), k = product(contract),
                  n = product(free_b);
    std::vector<int> a_labels, b_labels, c_labels;
    const std::vector<int64_t> a_sizes = sizes_of({&batch, &free_a, &contract}, &a_labels);
    const std::vector<int64_t> b_sizes = sizes_of({&batch, &contract, &free_b}, &b_labels);
    const std::vector<int64_t> c_sizes = sizes_of({&batch, &free_a, &free_b}, &c_labels);
    if (!FitsBlas(m) || !FitsBlas(n) || !FitsBlas(k)) {
      return absl::InvalidArgumentError(absl::StrCat("Einsum's matrix product is ", m, " x ", k,
                                                     " by ", k, " x ", n,
                                                     ", past BLAS's int dimensions"));
    }
    Tensor a_scratch, b_scratch, c_scratch;
    TW_ASSIGN_OR_RETURN(const T* a_data, Arrange(ctx, a, a_labels, a_sizes, &a_scratch));
    TW_ASSIGN_OR_RETURN(const T* b_data, Arrange(ctx, b, b_labels, b_sizes, &b_scratch));

    // C in batch, freeA, freeB order: the output itself when that is its
    // order.
    T* c = out->data<T>();
    const bool direct = c_labels == r.output;
    if (!direct) {
      TW_ASSIGN_OR_RETURN(c_scratch,
                          ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({bt * m * n})));
      c = c_scratch.data<T>();
    }
    if (k == 0) {
      std::fill_n(c, bt * m * n, T(0));
    } else {
      for (int64_t i = 0; i < bt; ++i) {
        Gemm<T>(false, false, m, n, k, T(1), a_data + i * m * k, k, b_data + i * k * n, n, T(0),
                c + i * m * n, n);
      }
    }
    if (!direct) {
      const Operand<T> c_op{c, c_labels, c_sizes};
      Gather(c, StridesFor(c_op, r.output, r.output_dims), r.output_dims, out->data<T>());
    }
    return absl::OkStatus();
  }

 private:
  EinsumEquation eq_;
};

TW_REGISTER_KERNELS(einsum_op) {
  RegisterTypedKernels<EinsumOp, float, double>(KernelDefBuilder("Einsum").Device(kDeviceCpu), "T");
}

}  // namespace
}  // namespace towerflow
