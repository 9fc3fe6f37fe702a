#include "graph/scope.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"

namespace towerflow {

// Immutable once a Scope holds it; derived scopes copy it (Derive).
struct Scope::Impl {
  using NameMap = absl::flat_hash_map<std::string, int>;

  struct DeviceEntry {
    enum class Kind { kSpec, kFunction, kBarrier };
    Kind kind;
    DeviceSpec spec;
    DeviceFunction fn;
  };

  std::shared_ptr<Graph> graph;
  std::shared_ptr<absl::Status> status;
  // Names used in this namespace -> the last suffix handed out for them.
  std::shared_ptr<NameMap> name_map;
  // Non-null for single-use scopes (CompositeOpScopes::last).
  std::shared_ptr<bool> scope_used;
  std::vector<Operation> control_deps;
  std::string name;
  std::string op_name;
  std::vector<DeviceEntry> devices;  // outermost first
  std::set<std::string> colocation;  // group names, without "loc:@"
  std::string colocation_device;
  VariableScope var_scope;
  // Variable scopes entered in this entry of var_scope -> times entered
  // (TF's variable_scopes_count); a new map per WithVariableScope.
  using ScopeCounts = absl::flat_hash_map<std::string, int>;
  std::shared_ptr<ScopeCounts> var_scope_counts = std::make_shared<ScopeCounts>();

  std::string FullName(const std::string& n) const {
    return name.empty() ? n : absl::StrCat(name, "/", n);
  }

  // TensorFlow's Scope::Impl::GetUniqueName, also skipping names of nodes
  // already in the graph when `check_graph` (nodes named by variable scopes).
  std::string GetUniqueName(const std::string& prefix, bool check_single_use,
                            bool check_graph) const {
    if (check_single_use && scope_used != nullptr) {
      if (*scope_used) {
        UpdateStatus(
            absl::AlreadyExistsError(absl::StrCat(prefix, " already exists in the current scope")));
        return "";
      }
      *scope_used = true;
      return prefix;
    }
    const auto taken = [&](const std::string& n) {
      return name_map->contains(n) || (check_graph && graph->FindNode(FullName(n)) != nullptr);
    };
    if (!taken(prefix)) {
      (*name_map)[prefix] = 0;
      return prefix;
    }
    int counter = (*name_map)[prefix];
    std::string unique;
    do {
      unique = absl::StrCat(prefix, "_", ++counter);
    } while (taken(unique));
    (*name_map)[prefix] = counter;
    (*name_map)[unique] = 0;
    return unique;
  }

  std::string GetNameForOp(const std::string& default_name) const {
    const std::string unique = GetUniqueName(default_name, true, true);
    return unique.empty() ? "" : FullName(unique);
  }

