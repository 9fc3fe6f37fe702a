// The CPU's narrow integer kernels beyond the elementwise binary ops and bits
// (cwise_int_ops.cc): an op's int32 kernel for int8, int16, uint8 and uint16
// nodes, its int64 kernel for uint32 ones, the inputs widened and the
// results narrowed back.
//
// Note [Narrow integers on the CPU]
// Widening an integer keeps its value, so a computation in the wide type
// agrees with TensorFlow's narrow kernels where their result depends only
// on the order of the values or is exact modulo 2^bits:
// - ordering: Max, Min, ArgMax, ArgMin, Relu, Relu6 (and their gradients),
//   ClipByValue, LowerBound, UpperBound, TopKV2, SparseReduceMax; selection:
//   Select, SelectV2, Where;
// - wrapping arithmetic: Sum, Prod, Cumsum, Cumprod, AddN, Neg, Abs, Square,
//   BiasAdd, BiasAddGrad, the segment sums and products, SparseReduceSum,
//   AccumulateNV2, MatMul, BatchMatMul(V2) and Cross. The wide result
//   narrowed is the narrow result, wrapped as TF's wraps (Abs of -128 is
//   -128 in int8, Sum of uint8 [200, 200, 100] is 244);
// - Mean, which TF's kernels accumulate wide too (the mean of int8
//   [100, 100, 100] is 100; of uint32 [2^31, 2^31, 5] it is 1431655767).
// uint64 has no wider type: its ops stay the elementwise ones. Division and
// the rest keep their own kernels (cwise_int_ops.cc), as TF's integer
// division by zero and overflow differ from a widened result.
#include <set>
#include <string>
#include <vector>

#include "framework/kernel_registry.h"
#include "kernels/cpu/widened_kernel.h"

namespace towerflow {
namespace {

DataType WideInt(DataType t) {
  switch (t) {
    case DT_INT8:
    case DT_INT16:
    case DT_UINT8:
    case DT_UINT16:
      return DT_INT32;
    case DT_UINT32:
      return DT_INT64;
    default:
      return DT_INVALID;
  }
}

template <typename From, typename To>
void CastFlat(const Eigen::ThreadPoolDevice& d, const Tensor& from, Tensor* to) {
  to->flat<To>().device(d) = from.flat<From>().template cast<To>();
}

template <typename Narrow, typename Wide>
void Convert(const Eigen::ThreadPoolDevice& d, const Tensor& from, Tensor* to) {
  if (from.dtype() == DataTypeToEnum<Narrow>::value) {
    CastFlat<Narrow, Wide>(d, from, to);
  } else {
    CastFlat<Wide, Narrow>(d, from, to);
  }
}

void ConvertInt(const Eigen::ThreadPoolDevice& d, const Tensor& from, Tensor* to) {
  const DataType narrow = WideInt(from.dtype()) != DT_INVALID ? from.dtype() : to->dtype();
  switch (narrow) {
    case DT_INT8:
      return Convert<int8_t, int32_t>(d, from, to);
    case DT_INT16:
      return Convert<int16_t, int32_t>(d, from, to);
    case DT_UINT8:
      return Convert<uint8_t, int32_t>(d, from, to);
    case DT_UINT16:
      return Convert<uint16_t, int32_t>(d, from, to);
    default:
      return Convert<uint32_t, int64_t>(d, from, to);
  }
}

// The ops of Note [Narrow integers on the CPU].
const std::set<std::string>& DerivedOps() {
  static const auto* ops = new std::set<std::string>{
      "Max",
      "Min",
      "ArgMax",
      "ArgMin",
      "Relu",
      "Relu6",
      "ReluGrad",
      "Relu6Grad",
      "ClipByValue",
      "LowerBound",
      "UpperBound",
      "TopKV2",
      "SparseReduceMax",
      "Select",
      "SelectV2",
      "Where",
      "Sum",
      "Prod",
      "Mean",
      "Cumsum",
      "Cumprod",
      "AddN",
      "AccumulateNV2",
      "Neg",
      "Abs",
      "Square",
      "BiasAdd",
      "BiasAddV1",
      "BiasAddGrad",
      "SegmentSum",
      "SegmentProd",
      "SegmentMax",
      "SegmentMin",
      "UnsortedSegmentSum",
      "UnsortedSegmentProd",
      "UnsortedSegmentMax",
      "UnsortedSegmentMin",
      "SparseReduceSum",
      "MatMul",
      "BatchMatMul",
      "BatchMatMulV2",
      "Cross",
  };
  return *ops;
}

const Widening& NarrowIntToWide() {
  static const Widening widening{"narrow integers", &WideInt, &ConvertInt};
  return widening;
}

void DeriveNarrowIntKernels(const std::vector<const KernelDef*>& kernels) {
  DeriveWidenedKernels(kernels, NarrowIntToWide(),
                       {DT_INT8, DT_INT16, DT_UINT8, DT_UINT16, DT_UINT32},
                       [](const std::string& op) { return DerivedOps().count(op) > 0; });
}

TW_REGISTER_KERNELS(narrow_int_kernels) { RegisterKernelDeriver(&DeriveNarrowIntKernels); }

}  // namespace
}  // namespace towerflow
