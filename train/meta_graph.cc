#include "train/meta_graph.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/graph.h"
#include "ops/variables.h"
#include "proto/variable.pb.h"

namespace towerflow {
namespace train {
namespace {

// The collections TensorFlow reads as VariableDef protos (those it
// registers a proto function of VariableDef for).
bool IsVariableCollection(const std::string& key) {
  static const auto* const keys = new absl::flat_hash_set<std::string>{
      GraphKeys::kGlobalVariables,      GraphKeys::kLocalVariables,
      GraphKeys::kTrainableVariables,   GraphKeys::kModelVariables,
      GraphKeys::kMetricVariables,      GraphKeys::kMovingAverageVariables,
      GraphKeys::kGlobalStep};
  return keys->contains(key);
}

std::string TensorName(const Node* node, int index) {
  return index == kControlSlot ? node->name() : absl::StrCat(node->name(), ":", index);
}

// A read of each variable handle in `graph_def` (handle node -> "read:0"),
// adding "<handle>/Read/ReadVariableOp" for the handles of `variables`
// nothing reads alone.
absl::flat_hash_map<std::string, std::string> Snapshots(const std::vector<Variable>& variables,
                                                        GraphDef* graph_def) {
  absl::flat_hash_map<std::string, std::string> reads;
  absl::flat_hash_set<std::string> names;
  for (const NodeDef& n : graph_def->node()) {
    names.insert(n.name());
    // A read that waits for nothing: one under control dependencies (an
    // optimizer's read after its update) would run them too.
    if (n.op() != "ReadVariableOp" || n.input_size() != 1) continue;
    std::string handle = n.input(0);
    if (absl::EndsWith(handle, ":0")) handle.resize(handle.size() - 2);
    // TF's own name first, else the first read in graph order.
    const std::string tf_name = absl::StrCat(handle, "/Read/ReadVariableOp");
    if (n.name() == tf_name || !reads.contains(handle)) reads[handle] = absl::StrCat(n.name(), ":0");
  }
  for (const Variable& v : variables) {
    const Node* handle = v.handle().node();
    if (reads.contains(handle->name())) continue;
    std::string name = absl::StrCat(handle->name(), "/Read/ReadVariableOp");
    for (int i = 1; names.contains(name); ++i) {
      name = absl::StrCat(handle->name(), "/Read/ReadVariableOp_", i);
    }
    NodeDef* read = graph_def->add_node();
    read->set_name(name);
    read->set_op("ReadVariableOp");
    read->add_input(handle->name());
    read->set_device(handle->requested_device());
    (*read->mutable_attr())["dtype"].set_type(v.dtype());
    names.insert(name);
    reads[handle->name()] = absl::StrCat(name, ":0");
  }
  return reads;
}

}  // namespace

absl::StatusOr<MetaGraphDef> ExportMetaGraph(const Scope& scope, const Saver* saver) {
  TW_RETURN_IF_ERROR(scope.status());
  MetaGraphDef meta;
  TW_ASSIGN_OR_RETURN(*meta.mutable_graph_def(), scope.ToGraphDef());
  meta.mutable_meta_info_def()->set_meta_graph_version("towerflow");
  if (saver != nullptr) *meta.mutable_saver_def() = saver->saver_def();
  const Graph& graph = *scope.graph();
  const std::vector<std::string> keys = graph.collections().Keys();
  std::vector<Variable> all_variables;
  for (const std::string& key : keys) {
    if (!IsVariableCollection(key)) continue;
    for (Variable& v : GetVariables(graph, key)) {
      if (v.initializer().valid()) all_variables.push_back(std::move(v));
    }
  }
  const absl::flat_hash_map<std::string, std::string> reads =
      Snapshots(all_variables, meta.mutable_graph_def());
  for (const std::string& key : keys) {
    CollectionDef& collection = (*meta.mutable_collection_def())[key];
    if (!IsVariableCollection(key)) {
      for (const CollectionEntry& e : graph.collections().Get(key)) {
        collection.mutable_node_list()->add_value(TensorName(e.node, e.index));
      }
      continue;
    }
    auto* bytes = collection.mutable_bytes_list();
    for (const Variable& v : GetVariables(graph, key)) {
      // TF's import needs the initializer; every GetVariable has one.
      if (!v.initializer().valid()) continue;
      VariableDef def;
      def.set_variable_name(TensorName(v.handle().node(), v.handle().index()));
      def.set_initializer_name(v.initializer().node()->name());
      if (v.initial_value().valid()) {
        def.set_initial_value_name(
            TensorName(v.initial_value().node(), v.initial_value().index()));
      }
      def.set_snapshot_name(reads.at(v.handle().node()->name()));
      def.set_is_resource(true);
      def.set_trainable(v.trainable());
      bytes->add_value(def.SerializeAsString());
    }
  }
  return meta;
}

}  // namespace train
}  // namespace towerflow