  void UpdateStatus(const absl::Status& s) const {
    if (status->ok() && !s.ok()) *status = s;
  }
};

Scope::Scope(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scope::Scope(const Scope& other) = default;
Scope& Scope::operator=(const Scope& other) = default;
Scope::~Scope() = default;

std::shared_ptr<Scope::Impl> Scope::Derive() const { return std::make_shared<Impl>(*impl_); }

Scope Scope::NewRootScope() {
  auto impl = std::make_shared<Impl>();
  impl->graph = std::make_shared<Graph>();
  impl->status = std::make_shared<absl::Status>();
  impl->name_map = std::make_shared<Impl::NameMap>();
  return Scope(std::move(impl));
}

Scope Scope::NewSubScope(const std::string& child_scope_name) const {
  auto impl = Derive();
  impl->op_name.clear();
  impl->scope_used.reset();
  if (child_scope_name.empty()) return Scope(std::move(impl));
  const std::string unique = impl_->GetUniqueName(child_scope_name, false, false);
  impl->name = impl_->FullName(unique);
  impl->name_map = std::make_shared<Impl::NameMap>();
  return Scope(std::move(impl));
}

Scope Scope::WithAbsoluteNameScope(const std::string& path) const {
  auto impl = Derive();
  impl->op_name.clear();
  impl->scope_used.reset();
  impl->name = std::string(absl::StripSuffix(path, "/"));
  impl->name_map = std::make_shared<Impl::NameMap>();
  return Scope(std::move(impl));
}

Scope Scope::WithOpNameImpl(const std::string& op_name) const {
  if (impl_->scope_used != nullptr) {
    UpdateStatus(
        absl::InvalidArgumentError(absl::StrCat("Cannot set op name ", op_name, " on this scope")));
    return *this;
  }
  auto impl = Derive();
  impl->op_name = op_name;
  return Scope(std::move(impl));
}

Scope Scope::WithControlDependencies(absl::Span<const Operation> control_deps) const {
  auto impl = Derive();
  impl->control_deps.insert(impl->control_deps.end(), control_deps.begin(), control_deps.end());
  return Scope(std::move(impl));
}

Scope Scope::WithControlDependencies(const Output& control_dep) const {
  const Operation op = control_dep.op();
  return WithControlDependencies(absl::MakeConstSpan(&op, 1));
}

Scope Scope::WithNoControlDependencies() const {
  auto impl = Derive();
  impl->control_deps.clear();
  return Scope(std::move(impl));
}

Scope Scope::WithDevice(const std::string& device) const {
  absl::StatusOr<DeviceSpec> spec = DeviceSpec::Parse(device);
  if (!spec.ok()) {
    UpdateStatus(spec.status());
    return *this;
  }
  auto impl = Derive();
  impl->devices.push_back({Impl::DeviceEntry::Kind::kSpec, *std::move(spec), nullptr});
  return Scope(std::move(impl));
}

Scope Scope::WithDeviceFunction(DeviceFunction fn) const {
  auto impl = Derive();
  impl->devices.push_back({Impl::DeviceEntry::Kind::kFunction, DeviceSpec(), std::move(fn)});
  return Scope(std::move(impl));
}

Scope Scope::ClearDevice() const {
  auto impl = Derive();
  impl->devices.push_back({Impl::DeviceEntry::Kind::kBarrier, DeviceSpec(), nullptr});
  return Scope(std::move(impl));
}

Scope Scope::ColocateWith(const Operation& op) const {
  if (!op.valid()) {
    UpdateStatus(absl::InvalidArgumentError("Cannot colocate with an invalid op"));
    return *this;
  }
  auto impl = Derive();
  bool has_group = false;
  if (const AttrValue* cls = op.node()->FindAttr("_class")) {
    for (const std::string& entry : cls->list().s()) {
      absl::string_view group = entry;
      if (absl::ConsumePrefix(&group, "loc:@")) {
        impl->colocation.insert(std::string(group));
        has_group = true;
      }
    }
  }
  if (!has_group) impl->colocation.insert(op.name());
  impl->colocation_device = op.node()->requested_device();
  impl->devices.clear();
  return Scope(std::move(impl));
}

Scope Scope::ClearColocation() const {
  auto impl = Derive();
  impl->colocation.clear();
  impl->colocation_device.clear();
  return Scope(std::move(impl));
}

Scope Scope::WithVariableScope(const std::string& name, VariableReuse reuse) const {
  const VariableScope& current = impl_->var_scope;
  VariableReuse resolved = reuse;
  if (reuse == VariableReuse::kInherit) {
    resolved = current.reuse();
  } else if (reuse == VariableReuse::kAutoReuse && current.reuse() == VariableReuse::kReuse) {
    resolved = VariableReuse::kReuse;  // TF: reuse=True holds for sub-scopes
  }
  if (name.empty()) {
    auto impl = Derive();
    impl->var_scope = VariableScope(current.name(), resolved);
    impl->var_scope_counts = std::make_shared<Impl::ScopeCounts>();
    return Scope(std::move(impl));
  }
  ++(*impl_->var_scope_counts)[name];
  Scope child = NewSubScope(name);
  const std::string var_name =
      current.name().empty() ? name : absl::StrCat(current.name(), "/", name);
  child.impl_->var_scope = VariableScope(var_name, resolved);
  child.impl_->var_scope_counts = std::make_shared<Impl::ScopeCounts>();
  return child;
}

Scope Scope::WithUniqueVariableScope(const std::string& default_name, VariableReuse reuse) const {
  const Impl::ScopeCounts& counts = *impl_->var_scope_counts;
  std::string name = default_name;
  for (int i = 1; counts.contains(name); ++i) name = absl::StrCat(default_name, "_", i);
  return WithVariableScope(name, reuse);
}

const VariableScope& Scope::variable_scope() const { return impl_->var_scope; }

Scope::CompositeOpScopes Scope::GetCompositeOpScopes(const std::string& composite_op_name) const {
  if (impl_->op_name.empty() && composite_op_name.empty()) {
    UpdateStatus(absl::InvalidArgumentError("Cannot create composite op scopes with empty name"));
    return {*this, *this};
  }
  if (impl_->scope_used == nullptr) {
    Scope child = NewSubScope(impl_->op_name.empty() ? composite_op_name : impl_->op_name);
    auto last = child.Derive();
    last->scope_used = std::make_shared<bool>(false);
    last->op_name = child.name();
    return {child, Scope(std::move(last))};
  }
  auto child = Derive();
  child->name = impl_->op_name;
  child->op_name.clear();
  child->scope_used.reset();
  return {Scope(std::move(child)), *this};
}

std::string Scope::GetUniqueNameForOp(const std::string& default_name) const {
  if (impl_->scope_used != nullptr) {
    if (impl_->op_name.empty() || *impl_->scope_used) {
      UpdateStatus(absl::InvalidArgumentError("Cannot get a unique name in this scope"));
      return "";
    }
    *impl_->scope_used = true;
    return impl_->op_name;
  }
  return impl_->GetNameForOp(impl_->op_name.empty() ? default_name : impl_->op_name);
}

absl::Status Scope::ApplyDevices(Node* node) const {
  const auto parse = [&](const std::string& spec) -> absl::StatusOr<DeviceSpec> {
    absl::StatusOr<DeviceSpec> d = DeviceSpec::Parse(spec);
    if (!d.ok()) {
      return AddErrorContext(d.status(), absl::StrCat("Node '", node->name(), "'"));
    }
    return d;
  };
  TW_ASSIGN_OR_RETURN(DeviceSpec current, parse(node->requested_device()));
  for (auto it = impl_->devices.rbegin(); it != impl_->devices.rend(); ++it) {
    if (it->kind == Impl::DeviceEntry::Kind::kBarrier) break;
    if (it->kind == Impl::DeviceEntry::Kind::kSpec) {
      DeviceSpec merged = it->spec;
      merged.MergeFrom(current);
      current = std::move(merged);
    } else {
      node->set_requested_device(current.ToString());
      absl::StatusOr<std::string> chosen = it->fn(*node);
      if (!chosen.ok()) {
        return AddErrorContext(chosen.status(),
                               absl::StrCat("Device function for node '", node->name(), "'"));
      }
      TW_ASSIGN_OR_RETURN(current, parse(*chosen));
    }
  }
  if (current.empty() && !impl_->colocation_device.empty()) {
    absl::StatusOr<DeviceSpec> coloc = DeviceSpec::Parse(impl_->colocation_device);
    if (coloc.ok()) current = *coloc;
  }
  node->set_requested_device(current.ToString());
  return absl::OkStatus();
}

absl::StatusOr<Node*> Scope::AddNode(NodeDef node_def) const {
  if (!ok()) return status();
  for (const Operation& dep : impl_->control_deps) {
    if (!dep.valid() || impl_->graph->FindNode(dep.name()) != dep.node()) {
      const absl::Status s =
          absl::InvalidArgumentError(absl::StrCat("Node '", node_def.name(),
                                                  "': a control dependency is not a node of "
                                                  "this scope's graph"));
      UpdateStatus(s);
      return s;
    }
    node_def.add_input(absl::StrCat("^", dep.name()));
  }
  if (!impl_->colocation.empty()) {
    AttrValue cls;
    for (const std::string& group : impl_->colocation) {
      cls.mutable_list()->add_s(absl::StrCat("loc:@", group));
    }
    (*node_def.mutable_attr())["_class"] = std::move(cls);
  }
  absl::StatusOr<Node*> node = impl_->graph->AddNode(std::move(node_def));
  if (!node.ok()) {
    UpdateStatus(node.status());
    return node.status();
  }
  const absl::Status placed = ApplyDevices(*node);
  if (!placed.ok()) {
    impl_->graph->RemoveNode(*node);
    UpdateStatus(placed);
    return placed;
  }
  return *node;
}

bool Scope::ok() const { return impl_->status->ok(); }
absl::Status Scope::status() const { return *impl_->status; }
void Scope::UpdateStatus(const absl::Status& s) const { impl_->UpdateStatus(s); }

absl::Status Scope::ToGraphDef(GraphDef* graph_def, const GraphExportOptions& options) const {
  if (!ok()) return status();
  impl_->graph->ToGraphDef(graph_def, options);
  return absl::OkStatus();
}

absl::StatusOr<GraphDef> Scope::ToGraphDef() const {
  GraphDef graph_def;
  TW_RETURN_IF_ERROR(ToGraphDef(&graph_def));
  return graph_def;
}

Graph* Scope::graph() const { return impl_->graph.get(); }
std::shared_ptr<Graph> Scope::graph_as_shared_ptr() const { return impl_->graph; }
const std::string& Scope::name() const { return impl_->name; }
const std::vector<Operation>& Scope::control_deps() const { return impl_->control_deps; }

}  // namespace towerflow
