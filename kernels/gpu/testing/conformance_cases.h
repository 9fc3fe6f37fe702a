// The cases of gpu_conformance_test: an op, its attrs and its inputs, run
// on /device:GPU:0 and /device:CPU:0 with the same inputs. Split by family
// over the test's files.
#ifndef TOWERFLOW_KERNELS_GPU_TESTING_CONFORMANCE_CASES_H_
#define TOWERFLOW_KERNELS_GPU_TESTING_CONFORMANCE_CASES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace towerflow {
namespace conformance {

inline constexpr char kFloat[] = "attr { key: 'T' value { type: DT_FLOAT } }";

struct Input {
  std::vector<int64_t> shape;
  bool is_int = false;  // `ints` (axes, dims, labels), else random floats
  std::vector<int32_t> ints;
  float lo = -2, hi = 2;  // the floats' range [lo, hi)
  // The type `ints` are given as: DT_INT32, DT_INT64, DT_FLOAT (exact
  // values, such as ties for the comparisons) or DT_BOOL (non-zero is true). For the random
  // floats: DT_INT32 (the default) means float; DT_HALF or DT_BFLOAT16
  // rounds them to that type.
  const char* dtype = "DT_INT32";
};

struct Case {
  std::string name;
  std::string op;
  std::string attrs;
  std::vector<Input> inputs;
  int num_outputs = 1;
  double tolerance = 1e-5;  // relative, and absolute below 1
  // The tolerance relative to the largest magnitude of the CPU's output
  // rather than each element's: for sums of many products in a 16-bit type,
  // which cuDNN's kernels may add up in partial sums rounded to that type.
  bool of_largest = false;
};

inline Input Floats(std::vector<int64_t> shape, float lo = -2, float hi = 2) {
  return Input{std::move(shape), false, {}, lo, hi};
}
inline Input Ints(std::vector<int32_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Input{{n}, true, std::move(values)};
}
// Random floats rounded to half ("DT_HALF") or bfloat16 ("DT_BFLOAT16").
inline Input Floats16(std::vector<int64_t> shape, const char* dtype, float lo = -2, float hi = 2) {
  return Input{std::move(shape), false, {}, lo, hi, dtype};
}
inline Input IntScalar(int32_t v) { return Input{{}, true, {v}}; }
// `values` as `dtype` (see Input::dtype) in `shape`.
inline Input Values(std::vector<int64_t> shape, std::vector<int32_t> values, const char* dtype) {
  return Input{std::move(shape), true, std::move(values), -2, 2, dtype};
}

// Every case: the elementwise, reduction, matrix, convolution,
// normalisation, pooling and shape ones (conformance_cases.cc) and each
// family's below.
std::vector<Case> AllCases();

// Transpose, Slice, StridedSlice, Tile, ReverseV2, Pad, GatherV2 and
// ConcatV2 (conformance_rearrange_cases.cc).
void AddRearrangeCases(std::vector<Case>* cases);
// LeakyRelu, DepthwiseConv2dNative, the N-d index ops, the block
// rearrangements, the resizes and Einsum (conformance_model_op_cases.cc).
void AddModelOpCases(std::vector<Case>* cases);
// Comparisons, selects and the int32 shape arithmetic of GPU nodes
// (conformance_logic_cases.cc).
void AddLogicCases(std::vector<Case>* cases);
// half and bfloat16 twins of the float cases of the ops mixed precision
// moves to 16 bits (conformance_float16_cases.cc).
void AddFloat16Twins(std::vector<Case>* cases);

}  // namespace conformance
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_TESTING_CONFORMANCE_CASES_H_
