// A TFRecord / event file -> RecordReader -> every record as an Event,
// and an Event's graph_def as a GraphDef.
#include "absl/strings/str_cat.h"
#include "core/record_io.h"
#include "core/status_macros.h"
#include "fuzz/fuzz_target.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"

namespace towerflow {
namespace fuzz {
namespace {

constexpr int kMaxRecords = 10000;

absl::Status RunRecords(absl::string_view input) {
  const std::string path = absl::StrCat(ScratchDir(), "/records");
  TW_RETURN_IF_ERROR(WriteFile(path, input));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path));
  std::string record;
  for (int i = 0; i < kMaxRecords; ++i) {
    TW_ASSIGN_OR_RETURN(const bool more, reader->ReadRecord(&record));
    if (!more) break;
    Event event;
    if (!event.ParseFromString(record)) continue;  // a TFRecord of anything
    if (event.what_case() == Event::kGraphDef) {
      GraphDef graph;
      if (!graph.ParseFromString(event.graph_def())) {
        return absl::DataLossError(absl::StrCat("record ", i, ": a graph_def that does not parse"));
      }
    }
  }
  return absl::OkStatus();
}

// Records reframed with valid CRCs; a payload that is an Event changed as
// one (its graph_def as a GraphDef half the time), any other as bytes.
std::optional<std::string> MutateRecordFile(const std::string& input, MutationContext& ctx) {
  return MutateRecords(input, ctx, [&ctx](const std::string& payload) {
    Event event;
    if (!event.ParseFromString(payload)) return ctx.MutateBytes(payload);
    if (event.what_case() == Event::kGraphDef && ctx.Below(2) == 0) {
      if (std::optional<std::string> graph = MutateProto(
              event.graph_def(), GraphDef::default_instance(), ProtoFormat::kBinary, ctx)) {
        event.set_graph_def(*std::move(graph));
        return event.SerializeAsString();
      }
    }
    MutateMessage(&event, ctx);
    return event.SerializeAsString();
  });
}

std::vector<std::string> RecordSeeds() {
  std::vector<std::string> seeds = ReferenceFiles({
      "tf/events/events.out.tfevents.1524890698.jintao-VirtualBox",
      "tf/events/events.out.tfevents.1525149583.jintao-VirtualBox",
  });
  // Records Towerflow writes: an event and two plain records.
  const std::string path = absl::StrCat(ScratchDir(), "/seed_records");
  absl::StatusOr<std::unique_ptr<RecordWriter>> writer = RecordWriter::Open(path);
  if (writer.ok()) {
    Event event;
    event.set_wall_time(1.5);
    event.set_file_version("brain.Event:2");
    if ((*writer)->WriteRecord(event.SerializeAsString()).ok() && (*writer)->WriteRecord("").ok() &&
        (*writer)->WriteRecord(std::string(300, 'x')).ok() && (*writer)->Close().ok()) {
      if (std::optional<std::string> bytes = ReadFile(path)) seeds.push_back(*bytes);
    }
  }
  return seeds;
}

}  // namespace

TW_FUZZ_TARGET_WITH_MUTATOR(records, RunRecords, RecordSeeds, MutateRecordFile)

}  // namespace fuzz
}  // namespace towerflow
