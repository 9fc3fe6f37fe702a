// Named collections of graph elements (TensorFlow's graph collections).
//
// A collection is an ordered list of outputs (a node and an output index) or
// ops (index kControlSlot). Variables are collected as their handle output.
// The typed views users call are in ops/variables.h and graph/output.h
// (GetCollection, GetVariables); this is the storage the Graph owns.
//
// Not thread-safe; part of its Graph.
#ifndef TOWERFLOW_GRAPH_COLLECTIONS_H_
#define TOWERFLOW_GRAPH_COLLECTIONS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace towerflow {

class Node;

// TensorFlow's standard collection keys, with TensorFlow's strings so that
// MetaGraphDef collections keep their names.
struct GraphKeys {
  static constexpr char kGlobalVariables[] = "variables";
  static constexpr char kLocalVariables[] = "local_variables";
  static constexpr char kTrainableVariables[] = "trainable_variables";
  static constexpr char kModelVariables[] = "model_variables";
  static constexpr char kMetricVariables[] = "metric_variables";
  static constexpr char kMovingAverageVariables[] = "moving_average_variables";
  static constexpr char kUpdateOps[] = "update_ops";
  static constexpr char kLosses[] = "losses";
  static constexpr char kRegularizationLosses[] = "regularization_losses";
  static constexpr char kSummaries[] = "summaries";
  static constexpr char kGlobalStep[] = "global_step";
  static constexpr char kTrainOp[] = "train_op";
  static constexpr char kInitOp[] = "init_op";
  static constexpr char kLocalInitOp[] = "local_init_op";
  // String constants holding the paths of files a SavedModel export copies
  // into its assets/ (vocabularies); the loader feeds them the copies' paths.
  static constexpr char kAssetFilepaths[] = "asset_filepaths";
};

struct CollectionEntry {
  Node* node;
  int index;  // output index, or kControlSlot (-1) for the op itself
  bool operator==(const CollectionEntry& o) const { return node == o.node && index == o.index; }
};

class Collections {
 public:
  // Appends `entry` to collection `key` (duplicates allowed, as in TF).
  void Add(absl::string_view key, CollectionEntry entry);
  // Empty when the collection does not exist.
  const std::vector<CollectionEntry>& Get(absl::string_view key) const;
  // Sorted keys of non-empty collections.
  std::vector<std::string> Keys() const;
  // Drops every entry of `node` (the Graph calls this when removing it).
  void RemoveNode(const Node* node);

 private:
  std::map<std::string, std::vector<CollectionEntry>, std::less<>> map_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_COLLECTIONS_H_
