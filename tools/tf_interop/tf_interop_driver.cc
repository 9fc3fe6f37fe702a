// Towerflow's side of the TensorFlow interop check (tools/tf_interop/
// check.py): what the check needs Towerflow to do with files, printed as
// JSON for the check to compare with TensorFlow's numbers.
//
//   tf_interop_driver train --graph=G --checkpoint=P --feeds=x,y --feed_dir=D --steps=N
//       [--filename_tensor=save/Const:0 --restore_op=save/restore_all --loss=loss
//        --train_op=train]
//     restores a tf.compat.v1 Saver checkpoint into the GraphDef's variables
//     (the Saver's own restore op, fed the prefix), runs N training steps, step
//     i fed FEED_i.npy from D for each feed, and prints {"losses": [the loss of
//     each step, before its update]}. With --meta=M.meta in place of --graph,
//     the MetaGraphDef's graph, SaverDef and "train_op" collection.
//   tf_interop_driver cases --manifest=M.json
//     the per-op cases of op_cases.py: M is a JSON array of {"graph": G.pb,
//     "fetch": ["op:0", ...], "out": PREFIX}; each GraphDef runs in a session
//     of its own with the graph optimizer off, each fetched tensor goes to
//     PREFIX.<i>.pb (a TensorProto, exact for NaN and infinities), and a JSON
//     line per case says {"code": the status code, "message": its message}.
//   tf_interop_driver op_defs --out=F
//     writes every registered op's OpDef to F (an OpList).
//   tf_interop_driver keras --dir=D --feed=x=@X.npy,y=@Y.npy
//     trains a Keras-style model (Dense, BatchNormalization, Dropout, softmax)
//     replicated on two virtual CPUs for three epochs, saves it as a
//     SavedModel in D and prints {"NAME": its predictions on x} (NAME: the
//     serving signature's output).
//   tf_interop_driver evaluate --graph=G --checkpoint=P --feed=A=@A.npy,B=@B.npy --fetch=X,Y
//     assigns every variable of the GraphDef (VarHandleOp or VariableV2, by its
//     shared name or node name) the checkpoint's tensor of that name, then
//     prints {"NAME": tensor, ...} of the fetches (tools/run.h's TensorToJson).
//   tf_interop_driver checkpoint --checkpoint=P
//     prints every tensor of the checkpoint: {"NAME": tensor, ...}.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/file_io.h"
#include "core/status_macros.h"
#include "framework/node_def_util.h"
#include "framework/tensor_bundle.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"
#include "keras/model.h"
#include "nlohmann/json.hpp"
#include "runtime/session.h"
#include "tools/flags.h"
#include "tools/run.h"
#include "train/optimizers.h"

ABSL_FLAG(std::string, graph, "", "the GraphDef (.pb or .pbtxt)");
ABSL_FLAG(std::string, meta, "", "train: a MetaGraphDef (.meta) in place of --graph");
ABSL_FLAG(std::string, dir, "", "keras: where the SavedModel goes");
ABSL_FLAG(std::string, manifest, "", "cases: the JSON list of cases");
ABSL_FLAG(std::string, out, "", "op_defs: where the OpList goes");
ABSL_FLAG(std::string, checkpoint, "", "the checkpoint's prefix");
ABSL_FLAG(std::string, filename_tensor, "save/Const:0", "train: the Saver's filename tensor");
ABSL_FLAG(std::string, restore_op, "save/restore_all", "train: the Saver's restore op");
ABSL_FLAG(std::vector<std::string>, feeds, {}, "train: fed tensors, step i's from FEED_i.npy");
ABSL_FLAG(std::string, feed_dir, "", "train: where the feeds' .npy files are");
ABSL_FLAG(int32_t, steps, 1, "train: training steps");
ABSL_FLAG(std::string, loss, "loss", "train: the loss fetched each step");
ABSL_FLAG(std::string, train_op, "train", "train: the training op run each step");
ABSL_FLAG(std::vector<std::string>, feed, {}, "evaluate: NAME=@FILE.npy, comma-separated");
ABSL_FLAG(std::vector<std::string>, fetch, {}, "evaluate: tensors to print, comma-separated");
ABSL_FLAG(int32_t, cpus, 2, "train, evaluate: virtual CPU devices (a graph's towers)");

