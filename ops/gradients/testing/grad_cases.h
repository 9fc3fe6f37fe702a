// The table the gradient functions are checked against (PyTorch's OpInfo
// style): each case builds an op on placeholders, and
// gradient_functions_test.cc compares its gradient with central finite
// differences. The cases live by family: math_grad_cases.cc,
// array_grad_cases.cc, list_grad_cases.cc, nn_grad_cases.cc,
// rnn_grad_cases.cc, spectral_grad_cases.cc, sparse_grad_cases.cc.
#ifndef TOWERFLOW_OPS_GRADIENTS_TESTING_GRAD_CASES_H_
#define TOWERFLOW_OPS_GRADIENTS_TESTING_GRAD_CASES_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "framework/tensor.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace grad_cases {

using Outs = std::vector<Output>;
using Builder = std::function<Outs(const Scope&, const Outs&)>;

struct InputSpec {
  TensorShape shape;
  double lo = -1, hi = 1;   // values drawn from [lo, hi]
  bool avoid_zero = false;  // |value| >= 0.2
};

struct GradCase {
  std::string name;  // the op whose gradient is checked (plus a variant)
  std::vector<InputSpec> inputs;
  Builder build;
  DataType dtype = DT_FLOAT;
  // Placeholders without static shapes, to exercise the run-time paths.
  bool dynamic_shapes = false;
  // The finite-difference step and the largest error allowed; 0 for the
  // defaults (1e-3; 1e-4 for float, 1e-10 for double). Set for steep
  // functions, whose central differences at 1e-3 are off by delta^2 / 6
  // times their third derivative.
  double delta = 0, max_error = 0;
};

inline void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

// Deterministic, well spread values: a fixed LCG per case.
template <typename T>
Tensor Values(const InputSpec& spec, uint64_t seed) {
  Tensor t(DataTypeToEnum<T>::value, spec.shape);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) / static_cast<double>(1ull << 53);
    double v = spec.lo + (spec.hi - spec.lo) * u;
    if (spec.avoid_zero && std::abs(v) < 0.2) v = v < 0 ? v - 0.2 : v + 0.2;
    t.data<T>()[i] = static_cast<T>(v);
  }
  return t;
}

inline InputSpec S(std::initializer_list<int64_t> dims, double lo = -1, double hi = 1) {
  return InputSpec{TensorShape(dims), lo, hi, false};
}
inline InputSpec NonZero(std::initializer_list<int64_t> dims) {
  return InputSpec{TensorShape(dims), -1, 1, true};
}

inline GradCase Unary(const std::string& name, std::function<Output(const Scope&, Output)> f,
                      InputSpec in = S({2, 3})) {
  return {name, {in}, [f](const Scope& s, const std::vector<Output>& x) {
            return std::vector<Output>{f(s, x[0])};
          }};
}

inline GradCase Binary(const std::string& name,
                       std::function<Output(const Scope&, Output, Output)> f,
                       InputSpec a = S({2, 3}), InputSpec b = S({3})) {
  return {name, {a, b}, [f](const Scope& s, const std::vector<Output>& x) {
            return std::vector<Output>{f(s, x[0], x[1])};
          }};
}

inline GradCase Double(GradCase c) {
  c.name += "/double";
  c.dtype = DT_DOUBLE;
  return c;
}
// In double with a step of `delta`, allowing `max_error`.
inline GradCase Precise(GradCase c, double delta, double max_error) {
  c = Double(std::move(c));
  c.delta = delta;
  c.max_error = max_error;
  return c;
}
inline GradCase Dynamic(GradCase c) {
  c.name += "/dynamic";
  c.dynamic_shapes = true;
  return c;
}

std::vector<GradCase> MathCases();
std::vector<GradCase> ArrayCases();
std::vector<GradCase> ListCases();
std::vector<GradCase> NnCases();
std::vector<GradCase> RnnCases();
std::vector<GradCase> SpectralCases();
std::vector<GradCase> SparseCases();

}  // namespace grad_cases
}  // namespace towerflow

#endif  // TOWERFLOW_OPS_GRADIENTS_TESTING_GRAD_CASES_H_
