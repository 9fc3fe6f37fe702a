// GraphView: who reads what in a partition's GraphDef, for the rewrites of
// runtime/graph_optimizer.cc, runtime/constant_folding.cc and
// runtime/capture_specializer.cc. Internal to the runtime.
#ifndef TOWERFLOW_RUNTIME_GRAPH_VIEW_H_
#define TOWERFLOW_RUNTIME_GRAPH_VIEW_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/status_macros.h"
#include "framework/node_def_util.h"
#include "proto/graph.pb.h"

namespace towerflow {

// Who reads what in a partition: per (node, output) the data consumers as
// (node index, input position), per node the nodes with a control edge from
// it. Rebuilt after every rewrite that changes edges (partitions are small
// enough, and rewrites few).
class GraphView {
 public:
  static absl::StatusOr<GraphView> Build(const GraphDef& def) {
    GraphView v;
    for (int i = 0; i < def.node_size(); ++i) {
      v.index_[def.node(i).name()] = i;
      v.names_.push_back(def.node(i).name());
    }
    for (int i = 0; i < def.node_size(); ++i) {
      const NodeDef& n = def.node(i);
      for (int k = 0; k < n.input_size(); ++k) {
        TW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(n.input(k)));
        if (id.IsControl()) {
          v.control_out_[id.node].push_back(i);
        } else {
          v.data_out_[{id.node, id.index}].push_back({i, k});
        }
      }
    }
    return v;
  }

  // The name of node `i` as it was when the view was built.
  const std::string& Name(int i) const { return names_[i]; }
  // The node named `name`, or -1.
  int Find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  const std::vector<std::pair<int, int>>& Consumers(const std::string& node, int output) const {
    static const std::vector<std::pair<int, int>> kNone;
    auto it = data_out_.find({node, output});
    return it == data_out_.end() ? kNone : it->second;
  }
  bool HasControlConsumers(const std::string& node) const { return control_out_.count(node) > 0; }
  // Whether any output of `node` is read.
  bool AnyOutputRead(const std::string& node) const { return OtherOutputsRead(node, -1); }
  // Whether any output of `node` but `output` is read.
  bool OtherOutputsRead(const std::string& node, int output) const {
    // The map is ordered by (node, output): the node's outputs are adjacent.
    for (auto it = data_out_.lower_bound({node, 0});
         it != data_out_.end() && it->first.first == node; ++it) {
      if (it->first.second != output && !it->second.empty()) return true;
    }
    return false;
  }

 private:
  absl::flat_hash_map<std::string, int> index_;
  std::vector<std::string> names_;
  std::map<std::pair<std::string, int>, std::vector<std::pair<int, int>>> data_out_;
  absl::flat_hash_map<std::string, std::vector<int>> control_out_;
};

// Marks in `marked` every node `from` reads, directly or not, walking back
// from `from` (marked already) through nodes not marked yet.
void MarkAncestors(const GraphView& view, const GraphDef& def, std::vector<int> from,
                   std::vector<bool>* marked);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_GRAPH_VIEW_H_