namespace towerflow {
namespace {

// The dtype of the tensor `name` ("node" or "node:k") feeds: the node's
// dtype attr (a Placeholder's).
absl::StatusOr<DataType> FedDtype(const GraphDef& graph, const std::string& name) {
  TW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
  for (const NodeDef& n : graph.node()) {
    if (n.name() != id.node) continue;
    DataType dtype;
    TW_RETURN_IF_ERROR(GetNodeAttr(n, "dtype", &dtype));
    return dtype;
  }
  return absl::NotFoundError(absl::StrCat("no node '", id.node, "' to feed"));
}

// A session over `graph` on --cpus virtual CPUs, placed softly (the
// graph's towers).
absl::StatusOr<std::unique_ptr<Session>> SessionOver(const GraphDef& graph) {
  SessionOptions options;
  options.device_count["CPU"] = absl::GetFlag(FLAGS_cpus);
  options.allow_soft_placement = true;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TW_RETURN_IF_ERROR(session->Create(graph));
  return session;
}

absl::Status Train() {
  GraphDef graph;
  std::string filename_tensor = absl::GetFlag(FLAGS_filename_tensor);
  std::string restore_op = absl::GetFlag(FLAGS_restore_op);
  std::string train_op = absl::GetFlag(FLAGS_train_op);
  if (!absl::GetFlag(FLAGS_meta).empty()) {
    TW_ASSIGN_OR_RETURN(MetaGraphDef meta, ReadMetaGraphDef(absl::GetFlag(FLAGS_meta)));
    auto it = meta.collection_def().find("train_op");
    if (it == meta.collection_def().end() || it->second.node_list().value_size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(absl::GetFlag(FLAGS_meta), " has no \"train_op\" collection of one op"));
    }
    train_op = it->second.node_list().value(0);
    filename_tensor = meta.saver_def().filename_tensor_name();
    restore_op = meta.saver_def().restore_op_name();
    graph = std::move(*meta.mutable_graph_def());
  } else {
    TW_ASSIGN_OR_RETURN(graph, ReadGraphDef(absl::GetFlag(FLAGS_graph)));
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, SessionOver(graph));
  Tensor prefix(DT_STRING, TensorShape());
  prefix.data<std::string>()[0] = absl::GetFlag(FLAGS_checkpoint);
  TW_RETURN_IF_ERROR(session->Run({{filename_tensor, prefix}}, {}, {restore_op}, nullptr));
  std::vector<std::string> losses;
  for (int step = 0; step < absl::GetFlag(FLAGS_steps); ++step) {
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const std::string& feed : absl::GetFlag(FLAGS_feeds)) {
      const std::string path =
          absl::StrCat(absl::GetFlag(FLAGS_feed_dir), "/", feed, "_", step, ".npy");
      TW_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
      TW_ASSIGN_OR_RETURN(DataType dtype, FedDtype(graph, feed));
      TW_ASSIGN_OR_RETURN(Tensor value, tools::TensorFromNpy(bytes, dtype));
      feeds.emplace_back(feed, std::move(value));
    }
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session->Run(feeds, {absl::GetFlag(FLAGS_loss)}, {train_op}, &out));
    if (out[0].dtype() != DT_FLOAT || out[0].NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the loss ", absl::GetFlag(FLAGS_loss), " is not a float scalar: ", out[0].DebugString()));
    }
    losses.push_back(absl::StrFormat("%.9g", out[0].data<float>()[0]));
  }
  std::printf("{\"losses\": [%s]}\n", absl::StrJoin(losses, ", ").c_str());
  return absl::OkStatus();
}

