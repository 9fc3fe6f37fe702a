// `towerflow inspect`: a report on a GraphDef for people.
//
// Works at the GraphDef level, so it describes any well-formed graph, ops
// Towerflow does not know included (they are listed, not fatal): node count,
// op histogram, placeholders with dtypes and shapes, variables, devices,
// sinks, functions, and whether Towerflow can import the graph.
#ifndef TOWERFLOW_TOOLS_INSPECT_H_
#define TOWERFLOW_TOOLS_INSPECT_H_

#include <string>

#include "proto/graph.pb.h"

namespace towerflow {
namespace tools {

// The report; `label` names the graph (usually its path).
std::string InspectGraphDef(const GraphDef& graph_def, const std::string& label);

}  // namespace tools
}  // namespace towerflow

#endif  // TOWERFLOW_TOOLS_INSPECT_H_
