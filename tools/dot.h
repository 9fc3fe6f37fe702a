// `towerflow dot`: a Graphviz picture of a GraphDef.
//
// Name scopes become nested clusters, so towers ("tower_1/...") show as
// boxes; each requested device gets a fill colour, named in a legend; control
// edges are dashed. Output is deterministic. Render with
// `dot -Tsvg graph.dot -o graph.svg`.
#ifndef TOWERFLOW_TOOLS_DOT_H_
#define TOWERFLOW_TOOLS_DOT_H_

#include <string>

#include "proto/graph.pb.h"

namespace towerflow {
namespace tools {

std::string DotFromGraphDef(const GraphDef& graph_def);

}  // namespace tools
}  // namespace towerflow

#endif  // TOWERFLOW_TOOLS_DOT_H_
