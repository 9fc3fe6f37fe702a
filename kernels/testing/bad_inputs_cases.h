// The bad-input tables of kernels/cpu/bad_inputs_test.cc: valid cases (op,
// attrs, inputs) by family, from which the test's mutation engine derives
// the bad variants. A new kernel adds its case to its family's table here.
#ifndef TOWERFLOW_KERNELS_TESTING_BAD_INPUTS_CASES_H_
#define TOWERFLOW_KERNELS_TESTING_BAD_INPUTS_CASES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "framework/attr_value_util.h"
#include "framework/tensor.h"
#include "proto/attr_value.pb.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace bad_inputs {

struct Case {
  std::string op;
  std::map<std::string, AttrValue> attrs;
  std::vector<Tensor> inputs;
};

template <typename V>
AttrValue A(const V& v) {
  AttrValue a;
  SetAttrValue(v, &a);
  return a;
}
inline AttrValue Ints(std::vector<int64_t> v) { return A(v); }

inline Tensor Str(const std::string& s) {
  Tensor t(DT_STRING, TensorShape());
  *t.data<std::string>() = s;
  return t;
}

inline Tensor F(const TensorShape& s) {
  Tensor t(DT_FLOAT, s);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = 0.25f * (i % 7) - 0.5f;
  return t;
}
// Complex numbers of shape s, F's values with their negatives' halves as the
// imaginary parts.
inline Tensor C(const TensorShape& s) {
  Tensor t(DT_COMPLEX64, s);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    const float v = 0.25f * (i % 7) - 0.5f;
    t.data<complex64>()[i] = complex64(v, -0.5f * v);
  }
  return t;
}
inline Tensor I32(std::vector<int32_t> v) {
  return Literal<int32_t>({static_cast<int64_t>(v.size())}, v);
}

std::vector<Case> ArrayCases();
std::vector<Case> MathCases();
std::vector<Case> NnCases();
std::vector<Case> ImageCodecCases();
std::vector<Case> StateCases();
// bad_inputs_more_cases.cc: the TensorList ops (lists given as variant
// tensors), the SparseTensor ops, the record decoders, text ops and staging
// areas of input pipelines, QuantizeV2/Dequantize, TF 1's eight-bit
// inference ops and the optimizer updates of more_training_ops.cc.
std::vector<Case> ListCases();
std::vector<Case> SparseCases();
std::vector<Case> InputPipelineCases();
std::vector<Case> QuantizationCases();
std::vector<Case> QuantizedInferenceCases();
std::vector<Case> OptimizerCases();
std::vector<Case> SamplingCases();
// tf.math.special's Dawsn, Expint, FresnelCos, FresnelSin and Spence.
std::vector<Case> SpecialFunctionCases();

}  // namespace bad_inputs
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_TESTING_BAD_INPUTS_CASES_H_
