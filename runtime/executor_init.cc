// Executor::Create: compiles the graph once into the items every step reads
// (runtime/executor_items.h): a kernel per node, its frame and input slots,
// its out-edges by slot, its control-flow role. Steps run in executor.cc.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/memory_types.h"
#include "graph/control_flow.h"
#include "runtime/executor.h"
#include "runtime/executor_items.h"

namespace towerflow {

Executor::Executor(std::unique_ptr<Graph> graph, Device* device)
    : graph_(std::move(graph)), device_(device) {}

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(std::unique_ptr<Graph> graph,
                                                           Device* device) {
  std::unique_ptr<Executor> ex(new Executor(std::move(graph), device));
  TW_RETURN_IF_ERROR(ex->Initialize());
  return ex;
}

namespace {

// Values cross the step's boundary only in the root frame: a loop's tensor
// is one per iteration.
absl::Status CheckBoundaryNode(const Node& node, const ControlFlowInfo& cf) {
  const std::string& op = node.type_string();
  const bool boundary = op == "_Arg" || op == "_Retval" || op == "_Send" || op == "_Recv" ||
                        op == "_HostSend" || op == "_HostRecv";
  const int frame = cf.frame_of[node.id()];
  if (!boundary || frame == 0) return absl::OkStatus();
  const std::string what = op == "_Retval" ? "fetched"
                           : op == "_Arg"  ? "fed"
                                           : "sent between devices";
  const Node* input = node.num_inputs() > 0 ? node.input_node(0) : nullptr;
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor ", input != nullptr ? absl::StrCat("'", input->name(), "' ") : "", "of node '",
      node.name(), "' would be ", what, " inside while loop '", cf.frames[frame].name,
      "', where it has one value per iteration; use the loop's result (its Exit) instead"));
}

}  // namespace

