// keras::ModelImpl::Save and keras::LoadModel (keras/model_config.proto), in
// Keras's files or as a SavedModel.
#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "estimator/export.h"
#include "keras/model.h"
#include "keras/model_config.pb.h"
#include "keras/model_internal.h"
#include "ops/gen/array_ops.h"
#include "saved_model/builder.h"

namespace towerflow {
namespace keras {

using internal::ModelImpl;

using Topology = internal::ModelTopology;
using Compiled = internal::CompiledModel;

// ---- Saving and loading -----------------------------------------------------------------

namespace {

constexpr char kConfigFile[] = "model.pbtxt";
constexpr char kWeightsFile[] = "weights";
// Where a SavedModel keeps them.
constexpr char kSavedModelFile[] = "saved_model.pb";
constexpr char kExtraAssetsDir[] = "assets.extra";
constexpr char kSavedModelVariables[] = "variables/variables";

std::string JoinPath(const std::string& dir, const std::string& file) {
  return absl::EndsWith(dir, "/") ? dir + file : absl::StrCat(dir, "/", file);
}

}  // namespace

absl::StatusOr<std::string> ModelImpl::ConfigText() {
  TW_RETURN_IF_ERROR(status());
  const Topology& t = *topology_;
  ModelConfig config;
  config.set_class_name(t.sequential ? "Sequential" : "Model");
  config.set_name(name_);
  for (const Topology::Feed& feed : t.inputs) {
    InputConfig* input = config.add_inputs();
    input->set_name(feed.name);
    for (int64_t d : feed.shape) input->add_shape(d);
    input->set_dtype(DataTypeString(feed.dtype));
  }
  for (size_t l = 0; l < t.layers.size(); ++l) {
    const Layer& layer = t.layers[l];
    if (!layer.config().has_value()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Save: layer ", t.layer_names[l], " (", layer.class_name(),
          ") has no config: a layer built from a function, or given an activation or a "
          "regularizer as a function, cannot be saved (SaveWeights saves its weights)"));
    }
    LayerConfig* out = config.add_layers();
    out->set_class_name(layer.class_name());
    out->set_name(t.layer_names[l]);
    for (const auto& [key, value] : *layer.config()) (*out->mutable_config())[key] = value;
  }
  for (const Topology::Call& call : t.calls) {
    NodeConfig* node = config.add_nodes();
    node->set_layer(static_cast<int>(call.layer));
    for (size_t v : call.inputs) node->add_inputs(static_cast<int>(v));
  }
  for (const Topology::Out& out : t.outputs) config.add_outputs(static_cast<int>(out.value));
  // Keras keeps the training config of its own optimizers only.
  if (compiled_ != nullptr && compiled_->keras_optimizer.has_value()) {
    TrainingConfig* training = config.mutable_training_config();
    training->set_optimizer(compiled_->keras_optimizer->name);
    TW_ASSIGN_OR_RETURN(const double learning_rate, GetLearningRate());
    training->set_learning_rate(learning_rate);
    for (const auto& [key, value] : compiled_->keras_optimizer->config) {
      (*training->mutable_optimizer_config())[key] = value;
    }
    for (size_t o = 0; o < t.outputs.size(); ++o) {
      const Compiled::PerOutput& per = compiled_->outputs[o];
      (*training->mutable_loss())[t.outputs[o].name] = per.loss_name;
      (*training->mutable_loss_weights())[t.outputs[o].name] = per.weight;
      Strings* metrics = &(*training->mutable_metrics())[t.outputs[o].name];
      for (const std::string& m : per.metrics) metrics->add_values(m);
    }
  }
  return PrintTextProto(config);
}

absl::Status ModelImpl::Save(const std::string& dir, Model::SaveFormat format) {
  TW_ASSIGN_OR_RETURN(const std::string text, ConfigText());
  if (format == Model::SaveFormat::kSavedModel) return SaveSavedModel(dir, text);
  TW_RETURN_IF_ERROR(CreateDirectories(dir));
  // The weights first: a config names a complete model.
  TW_RETURN_IF_ERROR(SaveWeights(JoinPath(dir, kWeightsFile)));
  return WriteFileAtomically(JoinPath(dir, kConfigFile), text);
}

absl::Status ModelImpl::SaveSavedModel(const std::string& dir, const std::string& config_text) {
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> weights, GetWeights());
  // A placeholder per input, named after it, fed by its name.
  std::shared_ptr<const Topology> topology = topology_;
  const ServingInputReceiverFn receiver = [topology](const Scope& s) {
    ServingInputReceiver receiver;
    for (const Topology::Feed& feed : topology->inputs) {
      std::vector<int64_t> dims = {-1};
      dims.insert(dims.end(), feed.shape.begin(), feed.shape.end());
      const Output p = ops::Placeholder(s.WithOpName(feed.name), feed.dtype,
                                        ops::Placeholder::Shape(PartialTensorShape(dims)));
      receiver.features[feed.key] = p;
      receiver.receiver_tensors[feed.name] = p;
    }
    return receiver;
  };
  TW_ASSIGN_OR_RETURN(ServingMetaGraph serving,
                      BuildServingMetaGraph(internal::ServingModelFn(topology_), receiver,
                                            {.seed = seed_, .global_step = false}));
  std::vector<NamedTensor> variables;
  for (const ServingMetaGraph::SavedVariable& v : serving.variables) {
    auto w = std::find_if(weights.begin(), weights.end(),
                          [&v](const NamedTensor& t) { return t.name == v.source; });
    if (w == weights.end()) {
      return absl::InternalError(
          absl::StrCat("Save: the inference graph's variable ", v.name, " is not a weight"));
    }
    variables.push_back({v.name, w->tensor});
  }
  return WriteSavedModelTo(
      dir, serving.meta_graph_def,
      [&](const std::string& prefix) { return WriteCheckpoint(prefix, variables); },
      {.files = serving.assets, .extra = {{kConfigFile, config_text}}});
}

