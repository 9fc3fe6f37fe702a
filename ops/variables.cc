#include "ops/variables.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/attr_value_util.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/state_ops.h"

namespace towerflow {
namespace {

// TensorFlow 1.x's Python spellings, for its messages.
std::string PythonDtypeName(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
      return "float32";
    case DT_DOUBLE:
      return "float64";
    case DT_HALF:
      return "float16";
    default:
      return DataTypeString(dtype);
  }
}

std::string PythonShapeString(const TensorShape& shape) {
  if (shape.dims() == 1) return absl::StrCat("(", shape.dim_size(0), ",)");
  return absl::StrCat("(", absl::StrJoin(shape.dim_sizes(), ", "), ")");
}

absl::Status Disallowed(const std::string& name) {
  return absl::InvalidArgumentError(
      absl::StrCat("Variable ", name,
                   " already exists, disallowed. Did you mean to set reuse=True or "
                   "reuse=tf.AUTO_REUSE in VarScope? (In Towerflow: VariableReuse::kReuse or "
                   "kAutoReuse in Scope::WithVariableScope.)"));
}

absl::Status DoesNotExist(const std::string& name) {
  return absl::InvalidArgumentError(
      absl::StrCat("Variable ", name,
                   " does not exist, or was not created with tf.get_variable(). Did you mean to "
                   "set reuse=tf.AUTO_REUSE in VarScope? (In Towerflow: VariableReuse::kAutoReuse, "
                   "or GetVariable under a scope that creates.)"));
}

// Checks a request to share `record`.
absl::Status CheckShared(const VariableRecord& record, const TensorShape& shape, DataType dtype) {
  if (shape != record.shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to share variable ", record.name, ", but specified shape ",
        PythonShapeString(shape), " and found shape ", PythonShapeString(record.shape), "."));
  }
  if (dtype != record.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to share variable ", record.name, ", but specified dtype ", PythonDtypeName(dtype),
        " and found dtype ", PythonDtypeName(record.dtype), "."));
  }
  return absl::OkStatus();
}

absl::StatusOr<initializers::Initializer> DefaultInitializer(const std::string& name,
                                                             DataType dtype) {
  if (DataTypeIsFloating(dtype)) return initializers::GlorotUniform();
  if (DataTypeIsInteger(dtype) || dtype == DT_BOOL) return initializers::Zeros();
  return absl::InvalidArgumentError(absl::StrCat("An initializer for variable ", name, " of type ",
                                                 DataTypeString(dtype), " is required"));
}

// Creates the variable's ops and records it; nullptr after recording an
// error in `scope`.
const VariableRecord* CreateVariable(const Scope& scope, const std::string& full_name,
                                     const TensorShape& shape, DataType dtype,
                                     const initializers::Initializer& initializer,
                                     const VariableOptions& options);

}  // namespace

Variable Variable::FromRecord(const VariableRecord& record, const Scope* scope) {
  Variable v;
  v.name_ = record.name;
  v.handle_ = Output(record.handle, 0);
  v.dtype_ = record.dtype;
  v.shape_ = record.shape;
  v.trainable_ = record.trainable;
  v.initializer_ = Operation(record.initializer);
  v.initial_value_ = Output(record.initial_value, record.initial_value_index);
  if (scope != nullptr) v.scope_ = *scope;
  return v;
}

Output Variable::value() const {
  if (!scope_.has_value()) return Output();
  return value(*scope_);
}

Output Variable::value(const Scope& scope) const {
  if (!valid()) {
    scope.UpdateStatus(absl::InvalidArgumentError("Reading an invalid Variable"));
    return Output();
  }
  // Reads live with the variable (TensorFlow: ops.device(handle.device)).
  const Scope read =
      scope.ClearColocation().ClearDevice().WithDevice(handle_.node()->requested_device());
  return ops::ReadVariableOp(read, handle_, dtype_);
}

