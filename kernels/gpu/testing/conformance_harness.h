// What the GPU conformance tests (gpu_conformance_test, gpu_replay_test)
// build their graphs and compare their results with: a case's nodes and
// inputs as GraphDef text, and the agreement of two tensors within a
// tolerance. Test-only.
#ifndef TOWERFLOW_KERNELS_GPU_TESTING_CONFORMANCE_HARNESS_H_
#define TOWERFLOW_KERNELS_GPU_TESTING_CONFORMANCE_HARNESS_H_

#include <random>
#include <string>
#include <vector>

#include "framework/tensor.h"
#include "gtest/gtest.h"
#include "kernels/gpu/testing/conformance_cases.h"

namespace towerflow {
namespace conformance {

// A NodeDef in text format.
std::string NodeText(const std::string& name, const std::string& op,
                     const std::vector<std::string>& inputs, const std::string& device,
                     const std::string& attrs);

// A Const of the input's values (random floats from `rng` in its range, or
// its ints) on `device`: the CPU unless said, so both twins read one tensor.
std::string InputText(const std::string& name, const Input& in, std::mt19937* rng,
                      const std::string& device = "/device:CPU:0");

// Whether `got` (the GPU's) and `want` (the CPU's) have one dtype and shape
// and every element agrees within `tolerance` (relative, and absolute below
// 1; NaN agrees with NaN); with `of_largest`, relative to the largest
// magnitude of `want` (Case::of_largest). Float, int64, int32 and bool.
::testing::AssertionResult Agree(const Tensor& got, const Tensor& want, double tolerance,
                                 bool of_largest = false);

// Random float values of `in`'s shape and range.
Tensor RandomFloats(const Input& in, std::mt19937* rng);

}  // namespace conformance
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_TESTING_CONFORMANCE_HARNESS_H_
