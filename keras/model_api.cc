// keras::Model's public methods: the model's state is a ModelImpl
// (keras/model_internal.h), and each method is the ModelImpl's of the same
// name. ReplicatedModel too, which copies a model's state.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "keras/model.h"
#include "keras/model_internal.h"

namespace towerflow {
namespace keras {

using internal::ModelImpl;

Model::Model(std::string name) : impl_(std::make_unique<ModelImpl>(this, std::move(name))) {}

Model::~Model() = default;

Model::Model(const Model& other) : impl_(std::make_unique<ModelImpl>(*other.impl_)) {
  impl_->self_ = this;
}

Model& Model::operator=(const Model& other) {
  if (this != &other) {
    impl_ = std::make_unique<ModelImpl>(*other.impl_);
    impl_->self_ = this;
  }
  return *this;
}

Model::Model(Model&& other) noexcept : impl_(std::move(other.impl_)) { impl_->self_ = this; }

Model& Model::operator=(Model&& other) noexcept {
  impl_ = std::move(other.impl_);
  impl_->self_ = this;
  return *this;
}

absl::Status Model::status() const { return impl_->status(); }
std::vector<std::string> Model::input_names() const { return impl_->input_names(); }
std::vector<std::string> Model::output_names() const { return impl_->output_names(); }
absl::Status Model::Compile(std::shared_ptr<train::Optimizer> optimizer, const std::string& loss,
                            std::vector<std::string> metrics) {
  return impl_->Compile(std::move(optimizer), loss, std::move(metrics));
}
absl::Status Model::Compile(std::shared_ptr<train::Optimizer> optimizer, CompileOptions options) {
  return impl_->Compile(std::move(optimizer), std::move(options));
}
absl::Status Model::Compile(Optimizer optimizer, const std::string& loss,
                            std::vector<std::string> metrics) {
  return impl_->Compile(std::move(optimizer), loss, std::move(metrics));
}
absl::Status Model::Compile(Optimizer optimizer, CompileOptions options) {
  return impl_->Compile(std::move(optimizer), std::move(options));
}
absl::StatusOr<double> Model::GetLearningRate() { return impl_->GetLearningRate(); }
absl::Status Model::SetLearningRate(double learning_rate) {
  return impl_->SetLearningRate(learning_rate);
}
absl::StatusOr<History> Model::Fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
  return impl_->Fit(x, y, options);
}
absl::StatusOr<History> Model::Fit(const TensorMap& x, const TensorMap& y,
                                   const FitOptions& options) {
  return impl_->Fit(x, y, options);
}
absl::StatusOr<History> Model::Fit(const data::Dataset& dataset, const FitOptions& options) {
  return impl_->Fit(dataset, options);
}
absl::StatusOr<Logs> Model::Evaluate(const Tensor& x, const Tensor& y, int64_t batch_size) {
  return impl_->Evaluate(x, y, batch_size);
}
absl::StatusOr<Logs> Model::Evaluate(const TensorMap& x, const TensorMap& y, int64_t batch_size) {
  return impl_->Evaluate(x, y, batch_size);
}
absl::StatusOr<Logs> Model::Evaluate(const data::Dataset& dataset) {
  return impl_->Evaluate(dataset);
}
absl::StatusOr<Tensor> Model::Predict(const Tensor& x, int64_t batch_size) {
  return impl_->Predict(x, batch_size);
}
absl::StatusOr<TensorMap> Model::Predict(const TensorMap& x, int64_t batch_size) {
  return impl_->Predict(x, batch_size);
}
absl::StatusOr<TensorMap> Model::Predict(const data::Dataset& dataset) {
  return impl_->Predict(dataset);
}
absl::StatusOr<Logs> Model::TrainOnBatch(const Tensor& x, const Tensor& y) {
  return impl_->TrainOnBatch(x, y);
}
absl::StatusOr<Logs> Model::TrainOnBatch(const TensorMap& x, const TensorMap& y) {
  return impl_->TrainOnBatch(x, y);
}
absl::StatusOr<Tensor> Model::PredictOnBatch(const Tensor& x) { return impl_->PredictOnBatch(x); }
absl::StatusOr<TensorMap> Model::PredictOnBatch(const TensorMap& x) {
  return impl_->PredictOnBatch(x);
}
absl::StatusOr<std::string> Model::Summary() { return impl_->Summary(); }
absl::StatusOr<ModelFn> Model::ToModelFn() const { return impl_->ToModelFn(); }
absl::StatusOr<std::vector<NamedTensor>> Model::GetWeights() { return impl_->GetWeights(); }
absl::Status Model::SetWeights(const std::vector<NamedTensor>& weights) {
  return impl_->SetWeights(weights);
}
absl::Status Model::SaveWeights(const std::string& path) { return impl_->SaveWeights(path); }
absl::Status Model::LoadWeights(const std::string& path) { return impl_->LoadWeights(path); }
absl::Status Model::Save(const std::string& dir, Model::SaveFormat format) {
  return impl_->Save(dir, format);
}
absl::Status Model::SetRandomSeed(int64_t seed) { return impl_->SetRandomSeed(seed); }
absl::StatusOr<GraphDef> Model::ExportGraphDef() const { return impl_->ExportGraphDef(); }
void Model::set_stop_training(bool stop) { impl_->stop_training_ = stop; }
bool Model::stop_training() const { return impl_->stop_training_; }
const std::string& Model::name() const { return impl_->name_; }
int Model::replicas() const { return impl_->replication_.replicas; }

Model ReplicatedModel(const Model& model, const ReplicationOptions& options) {
  Model copy = model;
  ModelImpl& impl = *copy.impl_;
  impl.replication_ = options;
  if (impl.replication_.replicas < 1) impl.replication_.replicas = 1;
  impl.CarryWeights();
  impl.built_.reset();
  return copy;
}

}  // namespace keras
}  // namespace towerflow
