#include "runtime/step_graph.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "graph/attr_value_util.h"
#include "graph/node_def_util.h"

namespace towerflow {
namespace {

struct TensorRef {
  const Node* node;
  int index;
  bool operator==(const TensorRef& o) const { return node == o.node && index == o.index; }
  template <typename H>
  friend H AbslHashValue(H h, const TensorRef& t) {
    return H::combine(std::move(h), t.node, t.index);
  }
};

absl::StatusOr<TensorRef> ResolveTensor(const Graph& graph, const std::string& name,
                                        const char* what) {
  TW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
  if (id.IsControl()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "' is not a tensor name"));
  }
  const Node* node = graph.FindNode(id.node);
  if (node == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(what, " '", name, "' names node '", id.node, "', which is not in the graph"));
  }
  if (id.index >= node->num_outputs()) {
    if (node->num_outputs() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " '", name, "': node '", id.node, "' (", node->type_string(),
                       ") has no outputs; run it as a target instead"));
    }
    return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "': node '", id.node,
                                                   "' has only ", node->num_outputs(), " outputs"));
  }
  return TensorRef{node, id.index};
}

// Builds the per-device GraphDefs; see the header.
class StepGraphBuilder {
 public:
  StepGraphBuilder(const Graph& graph, const Placement& placement)
      : graph_(graph), placement_(placement) {}

  absl::StatusOr<StepGraphs> Build(const std::vector<std::string>& feeds,
                                   const std::vector<std::string>& fetches,
                                   const std::vector<std::string>& targets) {
    StepGraphs out;
    for (size_t i = 0; i < feeds.size(); ++i) {
      TW_ASSIGN_OR_RETURN(TensorRef t, ResolveTensor(graph_, feeds[i], "Feed"));
      if (!fed_.emplace(t, static_cast<int>(i)).second) {
        return absl::InvalidArgumentError(absl::StrCat("Feed '", feeds[i], "' is given twice"));
      }
      out.feed_dtypes.push_back(BaseType(t.node->output_type(t.index)));
      out.feed_shapes.push_back(t.node->output_shape(t.index));
    }
    std::vector<TensorRef> fetch_refs;
    for (const std::string& f : fetches) {
      TW_ASSIGN_OR_RETURN(TensorRef t, ResolveTensor(graph_, f, "Fetch"));
      fetch_refs.push_back(t);
    }
    std::vector<const Node*> target_nodes;
    for (const std::string& t : targets) {
      const std::string name = !t.empty() && t[0] == '^' ? t.substr(1) : t;
      const Node* node = graph_.FindNode(name);
      if (node == nullptr) {
        return absl::NotFoundError(
            absl::StrCat("Target '", t, "' names a node that is not in the graph"));
      }
      target_nodes.push_back(node);
    }
    Prune(fetch_refs, target_nodes);
    for (const Node* n : graph_.nodes()) {
      if (needed_.contains(n)) TW_RETURN_IF_ERROR(EmitNode(*n));
    }
    absl::flat_hash_map<TensorRef, int> retval_of;
    for (const TensorRef& t : fetch_refs) {
      auto [it, added] = retval_of.emplace(t, out.num_retvals);
      if (added) {
        const Source src = SourceOf(t);
        NodeDef* r = NewNode(src.device, absl::StrCat("_retval_", out.num_retvals), "_Retval");
        r->add_input(src.tensor);
        SetAttrValue(BaseType(t.node->output_type(t.index)), &(*r->mutable_attr())["T"]);
        SetAttrValue(int64_t{out.num_retvals}, &(*r->mutable_attr())["index"]);
        ++out.num_retvals;
      }
      out.fetch_retval.push_back(it->second);
    }
    out.partitions = std::move(partitions_);
    for (auto& [device, def] : out.partitions) *def.mutable_versions() = graph_.versions();
    return out;
  }

 private:
  // Where a value comes from in the step graph: a fed _Arg or a node output.
  struct Source {
    std::string tensor;  // "node:1" or "_arg_0"
    Device* device;
  };

