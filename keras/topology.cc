// The layer graph of a keras::Model: the functional form's calls from its
// inputs to its outputs, and a Sequential's chain.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "keras/model.h"
#include "keras/model_internal.h"

namespace towerflow {
namespace keras {

using internal::ModelImpl;

using Topology = internal::ModelTopology;

// ---- The layer graph ------------------------------------------------------------------

namespace {

// The first of `base`, `base_1`, `base_2`, ... not in `taken`, taken now.
std::string UniqueName(const std::string& base, absl::flat_hash_set<std::string>* taken,
                       int first_suffix = 0) {
  std::string name = first_suffix == 0 ? base : absl::StrCat(base, "_", first_suffix);
  for (int i = first_suffix + 1; taken->contains(name); ++i) name = absl::StrCat(base, "_", i);
  taken->insert(name);
  return name;
}

// The functional model's topology: the calls that lead from `inputs` to
// `outputs`, in an order where every call follows its inputs.
absl::Status MapGraph(const std::vector<KerasTensor>& inputs,
                      const std::vector<KerasTensor>& outputs, Topology* t) {
  if (inputs.empty() || outputs.empty()) {
    return absl::InvalidArgumentError("A model needs at least one input and one output");
  }
  absl::flat_hash_map<const internal::SymbolicNode*, size_t> value_of;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const internal::SymbolicNode* n = inputs[i].node();
    if (n == nullptr || !n->is_input) {
      return absl::InvalidArgumentError(
          absl::StrCat("Model inputs must come from keras::Input; input ", i, " is ",
                       n == nullptr ? "an empty KerasTensor" : "the output of a layer"));
    }
    if (!value_of.emplace(n, i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("The same Input is passed twice among the model's inputs (", i, ")"));
    }
    t->inputs.push_back({n->input_name, n->shape, n->dtype, ""});
  }
  // Iterative post-order from each output: a call after its inputs.
  absl::flat_hash_set<const internal::SymbolicNode*> visiting;
  for (const KerasTensor& output : outputs) {
    if (!output.valid())
      return absl::InvalidArgumentError("A model output is an empty KerasTensor");
    std::vector<std::pair<const internal::SymbolicNode*, size_t>> stack = {{output.node(), 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (value_of.contains(node)) {
        stack.pop_back();
        continue;
      }
      if (node->is_input) {
        return absl::InvalidArgumentError(
            absl::StrCat("Graph disconnected: cannot obtain value for Input \"",
                         node->input_name.empty() ? "(unnamed)" : node->input_name,
                         "\": it is not among the model's inputs"));
      }
      if (next == 0) {
        if (!visiting.insert(node).second) {
          return absl::InvalidArgumentError("The layer graph has a cycle");
        }
        const Layer& layer = *node->layer;
        const int n = static_cast<int>(node->inputs.size());
        if ((layer.unary() && n != 1) || n < layer.min_inputs()) {
          return absl::InvalidArgumentError(
              absl::StrCat("Layer ", layer.name().empty() ? layer.base_name() : layer.name(), " (",
                           layer.class_name(), ") takes ",
                           layer.unary() ? "one input"
                                         : absl::StrCat("at least ", layer.min_inputs(), " inputs"),
                           ", but is called on ", n));
        }
      }
      if (next < node->inputs.size()) {
        const KerasTensor& in = node->inputs[next++];
        if (!in.valid()) {
          return absl::InvalidArgumentError(absl::StrCat("Layer ", node->layer->class_name(),
                                                         " is called on an empty KerasTensor"));
        }
        stack.push_back({in.node(), 0});
        continue;
      }
      // Every input has a value: the call's turn.
      Topology::Call call;
      size_t layer = 0;
      while (layer < t->layers.size() && !t->layers[layer].SameAs(*node->layer)) ++layer;
      if (layer == t->layers.size()) t->layers.push_back(*node->layer);
      call.layer = layer;
      for (const KerasTensor& in : node->inputs) call.inputs.push_back(value_of.at(in.node()));
      for (const Topology::Call& c : t->calls) call.node_index += c.layer == layer ? 1 : 0;
      value_of[node] = t->inputs.size() + t->calls.size();
      t->calls.push_back(std::move(call));
      visiting.erase(node);
      stack.pop_back();
    }
  }
  // Names: the given ones, then Keras's defaults in order.
  absl::flat_hash_set<std::string> taken;
  for (const auto& feed : t->inputs) {
    if (!feed.name.empty() && !taken.insert(feed.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("Two inputs are named ", feed.name));
    }
  }
  for (const Layer& layer : t->layers) {
    if (!layer.name().empty() && !taken.insert(layer.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "All layer names should be unique: ", layer.name(), " names two layers or inputs"));
    }
  }
  for (auto& feed : t->inputs) {
    if (feed.name.empty()) feed.name = UniqueName("input", &taken, 1);
    feed.key = feed.name;
  }
  for (const Layer& layer : t->layers) {
    t->layer_names.push_back(layer.name().empty() ? UniqueName(layer.base_name(), &taken)
                                                  : layer.name());
  }
  absl::flat_hash_set<std::string> output_names;
  for (const KerasTensor& output : outputs) {
    Topology::Out out;
    out.value = value_of.at(output.node());
    out.name = t->ProducerName(out.value);
    if (!output_names.insert(out.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Two of the model's outputs come from ", out.name,
                       "; outputs are named by their layers, so each needs its own"));
    }
    out.label_key = out.prediction_key = out.name;
    out.logits_key = out.name + "/logits";
    t->outputs.push_back(std::move(out));
  }
  return absl::OkStatus();
}

}  // namespace

