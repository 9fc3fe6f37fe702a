// TensorBoard event files: tf.summary.FileWriter's output.
//
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<train::EventWriter> w,
//                       train::EventWriter::Open(model_dir));
//   TW_RETURN_IF_ERROR(w->WriteGraph(graph_def));
//   TW_RETURN_IF_ERROR(w->WriteScalar(step, "loss", 0.42));
//   TW_RETURN_IF_ERROR(w->Close());
//
// Writes `<dir>/events.out.tfevents.<seconds>.<hostname>` (TFRecord framing,
// CRC-checked), starting with the "brain.Event:2" file-version event as
// TensorFlow does, so TensorBoard reads it. Not thread-safe.
#ifndef TOWERFLOW_TRAIN_EVENT_WRITER_H_
#define TOWERFLOW_TRAIN_EVENT_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/record_io.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"

namespace towerflow {
namespace train {

class EventWriter {
 public:
  // Creates `dir` when missing. Errors name the file.
  static absl::StatusOr<std::unique_ptr<EventWriter>> Open(const std::string& dir);

  const std::string& path() const { return path_; }

  // Stamps wall_time (now) and `step` on `event` and appends it.
  absl::Status Write(int64_t step, Event event);
  absl::Status WriteGraph(const GraphDef& graph_def);
  absl::Status WriteScalar(int64_t step, const std::string& tag, double value);
  // A serialized Summary (what ScalarSummary / MergeSummary compute).
  // DataLoss when it does not parse.
  absl::Status WriteSummary(int64_t step, const std::string& serialized_summary);

  absl::Status Flush() { return writer_->Flush(); }
  absl::Status Close() { return writer_->Close(); }

 private:
  EventWriter(std::unique_ptr<RecordWriter> writer, std::string path)
      : writer_(std::move(writer)), path_(std::move(path)) {}

  std::unique_ptr<RecordWriter> writer_;
  const std::string path_;
};

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_EVENT_WRITER_H_
