#include "keras/layer.h"

#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "layers/regularizers.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/math_ops.h"

namespace towerflow {
namespace keras {

struct Layer::State {
  std::string class_name;
  std::string base_name;
  BuildFn build;
  int min_inputs = 1;
  bool unary = true;
  std::string name;
  std::optional<Config> config;
};

KerasTensor Input(std::vector<int64_t> shape, InputOptions options) {
  auto node = std::make_shared<internal::SymbolicNode>();
  node->is_input = true;
  node->input_name = std::move(options.name);
  node->shape = std::move(shape);
  node->dtype = options.dtype;
  return KerasTensor(std::move(node));
}

// Makes every layer, with the config only the factories below can give.
struct internal::LayerMaker {
  static Layer Make(std::string class_name, std::string base_name, Layer::BuildFn build,
                    int min_inputs, bool unary, std::string name,
                    std::optional<Layer::Config> config) {
    return Layer(std::make_shared<const Layer::State>(
        Layer::State{std::move(class_name), std::move(base_name), std::move(build), min_inputs,
                     unary, std::move(name), std::move(config)}));
  }
  static Layer Unary(std::string class_name, std::string base_name, Layer::UnaryBuildFn build,
                     std::string name, std::optional<Layer::Config> config) {
    return Make(
        std::move(class_name), std::move(base_name),
        [build = std::move(build)](const Scope& s, const std::vector<Output>& inputs, bool training,
                                   const std::string& name) {
          return build(s, inputs[0], training, name);
        },
        1, true, std::move(name), std::move(config));
  }
};

Layer::Layer(std::string class_name, std::string base_name, UnaryBuildFn build, std::string name)
    : Layer(internal::LayerMaker::Unary(std::move(class_name), std::move(base_name),
                                        std::move(build), std::move(name), std::nullopt)) {}

Layer Layer::WithInputs(std::string class_name, std::string base_name, BuildFn build,
                        int min_inputs, std::string name) {
  return internal::LayerMaker::Make(std::move(class_name), std::move(base_name), std::move(build),
                                    min_inputs, false, std::move(name), std::nullopt);
}

const std::string& Layer::class_name() const { return state_->class_name; }
const std::string& Layer::base_name() const { return state_->base_name; }
const std::string& Layer::name() const { return state_->name; }
bool Layer::unary() const { return state_->unary; }
int Layer::min_inputs() const { return state_->min_inputs; }
const std::optional<Layer::Config>& Layer::config() const { return state_->config; }

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

// ---- Configs ---------------------------------------------------------------------------

namespace {

using Config = Layer::Config;

std::string Text(double v) { return absl::StrFormat("%.17g", v); }
std::string Text(int64_t v) { return absl::StrCat(v); }
std::string Text(bool v) { return v ? "true" : "false"; }
std::string Text(const layers::Size2& v) { return absl::StrCat(v.h, ",", v.w); }

// A config under construction: none once an argument cannot be written.
class ConfigWriter {
 public:
  ConfigWriter& Set(const std::string& key, std::string value) {
    if (config_.has_value()) (*config_)[key] = std::move(value);
    return *this;
  }
  ConfigWriter& Activation(const layers::Activation& a) {
    if (!a.name().empty() || a.linear()) return Set("activation", a.linear() ? "linear" : a.name());
    config_.reset();  // a function
    return *this;
  }
  ConfigWriter& Regularizer(const std::string& key, const regularizers::Regularizer& r) {
    if (!r.valid()) return Set(key, "");
    if (!r.l1_l2().has_value()) {
      config_.reset();
      return *this;
    }
    return Set(key, absl::StrCat("l1=", Text(r.l1_l2()->first), ",l2=", Text(r.l1_l2()->second)));
  }
  std::optional<Config> Done() { return std::move(config_); }

 private:
  std::optional<Config> config_ = Config();
};

// Reads a config's arguments, keeping the first error; every argument
// must be read (an unknown one is an error).
class ConfigReader {
 public:
  ConfigReader(const std::string& class_name, const std::string& name, const Config& config)
      : where_(absl::StrCat("Layer ", name, " (", class_name, ")")), config_(config) {}

