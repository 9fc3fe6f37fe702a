#include "tools/dot.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "core/types.h"
#include "framework/node_def_util.h"
#include "graph/graph.h"
#include "graph/graph_io.h"

namespace towerflow {
namespace tools {
namespace {

// Light fills that keep black text readable; devices beyond them reuse the
// palette in order.
constexpr const char* kPalette[] = {"#cfe2ff", "#d1e7dd", "#fff3cd", "#f8d7da", "#e2d9f3",
                                    "#ffe5d0", "#d2f4ea", "#f7d6e6", "#e9ecef", "#cff4fc"};

std::string Escape(absl::string_view s) {
  return absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}});
}

std::string Quote(absl::string_view s) { return absl::StrCat("\"", Escape(s), "\""); }

// A node label: the name within its scope, then the op on a second line
// unless the name already says it. DOT's line break is backslash-n.
std::string Label(absl::string_view base, absl::string_view op) {
  if (base == op) return Quote(op);
  return absl::StrCat("\"", Escape(base), "\\n", Escape(op), "\"");
}

// A name-scope cluster with its sub-clusters and nodes.
struct Cluster {
  std::map<std::string, std::unique_ptr<Cluster>> children;
  std::vector<const NodeDef*> nodes;
};

std::string ScopeOf(const std::string& name) {
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? "" : name.substr(0, slash);
}

void Emit(const Cluster& cluster, const std::string& path, int depth,
          const std::map<std::string, std::string>& colors, std::string* out) {
  const std::string indent(2 * depth, ' ');
  for (const NodeDef* n : cluster.nodes) {
    const std::string base = n->name().substr(path.empty() ? 0 : path.size() + 1);
    auto color = colors.find(n->device());
    absl::StrAppend(out, indent, Quote(n->name()), " [label=", Label(base, n->op()),
                    color == colors.end() ? "" : absl::StrCat(", fillcolor=", Quote(color->second)),
                    "];\n");
  }
  for (const auto& [name, child] : cluster.children) {
    const std::string child_path = path.empty() ? name : absl::StrCat(path, "/", name);
    absl::StrAppend(out, indent, "subgraph ", Quote(absl::StrCat("cluster_", child_path)), " {\n",
                    indent, "  label=", Quote(name), ";\n");
    Emit(*child, child_path, depth + 1, colors, out);
    absl::StrAppend(out, indent, "}\n");
  }
}

// Device -> fill colour, in the devices' order.
std::map<std::string, std::string> DeviceColors(const GraphDef& def) {
  std::map<std::string, std::string> colors;
  for (const NodeDef& n : def.node()) {
    if (!n.device().empty()) colors.emplace(n.device(), "");
  }
  int next = 0;
  for (auto& [device, color] : colors) color = kPalette[next++ % std::size(kPalette)];
  return colors;
}

constexpr char kHeader[] =
    "digraph towerflow {\n"
    "  compound=true;\n"
    "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", "
    "fontsize=10];\n"
    "  edge [color=\"#555555\", fontname=\"Helvetica\", fontsize=9];\n";

void AppendLegend(const std::map<std::string, std::string>& colors, std::string* out) {
  if (colors.empty()) return;
  absl::StrAppend(out, "  subgraph cluster_legend {\n    label=\"devices\";\n");
  int i = 0;
  for (const auto& [device, color] : colors) {
    absl::StrAppend(out, "    ", Quote(absl::StrCat("legend_", i++)), " [label=", Quote(device),
                    ", fillcolor=", Quote(color), "];\n");
  }
  absl::StrAppend(out, "  }\n");
}

