#include "keras/model.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <numeric>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "keras/progbar.h"
#include "layers/losses.h"
#include "layers/regularizers.h"
#include "ops/initializers.h"
#include "ops/ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "train/optimizers.h"

namespace towerflow {
namespace keras {

// ---- Layers -----------------------------------------------------------------

Layer::Layer(std::string class_name, std::string base_name, BuildFn build, std::string name)
    : class_name_(std::move(class_name)),
      base_name_(std::move(base_name)),
      build_(std::move(build)),
      name_(std::move(name)) {}

Layer Dense(int64_t units, layers::DenseOptions options) {
  return Layer(
      "Dense", "dense",
      [units, options](const Scope& s, const Output& x, bool, const std::string& name) mutable {
        options.name = name;
        return layers::Dense(s, x, units, options);
      });
}

Layer Conv2D(int64_t filters, layers::Size2 kernel_size, layers::Conv2DOptions options) {
  return Layer("Conv2D", "conv2d",
               [filters, kernel_size, options](const Scope& s, const Output& x, bool,
                                               const std::string& name) mutable {
                 options.name = name;
                 return layers::Conv2D(s, x, filters, kernel_size, options);
               });
}

Layer MaxPooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options) {
  return Layer(
      "MaxPooling2D", "max_pooling2d",
      [pool_size, options](const Scope& s, const Output& x, bool, const std::string& name) mutable {
        options.name = name;
        return layers::MaxPooling2D(s, x, pool_size, options);
      });
}

Layer AveragePooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options) {
  return Layer(
      "AveragePooling2D", "average_pooling2d",
      [pool_size, options](const Scope& s, const Output& x, bool, const std::string& name) mutable {
        options.name = name;
        return layers::AveragePooling2D(s, x, pool_size, options);
      });
}

Layer GlobalAveragePooling2D(std::string data_format) {
  return Layer("GlobalAveragePooling2D", "global_average_pooling2d",
               [data_format](const Scope& s, const Output& x, bool, const std::string& name) {
                 return layers::GlobalAveragePooling2D(s, x, data_format, name);
               });
}

Layer Flatten() {
  return Layer("Flatten", "flatten",
               [](const Scope& s, const Output& x, bool, const std::string& name) {
                 return layers::Flatten(s, x, name);
               });
}

Layer Dropout(double rate, std::optional<int64_t> seed) {
  return Layer(
      "Dropout", "dropout",
      [rate, seed](const Scope& s, const Output& x, bool training, const std::string& name) {
        return layers::Dropout(s, x, rate, {.training = training, .seed = seed, .name = name});
      });
}

Layer BatchNormalization(layers::BatchNormalizationOptions options) {
  return Layer(
      "BatchNormalization", "batch_normalization",
      [options](const Scope& s, const Output& x, bool training, const std::string& name) mutable {
        options.name = name;
        options.training = training;
        return layers::BatchNormalization(s, x, options);
      });
}

Layer LayerNormalization(layers::LayerNormalizationOptions options) {
  return Layer("LayerNormalization", "layer_normalization",
               [options](const Scope& s, const Output& x, bool, const std::string& name) mutable {
                 options.name = name;
                 return layers::LayerNormalization(s, x, options);
               });
}

Layer Activation(layers::Activation activation) {
  return Layer("Activation", "activation",
               [activation](const Scope& s, const Output& x, bool, const std::string& name) {
                 return activation(s.WithVariableScope(name), x);
               });
}

Layer Embedding(int64_t input_dim, int64_t output_dim, layers::EmbeddingOptions options) {
  return Layer("Embedding", "embedding",
               [input_dim, output_dim, options](const Scope& s, const Output& x, bool,
                                                const std::string& name) mutable {
                 options.name = name;
                 return layers::Embedding(s, x, input_dim, output_dim, options);
               });
}

// ---- Optimizers ----------------------------------------------------------------

Optimizer SGD(double learning_rate, double momentum, bool nesterov) {
  return {"SGD", learning_rate,
          [momentum, nesterov](Input lr) -> std::shared_ptr<train::Optimizer> {
            if (momentum == 0) return std::make_shared<train::GradientDescentOptimizer>(lr);
            return std::make_shared<train::MomentumOptimizer>(lr, momentum, nesterov);
          }};
}

Optimizer Adam(double learning_rate, double beta_1, double beta_2, double epsilon) {
  return {"Adam", learning_rate, [beta_1, beta_2, epsilon](Input lr) {
            return std::make_shared<train::AdamOptimizer>(lr, beta_1, beta_2, epsilon);
          }};
}

Optimizer RMSprop(double learning_rate, double rho, double epsilon) {
  return {"RMSprop", learning_rate, [rho, epsilon](Input lr) {
            return std::make_shared<train::RMSPropOptimizer>(lr, rho, 0.0, epsilon);
          }};
}

Optimizer Adagrad(double learning_rate, double initial_accumulator_value) {
  return {"Adagrad", learning_rate, [initial_accumulator_value](Input lr) {
            return std::make_shared<train::AdagradOptimizer>(lr, initial_accumulator_value);
          }};
}

// ---- Losses and metrics -------------------------------------------------------