namespace {

const VariableRecord* CreateVariable(const Scope& scope, const std::string& full_name,
                                     const TensorShape& shape, DataType dtype,
                                     const initializers::Initializer& initializer,
                                     const VariableOptions& options) {
  Graph* graph = scope.graph();
  if (graph->FindNode(full_name) != nullptr) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "Cannot create variable ", full_name, ": a node of that name already exists")));
    return nullptr;
  }
  // TensorFlow's init_scope: no control dependencies or colocation of the
  // caller; the device stack (device setters) still applies.
  const Scope base = scope.WithNoControlDependencies().ClearColocation();
  NodeDef handle_def;
  handle_def.set_name(full_name);
  handle_def.set_op("VarHandleOp");
  SetAttrValue(dtype, &(*handle_def.mutable_attr())["dtype"]);
  SetAttrValue(shape, &(*handle_def.mutable_attr())["shape"]);
  SetAttrValue(full_name, &(*handle_def.mutable_attr())["shared_name"]);
  absl::StatusOr<Node*> handle = base.AddNode(std::move(handle_def));
  if (!handle.ok()) return nullptr;

  const Scope own = base.WithAbsoluteNameScope(full_name).ColocateWith(Operation(*handle));
  absl::StatusOr<initializers::Initializer> init =
      initializer.valid() ? absl::StatusOr<initializers::Initializer>(initializer)
                          : DefaultInitializer(full_name, dtype);
  if (!init.ok()) {
    scope.UpdateStatus(init.status());
    return nullptr;
  }
  const Output initial = (*init)(own.NewSubScope("Initializer"), shape, dtype);
  if (!scope.ok() || !initial.valid()) return nullptr;
  if (initial.type() != dtype || !initial.shape().IsCompatibleWith(shape)) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("The initializer of variable ", full_name, " produced ",
                     DataTypeString(initial.type()), " ", initial.shape().DebugString(), ", not ",
                     DataTypeString(dtype), " ", shape.DebugString())));
    return nullptr;
  }
  const ops::AssignVariableOp assign(own.WithOpName("Assign"), Output(*handle, 0), initial);
  if (!scope.ok()) return nullptr;

  VariableRecord record;
  record.name = full_name;
  record.handle = *handle;
  record.dtype = dtype;
  record.shape = shape;
  record.initializer = assign.operation.node();
  record.initial_value = initial.node();
  record.initial_value_index = initial.index();
  record.trainable = options.trainable;
  graph->variable_store().Add(record);
  std::vector<std::string> keys = options.collections;
  if (keys.empty()) {
    keys.push_back(GraphKeys::kGlobalVariables);
    if (options.trainable) keys.push_back(GraphKeys::kTrainableVariables);
  }
  for (const std::string& key : keys) AddToCollection(graph, key, Output(*handle, 0));
  return graph->variable_store().Find(full_name);
}

}  // namespace

namespace {

// The record of the variable found or created; nullptr after recording an
// error in the scope.
const VariableRecord* GetVariableImpl(const Scope& scope, const std::string& full_name,
                                      VariableReuse reuse, const TensorShape& shape, DataType dtype,
                                      const initializers::Initializer& initializer,
                                      const VariableOptions& options) {
  if (!shape.IsValid()) {
    scope.UpdateStatus(AddErrorContext(shape.status(), absl::StrCat("Variable ", full_name)));
    return nullptr;
  }
  if (!IsValidDataType(dtype) || IsRefType(dtype) || dtype == DT_RESOURCE || dtype == DT_VARIANT) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("Variable ", full_name, " cannot have dtype ", DataTypeString(dtype))));
    return nullptr;
  }
  if (const VariableRecord* found = scope.graph()->variable_store().Find(full_name)) {
    absl::Status status = reuse == VariableReuse::kNoReuse ? Disallowed(full_name)
                                                           : CheckShared(*found, shape, dtype);
    if (!status.ok()) {
      scope.UpdateStatus(status);
      return nullptr;
    }
    return found;
  }
  if (reuse == VariableReuse::kReuse) {
    scope.UpdateStatus(DoesNotExist(full_name));
    return nullptr;
  }
  return CreateVariable(scope, full_name, shape, dtype, initializer, options);
}

}  // namespace