  std::string String(const std::string& key, const std::string& otherwise) {
    read_.insert(key);
    auto it = config_.find(key);
    return it == config_.end() ? otherwise : it->second;
  }
  int64_t Int(const std::string& key, int64_t otherwise) {
    const std::string v = String(key, Text(otherwise));
    int64_t out = otherwise;
    if (!absl::SimpleAtoi(v, &out)) Fail(key, v, "an integer");
    return out;
  }
  double Double(const std::string& key, double otherwise) {
    const std::string v = String(key, Text(otherwise));
    double out = otherwise;
    if (!absl::SimpleAtod(v, &out) || !std::isfinite(out)) Fail(key, v, "a finite number");
    return out;
  }
  bool Bool(const std::string& key, bool otherwise) {
    const std::string v = String(key, Text(otherwise));
    if (v != "true" && v != "false") Fail(key, v, "true or false");
    return v == "true";
  }
  std::optional<layers::Size2> OptionalSize2(const std::string& key) {
    const std::string v = String(key, "");
    if (v.empty()) return std::nullopt;
    std::vector<std::string> parts = absl::StrSplit(v, ',');
    int64_t h = 0, w = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &h) || !absl::SimpleAtoi(parts[1], &w) ||
        h <= 0 || w <= 0) {
      Fail(key, v, "two positive integers \"h,w\"");
      return layers::Size2(1);
    }
    return layers::Size2(h, w);
  }
  layers::Size2 Size2(const std::string& key, layers::Size2 otherwise) {
    if (config_.count(key) == 0) {
      read_.insert(key);
      return otherwise;
    }
    return OptionalSize2(key).value_or(otherwise);
  }
  regularizers::Regularizer Regularizer(const std::string& key) {
    const std::string v = String(key, "");
    if (v.empty()) return regularizers::Regularizer();
    double l1 = 0, l2 = 0;
    std::vector<std::string> parts = absl::StrSplit(v, ',');
    if (parts.size() != 2 || !absl::StartsWith(parts[0], "l1=") ||
        !absl::StartsWith(parts[1], "l2=") || !absl::SimpleAtod(parts[0].substr(3), &l1) ||
        !absl::SimpleAtod(parts[1].substr(3), &l2) || !(l1 >= 0) || !(l2 >= 0)) {
      Fail(key, v, "\"l1=<number>,l2=<number>\"");
      return regularizers::Regularizer();
    }
    if (l2 == 0) return regularizers::L1(l1);
    if (l1 == 0) return regularizers::L2(l2);
    return regularizers::L1L2(l1, l2);
  }
  // The layer, or the first error (an unread argument included).
  absl::StatusOr<Layer> Finish(Layer layer) {
    for (const auto& [key, value] : config_) {
      if (!read_.contains(key) && status_.ok()) {
        status_ = absl::InvalidArgumentError(absl::StrCat(where_, ": unknown argument ", key));
      }
    }
    if (!status_.ok()) return status_;
    return layer;
  }

 private:
  void Fail(const std::string& key, const std::string& value, const char* expected) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat(where_, ": ", key, " is \"", value, "\", expected ", expected));
    }
  }

  std::string where_;
  const Config& config_;
  absl::flat_hash_set<std::string> read_;
  absl::Status status_;
};

}  // namespace

// ---- Layers over layers:: ---------------------------------------------------------

namespace {

using internal::LayerMaker;

// A layer over a layers:: function `f(scope, x, training, options)` whose
// options carry the name: the one given, then the one the model gives.
template <typename Options, typename F>
Layer Over(std::string class_name, std::string base_name, Options options,
           std::optional<Config> config, F f) {
  std::string name = options.name;
  return LayerMaker::Unary(
      std::move(class_name), std::move(base_name),
      [options, f](const Scope& s, const Output& x, bool training,
                   const std::string& name) mutable {
        options.name = name;
        return f(s, x, training, options);
      },
      std::move(name), std::move(config));
}

}  // namespace

Layer Dense(int64_t units, layers::DenseOptions options) {
  std::optional<Config> config = ConfigWriter()
                                     .Set("units", Text(units))
                                     .Activation(options.activation)
                                     .Set("use_bias", Text(options.use_bias))
                                     .Set("trainable", Text(options.trainable))
                                     .Regularizer("kernel_regularizer", options.kernel_regularizer)
                                     .Regularizer("bias_regularizer", options.bias_regularizer)
                                     .Done();
  return Over("Dense", "dense", std::move(options), std::move(config),
              [units](const Scope& s, const Output& x, bool, const layers::DenseOptions& o) {
                return layers::Dense(s, x, units, o);
              });
}