namespace {

enum class LossKind { kSparseCategorical, kCategorical, kBinary, kMse, kMae, kHuber };

absl::StatusOr<LossKind> ParseLoss(const std::string& loss) {
  static const auto* kinds = new absl::flat_hash_map<std::string, LossKind>{
      {"sparse_categorical_crossentropy", LossKind::kSparseCategorical},
      {"categorical_crossentropy", LossKind::kCategorical},
      {"binary_crossentropy", LossKind::kBinary},
      {"mean_squared_error", LossKind::kMse},
      {"mse", LossKind::kMse},
      {"mean_absolute_error", LossKind::kMae},
      {"mae", LossKind::kMae},
      {"huber", LossKind::kHuber},
  };
  auto it = kinds->find(loss);
  if (it == kinds->end())
    return absl::InvalidArgumentError(absl::StrCat("Unknown loss function: ", loss));
  return it->second;
}

// The model's outputs as the loss sees them: the probabilities, and the
// logits when the last op was a softmax or sigmoid (Keras's TF backend
// takes those to compute cross-entropies).
struct Outputs {
  Output output;
  Output logits;  // may be invalid
};

Outputs SplitLogits(const Output& output) {
  const std::string& type = output.node()->type_string();
  if (type != "Softmax" && type != "Sigmoid") return {output, Output()};
  for (const Edge* e : output.node()->in_edges()) {
    if (e->dst_input() == 0) return {output, Output(e->src(), e->src_output())};
  }
  return {output, Output()};
}

constexpr double kEpsilon = 1e-7;  // Keras's backend.epsilon()

// The batch's mean loss (no regularization).
Output BatchLoss(const Scope& s, LossKind kind, const Output& y, const Outputs& out) {
  const losses::LossOptions mean{.reduction = losses::Reduction::kSumOverBatchSize,
                                 .loss_collection = ""};
  const auto logits_or_log = [&](bool binary) {
    if (out.logits.valid()) return out.logits;
    Output p = ops::Minimum(s, ops::Maximum(s, out.output, kEpsilon), 1 - kEpsilon);
    if (!binary) return Output(ops::Log(s, p));
    return Output(ops::Log(s, ops::RealDiv(s, p, ops::Sub(s, 1.0, p))));
  };
  switch (kind) {
    case LossKind::kSparseCategorical:
      return losses::SparseSoftmaxCrossEntropy(
          s, ops::Reshape(s, ops::Cast(s, y, DT_INT64), ops::Const(s, {int64_t{-1}})),
          logits_or_log(false), mean);
    case LossKind::kCategorical:
      return losses::SoftmaxCrossEntropy(s, y, logits_or_log(false), 0, mean);
    case LossKind::kBinary:
      return losses::SigmoidCrossEntropy(s, y, logits_or_log(true), 0, mean);
    case LossKind::kMse:
      return losses::MeanSquaredError(s, ops::Cast(s, y, out.output.type()), out.output, mean);
    case LossKind::kMae:
      return losses::AbsoluteDifference(s, ops::Cast(s, y, out.output.type()), out.output, mean);
    case LossKind::kHuber:
      return losses::HuberLoss(s, ops::Cast(s, y, out.output.type()), out.output, 1.0, mean);
  }
  return Output();
}

// A metric's batch mean.
absl::StatusOr<Output> BatchMetric(const Scope& scope, const std::string& name, LossKind kind,
                                   const Output& y, const Output& out) {
  const Scope s = scope.NewSubScope(name);
  const auto mean = [&s](const Output& v) {
    return Output(ops::Mean(s, v, ops::Range(s, 0, ops::Rank(s, v), 1)));
  };
  const DataType dt = out.type();
  if (name == "accuracy" || name == "acc") {
    Output correct;
    if (kind == LossKind::kSparseCategorical) {
      correct =
          ops::Equal(s, ops::ArgMax(s, out, -1),
                     ops::Reshape(s, ops::Cast(s, y, DT_INT64), ops::Const(s, {int64_t{-1}})));
    } else if (kind == LossKind::kCategorical) {
      correct = ops::Equal(s, ops::ArgMax(s, out, -1), ops::ArgMax(s, y, -1));
    } else {
      correct = ops::Equal(s, ops::Cast(s, y, dt), ops::Round(s, out));
    }
    return mean(ops::Cast(s, correct, dt));
  }
  if (name == "mse" || name == "mean_squared_error") {
    return mean(ops::SquaredDifference(s, out, ops::Cast(s, y, dt)));
  }
  if (name == "mae" || name == "mean_absolute_error") {
    return mean(ops::Abs(s, ops::Sub(s, out, ops::Cast(s, y, dt))));
  }
  return absl::InvalidArgumentError(absl::StrCat("Unknown metric function: ", name));
}

// `shape` with `rows` as its first dimension.
TensorShape WithRows(const TensorShape& shape, int64_t rows) {
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  dims[0] = rows;
  return TensorShape(absl::MakeConstSpan(dims));
}

bool IsNumeric(DataType t) { return DataTypeIsFloating(t) || DataTypeIsInteger(t); }

// Rows `order[begin, end)` of `t`.
Tensor GatherRows(const Tensor& t, const std::vector<int64_t>& order, int64_t begin, int64_t end) {
  const int64_t rows = t.dim_size(0);
  const size_t row_bytes = rows > 0 ? t.TotalBytes() / rows : 0;
  Tensor out(t.dtype(), WithRows(t.shape(), end - begin));
  const char* src = static_cast<const char*>(t.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t i = begin; i < end; ++i) {
    std::memcpy(dst + (i - begin) * row_bytes, src + order[i] * row_bytes, row_bytes);
  }
  return out;
}

std::string ShapeTuple(const PartialTensorShape& shape) {
  if (shape.unknown_rank()) return "?";
  std::vector<std::string> dims;
  for (int d = 0; d < shape.dims(); ++d) {
    dims.push_back(d == 0 || shape.dim_size(d) < 0 ? "None" : absl::StrCat(shape.dim_size(d)));
  }
  return dims.size() == 1 ? absl::StrCat("(", dims[0], ",)")
                          : absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

}  // namespace

// ---- The model ------------------------------------------------------------------

struct Sequential::Compiled {
  // The optimizer, or the Keras optimizer that makes it on a learning-rate
  // variable when the training graph is built.
  std::shared_ptr<train::Optimizer> optimizer;
  std::optional<Optimizer> keras_optimizer;
  std::string loss_name;
  LossKind loss;
  std::vector<std::string> metrics;
};

struct Sequential::Built {
  Scope root = Scope::NewRootScope();
  std::unique_ptr<ClientSession> session;
  absl::flat_hash_set<std::string> initialized;
  Output x;
  Outputs predict;
  std::vector<Output> layer_outputs;  // tower 0's, for Summary
  // The layers' weights, read once; their assignments, made when first set.
  std::vector<Variable> weights;
  std::vector<Output> weight_reads;
  absl::flat_hash_map<std::string, std::pair<Output, Operation>> assigners;
  bool trained = false;
  Output y;
  Output train_loss;
  Operation train_op;
  std::vector<Output> train_metrics;
  // With a keras::Optimizer: the learning-rate variable and its setter.
  Variable learning_rate;
  Output learning_rate_value;
  Output learning_rate_feed;
  Operation set_learning_rate;
  Output eval_loss;
  std::vector<Output> eval_metrics;
};

Sequential::Sequential(std::vector<int64_t> input_shape, std::vector<Layer> layers,
                       std::string name, DataType dtype)
    : name_(std::move(name)), input_shape_(std::move(input_shape)), dtype_(dtype) {
  for (Layer& layer : layers) Add(std::move(layer)).IgnoreError();  // not built yet
}

absl::Status Sequential::Add(Layer layer) {
  if (built_ != nullptr) {
    return absl::FailedPreconditionError("Sequential::Add: the model is already built");
  }
  if (layer.name().empty()) {
    // Keras's naming: the class's base name, then _1, _2 ... in this model.
    std::string name = layer.base_name();
    for (int i = 1;; ++i) {
      const bool taken = std::any_of(layers_.begin(), layers_.end(),
                                     [&](const Layer& l) { return l.name() == name; });
      if (!taken) break;
      name = absl::StrCat(layer.base_name(), "_", i);
    }
    layer.set_name(name);
  }
  layers_.push_back(std::move(layer));
  return absl::OkStatus();
}

absl::Status Sequential::Compile(Optimizer optimizer, const std::string& loss,
                                 std::vector<std::string> metrics) {
  if (!optimizer.make) return absl::InvalidArgumentError("Compile: the optimizer makes nothing");
  if (!(optimizer.learning_rate >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Compile: learning rate ", optimizer.learning_rate));
  }
  // The training optimizer for ToModelFn, on a constant rate.
  std::shared_ptr<train::Optimizer> fixed = optimizer.make(optimizer.learning_rate);
  TW_RETURN_IF_ERROR(Compile(std::move(fixed), loss, std::move(metrics)));
  auto compiled = std::make_shared<Compiled>(*compiled_);
  compiled->keras_optimizer = std::move(optimizer);
  compiled_ = std::move(compiled);
  return absl::OkStatus();
}

absl::Status Sequential::Compile(std::shared_ptr<train::Optimizer> optimizer,
                                 const std::string& loss, std::vector<std::string> metrics) {
  if (optimizer == nullptr) return absl::InvalidArgumentError("Compile: no optimizer");
  TW_ASSIGN_OR_RETURN(LossKind kind, ParseLoss(loss));
  for (const std::string& m : metrics) {
    if (m != "accuracy" && m != "acc" && m != "mse" && m != "mean_squared_error" && m != "mae" &&
        m != "mean_absolute_error") {
      return absl::InvalidArgumentError(absl::StrCat("Unknown metric function: ", m));
    }
  }
  auto compiled = std::make_shared<Compiled>();
  compiled->optimizer = std::move(optimizer);
  compiled->loss_name = loss;
  compiled->loss = kind;
  compiled->metrics = std::move(metrics);
  compiled_ = std::move(compiled);
  CarryWeights();
  built_.reset();  // a new graph with the new loss, the same weights
  return absl::OkStatus();
}

namespace {

// The layers as a model_fn. Without `loss` (an uncompiled model) only
// PREDICT works. Tower 0's PREDICT build records each layer's output in
// `record` (for Summary) when given.
ModelFn LayersModelFn(std::vector<Layer> layers, std::shared_ptr<train::Optimizer> optimizer,
                      std::optional<LossKind> loss_kind,
                      std::shared_ptr<std::vector<Output>> record) {
  return [layers, optimizer, loss_kind, record](const Scope& s, const FeatureMap& features,
                                                const FeatureMap& labels, ModeKeys mode,
                                                const Params& params) {
    EstimatorSpec spec(mode);
    const size_t updates_before = GetCollectionOps(*s.graph(), GraphKeys::kUpdateOps).size();
    const bool recording =
        record != nullptr && mode == ModeKeys::kPredict && params.tower_index == 0;
    const auto x_it = features.find("x");
    if (x_it == features.end()) {
      s.UpdateStatus(absl::InvalidArgumentError(
          "The Keras model_fn takes its input as feature \"x\", which is missing"));
      return spec;
    }
    Output x = x_it->second;
    for (const Layer& layer : layers) {
      x = layer(s, x, mode == ModeKeys::kTrain);
      if (recording) record->push_back(x);
    }
    if (!s.ok()) return spec;
    const Outputs out = SplitLogits(x);
    spec.predictions["output"] = out.output;
    if (out.logits.valid()) spec.predictions["logits"] = out.logits;
    if (mode == ModeKeys::kPredict) return spec;
    if (!loss_kind.has_value()) {
      s.UpdateStatus(absl::FailedPreconditionError("The model is not compiled"));
      return spec;
    }
    const auto y_it = labels.find("y");
    if (y_it == labels.end()) {
      s.UpdateStatus(absl::InvalidArgumentError(
          "The Keras model_fn takes its labels as \"y\", which is missing"));
      return spec;
    }
    Output loss = BatchLoss(s.NewSubScope("loss"), *loss_kind, y_it->second, out);
    if (!GetCollection(*s.graph(), GraphKeys::kRegularizationLosses).empty()) {
      loss = ops::AddV2(s, loss, GetRegularizationLoss(s.NewSubScope("loss")));
    }
    spec.loss = loss;
    if (mode != ModeKeys::kTrain) return spec;
    Variable step = train::GetOrCreateGlobalStep(s);
    // The wrapped optimizer itself outside ReplicateModelFn.
    Operation minimize = TowerOptimizer(optimizer).Minimize(s, loss, step);
    // The batch norms' moving averages update with the step.
    std::vector<Operation> deps = {minimize};
    const std::vector<Operation> updates = GetCollectionOps(*s.graph(), GraphKeys::kUpdateOps);
    deps.insert(deps.end(), updates.begin() + updates_before, updates.end());
    spec.train_op = ops::NoOp(s.WithOpName("train_op").WithControlDependencies(deps)).operation;
    return spec;
  };
}

constexpr char kNotCompiled[] =
    "You must compile your model before training/testing. Use `model.compile(optimizer, loss)`.";

}  // namespace

absl::StatusOr<ModelFn> Sequential::ToModelFn() const {
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  return LayersModelFn(layers_, compiled_->optimizer, compiled_->loss, nullptr);
}

absl::Status Sequential::Build(const Tensor* y) {
  if (layers_.empty()) return absl::FailedPreconditionError("The model has no layers");
  const bool replicated = replication_.replicas > 1;
  std::vector<std::string> devices = replication_.devices;
  if (devices.empty()) {
    for (int i = 0; i < replication_.replicas; ++i) devices.push_back(absl::StrCat("/cpu:", i));
  }
  if (static_cast<int>(devices.size()) != replication_.replicas) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ReplicatedModel: ", devices.size(), " devices for ", replication_.replicas, " replicas"));
  }
  auto recorded = std::make_shared<std::vector<Output>>();
  // The layers as a model_fn training with `optimizer`, replicated when asked.
  const auto make_model_fn =
      [&](std::shared_ptr<train::Optimizer> optimizer) -> absl::StatusOr<ModelFn> {
    ModelFn fn = LayersModelFn(
        layers_, std::move(optimizer),
        compiled_ != nullptr ? std::optional<LossKind>(compiled_->loss) : std::nullopt, recorded);
    if (!replicated) return fn;
    ReplicateOptions options;
    options.devices = devices;
    options.uneven_batches = replication_.uneven_batches;
    return ReplicateModelFn(fn, options);
  };
  TW_ASSIGN_OR_RETURN(ModelFn model_fn,
                      make_model_fn(compiled_ != nullptr ? compiled_->optimizer : nullptr));

  if (built_ == nullptr) {
    auto built = std::make_shared<Built>();
    const Scope& root = built->root;
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), input_shape_.begin(), input_shape_.end());
    built->x = ops::Placeholder(root.WithOpName(layers_[0].name(), "_input"), dtype_,
                                ops::Placeholder::Shape(PartialTensorShape(dims)));
    Params params;
    params.num_towers = replication_.replicas;
    EstimatorSpec spec = model_fn(root, {{"x", built->x}}, {}, ModeKeys::kPredict, params);
    TW_RETURN_IF_ERROR(root.status());
    built->predict = {spec.predictions.at("output"), Output()};
    if (spec.predictions.count("logits")) built->predict.logits = spec.predictions.at("logits");
    built->layer_outputs = *recorded;
    built->weights = GetVariables(*root.graph());
    const Scope reads = root.NewSubScope("weights");
    for (const Variable& v : built->weights) built->weight_reads.push_back(v.value(reads));
    TW_RETURN_IF_ERROR(root.status());
    SessionOptions session_options;
    session_options.device_count["CPU"] = std::max(1, replication_.replicas);
    session_options.allow_soft_placement = true;
    built->session = std::make_unique<ClientSession>(root, session_options);
    built_ = std::move(built);
    TW_RETURN_IF_ERROR(carried_status_);
    if (!carried_weights_.empty()) {
      const std::vector<NamedTensor> carried = std::move(carried_weights_);
      carried_weights_.clear();
      TW_RETURN_IF_ERROR(SetWeights(carried));
    }
  }
  Built& b = *built_;
  if (y == nullptr || compiled_ == nullptr || b.trained) return absl::OkStatus();

  // The training graph: the same layers reusing the weights.
  const Scope& root = b.root;
  std::vector<int64_t> ydims = {-1};
  for (int d = 1; d < y->dims(); ++d) ydims.push_back(y->dim_size(d));
  b.y = ops::Placeholder(root.WithOpName(layers_.back().name(), "_target"), y->dtype(),
                         ops::Placeholder::Shape(PartialTensorShape(ydims)));
  const Scope train_scope =
      root.NewSubScope("training").WithVariableScope("", VariableReuse::kAutoReuse);
  if (compiled_->keras_optimizer.has_value()) {
    // The learning rate in a variable, so that it can change between steps.
    const Optimizer& keras_optimizer = *compiled_->keras_optimizer;
    VariableOptions frozen;
    frozen.trainable = false;
    const Scope lr = root.WithNoControlDependencies();
    b.learning_rate = GetVariable(
        lr, "learning_rate", TensorShape(), DT_FLOAT,
        initializers::Constant(static_cast<float>(keras_optimizer.learning_rate)), frozen);
    TW_RETURN_IF_ERROR(root.status());
    b.learning_rate_value = b.learning_rate.value(root.NewSubScope("learning_rate_value"));
    const Scope set = root.NewSubScope("set_learning_rate");
    b.learning_rate_feed = ops::Placeholder(set, DT_FLOAT, ops::Placeholder::Shape(TensorShape()));
    b.set_learning_rate =
        ops::AssignVariableOp(set, b.learning_rate.handle(), b.learning_rate_feed).operation;
    TW_ASSIGN_OR_RETURN(model_fn, make_model_fn(keras_optimizer.make(
                                      b.learning_rate.value(root.NewSubScope("training_rate")))));
  }
  Params params;
  params.num_towers = replication_.replicas;
  EstimatorSpec spec = model_fn(train_scope, {{"x", b.x}}, {{"y", b.y}}, ModeKeys::kTrain, params);
  TW_RETURN_IF_ERROR(root.status());
  b.train_loss = spec.loss;
  b.train_op = spec.train_op;
  const Output train_out = spec.predictions.at("output");
  // Metrics of the whole batch (the towers' outputs concatenated).
  const Scope metrics = root.NewSubScope("metrics");
  for (const std::string& m : compiled_->metrics) {
    TW_ASSIGN_OR_RETURN(Output v, BatchMetric(metrics, m, compiled_->loss, b.y, train_out));
    b.train_metrics.push_back(v);
  }
  // Evaluation: the loss and metrics of the inference outputs.
  const Scope eval = root.NewSubScope("evaluation");
  b.eval_loss = BatchLoss(eval.NewSubScope("loss"), compiled_->loss, b.y, b.predict);
  if (!GetCollection(*root.graph(), GraphKeys::kRegularizationLosses).empty()) {
    b.eval_loss = ops::AddV2(eval, b.eval_loss, GetRegularizationLoss(eval));
  }
  for (const std::string& m : compiled_->metrics) {
    TW_ASSIGN_OR_RETURN(Output v, BatchMetric(eval, m, compiled_->loss, b.y, b.predict.output));
    b.eval_metrics.push_back(v);
  }
  TW_RETURN_IF_ERROR(root.status());
  b.trained = true;
  return absl::OkStatus();
}

