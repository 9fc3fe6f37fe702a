// The CPU's half and bfloat16 kernels: each float kernel, with the 16-bit
// inputs widened to float and the float results rounded back.
//
// Note [16-bit floats on the CPU]
// A CPU has no 16-bit arithmetic worth the name: Eigen's half and bfloat16
// operators widen to float, compute and round, one element at a time. So
// the CPU computes half and bfloat16 nodes in float32, at the width of its
// SIMD and BLAS paths: a derived kernel (Note [Derived kernels] in
// framework/kernel_registry.h) converts each 16-bit input to float with
// vectorised conversions (float16_convert.h), runs the op's float kernel on the node
// with its 16-bit type attrs made float, and rounds each 16-bit output to
// nearest even. As XLA's CPU backend does (it normalises bf16 to f32).
// - Elementwise arithmetic (+ - * /, sqrt) gives TensorFlow's result bit for
//   bit: float carries more than twice the bits of either 16-bit type, so
//   rounding its result once is the correctly rounded 16-bit result, and
//   Eigen's half operators (TF's CPU kernels) round the same float value.
// - Reductions, GEMMs, convolutions, batch norm, softmax and the losses
//   accumulate in float32, as TensorFlow's GPU kernels do for 16-bit types
//   (its CPU kernels round some intermediates to 16 bits, so they can be
//   less accurate than this).
// - Every op whose float kernel exists gets its 16-bit forms, where its
//   schema allows them and no kernel takes them already (Cast, ZerosLike and
//   the data-movement kernels are written for every type). Not derived: ops
//   that read or update a variable in place (ref or resource arguments: the
//   optimizer updates and Assign are written for the 16-bit types in their
//   own files), list(type) attrs, ops whose meaning is the bits and
//   the stateless random ops, and BatchMatMulV3, whose mixed operand types
//   have kernels of their own (NotDerivedOps).
// The derived kernel is as thread-safe as the float one it holds.
#include <set>
#include <string>
#include <vector>

#include "framework/kernel_registry.h"
#include "kernels/cpu/float16_convert.h"
#include "kernels/cpu/widened_kernel.h"

namespace towerflow {
namespace {

bool IsFloat16(DataType t) { return t == DT_HALF || t == DT_BFLOAT16; }

// Ops whose 16-bit result is not the float result rounded: those whose
// meaning is how a type is stored, and the stateless random ops (TF's make
// 16-bit numbers from 16 random bits; a rounded float draw would be other
// numbers, and could round up to 1); and BatchMatMulV3, registered for its
// own type triples.
const std::set<std::string>& NotDerivedOps() {
  static const auto* ops = new std::set<std::string>{"BatchMatMulV3",
                                                     "Bitcast",
                                                     "DecodeRaw",
                                                     "ParseTensor",
                                                     "SerializeTensor",
                                                     "StatelessRandomUniform",
                                                     "StatelessRandomUniformV2",
                                                     "StatelessRandomNormal",
                                                     "StatelessRandomNormalV2",
                                                     "StatelessTruncatedNormal",
                                                     "StatelessTruncatedNormalV2"};
  return *ops;
}

const Widening& Float16ToFloat() {
  static const Widening widening{"16-bit floats",
                                 [](DataType t) { return IsFloat16(t) ? DT_FLOAT : DT_INVALID; },
                                 &ConvertFloat16};
  return widening;
}

void DeriveFloat16Kernels(const std::vector<const KernelDef*>& kernels) {
  DeriveWidenedKernels(kernels, Float16ToFloat(), {DT_HALF, DT_BFLOAT16},
                       [](const std::string& op) { return NotDerivedOps().count(op) == 0; });
}

TW_REGISTER_KERNELS(float16_kernels) { RegisterKernelDeriver(&DeriveFloat16Kernels); }

}  // namespace
}  // namespace towerflow
