// A graph as a MetaGraphDef, as tf.compat.v1.train.export_meta_graph writes
// it beside each checkpoint (`model.ckpt-200.meta`), so that TensorFlow
// takes up a Towerflow training run:
//
//   saver = tf.compat.v1.train.import_meta_graph("model.ckpt-200.meta")
//   saver.restore(session, "model.ckpt-200")
//   train_op = tf.compat.v1.get_collection("train_op")[0]
//
//   TW_ASSIGN_OR_RETURN(MetaGraphDef meta, train::ExportMetaGraph(root, saver.get()));
//
// The MetaGraphDef holds the GraphDef, the Saver's SaverDef, and every
// collection of the graph: variable collections ("variables",
// "trainable_variables", "global_step", ... -- those TensorFlow reads as
// VariableDef protos) as a bytes_list of VariableDef (is_resource, the
// VarHandleOp's output, its initializer and initial value, a read of it),
// the others as a node_list of names ("loss:0", "train_op_node"). TF makes
// a variable's read from its snapshot_name, a ReadVariableOp of it with no
// control inputs; a variable without one gets the read TF's own variables
// have, "<variable>/Read/ReadVariableOp", in the exported GraphDef alone.
#ifndef TOWERFLOW_TRAIN_META_GRAPH_H_
#define TOWERFLOW_TRAIN_META_GRAPH_H_

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "proto/meta_graph.pb.h"
#include "train/saver.h"

namespace towerflow {
namespace train {

// `saver` may be null (no saver_def). The scope's sticky error, if any.
absl::StatusOr<MetaGraphDef> ExportMetaGraph(const Scope& scope, const Saver* saver);

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_META_GRAPH_H_
