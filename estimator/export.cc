// Estimator::ExportGraph, Estimator::Export (a frozen PREDICT graph),
// BuildServingMetaGraph, Estimator::ExportSavedModel and ExportedModel.
#include "estimator/export.h"

#include <deque>
#include <filesystem>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "estimator/estimator.h"
#include "estimator/estimator_internal.h"
#include "framework/tensor_bundle.h"
#include "graph/graph_io.h"
#include "ops/gen/array_ops.h"
#include "proto/meta_graph.pb.h"
#include "saved_model/builder.h"
#include "saved_model/loader.h"
#include "train/checkpoint.h"
#include "train/saver.h"

namespace towerflow {

namespace estimator_internal {

absl::StatusOr<std::unique_ptr<ModelGraph>> BuildServingModelGraph(
    const ModelFn& model_fn, const ServingGraphOptions& options,
    const ServingInputReceiverFn& receiver_fn) {
  if (!receiver_fn) return absl::InvalidArgumentError("Export: no serving input receiver");
  const auto add_inputs = [&](ModelGraph* g) {
    ServingInputReceiver receiver = receiver_fn(g->root);
    if (!g->root.ok()) return;
    if (receiver.receiver_tensors.empty()) {
      g->root.UpdateStatus(
          absl::InvalidArgumentError("Export: the serving input receiver has no receiver tensors"));
      return;
    }
    for (const auto& [name, t] : receiver.receiver_tensors) {
      if (!t.valid()) {
        g->root.UpdateStatus(absl::InvalidArgumentError(
            absl::StrCat("Export: receiver tensor '", name, "' is not set")));
        return;
      }
    }
    g->features = std::move(receiver.features);
    g->receiver_tensors = std::move(receiver.receiver_tensors);
  };
  return BuildGraph(model_fn, options.seed, options.params, ModeKeys::kPredict, add_inputs,
                    options.global_step);
}

}  // namespace estimator_internal
namespace {

using estimator_internal::ModelGraph;

constexpr char kExportFile[] = "model.meta";

// The node an input string ("x", "x:1", "^x") names.
std::string NodeOf(const std::string& input) {
  std::string name = input[0] == '^' ? input.substr(1) : input;
  return name.substr(0, name.find(':'));
}

// The nodes of `def` that `outputs` need, in `def`'s order.
GraphDef Prune(const GraphDef& def, const std::vector<std::string>& outputs) {
  absl::flat_hash_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : def.node()) by_name[n.name()] = &n;
  absl::flat_hash_set<std::string> keep;
  std::deque<std::string> pending(outputs.begin(), outputs.end());
  while (!pending.empty()) {
    const std::string name = pending.front();
    pending.pop_front();
    auto it = by_name.find(name);
    if (it == by_name.end() || !keep.insert(name).second) continue;
    for (const std::string& input : it->second->input()) pending.push_back(NodeOf(input));
  }
  GraphDef out;
  *out.mutable_versions() = def.versions();
  *out.mutable_library() = def.library();
  for (const NodeDef& n : def.node()) {
    if (keep.contains(n.name())) *out.add_node() = n;
  }
  return out;
}

NodeDef ConstNode(const std::string& name, const std::string& device, TensorProto value) {
  NodeDef c;
  c.set_name(name);
  c.set_op("Const");
  c.set_device(device);
  (*c.mutable_attr())["dtype"].set_type(value.dtype());
  *(*c.mutable_attr())["value"].mutable_tensor() = std::move(value);
  return c;
}

// Replaces every read of a variable by a Const holding its checkpoint value,
// and every ResourceGather by a GatherV2 from one (TensorFlow's
// freeze_graph), then drops what the outputs no longer need.
// `restore_names`: VarHandleOp node -> checkpoint name, for variables not
// saved under their own name.
absl::StatusOr<GraphDef> Freeze(
    const GraphDef& def, const std::vector<std::string>& outputs, const std::string& checkpoint,
    const absl::flat_hash_map<std::string, std::string>& restore_names) {
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> tensors, ReadCheckpoint(checkpoint));
  absl::flat_hash_map<std::string, const Tensor*> values;  // by checkpoint name
  for (const NamedTensor& nt : tensors) values[nt.name] = &nt.tensor;
  absl::flat_hash_map<std::string, std::string> variable_of;  // VarHandleOp -> shared name
  for (const NodeDef& n : def.node()) {
    if (n.op() != "VarHandleOp") continue;
    auto it = n.attr().find("shared_name");
    variable_of[n.name()] =
        it != n.attr().end() && !it->second.s().empty() ? it->second.s() : n.name();
    if (auto renamed = restore_names.find(n.name()); renamed != restore_names.end()) {
      variable_of[n.name()] = renamed->second;
    }
  }
  GraphDef frozen = Prune(def, outputs);
  std::vector<NodeDef> added;  // the constants gathers read from
  for (NodeDef& n : *frozen.mutable_node()) {
    const bool read = n.op() == "ReadVariableOp", gather = n.op() == "ResourceGather";
    if ((!read && !gather) || n.input_size() == 0) continue;
    auto var = variable_of.find(NodeOf(n.input(0)));
    if (var == variable_of.end()) continue;
    auto value = values.find(var->second);
    if (value == values.end()) {
      return absl::NotFoundError(absl::StrCat("Export: variable ", var->second, " read by ",
                                              n.name(), " is not in checkpoint ", checkpoint));
    }
    if (read) {
      NodeDef c = ConstNode(n.name(), n.device(), value->second->AsProto());
      for (const std::string& input : n.input()) {
        if (input[0] == '^') c.add_input(input);
      }
      n = std::move(c);
      continue;
    }
    // ResourceGather(var, indices) -> GatherV2(Const(value), indices, 0).
    Tensor axis(DT_INT32, TensorShape({}));
    axis.data<int32_t>()[0] = 0;
    added.push_back(ConstNode(n.name() + "/frozen_params", n.device(), value->second->AsProto()));
    added.push_back(ConstNode(n.name() + "/frozen_axis", n.device(), axis.AsProto()));
    NodeDef g;
    g.set_name(n.name());
    g.set_op("GatherV2");
    g.set_device(n.device());
    g.add_input(added[added.size() - 2].name());
    g.add_input(n.input(1));
    g.add_input(added.back().name());
    for (int i = 2; i < n.input_size(); ++i) g.add_input(n.input(i));  // control inputs
    auto dtype = n.attr().find("dtype"), tindices = n.attr().find("Tindices");
    if (dtype == n.attr().end() || tindices == n.attr().end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Export: ResourceGather ", n.name(), " lacks its dtype or Tindices attr"));
    }
    auto& attr = *g.mutable_attr();
    attr["Tparams"].set_type(dtype->second.type());
    attr["Tindices"] = tindices->second;
    attr["Taxis"].set_type(DT_INT32);
    if (auto it = n.attr().find("batch_dims"); it != n.attr().end())
      attr["batch_dims"] = it->second;
    n = std::move(g);
  }
  for (NodeDef& c : added) *frozen.add_node() = std::move(c);
  frozen = Prune(frozen, outputs);
  absl::flat_hash_set<std::string> kept;
  for (const NodeDef& n : frozen.node()) kept.insert(n.name());
  for (NodeDef& n : *frozen.mutable_node()) {
    if (n.op() == "VarHandleOp") {
      return absl::UnimplementedError(absl::StrCat(
          "Export: variable ", n.name(),
          " is used other than through ReadVariableOp or ResourceGather; cannot freeze it"));
    }
    // Colocation with a node that is gone (the variables) no longer applies.
    auto cls = n.mutable_attr()->find("_class");
    if (cls == n.mutable_attr()->end()) continue;
    AttrValue::ListValue* list = cls->second.mutable_list();
    std::vector<std::string> still;
    for (const std::string& loc : list->s()) {
      if (kept.contains(loc.substr(loc.find('@') + 1))) still.push_back(loc);
    }
    if (still.empty()) {
      n.mutable_attr()->erase(cls);
    } else {
      list->clear_s();
      for (const std::string& loc : still) list->add_s(loc);
    }
  }
  return frozen;
}

