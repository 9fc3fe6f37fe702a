// GraphDef files and GraphDef -> Graph import.
//
//   TW_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDef("model.pbtxt"));
//   Graph graph;
//   TW_RETURN_IF_ERROR(ImportGraphDef(def, &graph));
//   GraphDef out;
//   graph.ToGraphDef(&out);
//   TW_RETURN_IF_ERROR(WriteGraphDef(out, "model.pb"));
//
// Formats follow the file name: ".pbtxt", ".pbtext" and ".txt" are text,
// anything else binary. Reading a binary file that does not parse retries it
// as text (TensorFlow users often name text graphs ".pb"). Binary output is
// deterministic; files are written atomically.
//
// Thread-safe: no shared state.
#ifndef TOWERFLOW_GRAPH_GRAPH_IO_H_
#define TOWERFLOW_GRAPH_GRAPH_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"
#include "proto/meta_graph.pb.h"

namespace towerflow {

// True for the extensions written as text (.pbtxt, .pbtext, .txt).
bool IsTextProtoPath(absl::string_view path);

// NotFound for a missing file; InvalidArgument (text, with line:column) or
// DataLoss (binary) when the contents are not a GraphDef.
absl::StatusOr<GraphDef> ReadGraphDef(const std::string& path);
absl::Status WriteGraphDef(const GraphDef& graph_def, const std::string& path);

// A MetaGraphDef (`.meta`), binary or text by the same rules.
absl::StatusOr<MetaGraphDef> ReadMetaGraphDef(const std::string& path);

// Adds the nodes and functions of `graph_def` to `graph`, checking every
// node as Graph::AddNode does, in an order where inputs come first. Errors
// name the node: InvalidArgument for duplicate names, references to missing
// nodes or outputs ("x:99"), data inputs after control inputs, cycles
// ("GraphDef contains a cycle: a -> b -> a"), recursive functions, bad attrs
// or TensorProtos, a min_consumer version above kGraphDefVersion; NotFound
// for unknown ops. On error `graph` is left as it was. An empty graph takes
// the GraphDef's versions and debug info.
absl::Status ImportGraphDef(const GraphDef& graph_def, Graph* graph);

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_GRAPH_IO_H_
