#include "graph/graph_io.h"

#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"

namespace towerflow {
namespace {

// Reads a message of either format, by the path's extension.
absl::Status ReadProtoFile(const std::string& path, google::protobuf::Message* message) {
  TW_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  if (IsTextProtoPath(path)) {
    return AddErrorContext(ParseTextProto(contents, message), path);
  }
  const absl::Status binary = ParseBinaryProto(contents, message);
  if (binary.ok()) return binary;
  message->Clear();
  if (ParseTextProto(contents, message).ok()) return absl::OkStatus();
  message->Clear();
  return AddErrorContext(binary, path);
}

// Index of each node in the GraphDef, and each node's parsed inputs.
struct NodeIndex {
  absl::flat_hash_map<std::string, int> by_name;
  std::vector<std::vector<TensorId>> inputs;
};

absl::StatusOr<NodeIndex> IndexNodes(const GraphDef& def, const Graph& graph) {
  NodeIndex index;
  for (int i = 0; i < def.node_size(); ++i) {
    const NodeDef& n = def.node(i);
    if (n.name().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Node ", i, " of the GraphDef (op '", n.op(), "') has an empty name"));
    }
    if (!index.by_name.emplace(n.name(), i).second || graph.FindNode(n.name()) != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("Node '", n.name(), "' is not unique"));
    }
  }
  index.inputs.resize(def.node_size());
  for (int i = 0; i < def.node_size(); ++i) {
    const NodeDef& n = def.node(i);
    bool seen_control = false;
    for (const std::string& input : n.input()) {
      absl::StatusOr<TensorId> id = ParseTensorName(input);
      if (!id.ok()) return AddErrorContext(id.status(), absl::StrCat("Node '", n.name(), "'"));
      if (id->IsControl()) {
        seen_control = true;
      } else if (seen_control) {
        return absl::InvalidArgumentError(absl::StrCat("Node '", n.name(), "': Non-control input '",
                                                       input, "' after a control input"));
      }
      if (!index.by_name.contains(id->node) && graph.FindNode(id->node) == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("Node '", n.name(), "': Unknown input node '", input, "'"));
      }
      index.inputs[i].push_back(*std::move(id));
    }
  }
  return index;
}

// A cycle among the nodes Kahn's algorithm could not order, as "a -> b -> a".
std::string DescribeCycle(const GraphDef& def, const NodeIndex& index,
                          const std::vector<int>& pending) {
  int start = -1;
  for (int i = 0; i < def.node_size(); ++i) {
    if (pending[i] > 0) {
      start = i;
      break;
    }
  }
  // Walk backwards along unresolved inputs until a node repeats.
  std::vector<int> path;
  absl::flat_hash_map<int, int> position;
  int current = start;
  while (current >= 0 && !position.contains(current)) {
    position[current] = static_cast<int>(path.size());
    path.push_back(current);
    int next = -1;
    for (const TensorId& in : index.inputs[current]) {
      auto it = index.by_name.find(in.node);
      if (it != index.by_name.end() && pending[it->second] > 0) {
        next = it->second;
        break;
      }
    }
    current = next;
  }
  if (current < 0) return def.node(start).name();
  std::vector<std::string> names;
  for (size_t k = position[current]; k < path.size(); ++k)
    names.push_back(def.node(path[k]).name());
  names.push_back(def.node(current).name());
  std::reverse(names.begin(), names.end());  // producer -> consumer order
  return absl::StrJoin(names, " -> ");
}

// Whether input `in` of node `dst` closes a while loop: a NextIteration of
// the GraphDef into a Merge (TensorFlow's graph constructor allows cycles
// only there).
bool IsBackEdge(const GraphDef& def, const NodeIndex& index, int dst, const TensorId& in) {
  const std::string& op = def.node(dst).op();
  if ((op != "Merge" && op != "RefMerge") || in.IsControl()) return false;
  auto it = index.by_name.find(in.node);
  if (it == index.by_name.end()) return false;
  const std::string& src = def.node(it->second).op();
  return src == "NextIteration" || src == "RefNextIteration";
}

// Node indices in an order where every node follows its inputs, back edges
// aside.
absl::StatusOr<std::vector<int>> TopologicalOrder(const GraphDef& def, const NodeIndex& index) {
  const int n = def.node_size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    for (const TensorId& in : index.inputs[i]) {
      auto it = index.by_name.find(in.node);
      if (it == index.by_name.end()) continue;  // already in the graph
      if (IsBackEdge(def, index, i, in)) continue;
      ++pending[i];
      consumers[it->second].push_back(i);
    }
  }
  std::deque<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (int c : consumers[i]) {
      if (--pending[c] == 0) ready.push_back(c);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("GraphDef contains a cycle: ", DescribeCycle(def, index, pending)));
  }
  return order;
}