absl::Status Sequential::InitializeNewVariables() const {
  Built& b = *built_;
  std::vector<Operation> inits;
  std::vector<std::string> names;
  for (const Variable& v : GetVariables(*b.root.graph(), GraphKeys::kGlobalVariables)) {
    if (!b.initialized.contains(v.name())) {
      inits.push_back(v.initializer());
      names.push_back(v.name());
    }
  }
  if (inits.empty()) return absl::OkStatus();
  TW_RETURN_IF_ERROR(b.session->Run({}, {}, inits, nullptr));
  b.initialized.insert(names.begin(), names.end());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NamedTensor>> Sequential::GetWeights() {
  TW_RETURN_IF_ERROR(Build(nullptr));
  return BuiltWeights();
}

void Sequential::CarryWeights() {
  if (built_ == nullptr) return;
  absl::StatusOr<std::vector<NamedTensor>> weights = BuiltWeights();
  if (weights.ok()) {
    carried_weights_ = std::move(*weights);
  } else {
    carried_status_ = weights.status();
  }
}

absl::StatusOr<std::vector<NamedTensor>> Sequential::BuiltWeights() const {
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  const Built& b = *built_;
  std::vector<Tensor> values;
  TW_RETURN_IF_ERROR(b.session->Run(b.weight_reads, &values));
  std::vector<NamedTensor> weights;
  for (size_t i = 0; i < b.weights.size(); ++i) {
    weights.push_back({b.weights[i].name(), values[i]});
  }
  return weights;
}

absl::Status Sequential::SetWeights(const std::vector<NamedTensor>& weights) {
  TW_RETURN_IF_ERROR(Build(nullptr));
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  Built& b = *built_;
  ClientSession::FeedType feeds;
  std::vector<Operation> assigns;
  for (const NamedTensor& w : weights) {
    auto v = std::find_if(b.weights.begin(), b.weights.end(),
                          [&w](const Variable& v) { return v.name() == w.name; });
    if (v == b.weights.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SetWeights: the model has no weight named ", w.name));
    }
    if (w.tensor.dtype() != v->dtype() || w.tensor.shape() != v->shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SetWeights: ", w.name, " is ", DataTypeString(v->dtype()), " ", v->shape().DebugString(),
          ", got ", DataTypeString(w.tensor.dtype()), " ", w.tensor.shape().DebugString()));
    }
    auto it = b.assigners.find(w.name);
    if (it == b.assigners.end()) {
      const Scope s = b.root.NewSubScope("set_weights").ColocateWith(v->handle());
      Output value = ops::Placeholder(s, v->dtype(), ops::Placeholder::Shape(v->shape()));
      Operation assign = ops::AssignVariableOp(s, v->handle(), value).operation;
      TW_RETURN_IF_ERROR(s.status());
      it = b.assigners.emplace(w.name, std::make_pair(value, assign)).first;
    }
    feeds.emplace(it->second.first, w.tensor);
    assigns.push_back(it->second.second);
  }
  return b.session->Run(feeds, {}, assigns, nullptr);
}

