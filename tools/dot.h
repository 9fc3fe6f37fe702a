// `towerflow dot`: a Graphviz picture of a GraphDef.
//
// By default name scopes are collapsed into boxes, as TensorBoard's graph
// view: a box per top-level scope (each tower, split_inputs,
// gradient_aggregating, the optimizer...) labelled with its op count and
// device, the scopes that hold only variables grouped into one box per
// device, tower 0's scopes and ops gathered into one box where
// ReplicateModelFn leaves them unprefixed (a root scope or op with a twin
// under tower_K/ is tower 0's; `expand` "tower_0" opens the gathering), and
// the edges between two boxes aggregated into one labelled with
// the tensors and bytes (from shape inference, when the graph imports) that
// cross it. `expand` opens a scope: its sub-scopes become boxes and its own
// ops show. `full` draws every node instead, name scopes as nested
// clusters. Devices are fill colours, named in a legend; control edges are
// dashed. Output is deterministic. Render with
// `dot -Tsvg graph.dot -o graph.svg`.
#ifndef TOWERFLOW_TOOLS_DOT_H_
#define TOWERFLOW_TOOLS_DOT_H_

#include <string>
#include <vector>

#include "proto/graph.pb.h"

namespace towerflow {
namespace tools {

struct DotOptions {
  // Every node, name scopes as nested clusters.
  bool full = false;
  // Scopes drawn open ("tower_0", "tower_0/conv1"); a scope's parents open
  // with it.
  std::vector<std::string> expand;
};

std::string DotFromGraphDef(const GraphDef& graph_def, const DotOptions& options = {});

}  // namespace tools
}  // namespace towerflow

#endif  // TOWERFLOW_TOOLS_DOT_H_
