#include "runtime/update_order.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/node_def_util.h"
#include "graph/op_registry.h"
#include "runtime/capture_specializer.h"
#include "runtime/graph_view.h"

namespace towerflow {
namespace {

// Nodes whose output 0 is their input 0's buffer (or handle).
bool PassesBufferOn(const std::string& op) {
  return op == "Identity" || op == "RefIdentity" || op == "Snapshot" || op == "StopGradient" ||
         op == "PreventGradient";
}

bool IsVariable(const std::string& op) {
  return op == "VarHandleOp" || op == "VariableV2" || op == "Variable";
}

// Stateful nodes that take a variable without writing it.
bool ReadsWithoutWriting(const std::string& op) {
  return op == "ReadVariableOp" || op == "VarIsInitializedOp" || op == "IsVariableInitialized" ||
         op == "VariableShape" || op == "ResourceGather" || op == "ResourceGatherNd" ||
         op == "DestroyResourceOp";
}

bool IsStateful(const std::string& op) {
  const OpRegistrationData* reg = OpRegistry::Global()->Find(op);
  return reg != nullptr && reg->op_def.is_stateful();
}

// Whether input `input` of an `op` node is a reference argument (what TF 1's
// Assign, Apply* and Scatter* write through; they are not stateful). The
// argument is found when the ones before it are single tensors, as the
// variable of every such op is.
bool TakesReference(const std::string& op, int input) {
  const OpRegistrationData* reg = OpRegistry::Global()->Find(op);
  if (reg == nullptr) return false;
  for (int k = 0; k < reg->op_def.input_arg_size(); ++k) {
    const auto& arg = reg->op_def.input_arg(k);
    if (k == input) return arg.is_ref();
    if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) return false;
  }
  return false;
}

struct Uses {
  std::vector<int> holders;  // hold the variable's buffer while they run
  std::vector<int> updates;
};

// The holders and updates of variable node `v`.
Uses UsesOf(const GraphDef& def, const GraphView& view, int v) {
  Uses uses;
  absl::flat_hash_set<int> seen_holders;
  const bool resource = def.node(v).op() == "VarHandleOp";
  // The variable's handle or reference, as passed on; then the buffer's
  // aliases (reads, and what passes them on).
  std::vector<std::string> handles = {def.node(v).name()}, aliases;
  while (!handles.empty()) {
    const std::string name = handles.back();
    handles.pop_back();
    for (const auto& [c, input] : view.Consumers(name, 0)) {
      const std::string& op = def.node(c).op();
      if (PassesBufferOn(op)) {
        // A reference passed on is still the variable; a resource handle too.
        handles.push_back(def.node(c).name());
        if (!resource && seen_holders.insert(c).second) uses.holders.push_back(c);
      } else if (op == "ReadVariableOp") {
        aliases.push_back(def.node(c).name());
      } else if ((IsStateful(op) && !ReadsWithoutWriting(op)) ||
                 (!resource && TakesReference(op, input) && op != "RefIdentity")) {
        uses.updates.push_back(c);
      } else if (!resource && seen_holders.insert(c).second) {
        uses.holders.push_back(c);  // a reference variable's reader
      }
    }
  }
  while (!aliases.empty()) {
    const std::string name = aliases.back();
    aliases.pop_back();
    for (const auto& [c, input] : view.Consumers(name, 0)) {
      if (!seen_holders.insert(c).second) continue;
      uses.holders.push_back(c);
      if (PassesBufferOn(def.node(c).op())) aliases.push_back(def.node(c).name());
    }
  }
  return uses;
}

}  // namespace

absl::Status OrderUpdatesAfterReads(GraphDef* partition) {
  GraphDef& def = *partition;
  for (const NodeDef& n : def.node()) {
    if (IsControlFlowOp(n.op())) return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(const GraphView view, GraphView::Build(def));
  // Every node's successors, by data or control edge.
  std::vector<std::vector<int>> next(def.node_size());
  for (int i = 0; i < def.node_size(); ++i) {
    for (const std::string& in : def.node(i).input()) {
      TW_ASSIGN_OR_RETURN(const TensorId id, ParseTensorName(in));
      const int from = view.Find(std::string(id.node));
      if (from < 0) {
        return absl::InvalidArgumentError(absl::StrCat("node '", def.node(i).name(), "' reads '",
                                                       in, "', which is not in its partition"));
      }
      next[from].push_back(i);
    }
  }
  // What `from` reaches now. Edges into an update add nothing to what the
  // update itself reaches, so one walk per update serves all its edges.
  const auto reaches = [&](int from) {
    std::vector<bool> seen(def.node_size(), false);
    std::vector<int> stack = {from};
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      for (int j : next[i]) {
        if (!seen[j]) {
          seen[j] = true;
          stack.push_back(j);
        }
      }
    }
    return seen;
  };
  for (int v = 0; v < def.node_size(); ++v) {
    if (!IsVariable(def.node(v).op())) continue;
    const Uses uses = UsesOf(def, view, v);
    for (int u : uses.updates) {
      const std::vector<bool> after_update = reaches(u);
      NodeDef* update = def.mutable_node(u);
      absl::flat_hash_set<std::string> inputs(update->input().begin(), update->input().end());
      for (int h : uses.holders) {
        if (h == u || after_update[h]) continue;
        const std::string control = absl::StrCat("^", def.node(h).name());
        if (inputs.insert(control).second) {
          update->add_input(control);
          next[h].push_back(u);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace towerflow