absl::Status Evaluate() {
  TW_ASSIGN_OR_RETURN(GraphDef graph, ReadGraphDef(absl::GetFlag(FLAGS_graph)));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> checkpoint,
                      BundleReader::Open(absl::GetFlag(FLAGS_checkpoint)));
  // One Const and one assignment per variable the checkpoint holds.
  std::vector<std::string> assigns;
  GraphDef restore;
  for (const NodeDef& n : graph.node()) {
    if (n.op() != "VarHandleOp" && n.op() != "VariableV2") continue;
    std::string key;
    if (!GetNodeAttr(n, "shared_name", &key).ok() || key.empty()) key = n.name();
    if (!checkpoint->Lookup(key).ok()) continue;
    TW_ASSIGN_OR_RETURN(Tensor value, checkpoint->Read(key));
    NodeDef* c = restore.add_node();
    c->set_name(absl::StrCat("interop_restore/value/", n.name()));
    c->set_op("Const");
    c->set_device(n.device());
    (*c->mutable_attr())["dtype"].set_type(value.dtype());
    *(*c->mutable_attr())["value"].mutable_tensor() = value.AsProto();
    NodeDef* a = restore.add_node();
    a->set_name(absl::StrCat("interop_restore/assign/", n.name()));
    a->set_device(n.device());
    a->add_input(n.name());
    a->add_input(c->name());
    if (n.op() == "VarHandleOp") {
      a->set_op("AssignVariableOp");
      (*a->mutable_attr())["dtype"].set_type(value.dtype());
    } else {
      a->set_op("Assign");
      (*a->mutable_attr())["T"].set_type(value.dtype());
    }
    assigns.push_back(a->name());
  }
  for (const NodeDef& n : restore.node()) *graph.add_node() = n;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, SessionOver(graph));
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& feed : absl::GetFlag(FLAGS_feed)) {
    const size_t eq = feed.find('=');
    if (eq == std::string::npos) return absl::InvalidArgumentError("--feed wants NAME=@FILE.npy");
    const std::string name = feed.substr(0, eq);
    TW_ASSIGN_OR_RETURN(DataType dtype, FedDtype(graph, name));
    TW_ASSIGN_OR_RETURN(Tensor value, tools::TensorFromJsonOrFile(feed.substr(eq + 1), dtype));
    feeds.emplace_back(name, std::move(value));
  }
  // Fed too: a variable made under control dependencies (a moving average
  // after the train op) needs them to be assigned.
  TW_RETURN_IF_ERROR(session->Run(feeds, {}, assigns, nullptr));
  const std::vector<std::string> fetches = absl::GetFlag(FLAGS_fetch);
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(session->Run(feeds, fetches, {}, &out));
  std::vector<std::string> items;
  for (size_t i = 0; i < fetches.size(); ++i) {
    items.push_back(absl::StrCat("\"", fetches[i], "\": ", tools::TensorToJson(out[i])));
  }
  std::printf("{%s}\n", absl::StrJoin(items, ", ").c_str());
  return absl::OkStatus();
}

absl::Status DumpCheckpoint() {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> checkpoint,
                      BundleReader::Open(absl::GetFlag(FLAGS_checkpoint)));
  std::vector<std::string> items;
  for (const auto& [name, entry] : checkpoint->entries()) {
    TW_ASSIGN_OR_RETURN(Tensor value, checkpoint->Read(name));
    items.push_back(absl::StrCat("\"", name, "\": ", tools::TensorToJson(value)));
  }
  std::printf("{%s}\n", absl::StrJoin(items, ", ").c_str());
  return absl::OkStatus();
}

// --feed's NAME=@FILE.npy as a tensor of `dtype`.
absl::StatusOr<Tensor> FedFile(const std::string& name, DataType dtype) {
  for (const std::string& feed : absl::GetFlag(FLAGS_feed)) {
    if (absl::StartsWith(feed, name + "=")) {
      return tools::TensorFromJsonOrFile(feed.substr(name.size() + 1), dtype);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("--feed has no ", name, "=@FILE.npy"));
}

absl::Status KerasExport() {
  TW_ASSIGN_OR_RETURN(Tensor x, FedFile("x", DT_FLOAT));
  TW_ASSIGN_OR_RETURN(Tensor y, FedFile("y", DT_INT32));
  if (x.dims() != 2) return absl::InvalidArgumentError("x must be [rows, features]");
  keras::Sequential model({x.dim_size(1)}, {
                                               keras::Dense(16, {.activation = "relu"}),
                                               keras::BatchNormalization(),
                                               keras::Dropout(0.25),
                                               keras::Dense(3, {.activation = "softmax"}),
                                           });
  TW_RETURN_IF_ERROR(model.SetRandomSeed(1));
  TW_RETURN_IF_ERROR(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1),
                                   "sparse_categorical_crossentropy"));
  keras::Model replicated = keras::ReplicatedModel(model, {.replicas = 2});
  TW_RETURN_IF_ERROR(replicated.Fit(x, y, {.batch_size = 8, .epochs = 3, .verbose = 0}).status());
  TW_RETURN_IF_ERROR(replicated.Save(absl::GetFlag(FLAGS_dir), keras::Model::SaveFormat::kSavedModel));
  TW_ASSIGN_OR_RETURN(Tensor predictions, replicated.Predict(x));
  std::printf("{\"predictions\": %s}\n", tools::TensorToJson(predictions).c_str());
  return absl::OkStatus();
}

