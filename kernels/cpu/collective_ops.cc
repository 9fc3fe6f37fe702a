// NcclAllReduce across CPU devices (virtual CPUs share host memory): the
// last member to join reduces every input once, on its device's intra-op
// pool, and every member outputs that one tensor. Beyond TensorFlow, which
// has only the NCCL kernel; see kernels/collective_ops.h.
#include "kernels/collective_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_views.h"

namespace towerflow {
namespace {

template <typename T>
absl::Status Reduce(absl::Span<const AllReduceMember> members, Tensor* out) {
  const auto& d = members[0].ctx->eigen_cpu_device();
  auto acc = out->flat<T>();
  const auto in = [&](size_t k) { return members[k].input->flat<T>(); };
  if (members.size() == 1) {
    acc.device(d) = in(0);
    return absl::OkStatus();
  }
  // The first pass reads two inputs, so no pass copies.
  for (size_t k = 1; k < members.size(); ++k) {
    const TensorMap<T, 1> a = k == 1 ? in(0) : acc;
    switch (members[0].kind) {
      case ReduceKind::kSum:
        acc.device(d) = a + in(k);
        break;
      case ReduceKind::kProd:
        acc.device(d) = a * in(k);
        break;
      case ReduceKind::kMin:
        acc.device(d) = a.cwiseMin(in(k));
        break;
      case ReduceKind::kMax:
        acc.device(d) = a.cwiseMax(in(k));
        break;
    }
  }
  return absl::OkStatus();
}

absl::Status CpuAllReduce(absl::Span<const AllReduceMember> members) {
  const Tensor& first = *members[0].input;
  TW_ASSIGN_OR_RETURN(Tensor * out, members[0].ctx->allocate_output(0, first.shape()));
  absl::Status status = absl::InvalidArgumentError(
      absl::StrCat("NcclAllReduce has no CPU kernel for ", DataTypeString(first.dtype())));
  VisitNumberType(first.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      status = Reduce<T>(members, out);
    }
  });
  TW_RETURN_IF_ERROR(status);
  // One result for all: the members' consumers see a shared buffer, so none
  // of them overwrites it in place.
  for (size_t k = 1; k < members.size(); ++k) {
    TW_RETURN_IF_ERROR(members[k].ctx->set_output(0, *out));
  }
  return absl::OkStatus();
}

}  // namespace

TW_REGISTER_KERNELS(cpu_collective_ops) {
  RegisterAllReduceKernels(kDeviceCpu, {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64}, CpuAllReduce);
}

}  // namespace towerflow