absl::Status Sequential::SaveWeights(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> weights, GetWeights());
  return WriteCheckpoint(path, weights);
}

absl::Status Sequential::LoadWeights(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> saved, ReadCheckpoint(path));
  TW_RETURN_IF_ERROR(Build(nullptr));
  for (const Variable& v : built_->weights) {
    const bool found = std::any_of(saved.begin(), saved.end(),
                                   [&v](const NamedTensor& t) { return t.name == v.name(); });
    if (!found) {
      return absl::NotFoundError(absl::StrCat(path, ": no weight ", v.name(), " in the file"));
    }
  }
  std::vector<NamedTensor> weights;
  for (NamedTensor& t : saved) {
    const bool ours = std::any_of(built_->weights.begin(), built_->weights.end(),
                                  [&t](const Variable& v) { return v.name() == t.name; });
    if (ours) weights.push_back(std::move(t));
  }
  return SetWeights(weights);
}

absl::Status Sequential::CheckBatches(int64_t n, int64_t batch_size) const {
  TW_RETURN_IF_ERROR(CheckBatch(std::min(n, batch_size)));
  return n % batch_size == 0 ? absl::OkStatus() : CheckBatch(n % batch_size);
}

absl::Status Sequential::CheckBatch(int64_t batch) const {
  if (replication_.replicas > 1 && !replication_.uneven_batches &&
      batch % replication_.replicas != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_size must be divisible by num_replicas (batch_size ", batch, ", num_replicas ",
        replication_.replicas, "); ReplicationOptions::uneven_batches accepts it"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Sequential::RunStep(const Tensor& x, const Tensor* y,
                                                        bool train) {
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  Built& b = *built_;
  std::vector<Output> fetches;
  std::vector<Operation> targets;
  if (train) {
    fetches.push_back(b.train_loss);
    fetches.insert(fetches.end(), b.train_metrics.begin(), b.train_metrics.end());
    targets.push_back(b.train_op);
  } else if (y != nullptr) {
    fetches.push_back(b.eval_loss);
    fetches.insert(fetches.end(), b.eval_metrics.begin(), b.eval_metrics.end());
  } else {
    fetches.push_back(b.predict.output);
  }
  ClientSession::FeedType feeds;
  feeds.emplace(b.x, x);
  if (y != nullptr) feeds.emplace(b.y, *y);
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(b.session->Run(feeds, fetches, targets, &out));
  return out;
}

absl::Status Sequential::RunBatches(const Tensor& x, const Tensor* y, int64_t batch_size,
                                    bool train, const std::vector<int64_t>& order,
                                    const StepFn& each) {
  const int64_t n = x.dim_size(0);
  int64_t step = 0;
  for (int64_t begin = 0; begin < n; begin += batch_size, ++step) {
    const int64_t end = std::min(n, begin + batch_size);
    const Tensor yb = y != nullptr ? GatherRows(*y, order, begin, end) : Tensor();
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunStep(GatherRows(x, order, begin, end),
                                                         y != nullptr ? &yb : nullptr, train));
    TW_RETURN_IF_ERROR(each(step, end - begin, out));
  }
  return absl::OkStatus();
}

namespace {

absl::Status CheckData(const Tensor& x, const Tensor* y, const std::vector<int64_t>& input_shape,
                       DataType dtype, int64_t batch_size) {
  if (batch_size <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size must be positive, got ", batch_size));
  if (x.dtype() != dtype || x.dims() != static_cast<int>(input_shape.size()) + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Error when checking input: expected ", DataTypeString(dtype),
                     " of shape (None, ", absl::StrJoin(input_shape, ", "), "), got ",
                     DataTypeString(x.dtype()), " ", x.shape().DebugString()));
  }
  for (size_t d = 0; d < input_shape.size(); ++d) {
    if (x.dim_size(d + 1) != input_shape[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("Error when checking input: expected shape (None, ",
                       absl::StrJoin(input_shape, ", "), "), got ", x.shape().DebugString()));
    }
  }
  if (!IsNumeric(x.dtype())) return absl::InvalidArgumentError("x must be numeric");
  if (x.dim_size(0) == 0) return absl::InvalidArgumentError("x has no examples (0 rows)");
  if (y != nullptr &&
      (y->dims() < 1 || y->dim_size(0) != x.dim_size(0) || !IsNumeric(y->dtype()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input arrays should have the same number of samples as target arrays. Found ",
                     x.dim_size(0), " input samples and ", y->dims() < 1 ? 0 : y->dim_size(0),
                     " target samples."));
  }
  return absl::OkStatus();
}

std::vector<int64_t> Identity(int64_t n) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace

absl::StatusOr<History> Sequential::Fit(const Tensor& x_all, const Tensor& y_all,
                                        const FitOptions& options) {
  if (compiled_ == nullptr) {
    return absl::FailedPreconditionError(kNotCompiled);
  }
  TW_RETURN_IF_ERROR(CheckData(x_all, &y_all, input_shape_, dtype_, options.batch_size));
  if ((options.validation_x == nullptr) != (options.validation_y == nullptr)) {
    return absl::InvalidArgumentError("validation data needs both x and y");
  }
  if (!(options.validation_split >= 0 && options.validation_split < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("validation_split must be in [0, 1), got ", options.validation_split));
  }
  // Keras's validation_split: the last rows, before shuffling.
  Tensor x = x_all, y = y_all, split_x, split_y;
  const Tensor* validation_x = options.validation_x;
  const Tensor* validation_y = options.validation_y;
  if (validation_x == nullptr && options.validation_split > 0) {
    const int64_t rows = x_all.dim_size(0);
    const int64_t train_rows = static_cast<int64_t>(rows * (1 - options.validation_split));
    const std::vector<int64_t> order = Identity(rows);
    x = GatherRows(x_all, order, 0, train_rows);
    y = GatherRows(y_all, order, 0, train_rows);
    split_x = GatherRows(x_all, order, train_rows, rows);
    split_y = GatherRows(y_all, order, train_rows, rows);
    validation_x = &split_x;
    validation_y = &split_y;
  }
  const int64_t n = x.dim_size(0);
  if (n == 0) return absl::InvalidArgumentError("Fit: no training examples");
  TW_RETURN_IF_ERROR(CheckBatches(n, options.batch_size));
  TW_RETURN_IF_ERROR(Build(&y));
  const int64_t steps = (n + options.batch_size - 1) / options.batch_size;
  std::vector<int64_t> order = Identity(n);
  return FitEpochs(options, steps, validation_x, validation_y, [&](int epoch, const StepFn& each) {
    if (options.shuffle) {
      std::mt19937_64 rng(options.seed * 1000003 + epoch);
      std::shuffle(order.begin(), order.end(), rng);
    }
    return RunBatches(x, &y, options.batch_size, /*train=*/true, order, each);
  });
}

absl::StatusOr<History> Sequential::Fit(const data::Dataset& dataset, const FitOptions& options) {
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  if ((options.validation_x == nullptr) != (options.validation_y == nullptr)) {
    return absl::InvalidArgumentError("validation data needs both x and y");
  }
  // An element is one batch (x, y).
  const auto next = [this](data::Iterator* it,
                           int64_t step) -> absl::StatusOr<std::optional<data::Element>> {
    TW_ASSIGN_OR_RETURN(std::optional<data::Element> e, it->GetNext());
    if (!e.has_value()) return e;
    if (e->size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Fit: a dataset element must be a batch (x, y), got ", e->size(),
                       " tensors at step ", step));
    }
    TW_RETURN_IF_ERROR(CheckData((*e)[0], &(*e)[1], input_shape_, dtype_, 1));
    TW_RETURN_IF_ERROR(CheckBatch((*e)[0].dim_size(0)));
    return e;
  };
  {
    std::unique_ptr<data::Iterator> first = dataset.MakeIterator();
    TW_ASSIGN_OR_RETURN(std::optional<data::Element> e, next(first.get(), 0));
    if (!e.has_value()) return absl::InvalidArgumentError("Fit: the dataset is empty");
    TW_RETURN_IF_ERROR(Build(&(*e)[1]));
  }
  return FitEpochs(options, /*steps=*/0, options.validation_x, options.validation_y,
                   [&](int, const StepFn& each) -> absl::Status {
                     std::unique_ptr<data::Iterator> it = dataset.MakeIterator();
                     for (int64_t step = 0;; ++step) {
                       TW_ASSIGN_OR_RETURN(std::optional<data::Element> e, next(it.get(), step));
                       if (!e.has_value()) return absl::OkStatus();
                       TW_ASSIGN_OR_RETURN(std::vector<Tensor> values,
                                           RunStep((*e)[0], &(*e)[1], /*train=*/true));
                       TW_RETURN_IF_ERROR(each(step, (*e)[0].dim_size(0), values));
                     }
                   });
}

