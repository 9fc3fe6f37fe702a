#include "runtime/constant_folding.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/memory_types.h"
#include "framework/node_def_util.h"
#include "framework/rendezvous.h"
#include "graph/graph.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"
#include "runtime/executor.h"
#include "runtime/graph_view.h"

namespace towerflow {

void MarkAncestors(const GraphView& view, const GraphDef& def, std::vector<int> from,
                   std::vector<bool>* marked) {
  while (!from.empty()) {
    const int i = from.back();
    from.pop_back();
    for (const std::string& in : def.node(i).input()) {
      absl::StatusOr<TensorId> id = ParseTensorName(in);
      const int p = id.ok() ? view.Find(id->node) : -1;
      if (p >= 0 && !(*marked)[p]) {
        (*marked)[p] = true;
        from.push_back(p);
      }
    }
  }
}

namespace {

constexpr int64_t kMaxFoldedBytes = int64_t{10} << 20;  // TF's default limit

bool IsConstant(const NodeDef& n) {
  return (n.op() == "Const" || n.op() == "HostConst") && n.input_size() == 0;
}

// The output types of `n` when it may be evaluated once for every step: a
// stateless op with a kernel on `device_type`, outside control flow, not a
// feed, whose outputs are all values. Empty otherwise.
bool ExactType(DataType t) { return DataTypeIsInteger(t) || t == DT_BOOL; }

DataTypeVector FoldableOutputTypes(const NodeDef& n, const Device& device, const Device& evaluator,
                                   bool exact_only) {
  static const auto* const kNever = new std::set<std::string>{
      "Const",    "HostConst",      "Placeholder", "PlaceholderV2", "PlaceholderWithDefault",
      "Switch",   "RefSwitch",      "Merge",       "RefMerge",      "Enter",
      "RefEnter", "Exit",           "RefExit",     "NextIteration", "RefNextIteration",
      "LoopCond", "ControlTrigger", "NoOp",        "Identity"};
  if (n.op().empty() || n.op()[0] == '_' || kNever->count(n.op())) return {};
  const OpRegistrationData* reg = OpRegistry::Global()->Find(n.op());
  if (reg == nullptr || reg->op_def.is_stateful()) return {};
  DataTypeVector in_types, out_types;
  if (!InOutTypesForNode(n, reg->op_def, &in_types, &out_types).ok()) return {};
  for (DataType t : out_types) {
    if (t == DT_RESOURCE || t == DT_VARIANT || IsRefType(t)) return {};
  }
  if (!FindKernelDef(evaluator.device_type(), n).ok()) return {};
  if (exact_only) {
    MemoryTypeVector memory;
    if (device.has_device_memory() &&
        !MemoryTypesForNode(device, n, reg->op_def, nullptr, &memory).ok()) {
      return {};
    }
    for (size_t k = 0; k < out_types.size(); ++k) {
      const bool on_host = !device.has_device_memory() || memory[k] == MemoryType::kHost;
      if (!on_host && !ExactType(out_types[k])) return {};
    }
  }
  return out_types;
}

// A call frame that only takes fetches.
class FoldFrame final : public CallFrame {
 public:
  explicit FoldFrame(int n) : values_(n) {}
  absl::StatusOr<Tensor> GetArg(int index) const override {
    return absl::InvalidArgumentError("constant folding feeds nothing");
  }
  absl::Status SetRetval(int index, const Tensor& value) override {
    absl::MutexLock lock(&mu_);
    if (index < 0 || index >= static_cast<int>(values_.size())) {
      return absl::InvalidArgumentError("fetch index out of range");
    }
    values_[index] = value;
    return absl::OkStatus();
  }
  std::vector<Tensor> Take() {
    absl::MutexLock lock(&mu_);
    return std::move(values_);
  }

