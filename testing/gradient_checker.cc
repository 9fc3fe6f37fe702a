#include "testing/gradient_checker.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/gen/array_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"

namespace towerflow {
namespace {

template <typename T>
Tensor Filled(const TensorShape& shape, T value) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  std::fill_n(t.data<T>(), t.NumElements(), value);
  return t;
}

}  // namespace

template <typename T>
absl::StatusOr<double> ComputeGradientError(const Scope& scope, const std::vector<Output>& xs,
                                            const std::vector<Tensor>& x_values,
                                            const std::vector<Output>& ys, double delta) {
  const DataType dtype = DataTypeToEnum<T>::value;
  if (xs.size() != x_values.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(xs.size(), " xs but ", x_values.size(), " x values"));
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].valid() || xs[i].type() != dtype || x_values[i].dtype() != dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("xs[", i, "] and its value must be ", DataTypeString(dtype)));
    }
  }
  for (size_t j = 0; j < ys.size(); ++j) {
    if (!ys[j].valid() || ys[j].type() != dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("ys[", j, "] must be ", DataTypeString(dtype)));
    }
  }
  TW_RETURN_IF_ERROR(scope.status());
  ClientSession session(scope);
  auto run_ys = [&](const std::vector<Tensor>& values) -> absl::StatusOr<std::vector<Tensor>> {
    ClientSession::FeedType feeds;
    for (size_t i = 0; i < xs.size(); ++i) feeds.emplace(xs[i], values[i]);
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session.Run(feeds, ys, &out));
    return out;
  };
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> y0, run_ys(x_values));

  // The symbolic side: dy placeholders, one-hot in turn.
  const Scope check = scope.NewSubScope("gradient_check");
  std::vector<Output> dys;
  for (size_t j = 0; j < ys.size(); ++j) dys.push_back(ops::Placeholder(check, dtype));
  std::vector<Output> grads;
  TW_RETURN_IF_ERROR(AddSymbolicGradients(check, ys, xs, dys, &grads));
  std::vector<Output> fetch;
  std::vector<size_t> fetched;  // which xs have a gradient
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].node() != nullptr) {
      fetch.push_back(grads[i]);
      fetched.push_back(i);
    }
  }

  // Numeric Jacobian, numeric[i][e][y offset + k], one pair of runs per x
  // element.
  std::vector<int64_t> y_offset(ys.size() + 1, 0);
  for (size_t j = 0; j < ys.size(); ++j) y_offset[j + 1] = y_offset[j] + y0[j].NumElements();
  std::vector<std::vector<std::vector<double>>> numeric(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    numeric[i].resize(x_values[i].NumElements());
    for (int64_t e = 0; e < x_values[i].NumElements(); ++e) {
      std::vector<Tensor> plus = x_values, minus = x_values;
      TW_ASSIGN_OR_RETURN(plus[i], x_values[i].DeepCopy());
      TW_ASSIGN_OR_RETURN(minus[i], x_values[i].DeepCopy());
      plus[i].data<T>()[e] += static_cast<T>(delta);
      minus[i].data<T>()[e] -= static_cast<T>(delta);
      TW_ASSIGN_OR_RETURN(std::vector<Tensor> yp, run_ys(plus));
      TW_ASSIGN_OR_RETURN(std::vector<Tensor> ym, run_ys(minus));
      for (size_t j = 0; j < ys.size(); ++j) {
        for (int64_t k = 0; k < y0[j].NumElements(); ++k) {
          numeric[i][e].push_back(
              (static_cast<double>(yp[j].data<T>()[k]) - static_cast<double>(ym[j].data<T>()[k])) /
              (2 * delta));
        }
      }
    }
  }

  // Symbolic Jacobian, one column per y element, compared as it comes.
  double max_error = 0;
  for (size_t j = 0; j < ys.size(); ++j) {
    for (int64_t k = 0; k < y0[j].NumElements(); ++k) {
      ClientSession::FeedType feeds;
      for (size_t i = 0; i < xs.size(); ++i) feeds.emplace(xs[i], x_values[i]);
      for (size_t jj = 0; jj < ys.size(); ++jj) {
        Tensor dy = Filled<T>(y0[jj].shape(), T(0));
        if (jj == j) dy.data<T>()[k] = T(1);
        feeds.emplace(dys[jj], dy);
      }
      std::vector<Tensor> theoretical;
      if (!fetch.empty()) TW_RETURN_IF_ERROR(session.Run(feeds, fetch, &theoretical));
      for (size_t i = 0; i < xs.size(); ++i) {
        const Tensor* grad = nullptr;
        for (size_t f = 0; f < fetched.size(); ++f) {
          if (fetched[f] == i) grad = &theoretical[f];
        }
        if (grad != nullptr && grad->shape() != x_values[i].shape()) {
          return absl::InternalError(absl::StrCat("gradient of xs[", i, "] has shape ",
                                                  grad->shape().DebugString(), ", x has ",
                                                  x_values[i].shape().DebugString()));
        }
        for (int64_t e = 0; e < x_values[i].NumElements(); ++e) {
          const double symbolic = grad == nullptr ? 0.0 : static_cast<double>(grad->data<T>()[e]);
          const double error = std::abs(numeric[i][e][y_offset[j] + k] - symbolic);
          if (std::isnan(error)) return std::numeric_limits<double>::infinity();
          max_error = std::max(max_error, error);
        }
      }
    }
  }
  return max_error;
}

template absl::StatusOr<double> ComputeGradientError<float>(const Scope&,
                                                            const std::vector<Output>&,
                                                            const std::vector<Tensor>&,
                                                            const std::vector<Output>&, double);
template absl::StatusOr<double> ComputeGradientError<double>(const Scope&,
                                                             const std::vector<Output>&,
                                                             const std::vector<Tensor>&,
                                                             const std::vector<Output>&, double);

}  // namespace towerflow