// The signatures of export_outputs (TF's rules: see BuildServingMetaGraph)
// over the receiver tensors; returns the output nodes.
absl::StatusOr<std::vector<std::string>> AddSignatures(
    const ModelGraph& g, MetaGraphDef* meta, std::map<std::string, std::string>* excluded) {
  std::map<std::string, ExportOutput> outputs = g.spec.export_outputs;
  if (outputs.empty()) {
    if (g.spec.predictions.empty()) {
      return absl::InvalidArgumentError("Export: model_fn returned no predictions or outputs");
    }
    outputs.emplace(kDefaultServingSignatureDefKey, ExportOutput::Predict(g.spec.predictions));
  }
  const bool has_default = outputs.count(kDefaultServingSignatureDefKey) > 0;
  if (!has_default && outputs.size() > 1) {
    return absl::InvalidArgumentError(
        "Multiple export_outputs were provided, but none of them is specified as the default. "
        "Do this by naming one of them with "
        "signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY.");
  }
  std::vector<std::string> output_nodes;
  const Scope outputs_scope = g.root.NewSubScope("outputs");
  for (const auto& [key, output] : outputs) {
    TW_RETURN_IF_ERROR(output.Validate());
    SignatureDef signature;
    signature.set_method_name(output.method_name());
    const auto add_input = [&](const std::string& name, const Output& t) {
      TensorInfo& info = (*signature.mutable_inputs())[name];
      info.set_name(t.name());
      info.set_dtype(t.type());
      *info.mutable_tensor_shape() = t.shape().AsProto();
    };
    if (output.kind() == ExportOutput::Kind::kPredict) {
      for (const auto& [name, t] : g.receiver_tensors) add_input(name, t);
    } else {
      const Output* single =
          g.receiver_tensors.size() == 1 ? &g.receiver_tensors.begin()->second : nullptr;
      if (single == nullptr || single->type() != DT_STRING) {
        std::vector<std::string> got;
        for (const auto& [name, t] : g.receiver_tensors) {
          got.push_back(absl::StrCat(name, ": ", DataTypeString(t.type())));
        }
        (*excluded)[key] = absl::StrCat(
            output.kind() == ExportOutput::Kind::kClassification ? "Classification" : "Regression",
            " input must be a single string Tensor; got {", absl::StrJoin(got, ", "), "}");
        continue;
      }
      add_input(
          output.kind() == ExportOutput::Kind::kClassification ? kClassifyInputs : kRegressInputs,
          *single);
    }
    const Scope out_scope =
        key == kDefaultServingSignatureDefKey ? outputs_scope : outputs_scope.NewSubScope(key);
    for (const auto& [name, t] : output.outputs()) {
      const Output id = ops::Identity(out_scope.WithOpName(name), t);
      TW_RETURN_IF_ERROR(g.root.status());
      output_nodes.push_back(id.node()->name());
      TensorInfo& info = (*signature.mutable_outputs())[name];
      info.set_name(id.name());
      info.set_dtype(t.type());
      *info.mutable_tensor_shape() = t.shape().AsProto();
    }
    (*meta->mutable_signature_def())[key] = std::move(signature);
  }
  // A single signature under another key is the default as well.
  if (!has_default && meta->signature_def_size() == 1) {
    const SignatureDef only = meta->signature_def().begin()->second;
    (*meta->mutable_signature_def())[kDefaultServingSignatureDefKey] = only;
  }
  if (meta->signature_def().empty()) {
    std::vector<std::string> why;
    for (const auto& [key, reason] : *excluded) why.push_back(absl::StrCat(key, ": ", reason));
    return absl::InvalidArgumentError(
        absl::StrCat("Export: no signature could be built (", absl::StrJoin(why, "; "), ")"));
  }
  return output_nodes;
}