// The default getter; a friend of Variable.
Variable GetRequestedVariable(const Scope& scope, const VariableRequest& r) {
  const VariableRecord* record =
      GetVariableImpl(scope, r.full_name, r.reuse, r.shape, r.dtype, r.initializer, r.options);
  return record == nullptr ? Variable() : Variable::FromRecord(*record, &scope);
}

namespace {

thread_local VariableCreator* current_creator = nullptr;

// Serves `request` through the active creator, if any, with creators off
// meanwhile.
Variable Get(const Scope& scope, const VariableRequest& request) {
  if (current_creator == nullptr) return GetRequestedVariable(scope, request);
  VariableCreator* creator = current_creator;
  current_creator = nullptr;
  Variable out = (*creator)(scope, request, GetRequestedVariable);
  current_creator = creator;
  return out;
}

}  // namespace

ScopedVariableCreator::ScopedVariableCreator(VariableCreator creator)
    : creator_(std::move(creator)), previous_(current_creator) {
  current_creator = &creator_;
}

ScopedVariableCreator::~ScopedVariableCreator() { current_creator = previous_; }

Variable GetVariable(const Scope& scope, const std::string& name, const TensorShape& shape,
                     DataType dtype, const initializers::Initializer& initializer,
                     const VariableOptions& options) {
  if (!scope.ok()) return Variable();
  if (name.empty()) {
    scope.UpdateStatus(absl::InvalidArgumentError("GetVariable needs a name"));
    return Variable();
  }
  const std::string& prefix = scope.variable_scope().name();
  const std::string full_name = prefix.empty() ? name : absl::StrCat(prefix, "/", name);
  return Get(scope,
             {full_name, scope.variable_scope().reuse(), shape, dtype, initializer, options});
}

Variable GetVariableByFullName(const Scope& scope, const std::string& full_name,
                               VariableReuse reuse, const TensorShape& shape, DataType dtype,
                               const initializers::Initializer& initializer,
                               const VariableOptions& options) {
  if (!scope.ok()) return Variable();
  if (full_name.empty()) {
    scope.UpdateStatus(absl::InvalidArgumentError("GetVariableByFullName needs a name"));
    return Variable();
  }
  if (reuse == VariableReuse::kInherit) reuse = scope.variable_scope().reuse();
  return Get(scope, {full_name, reuse, shape, dtype, initializer, options});
}

std::vector<Variable> GetVariables(const Graph& graph, absl::string_view key) {
  std::vector<Variable> out;
  for (const CollectionEntry& e : graph.collections().Get(key)) {
    if (const VariableRecord* r = graph.variable_store().FindByHandle(e.node)) {
      out.push_back(Variable::FromRecord(*r, nullptr));
    }
  }
  return out;
}

namespace {

Operation InitializerOf(const Scope& scope, absl::string_view key) {
  std::vector<Operation> deps;
  for (const Variable& v : GetVariables(*scope.graph(), key)) deps.push_back(v.initializer());
  return ops::NoOp(scope.WithOpName("init").WithControlDependencies(deps));
}

}  // namespace

Operation GlobalVariablesInitializer(const Scope& scope) {
  return InitializerOf(scope, GraphKeys::kGlobalVariables);
}

Operation LocalVariablesInitializer(const Scope& scope) {
  return InitializerOf(scope, GraphKeys::kLocalVariables);
}

void AddToCollection(Graph* graph, absl::string_view key, const Output& value) {
  graph->collections().Add(key, {value.node(), value.index()});
}

void AddToCollection(Graph* graph, absl::string_view key, const Operation& op) {
  graph->collections().Add(key, {op.node(), kControlSlot});
}

std::vector<Output> GetCollection(const Graph& graph, absl::string_view key) {
  std::vector<Output> out;
  for (const CollectionEntry& e : graph.collections().Get(key)) {
    if (e.index != kControlSlot) out.emplace_back(e.node, e.index);
  }
  return out;
}

std::vector<Operation> GetCollectionOps(const Graph& graph, absl::string_view key) {
  std::vector<Operation> out;
  for (const CollectionEntry& e : graph.collections().Get(key)) out.emplace_back(e.node);
  return out;
}

}  // namespace towerflow
