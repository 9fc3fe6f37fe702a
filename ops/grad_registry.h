// The gradient registry: for each op type, the function that builds its
// backward ops. The third of TensorFlow's registries (op schema, kernel,
// gradient); the functions themselves live in ops/gradients/.
//
//   // dL/dx = dL/dy * (1 - y^2), for y = tanh(x)
//   absl::Status TanhGrad(const Scope& scope, const Operation& op,
//                         const std::vector<Output>& grad_inputs,
//                         std::vector<Output>* grad_outputs) {
//     grad_outputs->push_back(ops::TanhGrad(scope, op.output(0), grad_inputs[0]));
//     return scope.status();
//   }
//   TW_REGISTER_GRADIENT("Tanh", TanhGrad);
//   TW_REGISTER_NO_GRADIENT("Shape");
//
// A gradient function receives one gradient per output of `op` (dL/d
// output i, dense, never NoGradient: the engine fills outputs nobody
// differentiated with zeros) and returns one per input, NoGradient() for
// inputs that are not differentiable (indices, shapes). It builds under
// `scope`, which is already named "gradients/<op>_grad" and colocated with
// `op`. A sparse gradient function may return IndexedSlices (Gather and
// friends), which the engine keeps sparse as long as every consumer can.
//
// Registration happens at static-initialisation time; lookups are
// thread-safe afterwards.
#ifndef TOWERFLOW_OPS_GRAD_REGISTRY_H_
#define TOWERFLOW_OPS_GRAD_REGISTRY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {

// A gradient made of rows: dense[indices[i], ...] += values[i, ...], for a
// tensor of shape `dense_shape` (an int32 or int64 vector). Rows may repeat.
struct IndexedSlices {
  Output values;
  Output indices;
  Output dense_shape;
};

// One gradient as the engine carries it: none (NoGradient), dense, or
// IndexedSlices.
class Gradient {
 public:
  Gradient() = default;
  // An invalid Output (NoGradient()) is none.
  // NOLINTNEXTLINE(google-explicit-constructor)
  Gradient(const Output& dense) : dense_(dense) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Gradient(const IndexedSlices& slices) : slices_(slices), sparse_(true) {}

  bool is_none() const { return !sparse_ && dense_.node() == nullptr; }
  bool is_sparse() const { return sparse_; }
  // REQUIRES: !is_sparse().
  const Output& dense() const { return dense_; }
  // REQUIRES: is_sparse().
  const IndexedSlices& slices() const { return slices_; }
  // The tensor holding its numbers: dense(), or the slices' values.
  // REQUIRES: !is_none().
  const Output& values() const { return sparse_ ? slices_.values : dense_; }
  // The same kind of gradient with `values` in place of values() (the rows
  // of a sparse one unchanged). REQUIRES: !is_none().
  Gradient WithValues(const Output& values) const {
    if (!sparse_) return Gradient(values);
    IndexedSlices s = slices_;
    s.values = values;
    return Gradient(s);
  }

 private:
  Output dense_;
  IndexedSlices slices_;
  bool sparse_ = false;
};

// "No gradient flows here" (TensorFlow's NoGradient()): an Output with no
// node.
inline Output NoGradient() { return Output(); }

using GradFunc = std::function<absl::Status(const Scope& scope, const Operation& op,
                                            const std::vector<Output>& grad_inputs,
                                            std::vector<Output>* grad_outputs)>;
// As GradFunc, but may return IndexedSlices.
using SparseGradFunc = std::function<absl::Status(const Scope& scope, const Operation& op,
                                                  const std::vector<Output>& grad_inputs,
                                                  std::vector<Gradient>* grad_outputs)>;

class GradientRegistry {
 public:
  // What is registered for one op: exactly one of the functions, or neither
  // for an op declared to have no gradient.
  struct Entry {
    GradFunc dense;
    SparseGradFunc sparse;
    // Gradients pass through unchanged to input 0 (Identity,
    // ReadVariableOp): IndexedSlices stay sparse.
    bool pass_through = false;
    bool no_gradient() const { return !dense && !sparse && !pass_through; }
  };

  static GradientRegistry* Global();

  // Registering an op twice is a programmer error: reported on stderr, the
  // first registration kept.
  void Register(const std::string& op, GradFunc fn);
  void RegisterSparse(const std::string& op, SparseGradFunc fn);
  void RegisterPassThrough(const std::string& op);
  void RegisterNoGradient(const std::string& op);

  // NotFound "No gradient defined for op: X" when nothing is registered.
  absl::StatusOr<const Entry*> Lookup(absl::string_view op) const;
  // Every op with a registration, sorted; `with_gradient` leaves out the
  // no-gradient ones.
  std::vector<std::string> Ops(bool with_gradient) const;

 private:
  void Add(const std::string& op, Entry entry);
  absl::flat_hash_map<std::string, Entry> entries_;
};

namespace grad_registration {
struct Registrar {
  template <typename F>
  Registrar(const char* op, F fn) {
    if constexpr (std::is_constructible_v<GradFunc, F>) {
      GradientRegistry::Global()->Register(op, GradFunc(fn));
    } else {
      GradientRegistry::Global()->RegisterSparse(op, SparseGradFunc(fn));
    }
  }
};
}  // namespace grad_registration

#define TW_GRAD_CONCAT_INNER_(a, b) a##b
#define TW_GRAD_CONCAT_(a, b) TW_GRAD_CONCAT_INNER_(a, b)
#define TW_REGISTER_GRADIENT(op, fn)                                                   \
  static const ::towerflow::grad_registration::Registrar TW_GRAD_CONCAT_(tw_grad_reg_, \
                                                                         __COUNTER__)(op, fn)
#define TW_REGISTER_NO_GRADIENT(op)                                \
  static const bool TW_GRAD_CONCAT_(tw_nograd_reg_, __COUNTER__) = \
      (::towerflow::GradientRegistry::Global()->RegisterNoGradient(op), true)
#define TW_REGISTER_PASS_THROUGH_GRADIENT(op)                        \
  static const bool TW_GRAD_CONCAT_(tw_passgrad_reg_, __COUNTER__) = \
      (::towerflow::GradientRegistry::Global()->RegisterPassThrough(op), true)

}  // namespace towerflow

#endif  // TOWERFLOW_OPS_GRAD_REGISTRY_H_
