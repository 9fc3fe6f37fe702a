// The Eigen views of a Tensor's elements (Tensor::flat, tensor, shaped,
// vec, matrix, scalar, flat_inner_dims; framework/tensor.h declares them):
// TensorMaps over the buffer, row-major like TensorFlow, unaligned because a
// dim-0 slice of an aligned buffer need not be aligned.
//
//   #include "framework/tensor_views.h"
//   t.matrix<float>()(1, 2) = 5.0f;
//   out.flat<float>().device(ctx->eigen_cpu_device()) = a.flat<float>() * 2.0f;
//
// A header of its own because Eigen's take seconds to compile, and most files
// that hold tensors never view them through Eigen.
#ifndef TOWERFLOW_FRAMEWORK_TENSOR_VIEWS_H_
#define TOWERFLOW_FRAMEWORK_TENSOR_VIEWS_H_

#include <array>
#include <cstdint>

#include "absl/base/internal/raw_logging.h"
#include "absl/types/span.h"
#include "core/float16.h"
#include "framework/tensor.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace towerflow {

template <typename T, int N>
using TensorMap = Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor, Eigen::DenseIndex>>;
template <typename T>
using ScalarMap = Eigen::TensorMap<Eigen::TensorFixedSize<T, Eigen::Sizes<>, Eigen::RowMajor>>;

template <typename T>
auto Tensor::flat() const {
  return TensorMap<T, 1>(data<T>(), NumElements());
}

template <typename T, int N>
auto Tensor::tensor() const {
  CheckRank(N);
  std::array<Eigen::DenseIndex, N> d;
  for (int i = 0; i < N; ++i) d[i] = shape_.dim_size(i);
  return TensorMap<T, N>(data<T>(), d);
}

template <typename T, int N>
auto Tensor::shaped(absl::Span<const int64_t> dims) const {
  ABSL_RAW_CHECK(dims.size() == N, "Tensor::shaped rank mismatch");
  std::array<Eigen::DenseIndex, N> d;
  int64_t n = 1;
  for (int i = 0; i < N; ++i) n *= d[i] = dims[i];
  ABSL_RAW_CHECK(n == NumElements(), "Tensor::shaped element count mismatch");
  return TensorMap<T, N>(data<T>(), d);
}

template <typename T>
auto Tensor::vec() const {
  return tensor<T, 1>();
}

template <typename T>
auto Tensor::matrix() const {
  return tensor<T, 2>();
}

template <typename T>
auto Tensor::scalar() const {
  ABSL_RAW_CHECK(NumElements() == 1, "Tensor::scalar() on a tensor that is not one element");
  return ScalarMap<T>(data<T>());
}

template <typename T>
auto Tensor::flat_inner_dims() const {
  const int64_t inner = dims() == 0 ? 1 : dim_size(dims() - 1);
  const int64_t outer = inner == 0 ? 0 : NumElements() / inner;
  return TensorMap<T, 2>(data<T>(), outer, inner);
}

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_TENSOR_VIEWS_H_