Layer Conv2D(int64_t filters, layers::Size2 kernel_size, layers::Conv2DOptions options) {
  std::optional<Config> config = ConfigWriter()
                                     .Set("filters", Text(filters))
                                     .Set("kernel_size", Text(kernel_size))
                                     .Set("strides", Text(options.strides))
                                     .Set("padding", options.padding)
                                     .Set("data_format", options.data_format)
                                     .Set("dilation_rate", Text(options.dilation_rate))
                                     .Activation(options.activation)
                                     .Set("use_bias", Text(options.use_bias))
                                     .Set("trainable", Text(options.trainable))
                                     .Regularizer("kernel_regularizer", options.kernel_regularizer)
                                     .Regularizer("bias_regularizer", options.bias_regularizer)
                                     .Done();
  return Over("Conv2D", "conv2d", std::move(options), std::move(config),
              [filters, kernel_size](const Scope& s, const Output& x, bool,
                                     const layers::Conv2DOptions& o) {
                return layers::Conv2D(s, x, filters, kernel_size, o);
              });
}

namespace {

// MaxPooling2D or AveragePooling2D, by `pool`.
Layer Pooling(std::string class_name, std::string base_name,
              Output (*pool)(const Scope&, const Output&, layers::Size2,
                             const layers::Pooling2DOptions&),
              layers::Size2 pool_size, layers::Pooling2DOptions options) {
  std::optional<Config> config =
      ConfigWriter()
          .Set("pool_size", Text(pool_size))
          .Set("strides", options.strides.has_value() ? Text(*options.strides) : "")
          .Set("padding", options.padding)
          .Set("data_format", options.data_format)
          .Done();
  return Over(
      std::move(class_name), std::move(base_name), std::move(options), std::move(config),
      [pool, pool_size](const Scope& s, const Output& x, bool, const layers::Pooling2DOptions& o) {
        return pool(s, x, pool_size, o);
      });
}

}  // namespace

Layer MaxPooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options) {
  return Pooling("MaxPooling2D", "max_pooling2d", &layers::MaxPooling2D, pool_size,
                 std::move(options));
}

Layer AveragePooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options) {
  return Pooling("AveragePooling2D", "average_pooling2d", &layers::AveragePooling2D, pool_size,
                 std::move(options));
}

Layer GlobalAveragePooling2D(std::string data_format, std::string name) {
  std::optional<Config> config = ConfigWriter().Set("data_format", data_format).Done();
  return LayerMaker::Unary(
      "GlobalAveragePooling2D", "global_average_pooling2d",
      [data_format](const Scope& s, const Output& x, bool, const std::string& name) {
        return layers::GlobalAveragePooling2D(s, x, data_format, name);
      },
      std::move(name), std::move(config));
}

Layer Flatten(std::string name) {
  return LayerMaker::Unary(
      "Flatten", "flatten",
      [](const Scope& s, const Output& x, bool, const std::string& name) {
        return layers::Flatten(s, x, name);
      },
      std::move(name), Config());
}

Layer Dropout(double rate, std::optional<int64_t> seed, std::string name) {
  std::optional<Config> config = ConfigWriter()
                                     .Set("rate", Text(rate))
                                     .Set("seed", seed.has_value() ? Text(*seed) : "")
                                     .Done();
  return LayerMaker::Unary(
      "Dropout", "dropout",
      [rate, seed](const Scope& s, const Output& x, bool training, const std::string& name) {
        return layers::Dropout(s, x, rate, {.training = training, .seed = seed, .name = name});
      },
      std::move(name), std::move(config));
}

Layer BatchNormalization(layers::BatchNormalizationOptions options) {
  std::optional<Config> config =
      ConfigWriter()
          .Set("axis", Text(int64_t{options.axis}))
          .Set("momentum", Text(options.momentum))
          .Set("epsilon", Text(options.epsilon))
          .Set("center", Text(options.center))
          .Set("scale", Text(options.scale))
          .Set("trainable", Text(options.trainable))
          .Set("fused", options.fused.has_value() ? Text(*options.fused) : "")
          .Regularizer("beta_regularizer", options.beta_regularizer)
          .Regularizer("gamma_regularizer", options.gamma_regularizer)
          .Done();
  // Keras's `synchronized` argument, written only when set (older configs
  // stay as they were).
  if (config.has_value() && options.synchronized) (*config)["synchronized"] = Text(true);
  return Over(
      "BatchNormalization", "batch_normalization", std::move(options), std::move(config),
      [](const Scope& s, const Output& x, bool training, layers::BatchNormalizationOptions o) {
        o.training = training;
        return layers::BatchNormalization(s, x, o);
      });
}

