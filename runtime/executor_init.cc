// Executor::Create: compiles the graph once into the items every step reads
// (runtime/executor_internal.h): a kernel per node, its frame and input slots,
// its out-edges by slot, its control-flow role. Steps run in executor.cc.
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/memory_types.h"
#include "graph/control_flow.h"
#include "runtime/executor.h"
#include "runtime/executor_internal.h"

namespace towerflow {

Executor::Executor(std::unique_ptr<Graph> graph, Device* device)
    : graph_(std::move(graph)), device_(device) {}

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(std::unique_ptr<Graph> graph,
                                                           Device* device,
                                                           const Executor* kernels_from,
                                                           StatefulKernels* stateful) {
  std::unique_ptr<Executor> ex(new Executor(std::move(graph), device));
  TW_RETURN_IF_ERROR(ex->Initialize(
      kernels_from != nullptr && kernels_from->device_ == device ? kernels_from : nullptr,
      stateful));
  return ex;
}

namespace {

// The nodes through which values cross a step's boundary: feeds, fetches
// and transfers between devices.
bool IsStepBoundary(const Node& node) {
  const std::string& op = node.type_string();
  return op == "_Arg" || op == "_Retval" || op == "_Send" || op == "_Recv" || op == "_HostSend" ||
         op == "_HostRecv";
}

// Values cross the step's boundary only in the root frame: a loop's tensor
// is one per iteration.
absl::Status CheckBoundaryNode(const Node& node, const ControlFlowInfo& cf) {
  const std::string& op = node.type_string();
  const int frame = cf.frame_of[node.id()];
  if (!IsStepBoundary(node) || frame == 0) return absl::OkStatus();
  const std::string what = op == "_Retval" ? "fetched"
                           : op == "_Arg"  ? "fed"
                                           : "sent between devices";
  const Node* input = node.num_inputs() > 0 ? node.input_node(0) : nullptr;
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor ", input != nullptr ? absl::StrCat("'", input->name(), "' ") : "", "of node '",
      node.name(), "' would be ", what, " inside while loop '", cf.frames[frame].name,
      "', where it has one value per iteration; use the loop's result (its Exit) instead"));
}

// Whether a kernel made for `a` may serve `b`: the same op and attrs (a
// kernel is made from those and the input types, which the attrs fix).
bool SameKernel(const NodeDef& a, const NodeDef& b) {
  if (a.op() != b.op() || a.attr_size() != b.attr_size()) return false;
  for (const auto& [name, value] : a.attr()) {
    auto it = b.attr().find(name);
    if (it == b.attr().end() || it->second.SerializeAsString() != value.SerializeAsString()) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::shared_ptr<OpKernel>> StatefulKernels::FindOrMake(const Device* device,
                                                                      const NodeDef& def,
                                                                      const Make& make) {
  absl::MutexLock lock(&mu_);
  auto [it, added] = kernels_.try_emplace({device, def.name()});
  if (!added) {
    if (SameKernel(it->second.def, def)) return it->second.kernel;
    TW_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, make());  // not the node it was
    return std::shared_ptr<OpKernel>(std::move(kernel));
  }
  absl::StatusOr<std::unique_ptr<OpKernel>> kernel = make();
  if (!kernel.ok()) {
    kernels_.erase(it);
    return kernel.status();
  }
  it->second.def = def;
  it->second.kernel = *std::move(kernel);
  return it->second.kernel;
}

absl::Status Executor::Initialize(const Executor* kernels_from, StatefulKernels* stateful) {
  absl::flat_hash_map<std::string, const NodeItem*> lenders;
  if (kernels_from != nullptr) {
    for (const NodeItem& item : kernels_from->items_) lenders[item.node->name()] = &item;
  }
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
    if (auto lender = lenders.find(node->name());
        lender != lenders.end() && SameKernel(lender->second->node->def(), node->def())) {
      item.kernel = lender->second->kernel;
    }
    const auto make = [&] {
      return CreateKernel(device_, device_->device_type(), node->def(), node->op_def());
    };
    if (item.kernel == nullptr && stateful != nullptr && node->op_def().is_stateful() &&
        !IsStepBoundary(*node)) {
      absl::StatusOr<std::shared_ptr<OpKernel>> kernel =
          stateful->FindOrMake(device_, node->def(), make);
      if (!kernel.ok()) return with_node(kernel.status());
      item.kernel = *std::move(kernel);
    }
    if (item.kernel == nullptr) {
      absl::StatusOr<std::unique_ptr<OpKernel>> kernel = make();
      if (!kernel.ok()) return with_node(kernel.status());
      item.kernel = *std::move(kernel);
    }
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
    for (const Edge* e : nodes[i]->out_edges()) {
      const int dst = index_of[e->dst()->id()];
      if (e->IsControlEdge()) {
        item.out_controls.push_back(dst);
      } else {
        item.out_edges.push_back({e->src_output(), dst, items_[dst].input_start + e->dst_input()});
      }
    }
  }
  // Input buffers (OpKernel::InputBuffer): an output is written where its one
  // consumer wants it when that consumer takes input buffers, or, through an
  // op that passes its input's buffer on as its output (a gradient's
  // Reshape), where that op's output is written. Only in the root frame (a
  // loop's iterations would share the buffer), which has no cycles; never a
  // ref.
  const auto sink_of = [&](int i, int o) {
    for (;;) {
      const NodeItem& item = items_[i];
      if (item.frame != 0 || IsRefType(item.node->output_type(o))) return InputBufferSink{};
      const NodeItem::OutEdge* only = nullptr;
      for (const NodeItem::OutEdge& e : item.out_edges) {
        if (e.src_output != o) continue;
        if (only != nullptr) return InputBufferSink{};
        only = &e;
      }
      if (only == nullptr) return InputBufferSink{};
      const NodeItem& dst = items_[only->dst_item];
      const int input = only->dst_slot - dst.input_start;
      if (dst.frame != 0 || dst.ref_input[input]) return InputBufferSink{};
      if (dst.kernel->TakesInputBuffers()) return InputBufferSink{dst.kernel.get(), input};
      const std::string& op = dst.node->type_string();
      if (input != 0 ||
          (op != "Identity" && op != "Reshape" && op != "Squeeze" && op != "ExpandDims")) {
        return InputBufferSink{};
      }
      i = only->dst_item;
      o = 0;
    }
  };
  for (size_t i = 0; i < items_.size(); ++i) {
    for (int o = 0; o < nodes[i]->num_outputs(); ++o) {
      const InputBufferSink sink = sink_of(static_cast<int>(i), o);
      if (sink.consumer == nullptr) continue;
      items_[i].output_sinks.resize(nodes[i]->num_outputs());
      items_[i].output_sinks[o] = sink;
    }
  }
  // Run roots in graph order: the queue is a stack.
  std::reverse(roots_.begin(), roots_.end());
  return absl::OkStatus();
}

}  // namespace towerflow
