#include "graph/graph.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/attr_value_util.h"

namespace towerflow {

// ----------------------------------------------------------------------- Node

const Edge* Node::input_edge(int i) const {
  for (const Edge* e : in_edges_) {
    if (e->dst_input() == i && !e->IsControlEdge()) return e;
  }
  return nullptr;
}

Node* Node::input_node(int i) const {
  const Edge* e = input_edge(i);
  return e == nullptr ? nullptr : e->src();
}

const AttrValue* Node::FindAttr(absl::string_view name) const {
  auto it = def_.attr().find(std::string(name));
  return it == def_.attr().end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------- Graph

Graph::Graph(const OpRegistry* registry) : registry_(registry) {
  versions_.set_producer(kGraphDefVersion);
  versions_.set_min_consumer(0);
}

Graph::~Graph() = default;

absl::StatusOr<const OpRegistrationData*> Graph::LookUpOp(absl::string_view op) const {
  if (const OpRegistrationData* data = registry_->Find(op)) return data;
  auto it = function_ops_.find(op);
  if (it != function_ops_.end()) return it->second.get();
  return absl::NotFoundError(absl::StrCat("Op type not registered '", op, "'"));
}

absl::Status Graph::ResolveInputs(const NodeDef& def, const Node& node,
                                  std::vector<ResolvedInput>* inputs) const {
  int num_data = 0;
  bool seen_control = false;
  for (const std::string& input : def.input()) {
    TW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(input));
    if (id.IsControl()) {
      seen_control = true;
    } else if (seen_control) {
      return absl::InvalidArgumentError(
          absl::StrCat("Non-control input '", input, "' after a control input"));
    }
    Node* src = FindNode(id.node);
    if (src == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("Unknown input node '", input, "'"));
    }
    if (!id.IsControl()) {
      if (id.index >= src->num_outputs()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Connecting to invalid output ", id.index, " of source node ", src->name(),
                         " which has ", src->num_outputs(), " outputs"));
      }
      ++num_data;
    }
    inputs->push_back({src, id.index});
  }
  if (num_data != node.num_inputs()) {
    return absl::InvalidArgumentError(absl::StrCat("Expected ", node.num_inputs(), " inputs (",
                                                   DataTypeSliceString(node.input_types()),
                                                   "), got ", num_data));
  }
  int i = 0;
  for (const ResolvedInput& in : *inputs) {
    if (in.index == kControlSlot) continue;
    const DataType expected = node.input_type(i);
    const DataType actual = in.node->output_type(in.index);
    const bool ok = IsRefType(expected) ? actual == expected : BaseType(actual) == expected;
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input ", i, " was passed ", DataTypeString(actual), " from ",
                       TensorIdString(in.node->name(), in.index), ", incompatible with expected ",
                       DataTypeString(expected)));
    }
    ++i;
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> Graph::AddNode(NodeDef def) {
  if (def.name().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Node with op '", def.op(), "' has an empty name"));
  }
  const std::string where = absl::StrCat("Node '", def.name(), "'");
  const bool internal_name = allow_internal_names_ && def.name().size() > 1 &&
                             def.name()[0] == '_' && IsValidNodeName(def.name().substr(1));
  if (!IsValidNodeName(def.name()) && !internal_name) {
    return absl::InvalidArgumentError(absl::StrCat(where,
                                                   ": the name is not valid; node names match "
                                                   "[A-Za-z0-9.][A-Za-z0-9_>./-]*"));
  }
  if (names_.contains(def.name())) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the name is not unique in the graph"));
  }
  if (def.op().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, " has an empty op"));
  }
  absl::StatusOr<const OpRegistrationData*> reg = LookUpOp(def.op());
  if (!reg.ok()) return AddErrorContext(reg.status(), where);
  const std::string context = absl::StrCat(where, " (op '", def.op(), "')");

  auto node = absl::WrapUnique(new Node);
  node->registration_ = *reg;
  AddDefaultsToNodeDef((*reg)->op_def, &def);
  TW_RETURN_IF_ERROR(AddErrorContext(ValidateNodeDefAttrs(def, (*reg)->op_def), context));
  TW_RETURN_IF_ERROR(AddErrorContext(
      InOutTypesForNode(def, (*reg)->op_def, &node->input_types_, &node->output_types_), context));
  std::vector<ResolvedInput> inputs;
  TW_RETURN_IF_ERROR(AddErrorContext(ResolveInputs(def, *node, &inputs), context));

  def.clear_input();
  node->def_ = std::move(def);
  node->output_shapes_.resize(node->output_types_.size());
  node->id_ = static_cast<int>(nodes_.size());
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  names_[raw->name()] = raw;
  ++num_nodes_;
  int data_index = 0;
  absl::flat_hash_set<Node*> control_sources;
  for (const ResolvedInput& in : inputs) {
    if (in.index == kControlSlot) {
      if (control_sources.insert(in.node).second) AddControlEdge(in.node, raw);
    } else {
      AddEdgeInternal(in.node, in.index, raw, data_index++);
    }
  }
  const absl::Status shapes = RefineNodeShapes(*this, raw);
  if (!shapes.ok()) {
    RemoveNode(raw);
    return shapes;
  }
  return raw;
}