absl::Status CheckVersions(const VersionDef& v) {
  if (v.producer() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GraphDef producer version ", v.producer(), " is negative"));
  }
  if (v.min_consumer() > kGraphDefVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("GraphDef min_consumer version ", v.min_consumer(),
                     " is above Towerflow's GraphDef version ", kGraphDefVersion,
                     "; the graph needs a newer consumer"));
  }
  for (int bad : v.bad_consumers()) {
    if (bad == kGraphDefVersion) {
      return absl::InvalidArgumentError(absl::StrCat("GraphDef lists Towerflow's version ",
                                                     kGraphDefVersion, " as a bad consumer"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsTextProtoPath(absl::string_view path) {
  return absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".pbtext") ||
         absl::EndsWith(path, ".txt");
}

absl::StatusOr<GraphDef> ReadGraphDef(const std::string& path) {
  GraphDef def;
  TW_RETURN_IF_ERROR(ReadProtoFile(path, &def));
  return def;
}

absl::Status WriteGraphDef(const GraphDef& graph_def, const std::string& path) {
  return WriteFileAtomically(
      path, IsTextProtoPath(path) ? PrintTextProto(graph_def) : SerializeDeterministic(graph_def));
}

absl::StatusOr<MetaGraphDef> ReadMetaGraphDef(const std::string& path) {
  MetaGraphDef meta;
  TW_RETURN_IF_ERROR(ReadProtoFile(path, &meta));
  return meta;
}

// A loop's back edge, added once its NextIteration exists.
struct BackEdge {
  Node* merge;
  int input;
  TensorId source;
};

// The node to add for `def.node(i)`: a Merge's back-edge inputs name a
// NextIteration not yet added, so they stand in as copies of its first
// other data input until AddBackEdges.
absl::StatusOr<NodeDef> WithoutBackEdges(const GraphDef& def, const NodeIndex& index, int i,
                                         std::vector<std::pair<int, TensorId>>* back_edges) {
  NodeDef node = def.node(i);
  const std::vector<TensorId>& inputs = index.inputs[i];
  int stand_in = -1;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (IsBackEdge(def, index, i, inputs[k])) {
      back_edges->emplace_back(static_cast<int>(k), inputs[k]);
    } else if (stand_in < 0 && !inputs[k].IsControl()) {
      stand_in = static_cast<int>(k);
    }
  }
  if (back_edges->empty()) return node;
  if (stand_in < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Merge '", node.name(),
                     "' has only NextIteration inputs: a while loop's Merge also needs its Enter"));
  }
  for (const auto& [k, source] : *back_edges) node.set_input(k, node.input(stand_in));
  return node;
}

// Closes the loops, then re-runs shape inference until it settles: a loop
// variable's shape after an iteration may be less known than on entry, and
// the Merge (TensorFlow's MergeShape) keeps only what both agree on.
absl::Status AddBackEdges(const std::vector<BackEdge>& back_edges, const std::vector<Node*>& added,
                          Graph* graph) {
  if (back_edges.empty()) return absl::OkStatus();
  for (const BackEdge& b : back_edges) {
    Node* src = graph->FindNode(b.source.node);
    graph->RemoveEdge(b.merge->input_edge(b.input));
    TW_RETURN_IF_ERROR(
        AddErrorContext(graph->AddDataEdge(src, b.source.index, b.merge, b.input).status(),
                        absl::StrCat("Merge '", b.merge->name(), "'")));
  }
  // Each pass can only make shapes less known, so this ends; the bound is a
  // guard against a shape function that does not.
  constexpr int kMaxPasses = 64;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    bool changed = false;
    for (Node* n : added) {
      std::vector<PartialTensorShape> before;
      for (int i = 0; i < n->num_outputs(); ++i) before.push_back(n->output_shape(i));
      TW_RETURN_IF_ERROR(RefineNodeShapes(*graph, n));
      for (int i = 0; i < n->num_outputs(); ++i) changed |= before[i] != n->output_shape(i);
    }
    if (!changed) return absl::OkStatus();
  }
  return absl::InternalError("shape inference around a while loop did not settle");
}

absl::Status ImportGraphDef(const GraphDef& graph_def, Graph* graph) {
  TW_RETURN_IF_ERROR(CheckVersions(graph_def.versions()));
  TW_ASSIGN_OR_RETURN(NodeIndex index, IndexNodes(graph_def, *graph));
  TW_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(graph_def, index));
  const bool was_empty = graph->num_nodes() == 0;
  const VersionDef old_versions = graph->versions();
  const GraphDebugInfo old_debug_info = graph->debug_info();
  if (was_empty) {
    graph->set_versions(graph_def.versions());
    graph->set_debug_info(graph_def.debug_info());
  }
  absl::Status status = graph->AddFunctionLibrary(graph_def.library());
  const bool library_added = status.ok();
  std::vector<Node*> added;
  std::vector<BackEdge> back_edges;
  for (size_t k = 0; status.ok() && k < order.size(); ++k) {
    std::vector<std::pair<int, TensorId>> node_back_edges;
    absl::StatusOr<NodeDef> def = WithoutBackEdges(graph_def, index, order[k], &node_back_edges);
    absl::StatusOr<Node*> node = def.ok() ? graph->AddNode(*std::move(def)) : def.status();
    if (node.ok()) {
      added.push_back(*node);
      for (auto& [input, source] : node_back_edges) {
        back_edges.push_back({*node, input, std::move(source)});
      }
    } else {
      status = node.status();
    }
  }
  if (status.ok()) status = AddBackEdges(back_edges, added, graph);
  if (!status.ok()) {
    for (auto it = added.rbegin(); it != added.rend(); ++it) graph->RemoveNode(*it);
    if (library_added) {
      for (const FunctionDef& f : graph_def.library().function()) {
        graph->RemoveFunction(f.signature().name()).IgnoreError();
      }
    }
    graph->set_versions(old_versions);
    graph->set_debug_info(old_debug_info);
  }
  return status;
}

}  // namespace towerflow
