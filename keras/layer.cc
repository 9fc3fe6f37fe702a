#include "keras/layer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/ops.h"

namespace towerflow {
namespace keras {

struct Layer::State {
  std::string class_name;
  std::string base_name;
  BuildFn build;
  int min_inputs = 1;
  bool unary = true;
  std::string name;
};

KerasTensor Input(std::vector<int64_t> shape, InputOptions options) {
  auto node = std::make_shared<internal::SymbolicNode>();
  node->is_input = true;
  node->input_name = std::move(options.name);
  node->shape = std::move(shape);
  node->dtype = options.dtype;
  return KerasTensor(std::move(node));
}

Layer::Layer(std::string class_name, std::string base_name, UnaryBuildFn build, std::string name)
    : state_(std::make_shared<const State>(
          State{std::move(class_name), std::move(base_name),
                [build = std::move(build)](const Scope& s, const std::vector<Output>& inputs,
                                           bool training, const std::string& name) {
                  return build(s, inputs[0], training, name);
                },
                1, true, std::move(name)})) {}

Layer Layer::WithInputs(std::string class_name, std::string base_name, BuildFn build,
                        int min_inputs, std::string name) {
  return Layer(
      std::make_shared<const State>(State{std::move(class_name), std::move(base_name),
                                          std::move(build), min_inputs, false, std::move(name)}));
}

const std::string& Layer::class_name() const { return state_->class_name; }
const std::string& Layer::base_name() const { return state_->base_name; }
const std::string& Layer::name() const { return state_->name; }
bool Layer::unary() const { return state_->unary; }
int Layer::min_inputs() const { return state_->min_inputs; }

KerasTensor Layer::operator()(const KerasTensor& x) const {
  return (*this)(std::vector<KerasTensor>{x});
}

KerasTensor Layer::operator()(std::vector<KerasTensor> inputs) const {
  auto node = std::make_shared<internal::SymbolicNode>();
  node->layer = *this;
  node->inputs = std::move(inputs);
  return KerasTensor(std::move(node));
}

Output Layer::Call(const Scope& scope, const std::vector<Output>& inputs, bool training,
                   const std::string& name) const {
  const int n = static_cast<int>(inputs.size());
  if ((state_->unary && n != 1) || n < state_->min_inputs) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "Layer ", name, " (", state_->class_name, ") takes ",
        state_->unary ? "one input" : absl::StrCat("at least ", state_->min_inputs, " inputs"),
        ", got ", n)));
    return Output();
  }
  return state_->build(scope, inputs, training, name);
}

// ---- Layers over layers:: ---------------------------------------------------------

Layer Dense(int64_t units, layers::DenseOptions options) {
  std::string name = options.name;
  return Layer(
      "Dense", "dense",
      [units, options](const Scope& s, const Output& x, bool, const std::string& name) mutable {
        options.name = name;
        return layers::Dense(s, x, units, options);
      },
      std::move(name));
}

Layer Conv2D(int64_t filters, layers::Size2 kernel_size, layers::Conv2DOptions options) {
  std::string name = options.name;
  return Layer(
      "Conv2D", "conv2d",
      [filters, kernel_size, options](const Scope& s, const Output& x, bool,
                                      const std::string& name) mutable {
        options.name = name;
        return layers::Conv2D(s, x, filters, kernel_size, options);
      },
      std::move(name));
}

Layer MaxPooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options) {
  std::string name = options.name;
  return Layer(
      "MaxPooling2D", "max_pooling2d",
      [pool_size, options](const Scope& s, const Output& x, bool, const std::string& name) mutable {
        options.name = name;
        return layers::MaxPooling2D(s, x, pool_size, options);
      },
      std::move(name));
}

Layer AveragePooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options) {
  std::string name = options.name;
  return Layer(
      "AveragePooling2D", "average_pooling2d",
      [pool_size, options](const Scope& s, const Output& x, bool, const std::string& name) mutable {
        options.name = name;
        return layers::AveragePooling2D(s, x, pool_size, options);
      },
      std::move(name));
}

Layer GlobalAveragePooling2D(std::string data_format, std::string name) {
  return Layer(
      "GlobalAveragePooling2D", "global_average_pooling2d",
      [data_format](const Scope& s, const Output& x, bool, const std::string& name) {
        return layers::GlobalAveragePooling2D(s, x, data_format, name);
      },
      std::move(name));
}