absl::Status Executor::Initialize() {
  TW_ASSIGN_OR_RETURN(const ControlFlowInfo cf, BuildControlFlowInfo(*graph_));
  frames_.resize(cf.frames.size());
  for (size_t f = 0; f < cf.frames.size(); ++f) {
    frames_[f].name = cf.frames[f].name;
    frames_[f].num_enters = cf.frames[f].num_enters;
  }
  const std::vector<Node*> nodes = graph_->nodes();
  std::vector<int> index_of(graph_->num_node_ids(), -1);
  items_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) index_of[nodes[i]->id()] = static_cast<int>(i);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* node = nodes[i];
    NodeItem& item = items_[i];
    item.node = node;
    const auto with_node = [&](const absl::Status& s) {
      return AttachNodeContext(s, *node, device_->name());
    };
    TW_RETURN_IF_ERROR(with_node(CheckBoundaryNode(*node, cf)));
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
        CreateKernel(device_, device_->device_type(), node->def(), node->op_def());
    if (!kernel.ok()) return with_node(kernel.status());
    item.kernel = *std::move(kernel);
    if (device_->has_device_memory()) {
      TW_RETURN_IF_ERROR(with_node(MemoryTypesForNode(*device_, node->def(), node->op_def(),
                                                      &item.input_memory, &item.output_memory)));
    }
    item.expensive = item.kernel->IsExpensive() && !device_->kernels_only_enqueue();
    item.async = item.kernel->IsAsync();
    item.num_inputs = node->num_inputs();
    for (int k = 0; k < item.num_inputs; ++k)
      item.ref_input.push_back(IsRefType(node->input_type(k)));
    const std::string& op = node->type_string();
    item.is_merge = IsMerge(*node);
    item.is_enter = IsEnter(*node);
    item.is_exit = IsExit(*node);
    item.is_next_iteration = IsNextIteration(*node);
    item.is_control_trigger = IsControlTrigger(*node);
    item.is_transfer = op == "_Send" || op == "_Recv" || op == "_HostSend" || op == "_HostRecv";
    item.may_leave_unset = IsSwitch(*node) || op == "_Recv" || op == "_HostRecv";
    if (item.is_enter) {
      int64_t parallel = 0;
      TW_RETURN_IF_ERROR(with_node(node->GetAttr("is_constant", &item.is_constant_enter)));
      TW_RETURN_IF_ERROR(with_node(node->GetAttr("parallel_iterations", &parallel)));
      if (parallel < 1 || parallel > (1 << 20)) {
        return with_node(absl::InvalidArgumentError(
            absl::StrCat("parallel_iterations must be in [1, 1048576], not ", parallel)));
      }
      item.parallel_iterations = static_cast<int>(parallel);
    }
    locked_ |= item.is_merge || item.is_enter || item.is_exit || item.is_next_iteration;
    // Frame-local numbering; the control-flow info maps node ids to frames.
    item.frame = cf.frame_of[node->id()];
    FrameInfo& frame = frames_[item.frame];
    item.local_id = static_cast<int>(frame.pending.size());
    item.input_start = frame.num_slots;
    frame.num_slots += item.num_inputs;
    int num_controls = 0;
    for (const Edge* e : node->in_edges()) num_controls += e->IsControlEdge() ? 1 : 0;
    frame.pending.push_back(item.is_merge ? 2 * num_controls + 1
                                          : static_cast<int>(node->in_edges().size()));
    if (node->in_edges().empty()) roots_.push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeItem& item = items_[i];
    if (item.is_enter) {
      for (const Edge* e : nodes[i]->out_edges()) {
        item.child_frame = items_[index_of[e->dst()->id()]].frame;
      }
      if (item.child_frame < 0) {
        // An Enter nothing in the step consumes still enters its frame.
        std::string frame_name;
        TW_RETURN_IF_ERROR(nodes[i]->GetAttr("frame_name", &frame_name));
        for (size_t f = 1; f < frames_.size(); ++f) {
          if (cf.frames[f].parent == item.frame && frames_[f].name == frame_name) {
            item.child_frame = static_cast<int>(f);
          }
        }
      }
    }
    std::vector<int> consumers(nodes[i]->num_outputs(), 0);
    for (const Edge* e : nodes[i]->out_edges()) {
      const int dst = index_of[e->dst()->id()];
      if (e->IsControlEdge()) {
        item.out_controls.push_back(dst);
      } else {
        item.out_edges.push_back({e->src_output(), dst, items_[dst].input_start + e->dst_input()});
        ++consumers[e->src_output()];
      }
    }
    // Input buffers (OpKernel::InputBuffer): an output whose one consumer
    // takes it in a buffer of its own, both in the root frame (a loop's
    // iterations would share the buffer) and not a ref.
    for (const Edge* e : nodes[i]->out_edges()) {
      const NodeItem& dst = items_[index_of[e->dst()->id()]];
      if (e->IsControlEdge() || consumers[e->src_output()] != 1 || item.frame != 0 ||
          dst.frame != 0 || !dst.kernel->TakesInputBuffers() || dst.ref_input[e->dst_input()] ||
          IsRefType(nodes[i]->output_type(e->src_output()))) {
        continue;
      }
      item.output_sinks.resize(nodes[i]->num_outputs());
      item.output_sinks[e->src_output()] = {dst.kernel.get(), e->dst_input()};
    }
  }
  // Through ops that pass their input's buffer on as their output (a
  // gradient's Reshape): the input's producer writes into the consumer's
  // buffer when the op is its one consumer.
  const auto consumers_of = [&](const NodeItem& item, int output) {
    int n = 0;
    for (const NodeItem::OutEdge& e : item.out_edges) n += e.src_output == output ? 1 : 0;
    return n;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeItem& pass = items_[i];
      const std::string& op = nodes[i]->type_string();
      if (pass.output_sinks.empty() || pass.output_sinks[0].consumer == nullptr ||
          (op != "Identity" && op != "Reshape" && op != "Squeeze" && op != "ExpandDims")) {
        continue;
      }
      const Edge* in = nullptr;
      for (const Edge* e : nodes[i]->in_edges()) {
        if (!e->IsControlEdge() && e->dst_input() == 0) in = e;
      }
      if (in == nullptr) continue;
      NodeItem& src = items_[index_of[in->src()->id()]];
      const int o = in->src_output();
      if (src.frame != 0 || consumers_of(src, o) != 1 || IsRefType(in->src()->output_type(o)) ||
          (!src.output_sinks.empty() && src.output_sinks[o].consumer != nullptr)) {
        continue;
      }
      src.output_sinks.resize(in->src()->num_outputs());
      src.output_sinks[o] = pass.output_sinks[0];
      changed = true;
    }
  }
  // Run roots in graph order: the queue is a stack.
  std::reverse(roots_.begin(), roots_.end());
  return absl::OkStatus();
}

}  // namespace towerflow
