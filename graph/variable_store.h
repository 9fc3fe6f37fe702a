// The record of variables GetVariable created in a graph (TensorFlow's
// _VariableStore). The Graph owns it; ops/variables.h is the API over it.
//
// Not thread-safe; part of its Graph.
#ifndef TOWERFLOW_GRAPH_VARIABLE_STORE_H_
#define TOWERFLOW_GRAPH_VARIABLE_STORE_H_

#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "core/tensor_shape.h"
#include "core/types.h"

namespace towerflow {

class Node;

struct VariableRecord {
  std::string name;        // full variable-scope name, e.g. "conv1/weights"
  Node* handle = nullptr;  // the VarHandleOp
  DataType dtype = DT_INVALID;
  TensorShape shape;
  Node* initializer = nullptr;  // the AssignVariableOp of the initial value
  Node* initial_value = nullptr;
  int initial_value_index = 0;
  bool trainable = true;
};

class VariableStore {
 public:
  // nullptr when absent.
  const VariableRecord* Find(absl::string_view name) const;
  const VariableRecord* FindByHandle(const Node* handle) const;
  // REQUIRES: no record of that name yet.
  void Add(VariableRecord record);
  // Drops the records that refer to `node` (the Graph calls this when
  // removing nodes).
  void RemoveNode(const Node* node);

 private:
  std::map<std::string, VariableRecord, std::less<>> records_;
  absl::flat_hash_map<const Node*, const VariableRecord*> by_handle_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_VARIABLE_STORE_H_
