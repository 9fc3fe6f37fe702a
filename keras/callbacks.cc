#include "keras/callbacks.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/status_macros.h"

namespace towerflow {
namespace keras {
namespace {

bool Maximize(const std::string& mode, const std::string& monitor) {
  if (mode == "max") return true;
  if (mode == "min") return false;
  return absl::StrContains(monitor, "acc");
}

// The monitored value, or nullptr after Keras's warning.
const double* Monitored(const std::string& who, const std::string& monitor, const Logs& logs) {
  auto it = logs.find(monitor);
  if (it != logs.end()) return &it->second;
  std::vector<std::string> keys;
  for (const auto& [k, v] : logs) keys.push_back(k);
  std::cerr << who << " conditioned on metric `" << monitor
            << "` which is not available. Available metrics are: " << absl::StrJoin(keys, ",")
            << "\n";
  return nullptr;
}

// Python's repr of a float: the shortest string that reads back the same.
std::string ShortestRepr(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, end);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // 1 -> "1.0", as Python
  return s;
}

}  // namespace

EarlyStopping::EarlyStopping(Options options)
    : options_(std::move(options)), maximize_(Maximize(options_.mode, options_.monitor)) {}

absl::Status EarlyStopping::OnTrainBegin(Model*) {
  wait_ = 0;
  stopped_epoch_ = -1;
  best_ = maximize_ ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  best_weights_.clear();
  return absl::OkStatus();
}

absl::Status EarlyStopping::OnEpochEnd(Model* model, int epoch, const Logs& logs) {
  const double* current = Monitored("Early stopping", options_.monitor, logs);
  if (current == nullptr) return absl::OkStatus();
  // Keras: an improvement is beyond min_delta in the good direction.
  const bool improved =
      maximize_ ? *current - options_.min_delta > best_ : *current + options_.min_delta < best_;
  if (improved) {
    best_ = *current;
    wait_ = 0;
    if (options_.restore_best_weights) {
      TW_ASSIGN_OR_RETURN(best_weights_, model->GetWeights());
    }
    return absl::OkStatus();
  }
  if (++wait_ >= options_.patience) {
    stopped_epoch_ = epoch;
    model->set_stop_training(true);
    if (options_.restore_best_weights && !best_weights_.empty()) {
      TW_RETURN_IF_ERROR(model->SetWeights(best_weights_));
    }
  }
  return absl::OkStatus();
}

ModelCheckpoint::ModelCheckpoint(std::string filepath, Options options)
    : filepath_(std::move(filepath)),
      options_(std::move(options)),
      maximize_(Maximize(options_.mode, options_.monitor)) {}

absl::Status ModelCheckpoint::OnEpochEnd(Model* model, int epoch, const Logs& logs) {
  if (options_.save_best_only) {
    const double* current = Monitored("Can save best model only with", options_.monitor, logs);
    if (current == nullptr) return absl::OkStatus();
    const bool improved = !has_best_ || (maximize_ ? *current > best_ : *current < best_);
    if (!improved) return absl::OkStatus();
    has_best_ = true;
    best_ = *current;
  }
  const std::string path = absl::StrReplaceAll(
      filepath_,
      {{"{epoch:02d}", absl::StrFormat("%02d", epoch + 1)}, {"{epoch}", absl::StrCat(epoch + 1)}});
  TW_RETURN_IF_ERROR(model->SaveWeights(path));
  saved_.push_back(path);
  return absl::OkStatus();
}

CSVLogger::CSVLogger(std::string filename, char separator, bool append)
    : filename_(std::move(filename)), separator_(separator), append_(append) {}

absl::Status CSVLogger::OnTrainBegin(Model*) {
  keys_.clear();
  if (!append_) {
    std::ofstream truncate(filename_, std::ios::trunc);
    if (!truncate) return absl::UnavailableError(absl::StrCat(filename_, ": cannot write"));
  }
  return absl::OkStatus();
}

absl::Status CSVLogger::OnEpochEnd(Model*, int epoch, const Logs& logs) {
  std::ofstream out(filename_, std::ios::app);
  if (!out) return absl::UnavailableError(absl::StrCat(filename_, ": cannot write"));
  const std::string sep(1, separator_);
  if (keys_.empty()) {
    for (const auto& [k, v] : logs) keys_.push_back(k);  // std::map: sorted
    out << "epoch" << sep << absl::StrJoin(keys_, sep) << "\n";
  }
  std::vector<std::string> row = {absl::StrCat(epoch)};
  for (const std::string& k : keys_) {
    auto it = logs.find(k);
    row.push_back(it == logs.end() ? "NA" : ShortestRepr(it->second));
  }
  out << absl::StrJoin(row, sep) << "\n";
  out.flush();
  if (!out) return absl::DataLossError(absl::StrCat(filename_, ": write failed"));
  return absl::OkStatus();
}

absl::Status LearningRateScheduler::OnEpochBegin(Model* model, int epoch) {
  TW_ASSIGN_OR_RETURN(double lr, model->GetLearningRate());
  return model->SetLearningRate(schedule_(epoch, lr));
}

TensorBoard::TensorBoard(std::string log_dir) : log_dir_(std::move(log_dir)) {}

absl::Status TensorBoard::OnTrainBegin(Model* model) {
  TW_ASSIGN_OR_RETURN(writer_, train::EventWriter::Open(log_dir_));
  TW_ASSIGN_OR_RETURN(GraphDef graph, model->ExportGraphDef());
  return writer_->WriteGraph(graph);
}

absl::Status TensorBoard::OnEpochEnd(Model*, int epoch, const Logs& logs) {
  if (writer_ == nullptr) return absl::FailedPreconditionError("TensorBoard: training not begun");
  for (const auto& [name, value] : logs)
    TW_RETURN_IF_ERROR(writer_->WriteScalar(epoch, name, value));
  return writer_->Flush();
}

absl::Status TensorBoard::OnTrainEnd(Model*) {
  if (writer_ == nullptr) return absl::OkStatus();
  absl::Status s = writer_->Close();
  writer_.reset();
  return s;
}

}  // namespace keras
}  // namespace towerflow