const Edge* Graph::AddEdgeInternal(Node* src, int x, Node* dst, int y) {
  auto edge = absl::WrapUnique(new Edge);
  edge->src_ = src;
  edge->dst_ = dst;
  edge->src_output_ = x;
  edge->dst_input_ = y;
  edge->id_ = static_cast<int>(edges_.size());
  const Edge* raw = edge.get();
  edges_.push_back(std::move(edge));
  src->out_edges_.push_back(raw);
  dst->in_edges_.push_back(raw);
  return raw;
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  for (const Edge* e : dst->in_edges_) {
    if (e->IsControlEdge() && e->src() == src) return e;
  }
  return AddEdgeInternal(src, kControlSlot, dst, kControlSlot);
}

absl::StatusOr<const Edge*> Graph::AddDataEdge(Node* src, int src_output, Node* dst,
                                               int dst_input) {
  if (src_output < 0 || src_output >= src->num_outputs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Node '", src->name(), "' has no output ", src_output));
  }
  if (dst_input < 0 || dst_input >= dst->num_inputs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Node '", dst->name(), "' has no input ", dst_input));
  }
  if (dst->input_edge(dst_input) != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input ", dst_input, " of node '", dst->name(), "' is already fed"));
  }
  const DataType expected = dst->input_type(dst_input);
  const DataType actual = src->output_type(src_output);
  if (IsRefType(expected) ? actual != expected : BaseType(actual) != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot feed ", DataTypeString(actual), " into input ", dst_input,
                     " of node '", dst->name(), "', which expects ", DataTypeString(expected)));
  }
  return AddEdgeInternal(src, src_output, dst, dst_input);
}

void Graph::RemoveEdge(const Edge* edge) {
  const auto drop = [edge](std::vector<const Edge*>* edges) {
    edges->erase(std::remove(edges->begin(), edges->end(), edge), edges->end());
  };
  drop(&edge->src()->out_edges_);
  drop(&edge->dst()->in_edges_);
  edges_[edge->id()].reset();
}

void Graph::SetOutputShape(Node* node, int i, PartialTensorShape shape) {
  node->output_shapes_[i] = std::move(shape);
}

void Graph::RemoveNode(Node* node) {
  // Copies: RemoveEdge edits the node's edge lists.
  const std::vector<const Edge*> in = node->in_edges_;
  const std::vector<const Edge*> out = node->out_edges_;
  for (const Edge* e : in) RemoveEdge(e);
  for (const Edge* e : out) RemoveEdge(e);
  collections_.RemoveNode(node);
  variable_store_.RemoveNode(node);
  names_.erase(node->name());
  --num_nodes_;
  nodes_[node->id()].reset();
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = names_.find(name);
  return it == names_.end() ? nullptr : it->second;
}

Node* Graph::FindNodeId(int id) const {
  if (id < 0 || id >= static_cast<int>(nodes_.size())) return nullptr;
  return nodes_[id].get();
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (const auto& n : nodes_) {
    if (n != nullptr) out.push_back(n.get());
  }
  return out;
}

void Graph::ToGraphDef(GraphDef* out, const GraphExportOptions& options) const {
  out->Clear();
  *out->mutable_versions() = versions_;
  if (debug_info_.ByteSizeLong() > 0) *out->mutable_debug_info() = debug_info_;
  if (library_.function_size() > 0 || library_.gradient_size() > 0 ||
      library_.registered_gradients_size() > 0) {
    *out->mutable_library() = library_;
  }
  for (const Node* node : nodes()) {
    NodeDef* nd = out->add_node();
    *nd = node->def_;
    std::vector<const Edge*> data, control;
    for (const Edge* e : node->in_edges_) {
      (e->IsControlEdge() ? control : data).push_back(e);
    }
    std::sort(data.begin(), data.end(),
              [](const Edge* a, const Edge* b) { return a->dst_input() < b->dst_input(); });
    std::sort(control.begin(), control.end(),
              [](const Edge* a, const Edge* b) { return a->src()->name() < b->src()->name(); });
    for (const Edge* e : data) nd->add_input(TensorIdString(e->src()->name(), e->src_output()));
    for (const Edge* e : control) nd->add_input(TensorIdString(e->src()->name(), kControlSlot));
    // Attrs at their default: always drop those TF 1.x does not know;
    // drop all of them when asked.
    const OpRegistrationData& reg = *node->registration_;
    for (const auto& attr : reg.op_def.attr()) {
      if (!attr.has_default_value()) continue;
      const bool strip = options.strip_default_attrs || reg.added_after_tf1.count(attr.name()) > 0;
      if (!strip) continue;
      auto it = nd->attr().find(attr.name());
      if (it != nd->attr().end() && AreAttrValuesEqual(it->second, attr.default_value())) {
        nd->mutable_attr()->erase(attr.name());
      }
    }
  }
}