 private:
  absl::Mutex mu_;
  std::vector<Tensor> values_ ABSL_GUARDED_BY(mu_);
};

// Runs `def` (constants and foldable nodes, then one _Retval per wanted
// tensor) once on `device`.
absl::StatusOr<std::vector<Tensor>> Evaluate(const GraphDef& def, int num_fetches, Device* device,
                                             ThreadPool* pool) {
  auto graph = std::make_unique<Graph>();
  graph->set_allow_internal_names(true);
  TW_RETURN_IF_ERROR(ImportGraphDef(def, graph.get()));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                      Executor::Create(std::move(graph), device));
  Rendezvous rendezvous;
  FoldFrame frame(num_fetches);
  Executor::Args args;
  args.rendezvous = &rendezvous;
  args.call_frame = &frame;
  args.inter_op_pool = pool;
  absl::Notification done;
  absl::Status status;
  executor->RunAsync(args, [&](absl::Status s) {
    status = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  TW_RETURN_IF_ERROR(status);
  return frame.Take();
}

NodeDef ConstantNode(const std::string& name, const std::string& device, const Tensor& value,
                     bool host_const) {
  NodeDef c;
  c.set_name(name);
  c.set_op(host_const ? "HostConst" : "Const");
  c.set_device(device);
  (*c.mutable_attr())["dtype"].set_type(value.dtype());
  *(*c.mutable_attr())["value"].mutable_tensor() = value.AsProto();
  return c;
}

}  // namespace

absl::Status ReplaceWithConstants(const Device& device, int index,
                                  const std::vector<Tensor>& values, GraphDef* def) {
  const NodeDef node = def->node(index);
  const OpRegistrationData* reg = OpRegistry::Global()->Find(node.op());
  if (reg == nullptr)
    return absl::NotFoundError(absl::StrCat("Op type not registered '", node.op(), "'"));
  MemoryTypeVector memory;
  TW_RETURN_IF_ERROR(MemoryTypesForNode(device, node, reg->op_def, nullptr, &memory));
  if (memory.size() != values.size()) {
    return absl::InternalError(absl::StrCat("node ", node.name(), " has ", memory.size(),
                                            " outputs, folded into ", values.size()));
  }
  // An int32 (string, resource) output is in host memory by its type; any
  // other type only because the kernel said so.
  const auto host_const = [&](size_t k) {
    const DataType t = values[k].dtype();
    return device.has_device_memory() && memory[k] == MemoryType::kHost && t != DT_INT32 &&
           t != DT_STRING;
  };
  if (values.size() == 1) {
    *def->mutable_node(index) = ConstantNode(node.name(), node.device(), values[0], host_const(0));
    return absl::OkStatus();
  }
  absl::flat_hash_map<std::string, std::string> renamed;
  for (size_t k = 0; k < values.size(); ++k) {
    const std::string name = absl::StrCat(node.name(), "/_folded_", k);
    *def->add_node() = ConstantNode(name, node.device(), values[k], host_const(k));
    renamed[absl::StrCat(node.name(), ":", k)] = name;
    if (k == 0) renamed[node.name()] = name;
  }
  NodeDef noop;  // keeps the control edges that leave the node
  noop.set_name(node.name());
  noop.set_op("NoOp");
  noop.set_device(node.device());
  *def->mutable_node(index) = std::move(noop);
  for (NodeDef& n : *def->mutable_node()) {
    for (std::string& in : *n.mutable_input()) {
      auto it = renamed.find(in);
      if (it != renamed.end()) in = it->second;
    }
  }
  return absl::OkStatus();
}

absl::Status FoldConstants(Device* device, ThreadPool* pool, GraphDef* def, bool* changed,
                           const FoldOptions& options) {
  Device* evaluator = options.evaluator != nullptr ? options.evaluator : device;
  if (changed != nullptr) *changed = false;
  TW_ASSIGN_OR_RETURN(const GraphView view, GraphView::Build(*def));
  const int n = def->node_size();
  // constant[i]: a constant, or foldable with only constant inputs.
  std::vector<bool> constant(n);
  std::vector<DataTypeVector> foldable(n);  // the output types
  for (int i = 0; i < n; ++i) {
    constant[i] = IsConstant(def->node(i));
    foldable[i] = FoldableOutputTypes(def->node(i), *device, *evaluator, options.exact_only);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < n; ++i) {
      if (constant[i] || foldable[i].empty()) continue;
      bool all = true;
      for (const std::string& in : def->node(i).input()) {
        absl::StatusOr<TensorId> id = ParseTensorName(in);
        const int p = id.ok() ? view.Find(id->node) : -1;
        all = all && p >= 0 && constant[p];
      }
      if (all) constant[i] = grew = true;
    }
  }
  // The folded nodes a non-constant node reads: their values become
  // constants.
  std::vector<int> frontier;
  for (int i = 0; i < n; ++i) {
    if (!constant[i] || IsConstant(def->node(i))) continue;
    bool read_outside = view.HasControlConsumers(def->node(i).name());
    for (size_t k = 0; k < foldable[i].size(); ++k) {
      for (const auto& [c, input] : view.Consumers(def->node(i).name(), static_cast<int>(k))) {
        read_outside = read_outside || !constant[c];
      }
    }
    if (read_outside) frontier.push_back(i);
  }
  if (frontier.empty()) return absl::OkStatus();
  // The frontier's constant ancestors, evaluated together: one _Retval per
  // output of a frontier node.
  std::vector<bool> in_eval(n);
  for (int i : frontier) in_eval[i] = true;
  MarkAncestors(view, *def, frontier, &in_eval);
  GraphDef eval;
  for (int i = 0; i < n; ++i) {
    if (in_eval[i]) *eval.add_node() = def->node(i);
  }
  std::vector<int> first_retval;
  int num_retvals = 0;
  for (int i : frontier) {
    first_retval.push_back(num_retvals);
    for (size_t k = 0; k < foldable[i].size(); ++k) {
      NodeDef* r = eval.add_node();
      r->set_name(absl::StrCat("_fold_retval_", num_retvals));
      r->set_op("_Retval");
      r->set_device(def->node(i).device());
      r->add_input(absl::StrCat(def->node(i).name(), ":", k));
      (*r->mutable_attr())["T"].set_type(foldable[i][k]);
      (*r->mutable_attr())["index"].set_i(num_retvals++);
    }
  }
  absl::StatusOr<std::vector<Tensor>> values = Evaluate(eval, num_retvals, evaluator, pool);
  if (!values.ok()) return absl::OkStatus();  // the step reports it, naming the node
  // Replace the frontier; then keep only what a remaining node still needs.
  absl::flat_hash_set<std::string> made;  // the constants the folding made
  absl::flat_hash_set<std::string> folded;
  for (size_t f = 0; f < frontier.size(); ++f) {
    const int i = frontier[f];
    std::vector<Tensor> outputs(values->begin() + first_retval[f],
                                values->begin() + first_retval[f] + foldable[i].size());
    bool fits = true;
    for (const Tensor& v : outputs)
      fits = fits && v.IsInitialized() && v.TotalBytes() <= kMaxFoldedBytes;
    if (!fits) continue;
    const std::string name = def->node(i).name();
    const int before = def->node_size();
    TW_RETURN_IF_ERROR(ReplaceWithConstants(*device, i, outputs, def));
    made.insert(name);
    for (int k = before; k < def->node_size(); ++k) made.insert(def->node(k).name());
    folded.insert(name);
  }
  if (folded.empty()) return absl::OkStatus();
  if (changed != nullptr) *changed = true;
  // needed: every node that was not constant, what the folding made that
  // is read (a NoOp it made only when control edges leave it), a constant
  // nothing read (a target), and everything those read.
  absl::flat_hash_set<std::string> was_constant;
  absl::flat_hash_set<std::string> unread_constant;
  for (int i = 0; i < n; ++i) {
    if (!constant[i]) continue;
    const std::string& name = view.Name(i);
    was_constant.insert(name);
    const bool had_readers = view.HasControlConsumers(name) || view.AnyOutputRead(name);
    if (!had_readers && IsConstant(def->node(i))) unread_constant.insert(name);
  }
  TW_ASSIGN_OR_RETURN(const GraphView after, GraphView::Build(*def));
  std::vector<bool> needed(def->node_size());
  std::vector<int> kept;
  for (int i = 0; i < def->node_size(); ++i) {
    const NodeDef& node = def->node(i);
    const bool keep =
        made.contains(node.name())
            ? after.HasControlConsumers(node.name()) || after.AnyOutputRead(node.name())
            : !was_constant.contains(node.name()) || unread_constant.contains(node.name());
    if (keep) {
      needed[i] = true;
      kept.push_back(i);
    }
  }
  MarkAncestors(after, *def, kept, &needed);
  GraphDef out;
  for (int i = 0; i < def->node_size(); ++i) {
    if (needed[i]) *out.add_node() = std::move(*def->mutable_node(i));
  }
  def->mutable_node()->Swap(out.mutable_node());
  return absl::OkStatus();
}

}  // namespace towerflow