absl::StatusOr<History> Sequential::FitEpochs(
    const FitOptions& options, int64_t steps, const Tensor* validation_x,
    const Tensor* validation_y,
    const std::function<absl::Status(int epoch, const StepFn& each)>& run_epoch) {
  std::ostream* out = options.out != nullptr ? options.out : &std::cout;
  const bool dynamic = IsTerminal(out);
  History history;
  stop_training_ = false;
  for (const auto& c : options.callbacks) TW_RETURN_IF_ERROR(c->OnTrainBegin(this));
  for (int epoch = options.initial_epoch; epoch < options.epochs && !stop_training_; ++epoch) {
    for (const auto& c : options.callbacks) TW_RETURN_IF_ERROR(c->OnEpochBegin(this, epoch));
    if (options.verbose > 0) *out << "Epoch " << epoch + 1 << "/" << options.epochs << "\n";
    Progbar bar(steps, options.verbose > 0 ? out : nullptr, dynamic);
    TW_RETURN_IF_ERROR(run_epoch(epoch, [&](int64_t step, int64_t rows,
                                            const std::vector<Tensor>& values) {
      std::vector<std::pair<std::string, double>> named = {{"loss", values[0].scalar<float>()()}};
      for (size_t m = 0; m < compiled_->metrics.size(); ++m) {
        named.push_back({compiled_->metrics[m], values[m + 1].scalar<float>()()});
      }
      bar.Update(step + 1, named, static_cast<double>(rows));
      const Logs logs(named.begin(), named.end());
      for (const auto& c : options.callbacks) {
        TW_RETURN_IF_ERROR(c->OnBatchEnd(this, step, logs));
      }
      return absl::OkStatus();
    }));
    std::vector<std::pair<std::string, double>> extra;
    if (validation_x != nullptr) {
      TW_ASSIGN_OR_RETURN(auto val, Evaluate(*validation_x, *validation_y, options.batch_size));
      extra.push_back({"val_loss", val["loss"]});
      for (const std::string& m : compiled_->metrics) extra.push_back({"val_" + m, val[m]});
    }
    bar.Finish(extra);
    history.epochs.push_back(epoch);
    Logs logs;
    for (const auto& [name, value] : bar.Means()) logs[name] = value;
    for (const auto& [name, value] : extra) logs[name] = value;
    for (const auto& [name, value] : logs) history.history[name].push_back(value);
    for (const auto& c : options.callbacks) TW_RETURN_IF_ERROR(c->OnEpochEnd(this, epoch, logs));
  }
  for (const auto& c : options.callbacks) TW_RETURN_IF_ERROR(c->OnTrainEnd(this));
  return history;
}