namespace {

// Names of functions that `value` refers to (func attrs, nested in lists).
void CollectFuncRefs(const AttrValue& value, std::vector<std::string>* out) {
  if (value.has_func()) {
    out->push_back(value.func().name());
    for (const auto& [k, v] : value.func().attr()) CollectFuncRefs(v, out);
  }
  if (value.has_list()) {
    for (const auto& f : value.list().func()) {
      out->push_back(f.name());
      for (const auto& [k, v] : f.attr()) CollectFuncRefs(v, out);
    }
  }
}

// Functions directly called by `f` (as node ops or through func attrs).
std::vector<std::string> Callees(const FunctionDef& f) {
  std::vector<std::string> callees;
  for (const NodeDef& n : f.node_def()) {
    callees.push_back(n.op());
    for (const auto& [k, v] : n.attr()) CollectFuncRefs(v, &callees);
  }
  return callees;
}

}  // namespace

absl::Status Graph::AddFunctionLibrary(const FunctionDefLibrary& library) {
  std::map<std::string, const FunctionDef*> all;
  for (const FunctionDef& f : library_.function()) all[f.signature().name()] = &f;
  for (const FunctionDef& f : library.function()) {
    const std::string& name = f.signature().name();
    if (!IsValidOpName(name)) {
      return absl::InvalidArgumentError(absl::StrCat("Function name '", name, "' is not valid"));
    }
    if (registry_->Find(name) != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("Function '", name, "' has the name of a registered op"));
    }
    if (!all.emplace(name, &f).second) {
      return absl::InvalidArgumentError(absl::StrCat("Function '", name, "' is defined twice"));
    }
  }
  // Depth-first search for a call cycle; reports the path.
  enum class Mark { kNone, kActive, kDone };
  std::map<std::string, Mark> marks;
  std::vector<std::string> path;
  std::function<absl::Status(const std::string&)> visit =
      [&](const std::string& name) -> absl::Status {
    Mark& mark = marks[name];
    if (mark == Mark::kDone) return absl::OkStatus();
    if (mark == Mark::kActive) {
      auto start = std::find(path.begin(), path.end(), name);
      std::vector<std::string> cycle(start, path.end());
      cycle.push_back(name);
      return absl::InvalidArgumentError(
          absl::StrCat("Function '", name, "' is recursive: ", absl::StrJoin(cycle, " -> ")));
    }
    mark = Mark::kActive;
    path.push_back(name);
    for (const std::string& callee : Callees(*all.at(name))) {
      if (all.count(callee) > 0) TW_RETURN_IF_ERROR(visit(callee));
    }
    path.pop_back();
    marks[name] = Mark::kDone;
    return absl::OkStatus();
  };
  for (const auto& [name, f] : all) TW_RETURN_IF_ERROR(visit(name));

  for (const FunctionDef& f : library.function()) {
    auto data = std::make_unique<OpRegistrationData>();
    data->op_def = f.signature();
    data->family = "function";
    // Outputs of function calls keep unknown shapes.
    data->shape_fn = [](InferenceContext*) { return absl::OkStatus(); };
    function_ops_[f.signature().name()] = std::move(data);
    *library_.add_function() = f;
  }
  for (const GradientDef& g : library.gradient()) *library_.add_gradient() = g;
  for (const RegisteredGradient& g : library.registered_gradients()) {
    *library_.add_registered_gradients() = g;
  }
  return absl::OkStatus();
}

absl::Status Graph::RemoveFunction(absl::string_view name) {
  auto it = function_ops_.find(name);
  if (it == function_ops_.end()) {
    return absl::NotFoundError(absl::StrCat("No function named '", name, "'"));
  }
  for (const Node* node : nodes()) {
    if (node->type_string() == name) {
      return absl::FailedPreconditionError(
          absl::StrCat("Function '", name, "' is called by node '", node->name(), "'"));
    }
  }
  function_ops_.erase(it);
  auto* functions = library_.mutable_function();
  for (int i = functions->size() - 1; i >= 0; --i) {
    if (functions->Get(i).signature().name() == name) functions->DeleteSubrange(i, 1);
  }
  auto* gradients = library_.mutable_gradient();
  for (int i = gradients->size() - 1; i >= 0; --i) {
    const GradientDef& g = gradients->Get(i);
    if (g.function_name() == name || g.gradient_func() == name) gradients->DeleteSubrange(i, 1);
  }
  return absl::OkStatus();
}

}  // namespace towerflow
