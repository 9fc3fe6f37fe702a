#include "tools/inspect.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/attr_value_util.h"
#include "framework/node_def_util.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"

namespace towerflow {
namespace tools {
namespace {

constexpr size_t kMaxListed = 25;
// Longer names overflow the column rather than widen it.
constexpr size_t kMaxNameColumn = 40;

// One listed item: a name and what follows it.
struct Row {
  std::string name;
  std::string rest;
};

std::string AttrSummary(const NodeDef& n, const std::string& key) {
  auto it = n.attr().find(key);
  return it == n.attr().end() ? "?" : SummarizeAttrValue(it->second);
}

std::string ShapeAttr(const NodeDef& n) {
  auto it = n.attr().find("shape");
  if (it == n.attr().end()) return "<unknown>";
  return SummarizeAttrValue(it->second);
}

// A titled list, names in a column as wide as the longest shown.
void AppendList(const std::string& title, const std::vector<Row>& rows, std::string* out) {
  if (rows.empty()) return;
  const size_t shown = std::min(rows.size(), kMaxListed);
  size_t width = 0;
  for (size_t i = 0; i < shown; ++i) width = std::max(width, rows[i].name.size());
  width = std::min(width, kMaxNameColumn);
  absl::StrAppend(out, "\n", title, " (", rows.size(), "):\n");
  for (size_t i = 0; i < shown; ++i) {
    absl::StrAppend(
        out, absl::StrFormat("  %-*s  %s\n", static_cast<int>(width), rows[i].name, rows[i].rest));
  }
  if (rows.size() > shown) absl::StrAppend(out, "  ... and ", rows.size() - shown, " more\n");
}

}  // namespace

std::string InspectGraphDef(const GraphDef& def, const std::string& label) {
  std::map<std::string, int> op_counts;
  std::set<std::string> functions;
  for (const auto& f : def.library().function()) functions.insert(f.signature().name());
  std::map<std::string, std::vector<std::string>> unknown;  // op -> nodes
  std::map<std::string, int> devices;
  std::set<std::string> consumed;
  std::vector<Row> placeholders, variables;
  for (const NodeDef& n : def.node()) {
    ++op_counts[n.op()];
    ++devices[n.device().empty() ? "(none)" : n.device()];
    if (OpRegistry::Global()->Find(n.op()) == nullptr && functions.count(n.op()) == 0) {
      unknown[n.op()].push_back(n.name());
    }
    for (const std::string& input : n.input()) {
      absl::StatusOr<TensorId> id = ParseTensorName(input);
      if (id.ok()) consumed.insert(id->node);
    }
    if (n.op() == "Placeholder" || n.op() == "PlaceholderV2" ||
        n.op() == "PlaceholderWithDefault") {
      placeholders.push_back({n.name(), absl::StrCat(AttrSummary(n, "dtype"), " ", ShapeAttr(n))});
    }
    if (n.op() == "VariableV2" || n.op() == "Variable" || n.op() == "VarHandleOp") {
      variables.push_back(
          {n.name(), absl::StrCat(n.op(), " ", AttrSummary(n, "dtype"), " ", ShapeAttr(n),
                                  n.device().empty() ? "" : "  ", n.device())});
    }
  }
  std::vector<Row> sinks;
  for (const NodeDef& n : def.node()) {
    if (consumed.count(n.name()) == 0) sinks.push_back({n.name(), n.op()});
  }

  std::string out = absl::StrCat("Graph: ", label, "\n");
  absl::StrAppend(&out, "Nodes: ", def.node_size(), "   op types: ", op_counts.size(),
                  "   producer version: ", def.versions().producer(),
                  "   functions: ", functions.size(), "\n");
  Graph graph;
  const absl::Status imported = ImportGraphDef(def, &graph);
  absl::StrAppend(&out, "Towerflow import: ",
                  imported.ok() ? std::string("OK (all ops known, shapes inferred)")
                                : absl::StrCat("fails: ", imported.ToString()),
                  "\n");

  // The op histogram, most frequent first.
  std::vector<std::pair<std::string, int>> ops(op_counts.begin(), op_counts.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  absl::StrAppend(&out, "\nOps:\n");
  for (const auto& [op, count] : ops)
    absl::StrAppend(&out, absl::StrFormat("  %6d  %s\n", count, op));

  AppendList("Placeholders", placeholders, &out);
  AppendList("Variables", variables, &out);
  std::vector<Row> device_rows;
  for (const auto& [device, count] : devices) {
    device_rows.push_back({device, absl::StrCat(count, count == 1 ? " node" : " nodes")});
  }
  AppendList("Devices", device_rows, &out);
  AppendList("Sinks (nodes nothing consumes)", sinks, &out);
  if (!unknown.empty()) {
    std::vector<Row> rows;
    for (const auto& [op, nodes] : unknown) {
      rows.push_back({op, absl::StrCat(nodes.size(), " node(s), e.g. ", nodes[0])});
    }
    AppendList("Ops Towerflow does not know", rows, &out);
  }
  return out;
}

}  // namespace tools
}  // namespace towerflow