Layer LayerNormalization(layers::LayerNormalizationOptions options) {
  std::optional<Config> config = ConfigWriter()
                                     .Set("epsilon", Text(options.epsilon))
                                     .Set("center", Text(options.center))
                                     .Set("scale", Text(options.scale))
                                     .Set("trainable", Text(options.trainable))
                                     .Regularizer("beta_regularizer", options.beta_regularizer)
                                     .Regularizer("gamma_regularizer", options.gamma_regularizer)
                                     .Done();
  return Over(
      "LayerNormalization", "layer_normalization", std::move(options), std::move(config),
      [](const Scope& s, const Output& x, bool, const layers::LayerNormalizationOptions& o) {
        return layers::LayerNormalization(s, x, o);
      });
}

Layer Activation(layers::Activation activation, std::string name) {
  std::optional<Config> config = ConfigWriter().Activation(activation).Done();
  return LayerMaker::Unary(
      "Activation", "activation",
      [activation](const Scope& s, const Output& x, bool, const std::string& name) {
        return activation(s.WithVariableScope(name), x);
      },
      std::move(name), std::move(config));
}

Layer Embedding(int64_t input_dim, int64_t output_dim, layers::EmbeddingOptions options) {
  std::optional<Config> config =
      ConfigWriter()
          .Set("input_dim", Text(input_dim))
          .Set("output_dim", Text(output_dim))
          .Set("trainable", Text(options.trainable))
          .Set("dtype", DataTypeString(options.dtype))
          .Regularizer("embeddings_regularizer", options.embeddings_regularizer)
          .Done();
  return Over("Embedding", "embedding", std::move(options), std::move(config),
              [input_dim, output_dim](const Scope& s, const Output& x, bool,
                                      const layers::EmbeddingOptions& o) {
                return layers::Embedding(s, x, input_dim, output_dim, o);
              });
}

// ---- Merge layers -------------------------------------------------------------------

namespace {

// A merge layer of at least two inputs, under its name scope.
Layer Merge(std::string class_name, std::string base_name, std::string name, Config config,
            std::function<Output(const Scope& s, const std::vector<Output>& inputs,
                                 const std::string& name)>
                merge) {
  return LayerMaker::Make(
      std::move(class_name), std::move(base_name),
      [merge = std::move(merge)](const Scope& scope, const std::vector<Output>& inputs, bool,
                                 const std::string& name) {
        return merge(scope.NewSubScope(name), inputs, name);
      },
      2, false, std::move(name), std::move(config));
}

// Folds the inputs pairwise with `Op`; `mean` then divides by their number.
template <typename Op>
Layer Fold(std::string class_name, std::string base_name, std::string name, bool mean = false) {
  return Merge(std::move(class_name), std::move(base_name), std::move(name), Config(),
               [mean](const Scope& s, const std::vector<Output>& inputs, const std::string&) {
                 Output out = inputs[0];
                 for (size_t i = 1; i < inputs.size(); ++i) out = Op(s, out, inputs[i]);
                 if (mean) out = ops::Mul(s, out, ops::Cast(s, 1.0 / inputs.size(), out.type()));
                 return out;
               });
}

}  // namespace

Layer Concatenate(int axis, std::string name) {
  return Merge("Concatenate", "concatenate", std::move(name), Config{{"axis", Text(int64_t{axis})}},
               [axis](const Scope& s, const std::vector<Output>& inputs, const std::string&) {
                 return Output(ops::ConcatV2(s.WithOpName("concat"), inputs, axis));
               });
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
  return Merge(
      "Subtract", "subtract", std::move(name), Config(),
      [](const Scope& s, const std::vector<Output>& inputs, const std::string& name) {
        if (inputs.size() != 2) {
          s.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
              "Layer ", name, " (Subtract) takes exactly two inputs, got ", inputs.size())));
          return Output();
        }
        return Output(ops::Sub(s, inputs[0], inputs[1]));
      });
}