namespace {

// The model `config` describes (`file` names it in errors).
absl::StatusOr<Model> ModelFromConfig(const ModelConfig& config, const std::string& file) {
  const auto bad = [&file](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
  };
  if (config.class_name() != "Sequential" && config.class_name() != "Model") {
    return bad(
        absl::StrCat("class_name is \"", config.class_name(), "\", expected Sequential or Model"));
  }
  const bool sequential = config.class_name() == "Sequential";
  if (config.inputs_size() == 0 || config.nodes_size() == 0 || config.outputs_size() == 0) {
    return bad("a model needs inputs, nodes and outputs");
  }
  std::vector<Layer> layers;
  for (const LayerConfig& l : config.layers()) {
    Layer::Config args(l.config().begin(), l.config().end());
    absl::StatusOr<Layer> layer = LayerFromConfig(l.class_name(), l.name(), args);
    if (!layer.ok()) return bad(std::string(layer.status().message()));
    layers.push_back(*std::move(layer));
  }
  std::vector<KerasTensor> values;
  std::vector<std::pair<std::vector<int64_t>, DataType>> inputs;
  for (const InputConfig& in : config.inputs()) {
    DataType dtype;
    if (!DataTypeFromString(in.dtype(), &dtype)) {
      return bad(absl::StrCat("input ", in.name(), " has unknown dtype \"", in.dtype(), "\""));
    }
    for (int64_t d : in.shape()) {
      if (d < -1) return bad(absl::StrCat("input ", in.name(), " has dimension ", d));
    }
    std::vector<int64_t> shape(in.shape().begin(), in.shape().end());
    inputs.push_back({shape, dtype});
    values.push_back(Input(shape, {.name = in.name(), .dtype = dtype}));
  }
  std::vector<int> node_layers;
  for (int n = 0; n < config.nodes_size(); ++n) {
    const NodeConfig& node = config.nodes(n);
    if (node.layer() < 0 || node.layer() >= static_cast<int>(layers.size())) {
      return bad(absl::StrCat("node ", n, " calls layer ", node.layer(), " of ", layers.size()));
    }
    std::vector<KerasTensor> args;
    for (int v : node.inputs()) {
      if (v < 0 || v >= static_cast<int>(values.size())) {
        return bad(absl::StrCat("node ", n, " takes value ", v, ", which no input or earlier ",
                                "node gives"));
      }
      args.push_back(values[v]);
    }
    if (sequential && (args.size() != 1 || node.inputs(0) != static_cast<int>(values.size()) - 1 ||
                       config.inputs_size() != 1)) {
      return bad(absl::StrCat("node ", n, " of a Sequential does not follow the one before"));
    }
    node_layers.push_back(node.layer());
    values.push_back(layers[node.layer()](std::move(args)));
  }
  std::vector<KerasTensor> outputs;
  for (int v : config.outputs()) {
    if (v < 0 || v >= static_cast<int>(values.size())) {
      return bad(absl::StrCat("output value ", v, " of ", values.size()));
    }
    outputs.push_back(values[v]);
  }
  if (sequential) {
    if (outputs.size() != 1 || config.outputs(0) != static_cast<int>(values.size()) - 1) {
      return bad("a Sequential's output is its last node's");
    }
    std::vector<Layer> chain;
    for (int l : node_layers) chain.push_back(layers[l]);
    Sequential model(inputs[0].first, chain, config.name(), inputs[0].second);
    TW_RETURN_IF_ERROR(model.status());
    return Model(std::move(model));
  }
  Model model(std::vector<KerasTensor>(values.begin(), values.begin() + config.inputs_size()),
              outputs, config.name());
  if (!model.status().ok()) return bad(std::string(model.status().message()));
  return model;
}

}  // namespace

absl::StatusOr<Model> LoadModel(const std::string& dir) {
  // A SavedModel keeps the config among its extra assets.
  std::error_code ec;
  const bool saved_model = std::filesystem::exists(JoinPath(dir, kSavedModelFile), ec);
  const std::string file = saved_model
                               ? JoinPath(dir, absl::StrCat(kExtraAssetsDir, "/", kConfigFile))
                               : JoinPath(dir, kConfigFile);
  TW_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(file));
  ModelConfig config;
  TW_RETURN_IF_ERROR(AddErrorContext(ParseTextProto(text, &config), file));
  TW_ASSIGN_OR_RETURN(Model model, ModelFromConfig(config, file));
  if (config.has_training_config()) {
    const TrainingConfig& training = config.training_config();
    TW_ASSIGN_OR_RETURN(Optimizer optimizer,
                        OptimizerFromConfig(training.optimizer(), training.learning_rate(),
                                            {training.optimizer_config().begin(),
                                             training.optimizer_config().end()}));
    CompileOptions options;
    options.loss = {training.loss().begin(), training.loss().end()};
    options.loss_weights = {training.loss_weights().begin(), training.loss_weights().end()};
    for (const auto& [name, metrics] : training.metrics()) {
      options.metrics[name] = {metrics.values().begin(), metrics.values().end()};
    }
    absl::Status compiled = model.Compile(std::move(optimizer), options);
    if (!compiled.ok())
      return absl::InvalidArgumentError(absl::StrCat(file, ": ", compiled.message()));
  }
  TW_RETURN_IF_ERROR(model.LoadWeights(saved_model ? JoinPath(dir, kSavedModelVariables)
                                                   : JoinPath(dir, kWeightsFile)));
  return model;
}

}  // namespace keras
}  // namespace towerflow