absl::StatusOr<std::map<std::string, double>> Sequential::Evaluate(const Tensor& x, const Tensor& y,
                                                                   int64_t batch_size) {
  if (compiled_ == nullptr) {
    return absl::FailedPreconditionError(kNotCompiled);
  }
  TW_RETURN_IF_ERROR(CheckData(x, &y, input_shape_, dtype_, batch_size));
  const int64_t n = x.dim_size(0);
  TW_RETURN_IF_ERROR(CheckBatches(n, batch_size));
  TW_RETURN_IF_ERROR(Build(&y));
  std::vector<double> sums(1 + compiled_->metrics.size(), 0.0);
  TW_RETURN_IF_ERROR(RunBatches(x, &y, batch_size, /*train=*/false, Identity(n),
                                [&](int64_t, int64_t rows, const std::vector<Tensor>& values) {
                                  for (size_t i = 0; i < sums.size(); ++i) {
                                    sums[i] += values[i].scalar<float>()() * rows;
                                  }
                                  return absl::OkStatus();
                                }));
  std::map<std::string, double> result;
  result["loss"] = n > 0 ? sums[0] / n : 0;
  for (size_t m = 0; m < compiled_->metrics.size(); ++m) {
    result[compiled_->metrics[m]] = n > 0 ? sums[m + 1] / n : 0;
  }
  return result;
}