// One case: its status, and its outputs written beside it.
absl::Status RunCase(const std::string& graph_path, const std::vector<std::string>& fetch,
                     const std::string& out) {
  TW_ASSIGN_OR_RETURN(GraphDef graph, ReadGraphDef(graph_path));
  SessionOptions options;
  options.optimizer = GraphOptimizerOptions::None();  // the op's own kernel, not folding
  options.intra_op_parallelism_threads = 1;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TW_RETURN_IF_ERROR(session->Create(graph));
  std::vector<Tensor> outputs;
  TW_RETURN_IF_ERROR(session->Run({}, fetch, {}, &outputs));
  for (size_t i = 0; i < outputs.size(); ++i) {
    TW_RETURN_IF_ERROR(
        WriteFileAtomically(absl::StrCat(out, ".", i, ".pb"), outputs[i].AsProto().SerializeAsString()));
  }
  return absl::OkStatus();
}

absl::Status RunCases() {
  TW_ASSIGN_OR_RETURN(std::string text, ReadFileToString(absl::GetFlag(FLAGS_manifest)));
  const nlohmann::json manifest = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(absl::GetFlag(FLAGS_manifest),
                                                   " is not a JSON array of cases"));
  }
  for (const nlohmann::json& c : manifest) {
    if (!c.is_object() || !c.contains("graph") || !c["graph"].is_string() ||
        !c.contains("fetch") || !c["fetch"].is_array() || !c.contains("out") ||
        !c["out"].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("a case is not {graph, fetch, out}: ",
                                                     c.dump()));
    }
    std::vector<std::string> fetch;
    for (const nlohmann::json& f : c["fetch"]) {
      if (f.is_string()) fetch.push_back(f.get<std::string>());
    }
    const absl::Status status =
        RunCase(c["graph"].get<std::string>(), fetch, c["out"].get<std::string>());
    nlohmann::json line;
    line["code"] = static_cast<int>(status.code());
    line["message"] = std::string(status.message());
    std::printf("%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return absl::OkStatus();
}

absl::Status WriteOpDefs() {
  OpList list;
  const OpRegistry& registry = *OpRegistry::Global();
  for (const std::string& name : registry.ListOps()) {
    *list.add_op() = registry.Find(name)->op_def;
  }
  return WriteFileAtomically(absl::GetFlag(FLAGS_out), list.SerializeAsString());
}

int Main(const std::vector<std::string>& args) {
  const std::string command = args.size() == 1 ? args[0] : "";
  absl::Status status;
  if (command == "train") {
    status = Train();
  } else if (command == "evaluate") {
    status = Evaluate();
  } else if (command == "checkpoint") {
    status = DumpCheckpoint();
  } else if (command == "keras") {
    status = KerasExport();
  } else if (command == "cases") {
    status = RunCases();
  } else if (command == "op_defs") {
    status = WriteOpDefs();
  } else {
    std::fprintf(stderr,
                 "tf_interop_driver: give one command: train, evaluate, checkpoint, keras, cases or op_defs\n");
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "tf_interop_driver %s: %s\n", command.c_str(),
                 status.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  return towerflow::Main(towerflow::ParseCommandLine(
      argc, argv,
      "tf_interop_driver: Towerflow's side of tools/tf_interop/check.py.\n\nusage: "
      "tf_interop_driver train|evaluate|checkpoint|keras|cases|op_defs [FLAGS]"));
}
