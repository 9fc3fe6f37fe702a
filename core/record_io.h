// TFRecord files: the framing of TensorBoard event files and tf.data records.
//
// Each record is
//   uint64 length (little-endian) | uint32 masked CRC-32C of the length bytes |
//   length bytes of data          | uint32 masked CRC-32C of the data
//
//   TW_ASSIGN_OR_RETURN(auto reader, RecordReader::Open(path));
//   std::string record;
//   while (true) {
//     TW_ASSIGN_OR_RETURN(bool more, reader->ReadRecord(&record));
//     if (!more) break;
//     ...
//   }
//
// Corruption is DataLoss naming the record's offset: a truncated header or
// body, a CRC mismatch, or a length past kMaxRecordBytes (checked before any
// allocation). Readers and writers are not thread-safe.
//
// A compressed file (TF's TFRecordOptions "ZLIB" or "GZIP") is the records
// deflated as one stream, in zlib's or gzip's wrapping (streams written one
// after another are read on); offsets are the uncompressed stream's, as TF's.
// Data that does not inflate, or a stream cut short, is DataLoss too.
#ifndef TOWERFLOW_CORE_RECORD_IO_H_
#define TOWERFLOW_CORE_RECORD_IO_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {

inline constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 30;

// The bytes of one record holding `data` in a TFRecord file: the header
// (length and its CRC), `data`, the data's CRC. What RecordWriter writes.
// REQUIRES: data.size() <= kMaxRecordBytes.
std::string EncodeRecord(absl::string_view data);

enum class RecordCompression { kNone, kZlib, kGzip };

// TF's names of the compressions: "", "ZLIB", "GZIP". InvalidArgument for
// another (TF reads such a file uncompressed, after a log line).
absl::StatusOr<RecordCompression> ParseRecordCompression(absl::string_view type);

class RecordReader {
 public:
  // NotFound / PermissionDenied / Internal when `path` cannot be opened.
  static absl::StatusOr<std::unique_ptr<RecordReader>> Open(
      const std::string& path, RecordCompression compression = RecordCompression::kNone);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads the next record into *record: true, or false at a clean end of
  // file. DataLoss on corruption (see the file comment).
  absl::StatusOr<bool> ReadRecord(std::string* record);
  // Offset of the next record (in the uncompressed stream).
  uint64_t offset() const { return offset_; }

 private:
  class Inflater;  // record_io.cc: zlib's inflate over the file
  RecordReader(std::FILE* file, std::string path, std::unique_ptr<Inflater> inflater);
  // Up to `n` bytes of the records' stream into `out`: fewer only at its end.
  absl::StatusOr<size_t> Read(char* out, size_t n);

  std::FILE* file_;
  std::string path_;
  std::unique_ptr<Inflater> inflater_;  // null when the file is not compressed
  uint64_t offset_ = 0;
};

class RecordWriter {
 public:
  // Creates (or truncates) `path`.
  static absl::StatusOr<std::unique_ptr<RecordWriter>> Open(const std::string& path);
  // Closes the file if Close() was not called (errors then go unreported).
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  absl::Status WriteRecord(absl::string_view data);
  // Pushes buffered records to the operating system.
  absl::Status Flush();
  // Flushes, fsyncs and closes; later writes fail.
  absl::Status Close();

 private:
  RecordWriter(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}

  std::FILE* file_;
  std::string path_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_RECORD_IO_H_