absl::StatusOr<Tensor> Sequential::Predict(const Tensor& x, int64_t batch_size) {
  TW_RETURN_IF_ERROR(CheckData(x, nullptr, input_shape_, dtype_, batch_size));
  const int64_t n = x.dim_size(0);
  TW_RETURN_IF_ERROR(CheckBatches(n, batch_size));
  TW_RETURN_IF_ERROR(Build(nullptr));
  Tensor result;
  TW_RETURN_IF_ERROR(RunBatches(x, nullptr, batch_size, /*train=*/false, Identity(n),
                                [&](int64_t step, int64_t rows, const std::vector<Tensor>& values) {
                                  const Tensor& out = values[0];
                                  if (step == 0) {
                                    result = Tensor(out.dtype(), WithRows(out.shape(), n));
                                  }
                                  const size_t row_bytes = rows > 0 ? out.TotalBytes() / rows : 0;
                                  std::memcpy(static_cast<char*>(result.raw_data()) +
                                                  step * batch_size * row_bytes,
                                              out.raw_data(), out.TotalBytes());
                                  return absl::OkStatus();
                                }));
  return result;
}

absl::StatusOr<double> Sequential::GetLearningRate() {
  if (compiled_ == nullptr || !compiled_->keras_optimizer.has_value()) {
    return absl::FailedPreconditionError(
        "GetLearningRate: compile the model with a keras::Optimizer (keras::SGD, keras::Adam, "
        "...) to have a learning rate that can change");
  }
  if (built_ == nullptr || !built_->learning_rate.valid()) {
    return compiled_->keras_optimizer->learning_rate;
  }
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(built_->session->Run({built_->learning_rate_value}, &out));
  return static_cast<double>(out[0].scalar<float>()());
}

