// A TFRecord / event file -> RecordReader -> every record as an Event,
// and an Event's graph_def as a GraphDef.
#include <zlib.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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
  // gzip's and zlib's magic bytes read as TF's compressed TFRecord files.
  RecordCompression compression = RecordCompression::kNone;
  if (absl::StartsWith(input, "\x1f\x8b")) compression = RecordCompression::kGzip;
  if (absl::StartsWith(input, "\x78")) compression = RecordCompression::kZlib;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path, compression));
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

// `bytes` deflated in zlib's wrapping (MAX_WBITS) or gzip's (MAX_WBITS + 16).
std::optional<std::string> Deflate(const std::string& bytes, int window_bits) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return std::nullopt;
  }
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (status != Z_STREAM_END) return std::nullopt;
  return out;
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
      if (std::optional<std::string> bytes = ReadFile(path)) {
        seeds.push_back(*bytes);
        // The same records compressed as TF's "ZLIB" and "GZIP" options write them.
        for (const int window_bits : {MAX_WBITS, MAX_WBITS + 16}) {
          if (std::optional<std::string> packed = Deflate(*bytes, window_bits)) {
            seeds.push_back(*std::move(packed));
          }
        }
      }
    }
  }
  return seeds;
}

}  // namespace

TW_FUZZ_TARGET_WITH_MUTATOR(records, RunRecords, RecordSeeds, MutateRecordFile)

}  // namespace fuzz
}  // namespace towerflow