absl::StatusOr<Layer> LayerFromConfig(const std::string& class_name, const std::string& name,
                                      const Layer::Config& config) {
  ConfigReader r(class_name, name, config);
  if (class_name == "Dense") {
    const int64_t units = r.Int("units", 0);
    return r.Finish(Dense(units, {.activation = r.String("activation", "linear"),
                                  .use_bias = r.Bool("use_bias", true),
                                  .kernel_regularizer = r.Regularizer("kernel_regularizer"),
                                  .bias_regularizer = r.Regularizer("bias_regularizer"),
                                  .trainable = r.Bool("trainable", true),
                                  .name = name}));
  }
  if (class_name == "Conv2D") {
    const int64_t filters = r.Int("filters", 0);
    const layers::Size2 kernel_size = r.Size2("kernel_size", 1);
    return r.Finish(Conv2D(filters, kernel_size,
                           {.strides = r.Size2("strides", 1),
                            .padding = r.String("padding", "valid"),
                            .data_format = r.String("data_format", "channels_last"),
                            .dilation_rate = r.Size2("dilation_rate", 1),
                            .activation = r.String("activation", "linear"),
                            .use_bias = r.Bool("use_bias", true),
                            .kernel_regularizer = r.Regularizer("kernel_regularizer"),
                            .bias_regularizer = r.Regularizer("bias_regularizer"),
                            .trainable = r.Bool("trainable", true),
                            .name = name}));
  }
  if (class_name == "MaxPooling2D" || class_name == "AveragePooling2D") {
    const layers::Size2 pool_size = r.Size2("pool_size", 2);
    layers::Pooling2DOptions options{.strides = r.OptionalSize2("strides"),
                                     .padding = r.String("padding", "valid"),
                                     .data_format = r.String("data_format", "channels_last"),
                                     .name = name};
    return r.Finish(class_name == "MaxPooling2D" ? MaxPooling2D(pool_size, options)
                                                 : AveragePooling2D(pool_size, options));
  }
  if (class_name == "GlobalAveragePooling2D") {
    return r.Finish(GlobalAveragePooling2D(r.String("data_format", "channels_last"), name));
  }
  if (class_name == "Flatten") return r.Finish(Flatten(name));
  if (class_name == "Dropout") {
    const double rate = r.Double("rate", 0.5);
    std::optional<int64_t> seed;
    if (!r.String("seed", "").empty()) seed = r.Int("seed", 0);
    return r.Finish(Dropout(rate, seed, name));
  }
  if (class_name == "BatchNormalization") {
    std::optional<bool> fused;
    if (!r.String("fused", "").empty()) fused = r.Bool("fused", true);
    return r.Finish(BatchNormalization({.axis = static_cast<int>(r.Int("axis", -1)),
                                        .momentum = r.Double("momentum", 0.99),
                                        .epsilon = r.Double("epsilon", 1e-3),
                                        .center = r.Bool("center", true),
                                        .scale = r.Bool("scale", true),
                                        .beta_regularizer = r.Regularizer("beta_regularizer"),
                                        .gamma_regularizer = r.Regularizer("gamma_regularizer"),
                                        .trainable = r.Bool("trainable", true),
                                        .fused = fused,
                                        .name = name,
                                        .synchronized = r.Bool("synchronized", false)}));
  }
  if (class_name == "LayerNormalization") {
    return r.Finish(LayerNormalization({.epsilon = r.Double("epsilon", 1e-3),
                                        .center = r.Bool("center", true),
                                        .scale = r.Bool("scale", true),
                                        .beta_regularizer = r.Regularizer("beta_regularizer"),
                                        .gamma_regularizer = r.Regularizer("gamma_regularizer"),
                                        .trainable = r.Bool("trainable", true),
                                        .name = name}));
  }
  if (class_name == "Activation") {
    return r.Finish(Activation(r.String("activation", "linear"), name));
  }
  if (class_name == "Embedding") {
    const int64_t input_dim = r.Int("input_dim", 0);
    const int64_t output_dim = r.Int("output_dim", 0);
    DataType dtype = DT_FLOAT;
    const std::string dtype_name = r.String("dtype", "float");
    if (!DataTypeFromString(dtype_name, &dtype)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Layer ", name, " (Embedding): unknown dtype ", dtype_name));
    }
    return r.Finish(Embedding(input_dim, output_dim,
                              {.embeddings_regularizer = r.Regularizer("embeddings_regularizer"),
                               .trainable = r.Bool("trainable", true),
                               .dtype = dtype,
                               .name = name}));
  }
  if (class_name == "Concatenate") {
    return r.Finish(Concatenate(static_cast<int>(r.Int("axis", -1)), name));
  }
  using Merge = Layer (*)(std::string);
  static const auto* merges = new std::map<std::string, Merge>{
      {"Add", &Add},         {"Subtract", &Subtract}, {"Multiply", &Multiply},
      {"Average", &Average}, {"Maximum", &Maximum},   {"Minimum", &Minimum}};
  if (auto it = merges->find(class_name); it != merges->end()) {
    return r.Finish(it->second(name));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("Layer ", name, ": unknown layer class ", class_name));
}

}  // namespace keras
}  // namespace towerflow
