// Variables and collections: TensorFlow 1.x's tf.get_variable on resource
// variables, with variable scopes, reuse, and graph collections.
//
//   Scope conv = tower.WithVariableScope("conv1");
//   Variable w = GetVariable(conv, "weights", TensorShape({5, 5, 3, 64}),
//                            DT_FLOAT, initializers::TruncatedNormal(0.05));
//   Output y = ops::Conv2D(conv, x, w.value(), {1, 1, 1, 1}, "SAME");
//   Operation init = GlobalVariablesInitializer(root);   // the "init" NoOp
//
// A variable is named by its variable scope ("conv1/weights"), not by the
// name scope: tower_1 reusing it builds its ops under "tower_1/conv1/" but
// reads the same "conv1/weights". GetVariable creates:
//   conv1/weights                 VarHandleOp (shared_name conv1/weights)
//   conv1/weights/Initializer/... the initial value, colocated with it
//   conv1/weights/Assign          AssignVariableOp of the initial value
// under the scope's device stack (so a ReplicaDeviceSetter places it) and
// with no control dependencies, as TensorFlow's init_scope does.
//
// Reuse (Scope::WithVariableScope): kNoReuse, the root's mode, creates and
// refuses an existing name; kReuse returns existing variables and refuses
// new names; kAutoReuse does either. Errors carry TensorFlow's messages:
//   "Variable conv1/weights already exists, disallowed. Did you mean to set
//    reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
//   "Variable conv1/b does not exist, or was not created with
//    tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?"
//   "Trying to share variable conv1/weights, but specified shape (3, 3) and
//    found shape (5, 5)."
//
// Not thread-safe (graph building is single-threaded).
#ifndef TOWERFLOW_OPS_VARIABLES_H_
#define TOWERFLOW_OPS_VARIABLES_H_

#include <functional>
#include <string>
#include <vector>

#include "core/tensor_shape.h"
#include "core/types.h"
#include "graph/collections.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/initializers.h"

namespace towerflow {

struct VariableOptions {
  // Also added to GraphKeys::kTrainableVariables (when `collections` is
  // left empty).
  bool trainable = true;
  // Collections to add the variable to; empty means kGlobalVariables, plus
  // kTrainableVariables when trainable.
  std::vector<std::string> collections;
};

struct VariableRequest;

// A handle to a resource variable and what GetVariable knows of it. A value
// type; valid() is false for the Variable a failed GetVariable returns.
class Variable {
 public:
  Variable() = default;

  bool valid() const { return handle_.valid(); }
  // The full name, e.g. "conv1/weights".
  const std::string& name() const { return name_; }
  // The VarHandleOp's output.
  Output handle() const { return handle_; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  bool trainable() const { return trainable_; }
  // The AssignVariableOp that sets the initial value.
  Operation initializer() const { return initializer_; }
  Output initial_value() const { return initial_value_; }

  // A ReadVariableOp of the variable, on the variable's device, named in
  // the scope GetVariable was called with (or in `scope`).
  Output value() const;
  Output value(const Scope& scope) const;

 private:
  friend Variable GetVariable(const Scope&, const std::string&, const TensorShape&, DataType,
                              const initializers::Initializer&, const VariableOptions&);
  friend Variable GetVariableByFullName(const Scope&, const std::string&, VariableReuse,
                                        const TensorShape&, DataType,
                                        const initializers::Initializer&, const VariableOptions&);
  friend std::vector<Variable> GetVariables(const Graph&, absl::string_view);
  friend Variable GetRequestedVariable(const Scope&, const VariableRequest&);
  static Variable FromRecord(const VariableRecord& record, const Scope* scope);

  std::string name_;
  Output handle_;
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  bool trainable_ = true;
  Operation initializer_;
  Output initial_value_;
  // Where value() reads; absent for Variables from GetVariables.
  std::optional<Scope> scope_;
};

// See the file comment. Errors (reuse, shape or dtype mismatch, an invalid
// shape, an initializer of the wrong dtype or shape) are recorded in the
// scope's sticky status and return an invalid Variable.
Variable GetVariable(const Scope& scope, const std::string& name, const TensorShape& shape,
                     DataType dtype = DT_FLOAT, const initializers::Initializer& initializer = {},
                     const VariableOptions& options = {});

// As GetVariable, but named `full_name` whatever the scope's variable scope,
// with `reuse` in place of the scope's (kInherit: the scope's). For
// variables that belong to another variable, as an optimizer's slots
// ("conv1/weights/Momentum"). Its ops are still built under `scope`'s name
// and device scopes.
Variable GetVariableByFullName(const Scope& scope, const std::string& full_name,
                               VariableReuse reuse, const TensorShape& shape,
                               DataType dtype = DT_FLOAT,
                               const initializers::Initializer& initializer = {},
                               const VariableOptions& options = {});

// The variables GetVariable created that are in collection `key`, in the
// collection's order.
std::vector<Variable> GetVariables(const Graph& graph,
                                   absl::string_view key = GraphKeys::kGlobalVariables);

// What a GetVariable or GetVariableByFullName call asks for.
struct VariableRequest {
  std::string full_name;
  VariableReuse reuse = VariableReuse::kNoReuse;  // resolved: never kInherit
  TensorShape shape;
  DataType dtype = DT_FLOAT;
  initializers::Initializer initializer;
  VariableOptions options;
};

// Finds or creates the variable a request names (GetVariable's own work).
using VariableGetter = std::function<Variable(const Scope& scope, const VariableRequest& request)>;

// TensorFlow's variable_creator_scope: while a ScopedVariableCreator is
// alive on this thread, each GetVariable / GetVariableByFullName call goes
// to `creator` with the caller's scope, the request and `next`, the getter
// that would otherwise serve it, and returns what the creator returns. The
// creator may change the request, call `next` more than once, or return
// something else. Calls made while a creator runs are not intercepted;
// nesting restores the outer creator. ReplicateModelFn mirrors variables
// per tower this way.
using VariableCreator = std::function<Variable(const Scope& scope, const VariableRequest& request,
                                               const VariableGetter& next)>;

class ScopedVariableCreator {
 public:
  explicit ScopedVariableCreator(VariableCreator creator);
  ~ScopedVariableCreator();
  ScopedVariableCreator(const ScopedVariableCreator&) = delete;
  ScopedVariableCreator& operator=(const ScopedVariableCreator&) = delete;

 private:
  VariableCreator creator_;
  VariableCreator* previous_;
};

// A NoOp named "init" (uniquified) that runs the initializers of every
// variable in kGlobalVariables: TensorFlow's global_variables_initializer().
Operation GlobalVariablesInitializer(const Scope& scope);
// The same for kLocalVariables ("init" too, as in TensorFlow).
Operation LocalVariablesInitializer(const Scope& scope);

// Collections of tensors and ops.
void AddToCollection(Graph* graph, absl::string_view key, const Output& value);
void AddToCollection(Graph* graph, absl::string_view key, const Operation& op);
// The tensors in collection `key` (entries added as Operations are left out).
std::vector<Output> GetCollection(const Graph& graph, absl::string_view key);
// The ops of every entry of collection `key` (kUpdateOps, kTrainOp, ...).
std::vector<Operation> GetCollectionOps(const Graph& graph, absl::string_view key);

}  // namespace towerflow

#endif  // TOWERFLOW_OPS_VARIABLES_H_
