#include "runtime/step_graph.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "framework/attr_value_util.h"
#include "framework/memory_types.h"
#include "framework/node_def_util.h"
#include "graph/control_flow.h"
#include "graph/op_registry.h"

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
  StepGraphBuilder(const Graph& graph, const Placement& placement, Device* frame_device)
      : graph_(graph), placement_(placement), frame_device_(frame_device) {}

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
    TW_RETURN_IF_ERROR(CheckCollectives());
    OrderCrossProcessCollectives();
    for (const Node* n : graph_.nodes()) {
      if (needed_.contains(n)) TW_RETURN_IF_ERROR(EmitNode(*n));
    }
    absl::flat_hash_map<TensorRef, int> retval_of;
    for (const TensorRef& t : fetch_refs) {
      auto [it, added] = retval_of.emplace(t, out.num_retvals);
      if (added) {
        TW_ASSIGN_OR_RETURN(const Source src, SourceOf(t));
        const DataType dtype = BaseType(t.node->output_type(t.index));
        Device* frame = FrameDevice(src.device);
        NodeDef* r = NewNode(frame, absl::StrCat("_retval_", out.num_retvals), "_Retval");
        SetAttrValue(dtype, &(*r->mutable_attr())["T"]);
        SetAttrValue(int64_t{out.num_retvals}, &(*r->mutable_attr())["index"]);
        MemoryTypeVector retval_input;
        TW_ASSIGN_OR_RETURN(const OpRegistrationData* op, OpRegistry::Global()->LookUp("_Retval"));
        TW_RETURN_IF_ERROR(MemoryTypesForNode(*frame, *r, op->op_def, &retval_input, nullptr));
        r->add_input(Transfer(src, frame, retval_input[0] == MemoryType::kHost, dtype));
        ++out.num_retvals;
      }
      out.fetch_retval.push_back(it->second);
    }
    TW_RETURN_IF_ERROR(CheckEveryRecvHasASend());
    out.partitions = std::move(partitions_);
    for (auto& [device, def] : out.partitions) *def.mutable_versions() = graph_.versions();
    return out;
  }

 private:
  // Where a value comes from in the step graph: a fed _Arg or a node output.
  struct Source {
    std::string tensor;  // "node:1" or "_arg_0"
    Device* device;
    bool on_host;  // in host memory (always on CPU devices)
  };

  // Whether output `index` of `node` lives in host memory on its device.
  absl::StatusOr<bool> OutputOnHost(const Node& node, int index) {
    auto [it, added] = output_memory_.try_emplace(&node);
    if (added) {
      TW_RETURN_IF_ERROR(MemoryTypesForNode(*placement_.at(node.name()), node.def(), node.op_def(),
                                            nullptr, &it->second));
    }
    return it->second[index] == MemoryType::kHost;
  }

  // The memory type of output 0 of an inserted node (_Arg, _Const).
  static absl::StatusOr<bool> InsertedOutputOnHost(const Device& device, const NodeDef& def) {
    TW_ASSIGN_OR_RETURN(const OpRegistrationData* op, OpRegistry::Global()->LookUp(def.op()));
    MemoryTypeVector out;
    TW_RETURN_IF_ERROR(MemoryTypesForNode(device, def, op->op_def, nullptr, &out));
    return out[0] == MemoryType::kHost;
  }

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

  // Note [Collective order]
  // The processes of a cluster match their collectives by order: each must
  // issue the step's MpiAllReduce, MpiAllGather and MpiBroadcast ops in one
  // order, or one process's sum of tower 0's gradient meets another's of
  // tower 1 (the agreement catches different shapes, not equal ones). Two
  // such ops that nothing orders would run in whichever order the executor
  // reaches them, so each is made to wait for the one before it in a
  // topological order of the step, the smallest node id first among the
  // ready ones: the same order on every process, since every process builds
  // the same graph, and never a cycle. (Horovod matches its collectives by
  // name in a coordinator instead.) Collectives inside a while loop are
  // left as they are: an edge cannot cross into a loop's frame.
  void OrderCrossProcessCollectives() {
    const auto is_collective = [](const Node& n) {
      return n.IsOp("MpiAllReduce") || n.IsOp("MpiAllGather") || n.IsOp("MpiBroadcast");
    };
    int count = 0;
    for (const Node* n : needed_) count += is_collective(*n);
    if (count < 2) return;
    // Malformed control flow is the executor's to report.
    const absl::StatusOr<ControlFlowInfo> cf = BuildControlFlowInfo(graph_);
    if (!cf.ok()) return;
    // The step's edges: between nodes it runs, not cut by a feed, and not a
    // loop's back edge.
    const auto in_step = [&](const Edge* e) {
      return needed_.contains(e->src()) && needed_.contains(e->dst()) &&
             !IsNextIteration(*e->src()) &&
             (e->IsControlEdge() || !fed_.contains(TensorRef{e->src(), e->src_output()}));
    };
    absl::flat_hash_map<const Node*, int> pending;
    using Ready = std::pair<int, const Node*>;
    std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
    for (const Node* n : needed_) {
      int inputs = 0;
      for (const Edge* e : n->in_edges()) inputs += in_step(e);
      pending[n] = inputs;
      if (inputs == 0) ready.emplace(n->id(), n);
    }
    const Node* previous = nullptr;
    while (!ready.empty()) {
      const Node* n = ready.top().second;
      ready.pop();
      if (is_collective(*n) && cf->frame_of[n->id()] == 0) {
        if (previous != nullptr) after_[n] = previous;
        previous = n;
      }
      for (const Edge* e : n->out_edges()) {
        if (in_step(e) && --pending[e->dst()] == 0) ready.emplace(e->dst()->id(), e->dst());
      }
    }
  }

  // A collective whose members the step does not all run would wait for
  // ever: every shared_name's NcclAllReduce ops must agree on num_devices
  // and the step must run that many of them.
  absl::Status CheckCollectives() const {
    struct Group {
      int64_t size = 0;
      std::vector<std::string> nodes;
    };
    std::map<std::string, Group> groups;
    for (const Node* n : graph_.nodes()) {
      if (!needed_.contains(n) || !n->IsOp("NcclAllReduce")) continue;
      std::string shared_name;
      int64_t size = 0;
      TW_RETURN_IF_ERROR(GetNodeAttr(n->def(), "shared_name", &shared_name));
      TW_RETURN_IF_ERROR(GetNodeAttr(n->def(), "num_devices", &size));
      Group& g = groups[shared_name];
      if (!g.nodes.empty() && g.size != size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NcclAllReduce '", n->name(), "' has num_devices = ", size, " but '", g.nodes[0],
            "', of the same shared_name '", shared_name, "', has ", g.size));
      }
      g.size = size;
      g.nodes.push_back(n->name());
    }
    for (const auto& [shared_name, g] : groups) {
      if (static_cast<int64_t>(g.nodes.size()) != g.size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NcclAllReduce shared_name '", shared_name, "' has num_devices = ", g.size,
            " but this step runs ", g.nodes.size(), " of its ops (", absl::StrJoin(g.nodes, ", "),
            "); an all-reduce completes only when all its members run in the same step"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Source> SourceOf(const TensorRef& t) {
    auto fed = fed_.find(t);
    Device* const node_device = placement_.at(t.node->name());
    if (fed == fed_.end()) {
      TW_ASSIGN_OR_RETURN(bool on_host, OutputOnHost(*t.node, t.index));
      return Source{TensorIdString(t.node->name(), t.index), node_device, on_host};
    }
    Device* const device = FrameDevice(node_device);
    const int i = fed->second;
    auto [it, added] = arg_names_.emplace(i, Source{});
    if (added) {
      const std::string name = absl::StrCat("_arg_", i);
      NodeDef* a = NewNode(device, name, "_Arg");
      SetAttrValue(BaseType(t.node->output_type(t.index)), &(*a->mutable_attr())["T"]);
      SetAttrValue(int64_t{i}, &(*a->mutable_attr())["index"]);
      TW_ASSIGN_OR_RETURN(bool on_host, InsertedOutputOnHost(*device, *a));
      it->second = Source{name, device, on_host};
    }
    return it->second;
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
    MemoryTypeVector input_memory;
    TW_RETURN_IF_ERROR(MemoryTypesForNode(*device, n.def(), n.op_def(), &input_memory, nullptr));
    for (int i = 0; i < n.num_inputs(); ++i) {
      if (data[i] == nullptr) {
        return absl::InternalError(absl::StrCat("node '", n.name(), "' lacks input ", i));
      }
      const TensorRef t{data[i]->src(), data[i]->src_output()};
      TW_ASSIGN_OR_RETURN(Source src, SourceOf(t));
      def.add_input(Transfer(src, device, input_memory[i] == MemoryType::kHost,
                             BaseType(t.node->output_type(t.index))));
    }
    std::vector<const Node*> after;
    for (const Edge* e : controls) after.push_back(e->src());
    if (auto it = after_.find(&n);
        it != after_.end() && std::find(after.begin(), after.end(), it->second) == after.end()) {
      after.push_back(it->second);
    }
    for (const Node* src : after) {
      Device* src_device = placement_.at(src->name());
      def.add_input(src_device == device ? absl::StrCat("^", src->name())
                                         : absl::StrCat("^", ControlTransfer(*src, device)));
    }
    *partitions_[device->name()].add_node() = std::move(def);
    return absl::OkStatus();
  }

  // The name under which `src` is available on `dst` in host memory
  // (`dst_on_host`) or the device's own: itself on its own device and
  // memory, else a _Recv (made once per tensor, destination and memory).
  // A host-memory end on a device with memory of its own is a _HostSend or
  // _HostRecv; a _Recv copies when the two ends' memories differ.
  std::string Transfer(const Source& src, Device* dst, bool dst_on_host, DataType dtype) {
    dst_on_host = dst_on_host || !dst->has_device_memory();
    if (src.device == dst && src.on_host == dst_on_host) return src.tensor;
    auto [it, added] = recv_names_.emplace(std::make_tuple(src.tensor, dst, dst_on_host), "");
    if (!added) return it->second;
    const int k = transfer_count_++;
    const std::string edge = absl::StrCat("edge_", k, "_", src.tensor);
    const bool host_send = src.on_host && src.device->has_device_memory();
    const bool host_recv = dst_on_host && dst->has_device_memory();
    NodeDef* send =
        NewNode(src.device, absl::StrCat("_send_", k), host_send ? "_HostSend" : "_Send");
    send->add_input(src.tensor);
    SetAttrValue(dtype, &(*send->mutable_attr())["T"]);
    SetTransferAttrs(edge, src.device, dst, send);
    NodeDef* recv = NewNode(dst, absl::StrCat("_recv_", k), host_recv ? "_HostRecv" : "_Recv");
    SetAttrValue(dtype, &(*recv->mutable_attr())["tensor_type"]);
    SetTransferAttrs(edge, src.device, dst, recv);
    it->second = recv->name();
    return it->second;
  }

  // A control edge across devices: a dummy scalar made after `src` and sent
  // (an int32, which stays in host memory on every device, so nothing is
  // copied).
  std::string ControlTransfer(const Node& src, Device* dst) {
    const std::string key = absl::StrCat("^", src.name());
    const auto recv_key = std::make_tuple(key, dst, true);
    auto found = recv_names_.find(recv_key);
    if (found != recv_names_.end()) return found->second;
    Device* src_device = placement_.at(src.name());
    NodeDef* dummy = NewNode(src_device, absl::StrCat("_ctrl_", transfer_count_), "Const");
    dummy->add_input(key);
    SetAttrValue(DT_INT32, &(*dummy->mutable_attr())["dtype"]);
    *(*dummy->mutable_attr())["value"].mutable_tensor() = MakeScalarTensorProto<int32_t>(0);
    const std::string recv = Transfer(Source{dummy->name(), src_device, true}, dst, true, DT_INT32);
    recv_names_[recv_key] = recv;
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

  // A _Recv waits until its _Send (same rendezvous key) runs: one whose
  // _Send is not in the step — a GraphDef can hold a bare _Recv — would
  // wait forever, so the step is refused.
  absl::Status CheckEveryRecvHasASend() const {
    using Key = std::tuple<std::string, int64_t, std::string, std::string>;
    const auto key_of = [](const NodeDef& n) -> absl::StatusOr<Key> {
      Key k;
      TW_RETURN_IF_ERROR(GetNodeAttr(n, "send_device", &std::get<0>(k)));
      TW_RETURN_IF_ERROR(GetNodeAttr(n, "send_device_incarnation", &std::get<1>(k)));
      TW_RETURN_IF_ERROR(GetNodeAttr(n, "recv_device", &std::get<2>(k)));
      TW_RETURN_IF_ERROR(GetNodeAttr(n, "tensor_name", &std::get<3>(k)));
      return k;
    };
    const auto is = [](const NodeDef& n, const char* a, const char* b) {
      return n.op() == a || n.op() == b;
    };
    absl::flat_hash_set<Key> sent;
    for (const auto& [device, def] : partitions_) {
      for (const NodeDef& n : def.node()) {
        if (!is(n, "_Send", "_HostSend")) continue;
        TW_ASSIGN_OR_RETURN(Key k, key_of(n));
        sent.insert(std::move(k));
      }
    }
    for (const auto& [device, def] : partitions_) {
      for (const NodeDef& n : def.node()) {
        if (!is(n, "_Recv", "_HostRecv")) continue;
        TW_ASSIGN_OR_RETURN(const Key k, key_of(n));
        if (!sent.contains(k)) {
          return absl::InvalidArgumentError(
              absl::StrCat("Node '", n.name(), "' (", n.op(), ") waits for tensor '",
                           std::get<3>(k), "' from ", std::get<0>(k),
                           ", which no _Send of this step sends: the step would "
                           "never finish"));
        }
      }
    }
    return absl::OkStatus();
  }

  // Where the _Arg or _Retval of a tensor on `device` runs.
  Device* FrameDevice(Device* device) const {
    if (frame_device_ == nullptr) return device;
    const DeviceSpec& a = frame_device_->parsed_name();
    const DeviceSpec& b = device->parsed_name();
    return a.job == b.job && a.replica == b.replica && a.task == b.task ? device : frame_device_;
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
  Device* const frame_device_;
  absl::flat_hash_map<TensorRef, int> fed_;
  absl::flat_hash_set<const Node*> needed_;
  // A collective -> the one it waits for (Note [Collective order]).
  absl::flat_hash_map<const Node*, const Node*> after_;
  absl::flat_hash_map<int, Source> arg_names_;
  absl::flat_hash_map<const Node*, MemoryTypeVector> output_memory_;
  absl::flat_hash_map<std::tuple<std::string, Device*, bool>, std::string> recv_names_;
  int transfer_count_ = 0;
  std::map<std::string, GraphDef> partitions_;
};

}  // namespace

absl::StatusOr<StepGraphs> BuildStepGraphs(const Graph& graph, const Placement& placement,
                                           const std::vector<std::string>& feeds,
                                           const std::vector<std::string>& fetches,
                                           const std::vector<std::string>& targets,
                                           Device* frame_device) {
  return StepGraphBuilder(graph, placement, frame_device).Build(feeds, fetches, targets);
}

}  // namespace towerflow
