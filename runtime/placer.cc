#include "runtime/placer.h"

#include <iostream>
#include <numeric>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "graph/control_flow.h"

namespace towerflow {
namespace {

constexpr char kColocationPrefix[] = "loc:@";

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);  // lowest id is the root
  }

 private:
  std::vector<int> parent_;
};

bool CarriesVariable(DataType t) { return IsRefType(t) || t == DT_RESOURCE; }

std::string DeviceList(const std::vector<Device*>& devices) {
  return absl::StrJoin(devices, ", ",
                       [](std::string* out, const Device* d) { absl::StrAppend(out, d->name()); });
}

// Whether `node` can run on `type`. Ops with no kernel anywhere constrain
// nothing (see the header).
bool Supports(const Node& node, const std::string& type, bool has_any_kernel) {
  return !has_any_kernel || FindKernelDef(type, node.def()).ok();
}

class GroupPlacer {
 public:
  GroupPlacer(const DeviceMgr& devices, const PlacerOptions& options)
      : devices_(devices), options_(options) {}

  // Chooses the device of one colocation group. `loose` (a while loop's
  // group) lets the first request win over conflicting ones.
  absl::StatusOr<Device*> Place(const std::vector<const Node*>& members, const Placement& placed,
                                bool loose) {
    for (const Node* n : members) {
      auto it = placed.find(n->name());
      if (it != placed.end()) return it->second;
    }
    const Node* requester = nullptr;
    DeviceSpec spec;
    for (const Node* n : members) {
      if (n->requested_device().empty()) continue;
      absl::StatusOr<DeviceSpec> s = DeviceSpec::Parse(n->requested_device());
      if (!s.ok()) return AddErrorContext(s.status(), absl::StrCat("node '", n->name(), "'"));
      if (requester != nullptr && !Compatible(spec, *s)) {
        if (options_.allow_soft_placement || loose) continue;
        return absl::InvalidArgumentError(
            absl::StrCat("Cannot colocate nodes '", requester->name(), "' and '", n->name(),
                         "': Cannot merge devices with incompatible requests: '", spec.ToString(),
                         "' and '", s->ToString(), "'"));
      }
      spec.MergeFrom(*s);
      if (requester == nullptr) requester = n;
    }
    if (!spec.job && !options_.default_task.empty()) {
      spec.job = options_.default_task.job;
      spec.replica = options_.default_task.replica;
      spec.task = options_.default_task.task;
    }
    std::vector<bool> has_kernel;
    for (const Node* n : members) has_kernel.push_back(HasAnyKernel(*n));
    const auto supported = [&](Device* d) {
      for (size_t i = 0; i < members.size(); ++i) {
        if (!Supports(*members[i], d->device_type(), has_kernel[i])) return false;
      }
      return true;
    };
    const auto first_supported = [&](const DeviceSpec& want) -> Device* {
      for (Device* d : devices_.Matching(want)) {
        if (supported(d)) return d;
      }
      return nullptr;
    };
    if (Device* d = first_supported(spec)) return d;
    if (options_.allow_soft_placement) {
      DeviceSpec same_type;
      same_type.type = spec.type;
      if (spec.job) {
        DeviceSpec same_task = same_type;
        same_task.job = spec.job;
        same_task.replica = spec.replica;
        same_task.task = spec.task;
        if (Device* d = first_supported(same_task)) return d;
      }
      if (Device* d = first_supported(same_type)) return d;
      if (Device* d = first_supported(DeviceSpec())) return d;
    }
    return NoDeviceError(members, requester, spec, has_kernel);
  }

 private:
  // Two specs conflict when a field set in both differs.
  static bool Compatible(const DeviceSpec& a, const DeviceSpec& b) {
    const auto ok = [](const auto& x, const auto& y) { return !x || !y || *x == *y; };
    return ok(a.job, b.job) && ok(a.replica, b.replica) && ok(a.task, b.task) &&
           ok(a.type, b.type) && ok(a.id, b.id);
  }

  bool HasAnyKernel(const Node& node) const {
    for (Device* d : devices_.devices()) {
      if (FindKernelDef(d->device_type(), node.def()).ok()) return true;
    }
    // No device of a present type can run it; maybe none registered at all.
    for (const KernelDef* def : AllKernelDefs()) {
      if (def->op == node.type_string()) return true;
    }
    return false;
  }

