#include "core/record_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/crc32c.h"
#include "core/file_io.h"
#include "core/status_macros.h"

namespace towerflow {
namespace {

void EncodeFixed64(uint64_t v, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void EncodeFixed32(uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The 12-byte header and the 4-byte footer around `data` in a record.
void Frame(absl::string_view data, char* header, char* footer) {
  EncodeFixed64(data.size(), header);
  EncodeFixed32(crc32c::Mask(crc32c::Value(absl::string_view(header, 8))), header + 8);
  EncodeFixed32(crc32c::Mask(crc32c::Value(data)), footer);
}

}  // namespace

std::string EncodeRecord(absl::string_view data) {
  char header[12], footer[4];
  Frame(data, header, footer);
  std::string record;
  record.reserve(sizeof(header) + data.size() + sizeof(footer));
  record.append(header, sizeof(header)).append(data.data(), data.size()).append(footer, 4);
  return record;
}

absl::StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::FILE * file, OpenRegularFileStream(path));
  return std::unique_ptr<RecordReader>(new RecordReader(file, path));
}

RecordReader::~RecordReader() { std::fclose(file_); }

absl::StatusOr<bool> RecordReader::ReadRecord(std::string* record) {
  const auto corrupt = [&](const std::string& what) {
    return absl::DataLossError(
        absl::StrCat("Corrupt record at offset ", offset_, " of '", path_, "': ", what));
  };
  char header[12];
  const size_t got = std::fread(header, 1, sizeof(header), file_);
  if (got == 0 && std::feof(file_)) return false;
  if (got != sizeof(header)) return corrupt("truncated header");
  const uint64_t length = DecodeFixed64(header);
  if (crc32c::Unmask(DecodeFixed32(header + 8)) != crc32c::Value(absl::string_view(header, 8))) {
    return corrupt("the length's checksum does not match");
  }
  if (length > kMaxRecordBytes) {
    return corrupt(absl::StrCat("length ", length, " exceeds the maximum ", kMaxRecordBytes));
  }
  record->resize(length);
  char footer[4];
  if (std::fread(record->data(), 1, length, file_) != length ||
      std::fread(footer, 1, sizeof(footer), file_) != sizeof(footer)) {
    return corrupt("truncated data");
  }
  if (crc32c::Unmask(DecodeFixed32(footer)) != crc32c::Value(*record)) {
    return corrupt("the data's checksum does not match");
  }
  offset_ += sizeof(header) + length + sizeof(footer);
  return true;
}

absl::StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return ErrnoStatus(errno, "Cannot open", path);
  return std::unique_ptr<RecordWriter>(new RecordWriter(file, path));
}

RecordWriter::~RecordWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status RecordWriter::WriteRecord(absl::string_view data) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("'", path_, "' is closed"));
  }
  if (data.size() > kMaxRecordBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Record of ", data.size(), " bytes exceeds the maximum ", kMaxRecordBytes));
  }
  // Written in place, not copied into one string as EncodeRecord does.
  char header[12], footer[4];
  Frame(data, header, footer);
  if (std::fwrite(header, 1, sizeof(header), file_) != sizeof(header) ||
      std::fwrite(data.data(), 1, data.size(), file_) != data.size() ||
      std::fwrite(footer, 1, sizeof(footer), file_) != sizeof(footer)) {
    return absl::InternalError(
        absl::StrCat("Cannot write to '", path_, "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status RecordWriter::Flush() {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("'", path_, "' is closed"));
  }
  if (std::fflush(file_) != 0) {
    return absl::InternalError(absl::StrCat("Cannot flush '", path_, "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status RecordWriter::Close() {
  absl::Status status = Flush();
  if (status.ok() && ::fsync(fileno(file_)) != 0) {
    status =
        absl::InternalError(absl::StrCat("Cannot fsync '", path_, "': ", std::strerror(errno)));
  }
  if (std::fclose(file_) != 0 && status.ok()) {
    status =
        absl::InternalError(absl::StrCat("Cannot close '", path_, "': ", std::strerror(errno)));
  }
  file_ = nullptr;
  return status;
}

}  // namespace towerflow