Layer Flatten(std::string name) {
  return Layer(
      "Flatten", "flatten",
      [](const Scope& s, const Output& x, bool, const std::string& name) {
        return layers::Flatten(s, x, name);
      },
      std::move(name));
}

Layer Dropout(double rate, std::optional<int64_t> seed, std::string name) {
  return Layer(
      "Dropout", "dropout",
      [rate, seed](const Scope& s, const Output& x, bool training, const std::string& name) {
        return layers::Dropout(s, x, rate, {.training = training, .seed = seed, .name = name});
      },
      std::move(name));
}

Layer BatchNormalization(layers::BatchNormalizationOptions options) {
  std::string name = options.name;
  return Layer(
      "BatchNormalization", "batch_normalization",
      [options](const Scope& s, const Output& x, bool training, const std::string& name) mutable {
        options.name = name;
        options.training = training;
        return layers::BatchNormalization(s, x, options);
      },
      std::move(name));
}

Layer LayerNormalization(layers::LayerNormalizationOptions options) {
  std::string name = options.name;
  return Layer(
      "LayerNormalization", "layer_normalization",
      [options](const Scope& s, const Output& x, bool, const std::string& name) mutable {
        options.name = name;
        return layers::LayerNormalization(s, x, options);
      },
      std::move(name));
}

Layer Activation(layers::Activation activation, std::string name) {
  return Layer(
      "Activation", "activation",
      [activation](const Scope& s, const Output& x, bool, const std::string& name) {
        return activation(s.WithVariableScope(name), x);
      },
      std::move(name));
}

Layer Embedding(int64_t input_dim, int64_t output_dim, layers::EmbeddingOptions options) {
  std::string name = options.name;
  return Layer(
      "Embedding", "embedding",
      [input_dim, output_dim, options](const Scope& s, const Output& x, bool,
                                       const std::string& name) mutable {
        options.name = name;
        return layers::Embedding(s, x, input_dim, output_dim, options);
      },
      std::move(name));
}

// ---- Merge layers -------------------------------------------------------------------

namespace {

// A merge layer folding its inputs pairwise with `op` under its name
// scope; `scale` multiplies the result by 1 / (number of inputs).
template <typename Op>
Layer Fold(std::string class_name, std::string base_name, std::string name, bool mean = false,
           int min_inputs = 2) {
  return Layer::WithInputs(
      std::move(class_name), std::move(base_name),
      [mean](const Scope& scope, const std::vector<Output>& inputs, bool,
             const std::string& name) -> Output {
        const Scope s = scope.NewSubScope(name);
        Output out = inputs[0];
        for (size_t i = 1; i < inputs.size(); ++i) out = Op(s, out, inputs[i]);
        if (mean) out = ops::Mul(s, out, ops::Cast(s, 1.0 / inputs.size(), out.type()));
        return out;
      },
      min_inputs, std::move(name));
}

}  // namespace

Layer Concatenate(int axis, std::string name) {
  return Layer::WithInputs(
      "Concatenate", "concatenate",
      [axis](const Scope& scope, const std::vector<Output>& inputs, bool,
             const std::string& name) -> Output {
        return ops::ConcatV2(scope.NewSubScope(name).WithOpName("concat"), inputs, axis);
      },
      2, std::move(name));
}

Layer Add(std::string name) { return Fold<ops::AddV2>("Add", "add", std::move(name)); }
Layer Multiply(std::string name) { return Fold<ops::Mul>("Multiply", "multiply", std::move(name)); }
Layer Average(std::string name) {
  return Fold<ops::AddV2>("Average", "average", std::move(name), /*mean=*/true);
}
Layer Maximum(std::string name) {
  return Fold<ops::Maximum>("Maximum", "maximum", std::move(name));
}
Layer Minimum(std::string name) {
  return Fold<ops::Minimum>("Minimum", "minimum", std::move(name));
}

Layer Subtract(std::string name) {
  return Layer::WithInputs(
      "Subtract", "subtract",
      [](const Scope& scope, const std::vector<Output>& inputs, bool,
         const std::string& name) -> Output {
        const Scope s = scope.NewSubScope(name);
        if (inputs.size() != 2) {
          s.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
              "Layer ", name, " (Subtract) takes exactly two inputs, got ", inputs.size())));
          return Output();
        }
        return ops::Sub(s, inputs[0], inputs[1]);
      },
      2, std::move(name));
}

}  // namespace keras
}  // namespace towerflow
