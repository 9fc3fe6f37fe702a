#include "kernels/einsum_plan.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"

namespace towerflow {
namespace {

bool Has(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// Row-major strides of `dims`.
std::vector<int64_t> OwnStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> own(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) own[d] = own[d + 1] * dims[d + 1];
  return own;
}

// The stride of each of `labels` in a tensor whose dims carry `own_labels`
// (of `dims`): the sum over the dims with that label (a diagonal), 0 where
// the tensor lacks it or broadcasts it (size 1 against `sizes`).
std::vector<int64_t> StridesFor(const std::vector<int>& own_labels,
                                const std::vector<int64_t>& dims, const std::vector<int>& labels,
                                const std::vector<int64_t>& sizes) {
  const std::vector<int64_t> own = OwnStrides(dims);
  std::vector<int64_t> strides(labels.size(), 0);
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t d = 0; d < own_labels.size(); ++d) {
      if (own_labels[d] == labels[i] && dims[d] == sizes[i]) strides[i] += own[d];
    }
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

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

absl::StatusOr<EinsumPlan> PlanEinsum(const EinsumEquation& eq,
                                      const std::vector<std::vector<int64_t>>& dims) {
  TW_ASSIGN_OR_RETURN(EinsumDims r, ResolveEinsum(eq, dims));
  EinsumPlan plan;
  TW_ASSIGN_OR_RETURN(plan.shape, TensorShape::FromDims(r.output_dims));
  const std::vector<int>& a_own = r.inputs[0];
  static const std::vector<int> kNoLabels;
  const std::vector<int>& b_own = r.inputs.size() == 2 ? r.inputs[1] : kNoLabels;
  // Each output label once, in the output's order.
  std::vector<int> batch, free_a, free_b, contract;
  for (int label : r.output) {
    if (Has(batch, label) || Has(free_a, label) || Has(free_b, label)) continue;
    (Has(a_own, label) && Has(b_own, label) ? batch
     : Has(a_own, label)                    ? free_a
                                            : free_b)
        .push_back(label);
  }
  for (const std::vector<int>* own : {&a_own, &b_own}) {
    for (int label : *own) {
      if (!Has(r.output, label) && !Has(contract, label)) contract.push_back(label);
    }
  }
  const auto sizes_of = [&](std::initializer_list<const std::vector<int>*> groups,
                            std::vector<int>* labels) {
    std::vector<int64_t> sizes;
    for (const std::vector<int>* g : groups) {
      for (int label : *g) {
        labels->push_back(label);
        sizes.push_back(r.sizes[label]);
      }
    }
    return sizes;
  };
  std::vector<int> a_labels, b_labels, c_labels, unused;
  plan.a.sizes = sizes_of({&batch, &free_a, &contract}, &a_labels);
  plan.b.sizes = sizes_of({&batch, &contract, &free_b}, &b_labels);
  plan.c_sizes = sizes_of({&batch, &free_a, &free_b}, &c_labels);
  plan.batch = Product(sizes_of({&batch}, &unused));
  plan.m = Product(sizes_of({&free_a}, &unused));
  plan.k = Product(sizes_of({&contract}, &unused));
  plan.n = Product(sizes_of({&free_b}, &unused));
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (plan.m > kIntMax || plan.n > kIntMax || plan.k > kIntMax) {
    return absl::InvalidArgumentError(absl::StrCat("Einsum's matrix product is ", plan.m, " x ",
                                                   plan.k, " by ", plan.k, " x ", plan.n,
                                                   ", past BLAS's int dimensions"));
  }
  plan.a.strides = StridesFor(a_own, dims[0], a_labels, plan.a.sizes);
  plan.a.direct =
      Product(dims[0]) == Product(plan.a.sizes) && Contiguous(plan.a.strides, plan.a.sizes);
  if (r.inputs.size() == 2) {
    plan.b.strides = StridesFor(b_own, dims[1], b_labels, plan.b.sizes);
    plan.b.direct =
        Product(dims[1]) == Product(plan.b.sizes) && Contiguous(plan.b.strides, plan.b.sizes);
  } else {
    plan.b.strides.assign(b_labels.size(), 0);
  }
  plan.out_strides = StridesFor(r.output, r.output_dims, c_labels, plan.c_sizes);
  plan.inflate = c_labels.size() != r.output.size();
  plan.out_direct = c_labels == r.output;
  return plan;
}

absl::Status EinsumOpBase::Init(const KernelConstruction& c) {
  std::string equation;
  int64_t n = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("equation", &equation));
  TW_RETURN_IF_ERROR(c.GetAttr("N", &n));
  TW_ASSIGN_OR_RETURN(eq_, ParseEinsum(equation, static_cast<int>(n)));
  return absl::OkStatus();
}

absl::StatusOr<EinsumPlan> EinsumOpBase::PlanCall(KernelContext* ctx, Tensor** out) const {
  std::vector<std::vector<int64_t>> dims;
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    const auto& d = ctx->input(i).shape().dim_sizes();
    dims.emplace_back(d.begin(), d.end());
  }
  TW_ASSIGN_OR_RETURN(EinsumPlan plan, PlanEinsum(eq_, dims));
  TW_ASSIGN_OR_RETURN(*out, ctx->allocate_output(0, plan.shape));
  return plan;
}

}  // namespace towerflow