std::string FullDot(const GraphDef& def) {
  const std::map<std::string, std::string> colors = DeviceColors(def);

  Cluster root;
  for (const NodeDef& n : def.node()) {
    Cluster* c = &root;
    const std::string scope = ScopeOf(n.name());
    if (!scope.empty()) {
      size_t start = 0;
      while (start <= scope.size()) {
        const size_t slash = scope.find('/', start);
        const std::string part =
            scope.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        std::unique_ptr<Cluster>& child = c->children[part];
        if (child == nullptr) child = std::make_unique<Cluster>();
        c = child.get();
        if (slash == std::string::npos) break;
        start = slash + 1;
      }
    }
    c->nodes.push_back(&n);
  }

  std::string out = kHeader;
  Emit(root, "", 1, colors, &out);
  std::set<std::string> names;
  for (const NodeDef& n : def.node()) names.insert(n.name());
  for (const NodeDef& n : def.node()) {
    for (const std::string& input : n.input()) {
      absl::StatusOr<TensorId> id = ParseTensorName(input);
      if (!id.ok() || names.count(id->node) == 0) continue;
      absl::StrAppend(&out, "  ", Quote(id->node), " -> ", Quote(n.name()),
                      id->IsControl() ? " [style=dashed, color=\"#aaaaaa\"]" : "", ";\n");
    }
  }
  AppendLegend(colors, &out);
  absl::StrAppend(&out, "}\n");
  return out;
}

constexpr char kTopLevel[] = "top level";

bool IsVariableOp(const std::string& op) {
  return op == "VarHandleOp" || op == "VariableV2" || op == "Variable";
}

// The bytes of each node's outputs that shape inference knows (-1: not
// known); empty when the graph does not import (unknown ops).
std::map<std::string, std::vector<int64_t>> OutputBytes(const GraphDef& def) {
  std::map<std::string, std::vector<int64_t>> bytes;
  Graph graph;
  if (!ImportGraphDef(def, &graph).ok()) return bytes;
  for (const Node* n : graph.nodes()) {
    std::vector<int64_t>& out = bytes[n->name()];
    for (int i = 0; i < n->num_outputs(); ++i) {
      const PartialTensorShape& shape = n->output_shape(i);
      const int size = DataTypeSize(BaseType(n->output_type(i)));
      out.push_back(shape.IsFullyDefined() && size > 0 ? shape.num_elements() * size : -1);
    }
  }
  return bytes;
}

std::string HumanBytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  if (bytes < 1024 * 1024) return absl::StrFormat("%.1f KB", bytes / 1024.0);
  return absl::StrFormat("%.1f MB", bytes / (1024.0 * 1024.0));
}

// What a node is drawn as in the collapsed picture: a box (a scope, or the
// variables of a device) or itself.
struct Unit {
  bool box = false;
  std::string title;
  std::vector<const NodeDef*> nodes;
};

// The tensors crossing from one unit to another.
struct Crossing {
  std::set<std::string> tensors;
  int64_t bytes = 0;
  bool unknown_bytes = false;
};

