// Binary elementwise kernels on the integer types besides int32 and int64:
// int8, int16, uint8, uint16, uint32 and uint64, for the ops TensorFlow's
// CPU kernels take them in (arithmetic, division, comparisons, bits). The
// functors are the shared ones (kernels/cwise_functors.h: sums and
// products wrap, a zero divisor is an error); the kernels are those of
// cwise_ops.h. A file of their own so that their instantiations compile
// beside the float ones'.
#include <cstdint>

#include "kernels/cpu/cwise_ops.h"

namespace towerflow {
namespace cwise {
namespace {

template <template <typename> class F>
struct Same {
  template <typename T>
  using Op = BinaryOp<T, T, F<T>>;
};
template <template <typename> class F>
struct Compare {
  template <typename T>
  using Op = BinaryOp<T, bool, F<T>>;
};

template <template <typename> class Kernel>
void RegisterSmallInts(const char* op) {
  RegisterTypedKernels<Kernel, int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t>(
      KernelDefBuilder(op).Device(kDeviceCpu), "T");
}

TW_REGISTER_KERNELS(cwise_int) {
  // Add (unlike AddV2) stops at the 8- and 16-bit signed types and uint8,
  // as TensorFlow's registrations.
  RegisterTypedKernels<Same<functor::Add>::Op, int8_t, int16_t, uint8_t>(
      KernelDefBuilder("Add").Device(kDeviceCpu), "T");
  RegisterSmallInts<Same<functor::Add>::Op>("AddV2");
  RegisterSmallInts<Same<functor::Sub>::Op>("Sub");
  RegisterSmallInts<Same<functor::Mul>::Op>("Mul");
  RegisterSmallInts<Same<functor::Div>::Op>("Div");
  RegisterSmallInts<Same<functor::FloorDiv>::Op>("FloorDiv");
  RegisterSmallInts<Same<functor::FloorMod>::Op>("FloorMod");
  RegisterSmallInts<Same<functor::TruncateDiv>::Op>("TruncateDiv");
  RegisterSmallInts<Same<functor::Maximum>::Op>("Maximum");
  RegisterSmallInts<Same<functor::Minimum>::Op>("Minimum");
  RegisterSmallInts<Compare<functor::Equal>::Op>("Equal");
  RegisterSmallInts<Compare<functor::NotEqual>::Op>("NotEqual");
  RegisterSmallInts<Compare<functor::Less>::Op>("Less");
  RegisterSmallInts<Compare<functor::LessEqual>::Op>("LessEqual");
  RegisterSmallInts<Compare<functor::Greater>::Op>("Greater");
  RegisterSmallInts<Compare<functor::GreaterEqual>::Op>("GreaterEqual");
  RegisterSmallInts<Same<functor::BitwiseAnd>::Op>("BitwiseAnd");
  RegisterSmallInts<Same<functor::BitwiseOr>::Op>("BitwiseOr");
  RegisterSmallInts<Same<functor::BitwiseXor>::Op>("BitwiseXor");
  RegisterSmallInts<Same<functor::LeftShift>::Op>("LeftShift");
  RegisterSmallInts<Same<functor::RightShift>::Op>("RightShift");
}

}  // namespace
}  // namespace cwise
}  // namespace towerflow
