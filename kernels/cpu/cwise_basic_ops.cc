// Elementwise Add/AddV2/Sub/Mul for equal shapes and scalar-with-tensor,
// the arithmetic the runtime's own tests compute with. General NumPy
// broadcasting and the rest of the math ops belong to the CPU kernel
// library; a broadcast these kernels do not cover is Unimplemented, an
// impossible one InvalidArgument.
//
// Buffers: x [any], y [any], z [broadcast shape of x and y].
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "runtime/device.h"

namespace towerflow {
namespace {

struct AddFn {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a + b;
  }
};
struct SubFn {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a - b;
  }
};
struct MulFn {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a * b;
  }
};

// True when NumPy broadcasting could combine the shapes.
bool Broadcastable(const TensorShape& a, const TensorShape& b) {
  for (int i = 1; i <= std::min(a.dims(), b.dims()); ++i) {
    const int64_t x = a.dim_size(a.dims() - i), y = b.dim_size(b.dims() - i);
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

template <typename T, typename Fn>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const auto& d = ctx->eigen_cpu_device();
    const Fn fn;
    if (x.shape() == y.shape()) {
      TW_ASSIGN_OR_RETURN(Tensor * z, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
      z->flat<T>().device(d) = fn(x.flat<T>(), y.flat<T>());
    } else if (y.NumElements() == 1 && y.dims() == 0) {
      TW_ASSIGN_OR_RETURN(Tensor * z, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
      z->flat<T>().device(d) = fn(x.flat<T>(), x.flat<T>().constant(*y.data<T>()));
    } else if (x.NumElements() == 1 && x.dims() == 0) {
      TW_ASSIGN_OR_RETURN(Tensor * z, ctx->forward_input_or_allocate_output(1, 0, y.shape()));
      z->flat<T>().device(d) = fn(y.flat<T>().constant(*x.data<T>()), y.flat<T>());
    } else if (Broadcastable(x.shape(), y.shape())) {
      return absl::UnimplementedError(absl::StrCat(
          "broadcasting ", x.shape().DebugString(), " with ", y.shape().DebugString(),
          " beyond equal shapes and scalars is not supported by this ", ctx->op(), " kernel yet"));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "Incompatible shapes: ", x.shape().DebugString(), " vs. ", y.shape().DebugString()));
    }
    return absl::OkStatus();
  }
};

template <typename T>
using AddOp = BinaryOp<T, AddFn>;
template <typename T>
using SubOp = BinaryOp<T, SubFn>;
template <typename T>
using MulOp = BinaryOp<T, MulFn>;

TW_REGISTER_KERNELS(cwise_basic) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<AddOp, float, double, int32_t, int64_t>(cpu("Add"), "T");
  RegisterTypedKernels<AddOp, float, double, int32_t, int64_t>(cpu("AddV2"), "T");
  RegisterTypedKernels<SubOp, float, double, int32_t, int64_t>(cpu("Sub"), "T");
  RegisterTypedKernels<MulOp, float, double, int32_t, int64_t>(cpu("Mul"), "T");
}

}  // namespace
}  // namespace towerflow
