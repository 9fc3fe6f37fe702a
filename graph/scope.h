// Scope: where the graph-building DSL puts new ops.
//
// A Scope carries everything that decides how a new node looks: its name
// (name scopes, uniquified TensorFlow-style), its device (device scopes and
// device functions, merged TensorFlow-style), its control dependencies, its
// colocation, and the variable scope GetVariable (ops/variables.h) uses.
// Derived scopes are cheap values; they share the Graph, the sticky status
// and, within one name scope, the table of used names.
//
//   Scope root = Scope::NewRootScope();
//   Scope tower = root.NewSubScope("tower_1").WithDevice("/gpu:1");
//   Output x = ops::Placeholder(tower, DT_FLOAT);      // "tower_1/Placeholder"
//   Scope conv = tower.WithVariableScope("conv1", VariableReuse::kReuse);
//   ...
//   GraphDef graph_def;
//   TW_RETURN_IF_ERROR(root.ToGraphDef(&graph_def));   // first error, if any
//
// Naming (TensorFlow's scope.cc): in one namespace ops and sub-scopes share
// names; asking for "add" three times gives add, add_1, add_2; asking for
// foo, foo, foo_1, foo_2, foo gives foo, foo_1, foo_1_1, foo_2, foo_3. A
// name a node already has in the graph (a variable named by its variable
// scope, say) is skipped too. NewSubScope("") shares its parent's namespace.
//
// Devices (TensorFlow's Python semantics): WithDevice pushes a spec, and
// WithDeviceFunction a function of the node. They apply from the innermost
// out: a spec fills the fields the inner ones left unset ("/job:ps" around
// "/cpu:0" gives "/job:ps/device:CPU:0"); a function sees the node with the
// device so far and returns the new one. ClearDevice() stops the outer ones.
// ColocateWith(op) gives new nodes op's device and `_class` attr and ignores
// the outer device stack. Device strings are normalised ("/gpu:0" becomes
// "/device:GPU:0").
//
// Errors are sticky: the first one (a bad device string, a shape mismatch, a
// variable that already exists) is kept, later builders do nothing, and
// status() / ToGraphDef() return it.
//
// Thread safety: not thread-safe; one thread builds through a root and its
// derived scopes at a time.
#ifndef TOWERFLOW_GRAPH_SCOPE_H_
#define TOWERFLOW_GRAPH_SCOPE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "framework/device_name.h"
#include "graph/graph.h"
#include "graph/output.h"
#include "proto/graph.pb.h"

namespace towerflow {

// Chooses a device for a new node. `node.requested_device()` holds the
// device chosen so far (by inner scopes); the result replaces it and must be
// a device spec ("" for none). An error fails the node's creation (sticky).
using DeviceFunction = std::function<absl::StatusOr<std::string>(const Node& node)>;

// How GetVariable treats an existing variable under this variable scope.
enum class VariableReuse {
  kInherit,    // as the enclosing variable scope (the root creates only)
  kReuse,      // must exist: return it (TF reuse=True)
  kAutoReuse,  // return it if it exists, else create (TF reuse=tf.AUTO_REUSE)
  kNoReuse,    // must not exist: create (TF's default at the root)
};

// The variable scope of a Scope: a name prefix for variables, independent of
// name scopes, and the reuse mode in force.
class VariableScope {
 public:
  VariableScope() = default;
  VariableScope(std::string name, VariableReuse reuse) : name_(std::move(name)), reuse_(reuse) {}
  // "" at the root, else e.g. "resnet/block1".
  const std::string& name() const { return name_; }
  // Never kInherit: kInherit is resolved when the scope is entered.
  VariableReuse reuse() const { return reuse_; }

 private:
  std::string name_;
  VariableReuse reuse_ = VariableReuse::kNoReuse;
};

class Scope {
 public:
  Scope(const Scope& other);
  Scope& operator=(const Scope& other);
  ~Scope();

  // A scope over a new, empty Graph.
  static Scope NewRootScope();

