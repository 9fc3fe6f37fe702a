#include "train/event_writer.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"

namespace towerflow {
namespace train {

absl::StatusOr<std::unique_ptr<EventWriter>> EventWriter::Open(const std::string& dir) {
  TW_RETURN_IF_ERROR(CreateDirectories(dir));
  char host[256] = "localhost";
  if (gethostname(host, sizeof(host)) != 0) host[0] = '\0';
  host[sizeof(host) - 1] = '\0';
  const std::string path =
      absl::StrCat(dir, "/events.out.tfevents.", absl::ToUnixSeconds(absl::Now()), ".", host);
  TW_ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> records, RecordWriter::Open(path));
  std::unique_ptr<EventWriter> writer(new EventWriter(std::move(records), path));
  Event version;
  version.set_file_version("brain.Event:2");
  TW_RETURN_IF_ERROR(writer->Write(0, std::move(version)));
  return writer;
}

absl::Status EventWriter::Write(int64_t step, Event event) {
  event.set_wall_time(absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  event.set_step(step);
  return writer_->WriteRecord(SerializeDeterministic(event));
}

absl::Status EventWriter::WriteGraph(const GraphDef& graph_def) {
  Event event;
  event.set_graph_def(SerializeDeterministic(graph_def));
  return Write(0, std::move(event));
}

absl::Status EventWriter::WriteScalar(int64_t step, const std::string& tag, double value) {
  Event event;
  Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
  return Write(step, std::move(event));
}

absl::Status EventWriter::WriteSummary(int64_t step, const std::string& serialized_summary) {
  Event event;
  if (!event.mutable_summary()->ParseFromString(serialized_summary)) {
    return absl::DataLossError(absl::StrCat("a summary of ", serialized_summary.size(),
                                            " bytes does not parse, for ", path_));
  }
  return Write(step, std::move(event));
}

}  // namespace train
}  // namespace towerflow