  void Prune(const std::vector<TensorRef>& fetches, const std::vector<const Node*>& targets) {
    std::vector<const Node*> stack;
    const auto visit = [&](const Node* n) {
      if (needed_.insert(n).second) stack.push_back(n);
    };
    for (const TensorRef& t : fetches) {
      if (!fed_.contains(t)) visit(t.node);
    }
    for (const Node* n : targets) visit(n);
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      for (const Edge* e : n->in_edges()) {
        if (e->IsControlEdge() || !fed_.contains(TensorRef{e->src(), e->src_output()})) {
          visit(e->src());
        }
      }
    }
  }

  Source SourceOf(const TensorRef& t) {
    auto fed = fed_.find(t);
    if (fed == fed_.end()) {
      return Source{TensorIdString(t.node->name(), t.index), placement_.at(t.node->name())};
    }
    const int i = fed->second;
    Device* device = placement_.at(t.node->name());
    auto [it, added] = arg_names_.emplace(i, "");
    if (added) {
      it->second = absl::StrCat("_arg_", i);
      NodeDef* a = NewNode(device, it->second, "_Arg");
      SetAttrValue(BaseType(t.node->output_type(t.index)), &(*a->mutable_attr())["T"]);
      SetAttrValue(int64_t{i}, &(*a->mutable_attr())["index"]);
    }
    return Source{it->second, device};
  }

  absl::Status EmitNode(const Node& n) {
    Device* device = placement_.at(n.name());
    NodeDef def = n.def();
    def.clear_input();
    def.set_device(device->name());
    std::vector<const Edge*> data(n.num_inputs(), nullptr);
    std::vector<const Edge*> controls;
    for (const Edge* e : n.in_edges()) {
      if (e->IsControlEdge()) {
        controls.push_back(e);
      } else {
        data[e->dst_input()] = e;
      }
    }
    for (int i = 0; i < n.num_inputs(); ++i) {
      if (data[i] == nullptr) {
        return absl::InternalError(absl::StrCat("node '", n.name(), "' lacks input ", i));
      }
      const TensorRef t{data[i]->src(), data[i]->src_output()};
      def.add_input(Transfer(SourceOf(t), device, BaseType(t.node->output_type(t.index))));
    }
    for (const Edge* e : controls) {
      Device* src_device = placement_.at(e->src()->name());
      def.add_input(src_device == device ? absl::StrCat("^", e->src()->name())
                                         : absl::StrCat("^", ControlTransfer(*e->src(), device)));
    }
    *partitions_[device->name()].add_node() = std::move(def);
    return absl::OkStatus();
  }

  // The name under which `src` is available on `dst`: itself on its own
  // device, else a _Recv (made once per tensor and destination).
  std::string Transfer(const Source& src, Device* dst, DataType dtype) {
    if (src.device == dst) return src.tensor;
    auto [it, added] = recv_names_.emplace(std::make_pair(src.tensor, dst), "");
    if (!added) return it->second;
    const int k = transfer_count_++;
    const std::string edge = absl::StrCat("edge_", k, "_", src.tensor);
    NodeDef* send = NewNode(src.device, absl::StrCat("_send_", k), "_Send");
    send->add_input(src.tensor);
    SetAttrValue(dtype, &(*send->mutable_attr())["T"]);
    SetTransferAttrs(edge, src.device, dst, send);
    NodeDef* recv = NewNode(dst, absl::StrCat("_recv_", k), "_Recv");
    SetAttrValue(dtype, &(*recv->mutable_attr())["tensor_type"]);
    SetTransferAttrs(edge, src.device, dst, recv);
    it->second = recv->name();
    return it->second;
  }

  // A control edge across devices: a dummy scalar made after `src` and sent.
  std::string ControlTransfer(const Node& src, Device* dst) {
    const std::string key = absl::StrCat("^", src.name());
    auto found = recv_names_.find(std::make_pair(key, dst));
    if (found != recv_names_.end()) return found->second;
    Device* src_device = placement_.at(src.name());
    NodeDef* dummy = NewNode(src_device, absl::StrCat("_ctrl_", transfer_count_), "Const");
    dummy->add_input(key);
    SetAttrValue(DT_FLOAT, &(*dummy->mutable_attr())["dtype"]);
    *(*dummy->mutable_attr())["value"].mutable_tensor() = MakeScalarTensorProto<float>(0.0f);
    const std::string recv = Transfer(Source{dummy->name(), src_device}, dst, DT_FLOAT);
    recv_names_[std::make_pair(key, dst)] = recv;
    return recv;
  }

  static void SetTransferAttrs(const std::string& edge, Device* src, Device* dst, NodeDef* def) {
    auto& attr = *def->mutable_attr();
    SetAttrValue(edge, &attr["tensor_name"]);
    SetAttrValue(src->name(), &attr["send_device"]);
    SetAttrValue(src->incarnation(), &attr["send_device_incarnation"]);
    SetAttrValue(dst->name(), &attr["recv_device"]);
    SetAttrValue(false, &attr["client_terminated"]);
  }

  NodeDef* NewNode(Device* device, std::string name, const char* op) {
    NodeDef* def = partitions_[device->name()].add_node();
    def->set_name(std::move(name));
    def->set_op(op);
    def->set_device(device->name());
    return def;
  }

  const Graph& graph_;
  const Placement& placement_;
  absl::flat_hash_map<TensorRef, int> fed_;
  absl::flat_hash_set<const Node*> needed_;
  absl::flat_hash_map<int, std::string> arg_names_;
  absl::flat_hash_map<std::pair<std::string, Device*>, std::string> recv_names_;
  int transfer_count_ = 0;
  std::map<std::string, GraphDef> partitions_;
};

}  // namespace

absl::StatusOr<StepGraphs> BuildStepGraphs(const Graph& graph, const Placement& placement,
                                           const std::vector<std::string>& feeds,
                                           const std::vector<std::string>& fetches,
                                           const std::vector<std::string>& targets) {
  return StepGraphBuilder(graph, placement).Build(feeds, fetches, targets);
}

}  // namespace towerflow