// TF's builder's assets: each string constant of GraphKeys::kAssetFilepaths
// names a file, copied into assets/ under its base name (`assets`) and
// listed in asset_file_def for the loader to feed.
absl::Status AddAssets(const ModelGraph& g, MetaGraphDef* meta,
                       std::map<std::string, std::string>* assets) {
  for (const Output& t : GetCollection(*g.root.graph(), GraphKeys::kAssetFilepaths)) {
    const AttrValue* value = t.node()->IsOp("Const") ? t.node()->FindAttr("value") : nullptr;
    absl::StatusOr<std::vector<std::string>> paths =
        value != nullptr ? TensorProtoAsStrings(value->tensor())
                         : absl::InvalidArgumentError("not a Const");
    if (!paths.ok() || paths->size() != 1 || (*paths)[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Export: asset ", t.name(), " must be a scalar string Const holding a file's path"));
    }
    const std::string& source = (*paths)[0];
    const std::string filename = std::filesystem::path(source).filename().string();
    auto [it, added] = assets->emplace(filename, source);
    if (!added && it->second != source) {
      return absl::InvalidArgumentError(absl::StrCat("Export: assets ", it->second, " and ", source,
                                                     " would both be assets/", filename));
    }
    AssetFileDef* asset = meta->add_asset_file_def();
    asset->mutable_tensor_info()->set_name(t.name());
    asset->mutable_tensor_info()->set_dtype(DT_STRING);
    asset->set_filename(filename);
  }
  return absl::OkStatus();
}

// VarHandleOp node -> the checkpoint name its value is restored from, for
// variables not restored under their own name (moving averages, mirrors).
absl::flat_hash_map<std::string, std::string> RestoreNames(const ModelGraph& g) {
  absl::flat_hash_map<std::string, std::string> restore_names;
  for (const auto& [name, var] : g.spec.restore_var_names) {
    restore_names[var.handle().node()->name()] = name;
  }
  // A mirror holds what its variable restores.
  for (const auto& [mirror, source] : g.spec.mirrored_from) {
    auto it = restore_names.find(source.handle().node()->name());
    restore_names[mirror] = it != restore_names.end() ? it->second : source.name();
  }
  return restore_names;
}

// TF's export logs the signatures it leaves out.
void LogExcluded(const std::map<std::string, std::string>& excluded, std::ostream* log) {
  for (const auto& [key, why] : excluded) {
    *log << LogTimestamp() << ": Signature '" << key << "' is left out of the export: " << why
         << "\n";
  }
}

}  // namespace