  // A child name scope: its ops are named "<this>/<child>/op". The child name
  // is uniquified in this namespace; "" shares this namespace.
  Scope NewSubScope(const std::string& child_scope_name) const;
  // A name scope with exactly this full path (TensorFlow's name_scope("a/b/")),
  // not uniquified; names inside are still unique in the graph.
  Scope WithAbsoluteNameScope(const std::string& path) const;
  // The next op is named `op_name` (uniquified like any name).
  template <typename... Ty>
  Scope WithOpName(Ty... fragments) const {
    return WithOpNameImpl(absl::StrCat(fragments...));
  }

  // New ops depend on these ops too (added to any already in force).
  Scope WithControlDependencies(absl::Span<const Operation> control_deps) const;
  Scope WithControlDependencies(const Output& control_dep) const;
  Scope WithNoControlDependencies() const;

  // See the file comment. An unparsable spec is a (sticky) InvalidArgument.
  Scope WithDevice(const std::string& device) const;
  Scope WithDeviceFunction(DeviceFunction fn) const;
  // New ops ignore the device specs and functions of enclosing scopes.
  Scope ClearDevice() const;

  Scope ColocateWith(const Operation& op) const;
  Scope ColocateWith(const Output& out) const { return ColocateWith(out.op()); }
  Scope ClearColocation() const;

  // Enters variable scope `name` (under the current one) and a name scope of
  // the same name, as TensorFlow 1.x's tf.variable_scope does. An empty name
  // changes only the reuse mode, keeping the variable and name scopes.
  //
  // Each entry of a variable scope (each call, an empty name included) starts
  // a fresh count of the variable scopes opened inside it, the count
  // WithUniqueVariableScope reads: a tower that re-enters the root's variable
  // scope to reuse its variables names its layers "dense", "dense_1", ... as
  // the first tower did (TF resets these counts when a variable scope exits).
  Scope WithVariableScope(const std::string& name,
                          VariableReuse reuse = VariableReuse::kInherit) const;
  // TensorFlow's variable_scope(None, default_name=...): enters
  // `default_name`, or `default_name_1`, `_2`, ... the first that no
  // variable scope entered in this entry of the current variable scope has
  // used. tf.layers names its layers so ("dense", "dense_1").
  Scope WithUniqueVariableScope(const std::string& default_name,
                                VariableReuse reuse = VariableReuse::kInherit) const;
  const VariableScope& variable_scope() const;

  // For composite ops (one public op built from several): `child` is a name
  // scope for the parts, `last` names the final op after the composite.
  struct CompositeOpScopes;
  CompositeOpScopes GetCompositeOpScopes(const std::string& composite_op_name) const;

  // The unique name the next op of type `default_name` gets ("add", "add_1",
  // "tower_1/add"); honours WithOpName.
  std::string GetUniqueNameForOp(const std::string& default_name) const;

  // Adds a node built from `node_def` (name, op, inputs, attrs): adds this
  // scope's control dependencies and colocation, applies the device stack,
  // validates and infers shapes (Graph::AddNode). An error is returned and
  // recorded in the sticky status; nothing is added. Does nothing when the
  // status is already an error.
  absl::StatusOr<Node*> AddNode(NodeDef node_def) const;

  bool ok() const;
  absl::Status status() const;
  // Records `s` unless an error is already recorded.
  void UpdateStatus(const absl::Status& s) const;

  // The graph, or the sticky error.
  absl::Status ToGraphDef(GraphDef* graph_def, const GraphExportOptions& options = {}) const;
  absl::StatusOr<GraphDef> ToGraphDef() const;

  Graph* graph() const;
  std::shared_ptr<Graph> graph_as_shared_ptr() const;
  // The name scope path ("" at the root).
  const std::string& name() const;
  const std::vector<Operation>& control_deps() const;

 private:
  struct Impl;
  explicit Scope(std::shared_ptr<Impl> impl);
  Scope WithOpNameImpl(const std::string& op_name) const;
  // A copy of this scope's Impl for a derived scope.
  std::shared_ptr<Impl> Derive() const;
  absl::Status ApplyDevices(Node* node) const;

  std::shared_ptr<Impl> impl_;
};

struct Scope::CompositeOpScopes {
  Scope child;
  Scope last;
};

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_SCOPE_H_