Model::Model(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs, std::string name)
    : Model(std::move(name)) {
  auto topology = std::make_shared<Topology>();
  topology->status = MapGraph(inputs, outputs, topology.get());
  impl().topology_ = std::move(topology);
}

absl::Status ModelImpl::status() const { return topology_->status; }

std::vector<std::string> ModelImpl::input_names() const {
  std::vector<std::string> names;
  for (const auto& feed : topology_->inputs) names.push_back(feed.name);
  return names;
}

std::vector<std::string> ModelImpl::output_names() const {
  std::vector<std::string> names;
  for (const auto& out : topology_->outputs) names.push_back(out.name);
  return names;
}

Sequential::Sequential(std::vector<int64_t> input_shape, std::vector<Layer> layers,
                       std::string name, DataType dtype)
    : Model(std::move(name)) {
  auto topology = std::make_shared<Topology>();
  topology->sequential = true;
  topology->inputs.push_back({"", std::move(input_shape), dtype, "x"});
  impl().topology_ = std::move(topology);
  for (Layer& layer : layers) Add(std::move(layer)).IgnoreError();  // not built yet
}

absl::Status Sequential::Add(Layer layer) {
  if (impl().built())
    return absl::FailedPreconditionError("Sequential::Add: the model is already built");
  auto t = std::make_shared<Topology>(*impl().topology_);
  size_t index = 0;
  while (index < t->layers.size() && !t->layers[index].SameAs(layer)) ++index;
  if (index == t->layers.size()) {
    // Keras's naming: the class's base name, then _1, _2 ... in this model.
    absl::flat_hash_set<std::string> taken(t->layer_names.begin(), t->layer_names.end());
    t->layer_names.push_back(layer.name().empty() ? UniqueName(layer.base_name(), &taken)
                                                  : layer.name());
    t->layers.push_back(std::move(layer));
  }
  Topology::Call call;
  call.layer = index;
  call.inputs = {t->inputs.size() + t->calls.size() - 1};
  for (const Topology::Call& c : t->calls) call.node_index += c.layer == index ? 1 : 0;
  t->calls.push_back(std::move(call));
  if (t->inputs[0].name.empty()) t->inputs[0].name = t->layer_names[index] + "_input";
  const size_t last = t->inputs.size() + t->calls.size() - 1;
  t->outputs = {{last, t->layer_names[index], "y", "output", "logits"}};
  impl().topology_ = std::move(t);
  return absl::OkStatus();
}

}  // namespace keras
}  // namespace towerflow