absl::Status Sequential::SetLearningRate(double learning_rate) {
  TW_RETURN_IF_ERROR(GetLearningRate().status());
  if (!(learning_rate >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("SetLearningRate: ", learning_rate));
  }
  if (built_ == nullptr || !built_->learning_rate.valid()) {
    // Not trained yet: training starts from it.
    auto compiled = std::make_shared<Compiled>(*compiled_);
    compiled->keras_optimizer->learning_rate = learning_rate;
    compiled_ = std::move(compiled);
    return absl::OkStatus();
  }
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  Tensor value(DT_FLOAT, TensorShape());
  value.scalar<float>()() = static_cast<float>(learning_rate);
  return built_->session->Run({{built_->learning_rate_feed, value}}, {},
                              {built_->set_learning_rate}, nullptr);
}

absl::StatusOr<Logs> Sequential::TrainOnBatch(const Tensor& x, const Tensor& y) {
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TW_RETURN_IF_ERROR(CheckData(x, &y, input_shape_, dtype_, std::max<int64_t>(1, x.dim_size(0))));
  TW_RETURN_IF_ERROR(CheckBatch(x.dim_size(0)));
  TW_RETURN_IF_ERROR(Build(&y));
  Logs logs;
  TW_RETURN_IF_ERROR(RunBatches(x, &y, std::max<int64_t>(1, x.dim_size(0)), /*train=*/true,
                                Identity(x.dim_size(0)),
                                [&](int64_t, int64_t, const std::vector<Tensor>& values) {
                                  logs["loss"] = values[0].scalar<float>()();
                                  for (size_t m = 0; m < compiled_->metrics.size(); ++m) {
                                    logs[compiled_->metrics[m]] = values[m + 1].scalar<float>()();
                                  }
                                  return absl::OkStatus();
                                }));
  return logs;
}

absl::StatusOr<Tensor> Sequential::PredictOnBatch(const Tensor& x) {
  return Predict(x, std::max<int64_t>(1, x.dims() > 0 ? x.dim_size(0) : 1));
}

absl::StatusOr<std::string> Sequential::Summary() {
  TW_RETURN_IF_ERROR(Build(nullptr));
  const Built& b = *built_;
  // Keras's print_summary for sequential models: 65 columns, fields ending
  // at 29, 55 and 65.
  constexpr int kLine = 65;
  const int positions[] = {29, 55, 65};
  const auto row = [&](const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line = line.substr(0, line.size() - 1) + " ";  // Keras's print_row
      line += fields[i];
      line = line.substr(0, positions[i]);
      line += std::string(positions[i] - line.size(), ' ');
    }
    return line + "\n";
  };
  std::string s = absl::StrCat("Model: \"", name_, "\"\n", std::string(kLine, '_'), "\n");
  s += row({"Layer (type)", "Output Shape", "Param #"});
  s += std::string(kLine, '=') + "\n";
  int64_t trainable = 0, frozen = 0;
  const std::vector<Variable> variables = GetVariables(*b.root.graph());
  for (size_t i = 0; i < layers_.size(); ++i) {
    int64_t params = 0;
    for (const Variable& v : variables) {
      if (!absl::StartsWith(v.name(), layers_[i].name() + "/")) continue;
      params += v.shape().num_elements();
      (v.trainable() ? trainable : frozen) += v.shape().num_elements();
    }
    const Output& out = b.layer_outputs[i];
    s += row({absl::StrCat(layers_[i].name(), " (", layers_[i].class_name(), ")"),
              out.valid() ? ShapeTuple(out.shape()) : "multiple", absl::StrCat(params)});
    s += std::string(kLine, i + 1 == layers_.size() ? '=' : '_') + "\n";
  }
  const auto commas = [](int64_t v) {
    std::string digits = absl::StrCat(v), out;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  };
  absl::StrAppend(&s, "Total params: ", commas(trainable + frozen), "\n",
                  "Trainable params: ", commas(trainable), "\n",
                  "Non-trainable params: ", commas(frozen), "\n", std::string(kLine, '_'), "\n");
  return s;
}

absl::StatusOr<GraphDef> Sequential::ExportGraphDef() const {
  if (built_ == nullptr) {
    return absl::FailedPreconditionError("ExportGraphDef: the model is not built yet");
  }
  return built_->root.ToGraphDef();
}

Sequential ReplicatedModel(const Sequential& model, const ReplicationOptions& options) {
  Sequential copy = model;
  copy.replication_ = options;
  if (copy.replication_.replicas < 1) copy.replication_.replicas = 1;
  copy.CarryWeights();
  copy.built_.reset();
  return copy;
}

}  // namespace keras
}  // namespace towerflow
