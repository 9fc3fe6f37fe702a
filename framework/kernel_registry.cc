#include "framework/kernel_registry.h"

#include <algorithm>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/attr_value_util.h"

namespace towerflow {
namespace {

struct Registration {
  KernelDef def;
  KernelFactory factory;
};

struct Registry {
  absl::Mutex mu;
  // op -> registrations; node-stable (unique_ptr) so KernelDef* stay valid.
  std::map<std::string, std::vector<std::unique_ptr<Registration>>> by_op ABSL_GUARDED_BY(mu);
  std::vector<KernelDeriver> derivers ABSL_GUARDED_BY(mu);
};

Registry& UnderivedRegistry() {
  static Registry* const registry = new Registry();
  return *registry;
}

// The registry, after the derivers have run (Note [Derived kernels]).
Registry& GlobalRegistry() {
  static absl::once_flag derived;
  absl::call_once(derived, [] {
    Registry& r = UnderivedRegistry();
    std::vector<KernelDeriver> derivers;
    std::vector<const KernelDef*> kernels;
    {
      absl::MutexLock lock(&r.mu);
      derivers = r.derivers;
      for (const auto& [op, regs] : r.by_op) {
        for (const auto& reg : regs) kernels.push_back(&reg->def);
      }
    }
    for (const KernelDeriver& derive : derivers) derive(kernels);
  });
  return UnderivedRegistry();
}

std::string TypesString(const DataTypeVector& types) {
  return absl::StrJoin(
      types, ", ", [](std::string* out, DataType t) { absl::StrAppend(out, DataTypeString(t)); });
}

bool Matches(const KernelDef& def, const NodeDef& node_def) {
  for (const auto& [attr, allowed] : def.type_constraints) {
    auto it = node_def.attr().find(attr);
    if (it == node_def.attr().end()) return false;
    const AttrValue& v = it->second;
    if (v.value_case() == AttrValue::kType) {
      if (std::find(allowed.begin(), allowed.end(), v.type()) == allowed.end()) return false;
    } else if (v.value_case() == AttrValue::kList) {
      for (int t : v.list().type()) {
        if (std::find(allowed.begin(), allowed.end(), static_cast<DataType>(t)) == allowed.end()) {
          return false;
        }
      }
    } else {
      return false;
    }
  }
  return true;
}

// "T=float, Tidx=int32": the node's type attrs, for messages.
std::string NodeTypeAttrs(const NodeDef& node_def) {
  std::vector<std::string> parts;
  std::map<std::string, AttrValue> sorted(node_def.attr().begin(), node_def.attr().end());
  for (const auto& [name, value] : sorted) {
    if (value.value_case() == AttrValue::kType) {
      parts.push_back(absl::StrCat(name, "=", DataTypeString(value.type())));
    }
  }
  return parts.empty() ? "no type attrs" : absl::StrJoin(parts, ", ");
}

}  // namespace

std::string KernelDef::DebugString() const {
  std::string out = absl::StrCat("device='", device_type, "'");
  for (const auto& [attr, allowed] : type_constraints) {
    absl::StrAppend(&out, "; ", attr, " in [", TypesString(allowed), "]");
  }
  return out;
}

void RegisterKernel(const KernelDefBuilder& builder, KernelFactory factory) {
  Registry& r = UnderivedRegistry();
  absl::MutexLock lock(&r.mu);
  r.by_op[builder.def().op].push_back(
      std::make_unique<Registration>(Registration{builder.def(), std::move(factory)}));
}

void RegisterKernelDeriver(KernelDeriver deriver) {
  Registry& r = UnderivedRegistry();
  absl::MutexLock lock(&r.mu);
  r.derivers.push_back(std::move(deriver));
}

bool AnyKernelTakes(const std::vector<const KernelDef*>& kernels, const std::string& attr,
                    DataType dtype) {
  for (const KernelDef* k : kernels) {
    auto it = k->type_constraints.find(attr);
    if (it == k->type_constraints.end() ||
        std::find(it->second.begin(), it->second.end(), dtype) != it->second.end()) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<const KernelDef*> FindKernelDef(const std::string& device_type,
                                               const NodeDef& node_def) {
  Registry& r = GlobalRegistry();
  absl::MutexLock lock(&r.mu);
  auto it = r.by_op.find(node_def.op());
  std::vector<std::string> known;
  if (it != r.by_op.end()) {
    for (const auto& reg : it->second) {
      if (reg->def.device_type == device_type && Matches(reg->def, node_def)) return &reg->def;
      known.push_back(reg->def.DebugString());
    }
  }
  return absl::UnimplementedError(absl::StrCat(
      "No kernel for op '", node_def.op(), "' on device type ", device_type, " with ",
      NodeTypeAttrs(node_def), " (node '", node_def.name(),
      "'); registered kernels: ", known.empty() ? "<none>" : absl::StrJoin(known, " | ")));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(Device* device,
                                                       const std::string& device_type,
                                                       const NodeDef& node_def,
                                                       const OpDef& op_def) {
  KernelFactory factory;
  {
    TW_ASSIGN_OR_RETURN(const KernelDef* def, FindKernelDef(device_type, node_def));
    Registry& r = GlobalRegistry();
    absl::MutexLock lock(&r.mu);
    for (const auto& reg : r.by_op[node_def.op()]) {
      if (&reg->def == def) factory = reg->factory;
    }
  }
  DataTypeVector inputs, outputs;
  TW_RETURN_IF_ERROR(InOutTypesForNode(node_def, op_def, &inputs, &outputs));
  std::unique_ptr<OpKernel> kernel = factory();
  TW_RETURN_IF_ERROR(kernel->Init(KernelConstruction(node_def, op_def, device, inputs, outputs)));
  return kernel;
}

std::vector<const KernelDef*> AllKernelDefs() {
  Registry& r = GlobalRegistry();
  absl::MutexLock lock(&r.mu);
  std::vector<const KernelDef*> out;
  for (const auto& [op, regs] : r.by_op) {
    for (const auto& reg : regs) out.push_back(&reg->def);
  }
  return out;
}

}  // namespace towerflow
