#include "tools/dot.h"

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "framework/node_def_util.h"

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

}  // namespace

std::string DotFromGraphDef(const GraphDef& def) {
  std::map<std::string, std::string> colors;  // device -> fill
  for (const NodeDef& n : def.node()) {
    if (!n.device().empty()) colors.emplace(n.device(), "");
  }
  int next = 0;
  for (auto& [device, color] : colors) color = kPalette[next++ % std::size(kPalette)];

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

  std::string out =
      "digraph towerflow {\n"
      "  compound=true;\n"
      "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", "
      "fontsize=10];\n"
      "  edge [color=\"#555555\"];\n";
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
  if (!colors.empty()) {
    absl::StrAppend(&out, "  subgraph cluster_legend {\n    label=\"devices\";\n");
    int i = 0;
    for (const auto& [device, color] : colors) {
      absl::StrAppend(&out, "    ", Quote(absl::StrCat("legend_", i++)), " [label=", Quote(device),
                      ", fillcolor=", Quote(color), "];\n");
    }
    absl::StrAppend(&out, "  }\n");
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

}  // namespace tools
}  // namespace towerflow