std::string CollapsedDot(const GraphDef& def, const DotOptions& options) {
  const std::map<std::string, std::string> colors = DeviceColors(def);
  // Every scope (proper prefix of a node name), and the open ones with their
  // parents.
  std::set<std::string> scopes, open;
  for (const NodeDef& n : def.node()) {
    for (size_t slash = n.name().find('/'); slash != std::string::npos;
         slash = n.name().find('/', slash + 1)) {
      scopes.insert(n.name().substr(0, slash));
    }
  }
  for (const std::string& scope : options.expand) {
    for (size_t slash = scope.find('/'); slash != std::string::npos;
         slash = scope.find('/', slash + 1)) {
      open.insert(scope.substr(0, slash));
    }
    open.insert(scope);
  }
  // Variables, and the nodes that belong to one (their initializers, reads,
  // slots): a node is a variable's when the variable's name is a prefix of
  // its own at a scope boundary.
  std::set<std::string> variables;
  std::map<std::string, std::string> variable_device;
  for (const NodeDef& n : def.node()) {
    if (IsVariableOp(n.op())) {
      variables.insert(n.name());
      variable_device[n.name()] = n.device();
    }
  }
  auto variable_of = [&](const std::string& name) -> const std::string* {
    for (size_t end = name.find('/'); true; end = name.find('/', end + 1)) {
      auto it = variables.find(name.substr(0, end));
      if (it != variables.end()) return &*it;
      if (end == std::string::npos) return nullptr;
    }
  };

  // ReplicateModelFn leaves tower 0 unprefixed, as TF's replicate_model_fn
  // does: a root scope or op C is tower 0's when some tower_K/C (K >= 1)
  // exists. Closed, they gather into one "tower_0" box, unless the graph has
  // a real tower_0 scope or --expand tower_0 opens the gathering.
  std::set<std::string> replicated;  // C of every tower_K/C, K >= 1
  for (const NodeDef& n : def.node()) {
    absl::string_view rest = n.name();
    if (!absl::ConsumePrefix(&rest, "tower_")) continue;
    const size_t slash = rest.find('/');
    const absl::string_view index = rest.substr(0, slash);
    int k = 0;
    if (slash == absl::string_view::npos || !absl::SimpleAtoi(index, &k) || k < 1) continue;
    rest.remove_prefix(slash + 1);
    replicated.emplace(rest.substr(0, rest.find('/')));
  }
  const bool gather_tower_0 =
      !replicated.empty() && scopes.count("tower_0") == 0 && open.count("tower_0") == 0;

  // The unit of each node: the outermost closed scope holding it; the node
  // itself when it is an input (a placeholder) or sits directly in an open
  // scope; the "top level" box for the root's other ops (the loss, train_op),
  // tower 0's aside.
  std::map<std::string, Unit> units;
  for (const NodeDef& n : def.node()) {
    const std::string& name = n.name();
    std::string parent;
    std::string key;
    while (true) {
      const size_t start = parent.empty() ? 0 : parent.size() + 1;
      const size_t slash = name.find('/', start);
      const std::string child = name.substr(0, slash);
      if (slash == std::string::npos) {
        if (scopes.count(child) > 0 && open.count(child) == 0) {
          key = "box:" + child;
        } else if (parent.empty() && !absl::StartsWith(n.op(), "Placeholder")) {
          key = absl::StrCat("box:", kTopLevel);
        } else {
          key = "node:" + child;
        }
        break;
      }
      if (open.count(child) == 0) {
        key = "box:" + child;
        break;
      }
      parent = child;
    }
    const std::string root = name.substr(0, name.find('/'));
    if (gather_tower_0 && replicated.count(root) > 0 &&
        (key == "box:" + root || key == absl::StrCat("box:", kTopLevel))) {
      key = "box:tower_0";
    }
    Unit& unit = units[key];
    unit.box = absl::StartsWith(key, "box:");
    unit.title = key.substr(key.find(':') + 1);
    unit.nodes.push_back(&n);
  }
  // The variables' nodes in top-level boxes gather into one box per device
  // (a parameter server's variables, a tower's mirrors).
  std::map<std::string, Unit> merged;
  std::map<std::string, std::string> unit_of;  // node -> unit key
  for (auto& [key, unit] : units) {
    const bool top_level_box = unit.box && unit.title.find('/') == std::string::npos;
    for (const NodeDef* n : unit.nodes) {
      const std::string* variable = top_level_box ? variable_of(n->name()) : nullptr;
      std::string target = key;
      std::string title = unit.title;
      if (variable != nullptr) {
        const std::string& device = variable_device[*variable];
        target = "variables:" + device;
        title = device.empty() ? "variables" : absl::StrCat("variables on ", device);
      }
      Unit& u = merged[target];
      u.box = unit.box;
      u.title = title;
      u.nodes.push_back(n);
      unit_of[n->name()] = target;
    }
  }

  std::string out = kHeader;
  std::map<std::string, std::string> ids;  // unit key -> DOT node id
  for (const auto& [key, unit] : merged) {
    const std::string id = unit.box ? absl::StrCat("[", unit.title, "]") : unit.title;
    ids[key] = id;
    std::set<std::string> devices;
    int variables_in_unit = 0;
    for (const NodeDef* n : unit.nodes) {
      if (!n->device().empty()) devices.insert(n->device());
      if (IsVariableOp(n->op())) ++variables_in_unit;
    }
    const std::string device = devices.size() == 1 ? *devices.begin() : "";
    auto color = colors.find(device);
    const std::string fill =
        color == colors.end() ? "" : absl::StrCat(", fillcolor=", Quote(color->second));
    if (!unit.box) {
      const NodeDef& n = *unit.nodes.front();
      const size_t slash = n.name().rfind('/');
      const std::string base = slash == std::string::npos ? n.name() : n.name().substr(slash + 1);
      absl::StrAppend(&out, "  ", Quote(id), " [label=", Label(base, n.op()), fill, "];\n");
      continue;
    }
    std::string label = absl::StrCat(Escape(unit.title), "\\n", unit.nodes.size(),
                                     unit.nodes.size() == 1 ? " op" : " ops");
    if (variables_in_unit > 0 && absl::StartsWith(key, "variables:")) {
      absl::StrAppend(&label, ", ", variables_in_unit,
                      variables_in_unit == 1 ? " variable" : " variables");
    }
    if (devices.size() > 1) absl::StrAppend(&label, "\\non ", devices.size(), " devices");
    absl::StrAppend(&out, "  ", Quote(id), " [label=\"", label,
                    "\", shape=box, style=\"filled,bold\"", fill, "];\n");
  }

  const std::map<std::string, std::vector<int64_t>> bytes = OutputBytes(def);
  std::map<std::pair<std::string, std::string>, Crossing> data;
  std::map<std::pair<std::string, std::string>, int> control;
  for (const NodeDef& n : def.node()) {
    const std::string& to = unit_of[n.name()];
    for (const std::string& input : n.input()) {
      absl::StatusOr<TensorId> id = ParseTensorName(input);
      if (!id.ok()) continue;
      auto from = unit_of.find(id->node);
      if (from == unit_of.end() || from->second == to) continue;
      if (id->IsControl()) {
        ++control[{from->second, to}];
        continue;
      }
      Crossing& crossing = data[{from->second, to}];
      const std::string tensor = absl::StrCat(id->node, ":", id->index);
      if (!crossing.tensors.insert(tensor).second) continue;  // crosses once
      auto sizes = bytes.find(id->node);
      if (sizes == bytes.end() || id->index >= static_cast<int>(sizes->second.size()) ||
          sizes->second[id->index] < 0) {
        crossing.unknown_bytes = true;
      } else {
        crossing.bytes += sizes->second[id->index];
      }
    }
  }
  for (const auto& [edge, crossing] : data) {
    const size_t count = crossing.tensors.size();
    std::string label = absl::StrCat(count, count == 1 ? " tensor" : " tensors");
    if (crossing.bytes > 0 || !crossing.unknown_bytes) {
      absl::StrAppend(&label, ", ", crossing.unknown_bytes ? ">= " : "",
                      HumanBytes(crossing.bytes));
    }
    absl::StrAppend(&out, "  ", Quote(ids[edge.first]), " -> ", Quote(ids[edge.second]),
                    " [label=", Quote(label), count > 1 ? ", penwidth=2" : "", "];\n");
  }
  for (const auto& [edge, count] : control) {
    if (data.count(edge) > 0) continue;  // the data edge orders them already
    absl::StrAppend(&out, "  ", Quote(ids[edge.first]), " -> ", Quote(ids[edge.second]),
                    " [style=dashed, color=\"#aaaaaa\"];\n");
  }
  AppendLegend(colors, &out);
  absl::StrAppend(&out, "}\n");
  return out;
}

}  // namespace

std::string DotFromGraphDef(const GraphDef& def, const DotOptions& options) {
  return options.full ? FullDot(def) : CollapsedDot(def, options);
}

}  // namespace tools
}  // namespace towerflow