  absl::Status NoDeviceError(const std::vector<const Node*>& members, const Node* requester,
                             const DeviceSpec& spec, const std::vector<bool>& has_kernel) const {
    const Node* who = requester != nullptr ? requester : members[0];
    const std::vector<Device*> matching = devices_.Matching(spec);
    if (matching.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot assign a device for operation '", who->name(),
                       "': Operation was explicitly assigned to ", spec.ToString(),
                       " but available devices are [ ", DeviceList(devices_.devices()),
                       " ]. Make sure the device specification refers to a valid device."));
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (!Supports(*members[i], matching[0]->device_type(), has_kernel[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Cannot assign a device for operation '", members[i]->name(), "' (",
            members[i]->type_string(), "): Could not satisfy explicit device specification '",
            spec.ToString(), "' because no supported kernel for ", matching[0]->device_type(),
            " devices is available."));
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot assign a device for operation '", who->name(), "'"));
  }

  const DeviceMgr& devices_;
  const PlacerOptions& options_;
};

}  // namespace

absl::Status PlaceGraph(const Graph& graph, const DeviceMgr& devices, const PlacerOptions& options,
                        Placement* placement) {
  UnionFind groups(graph.num_node_ids());
  const std::vector<Node*> nodes = graph.nodes();
  for (const Node* n : nodes) {
    if (const AttrValue* cls = n->FindAttr("_class")) {
      for (const std::string& loc : cls->list().s()) {
        if (!absl::StartsWith(loc, kColocationPrefix)) continue;
        const std::string target = loc.substr(sizeof(kColocationPrefix) - 1);
        const Node* other = graph.FindNode(target);
        if (other == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat("Node '", n->name(),
                                                         "' has a colocation constraint with '",
                                                         target, "', which is not in the graph"));
        }
        groups.Union(n->id(), other->id());
      }
    }
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) continue;
      if (CarriesVariable(e->src()->output_type(e->src_output())) &&
          CarriesVariable(n->input_type(e->dst_input()))) {
        groups.Union(n->id(), e->src()->id());
      }
    }
  }
  // A while loop runs on one device: its frame's nodes, with the Enters
  // into it, form one group (whose requests may disagree: the first wins).
  // Malformed control flow is left to the executor to report, if it runs.
  std::vector<bool> in_loop(graph.num_node_ids(), false);
  if (absl::StatusOr<ControlFlowInfo> cf = BuildControlFlowInfo(graph); cf.ok()) {
    for (const Node* n : nodes) {
      const int frame = cf->frame_of[n->id()];
      if (frame > 0) {
        groups.Union(n->id(), cf->frames[frame].first_enter->id());
        in_loop[n->id()] = true;
      }
      if (IsEnter(*n)) {
        in_loop[n->id()] = true;
        for (const Edge* e : n->out_edges()) groups.Union(n->id(), e->dst()->id());
      }
    }
  }
  absl::flat_hash_map<int, bool> loose;  // group root -> holds a loop
  for (const Node* n : nodes) loose[groups.Find(n->id())] |= in_loop[n->id()];
  absl::flat_hash_map<int, std::vector<const Node*>> members;
  std::vector<int> order;  // group roots in graph order
  for (const Node* n : nodes) {
    std::vector<const Node*>& m = members[groups.Find(n->id())];
    if (m.empty()) order.push_back(groups.Find(n->id()));
    m.push_back(n);
  }
  GroupPlacer placer(devices, options);
  Placement added;
  for (int root : order) {
    const std::vector<const Node*>& group = members[root];
    TW_ASSIGN_OR_RETURN(Device * device, placer.Place(group, *placement, loose[root]));
    for (const Node* n : group) {
      if (placement->contains(n->name())) continue;
      added[n->name()] = device;
      if (options.log_device_placement) {
        std::cerr << n->name() << ": (" << n->type_string() << "): " << device->name() << "\n";
      }
    }
  }
  placement->insert(added.begin(), added.end());
  return absl::OkStatus();
}

}  // namespace towerflow