absl::Status Estimator::ExportGraph(ModeKeys mode, const Signature& features,
                                    const Signature& labels, const std::string& path) {
  TW_ASSIGN_OR_RETURN(
      std::unique_ptr<ModelGraph> g,
      estimator_internal::BuildModelGraph(model_fn_, config_, params_, mode, features, labels));
  TW_ASSIGN_OR_RETURN(GraphDef def, g->root.ToGraphDef());
  return WriteGraphDef(def, path);
}

absl::StatusOr<ServingMetaGraph> BuildServingMetaGraph(const ModelFn& model_fn,
                                                       const ServingInputReceiverFn& receiver_fn,
                                                       const ServingGraphOptions& options) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<ModelGraph> g,
                      estimator_internal::BuildServingModelGraph(model_fn, options, receiver_fn));
  ServingMetaGraph out;
  MetaGraphDef& meta = out.meta_graph_def;
  meta.mutable_meta_info_def()->add_tags(kSavedModelTagServe);
  meta.mutable_meta_info_def()->set_meta_graph_version("towerflow");
  TW_RETURN_IF_ERROR(AddSignatures(*g, &meta, &out.excluded_signatures).status());
  TW_ASSIGN_OR_RETURN(std::unique_ptr<train::Saver> saver, train::Saver::Create(g->root));
  *meta.mutable_saver_def() = saver->saver_def();
  // Local variables (metrics, mirrors) start after the restore, as TF's
  // Estimator export runs local_variables_initializer as its main op.
  const Operation init_local = LocalVariablesInitializer(g->root);
  TW_RETURN_IF_ERROR(g->root.status());
  (*meta.mutable_collection_def())["saved_model_main_op"].mutable_node_list()->add_value(
      init_local.node()->name());
  TW_RETURN_IF_ERROR(AddAssets(*g, &meta, &out.assets));
  TW_ASSIGN_OR_RETURN(*meta.mutable_graph_def(), g->root.ToGraphDef());
  // The variables as the export's Saver restores them: under their own
  // names, with the values model_fn restores them from.
  const absl::flat_hash_map<std::string, std::string> restore_names = RestoreNames(*g);
  for (const Variable& v : saver->variables()) {
    auto renamed = restore_names.find(v.handle().node()->name());
    out.variables.push_back(
        {v.name(), renamed != restore_names.end() ? renamed->second : v.name()});
  }
  return out;
}

absl::StatusOr<std::string> Estimator::Export(const std::string& export_dir,
                                              const Signature& features) {
  TW_RETURN_IF_ERROR(estimator_internal::CheckConfig(config_));
  TW_ASSIGN_OR_RETURN(const std::string checkpoint, LatestCheckpoint(config_.model_dir));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<ModelGraph> g,
                      estimator_internal::BuildServingModelGraph(
                          model_fn_, {.params = params_, .seed = config_.random_seed},
                          BuildRawServingInputReceiverFn(features)));
  MetaGraphDef meta;
  std::map<std::string, std::string> excluded;
  TW_ASSIGN_OR_RETURN(std::vector<std::string> output_nodes, AddSignatures(*g, &meta, &excluded));
  LogExcluded(excluded, config_.log);
  TW_ASSIGN_OR_RETURN(GraphDef def, g->root.ToGraphDef());
  TW_ASSIGN_OR_RETURN(*meta.mutable_graph_def(),
                      Freeze(def, output_nodes, checkpoint, RestoreNames(*g)));
  TW_RETURN_IF_ERROR(CreateDirectories(export_dir));
  TW_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(export_dir, "/", kExportFile),
                                         SerializeDeterministic(meta)));
  *config_.log << LogTimestamp() << ": Exported " << checkpoint << " to " << export_dir << "\n";
  return export_dir;
}

absl::StatusOr<std::string> Estimator::ExportSavedModel(const std::string& export_dir_base,
                                                        const Signature& features) {
  return ExportSavedModel(export_dir_base, BuildRawServingInputReceiverFn(features));
}

absl::StatusOr<std::string> Estimator::ExportSavedModel(const std::string& export_dir_base,
                                                        const ServingInputReceiverFn& receiver_fn) {
  TW_RETURN_IF_ERROR(estimator_internal::CheckConfig(config_));
  TW_ASSIGN_OR_RETURN(const std::string checkpoint, LatestCheckpoint(config_.model_dir));
  TW_ASSIGN_OR_RETURN(ServingMetaGraph serving,
                      BuildServingMetaGraph(model_fn_, receiver_fn,
                                            {.params = params_, .seed = config_.random_seed}));
  LogExcluded(serving.excluded_signatures, config_.log);
  // Only the exported variables are read: a checkpoint also holds
  // optimizer slots.
  TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(checkpoint));
  std::vector<NamedTensor> variables;
  for (const ServingMetaGraph::SavedVariable& v : serving.variables) {
    absl::StatusOr<Tensor> value = reader->Read(v.source);
    if (absl::IsNotFound(value.status())) {
      return absl::NotFoundError(absl::StrCat("ExportSavedModel: variable ", v.name,
                                              " (restored from ", v.source,
                                              ") is not in checkpoint ", checkpoint));
    }
    if (!value.ok()) return value.status();
    variables.push_back({v.name, *std::move(value)});
  }
  TW_ASSIGN_OR_RETURN(std::string dir, WriteSavedModel(export_dir_base, serving.meta_graph_def,
                                                       [&](const std::string& prefix) {
                                                         return WriteCheckpoint(prefix, variables);
                                                       },
                                                       {.files = serving.assets}));
  *config_.log << LogTimestamp() << ": SavedModel written to " << dir << " (from " << checkpoint
               << ")\n";
  return dir;
}

absl::StatusOr<ExportedModel> ExportedModel::Load(const std::string& export_dir,
                                                  const SessionOptions& options) {
  const std::string path = absl::StrCat(export_dir, "/", kExportFile);
  TW_ASSIGN_OR_RETURN(MetaGraphDef meta, ReadMetaGraphDef(path));
  auto it = meta.signature_def().find(kDefaultServingSignatureDefKey);
  if (it == meta.signature_def().end()) {
    return absl::DataLossError(
        absl::StrCat(path, " has no '", kDefaultServingSignatureDefKey, "' signature"));
  }
  ExportedModel model;
  for (const auto& [name, info] : it->second.inputs()) {
    absl::StatusOr<PartialTensorShape> shape = PartialTensorShape::FromProto(info.tensor_shape());
    if (!shape.ok()) {
      return absl::DataLossError(
          absl::StrCat(path, ": input '", name, "': ", shape.status().message()));
    }
    model.inputs_[name] = TensorSpec{info.dtype(), *shape};
    model.input_tensors_[name] = info.name();
  }
  for (const auto& [name, info] : it->second.outputs()) model.outputs_[name] = info.name();
  SessionOptions session_options = options;
  session_options.allow_soft_placement = true;  // exported on other devices
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(session_options));
  TW_RETURN_IF_ERROR(session->Create(meta.graph_def()));
  model.session_ = std::move(session);
  return model;
}

absl::StatusOr<std::map<std::string, Tensor>> ExportedModel::Run(
    const std::map<std::string, Tensor>& inputs) const {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, tensor_name] : input_tensors_) {
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExportedModel: input '", name, "' is missing"));
    }
    feeds.emplace_back(tensor_name, it->second);
  }
  std::vector<std::string> fetches;
  for (const auto& [name, tensor_name] : outputs_) fetches.push_back(tensor_name);
  std::vector<Tensor> values;
  TW_RETURN_IF_ERROR(session_->Run(feeds, fetches, {}, &values));
  std::map<std::string, Tensor> result;
  size_t i = 0;
  for (const auto& [name, tensor_name] : outputs_) result[name] = values[i++];
  return result;
}

}  // namespace towerflow
