#include "core/record_io.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

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

absl::StatusOr<RecordCompression> ParseRecordCompression(absl::string_view type) {
  if (type.empty()) return RecordCompression::kNone;
  if (type == "ZLIB") return RecordCompression::kZlib;
  if (type == "GZIP") return RecordCompression::kGzip;
  return absl::InvalidArgumentError(
      absl::StrCat("compression_type '", type, "' is none of \"\" (none), \"ZLIB\", \"GZIP\""));
}

// The records' stream of a compressed file: zlib's inflate over its bytes,
// the window and wrapping as TF's ZlibCompressionOptions (DEFAULT, GZIP).
class RecordReader::Inflater {
 public:
  static absl::StatusOr<std::unique_ptr<Inflater>> Create(RecordCompression compression) {
    auto inflater = std::unique_ptr<Inflater>(new Inflater());
    const int window_bits = compression == RecordCompression::kGzip ? MAX_WBITS + 16 : MAX_WBITS;
    if (inflateInit2(&inflater->z_, window_bits) != Z_OK) {
      return absl::ResourceExhaustedError("inflateInit2() failed");
    }
    inflater->initialised_ = true;
    return inflater;
  }
  ~Inflater() {
    if (initialised_) inflateEnd(&z_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  absl::StatusOr<size_t> Read(std::FILE* file, char* out, size_t n) {
    size_t done = 0;
    while (done < n) {
      if (z_.avail_in == 0) {
        const size_t got = std::fread(in_.data(), 1, in_.size(), file);
        if (got == 0) {
          if (std::ferror(file)) return absl::DataLossError(std::strerror(errno));
          // A stream begun and not ended: the file was cut short.
          if (in_stream_) return absl::DataLossError("the compressed stream ends early");
          break;
        }
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(got);
      }
      const uInt room = static_cast<uInt>(std::min<size_t>(n - done, UINT_MAX));
      z_.next_out = reinterpret_cast<Bytef*>(out + done);
      z_.avail_out = room;
      in_stream_ = true;
      const uInt had = z_.avail_in;
      const int status = inflate(&z_, Z_NO_FLUSH);
      done += room - z_.avail_out;
      if (status == Z_BUF_ERROR && z_.avail_in == had && z_.avail_out == room) {
        // Input and room, yet no progress: refused rather than looped on.
        return absl::DataLossError("inflate() made no progress");
      }
      if (status == Z_STREAM_END) {
        // Streams written one after another (appended files) read on.
        inflateReset(&z_);
        in_stream_ = false;
      } else if (status != Z_OK && status != Z_BUF_ERROR) {
        return absl::DataLossError(absl::StrCat("inflate() failed with error ", status, ": ",
                                                z_.msg != nullptr ? z_.msg : "no message"));
      }
    }
    return done;
  }

 private:
  Inflater() : in_(256 << 10) {}

  std::vector<Bytef> in_;
  z_stream z_{};
  bool initialised_ = false;  // inflateInit2 succeeded: inflateEnd is due
  bool in_stream_ = false;
};

absl::StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path,
                                                                 RecordCompression compression) {
  std::unique_ptr<Inflater> inflater;
  if (compression != RecordCompression::kNone) {
    TW_ASSIGN_OR_RETURN(inflater, Inflater::Create(compression));
  }
  TW_ASSIGN_OR_RETURN(std::FILE * file, OpenRegularFileStream(path));
  return std::unique_ptr<RecordReader>(new RecordReader(file, path, std::move(inflater)));
}

RecordReader::RecordReader(std::FILE* file, std::string path, std::unique_ptr<Inflater> inflater)
    : file_(file), path_(std::move(path)), inflater_(std::move(inflater)) {}

RecordReader::~RecordReader() { std::fclose(file_); }

absl::StatusOr<size_t> RecordReader::Read(char* out, size_t n) {
  if (inflater_ != nullptr) return inflater_->Read(file_, out, n);
  const size_t got = std::fread(out, 1, n, file_);
  if (got < n && std::ferror(file_)) return absl::DataLossError(std::strerror(errno));
  return got;
}

absl::StatusOr<bool> RecordReader::ReadRecord(std::string* record) {
  const auto corrupt = [&](const std::string& what) {
    return absl::DataLossError(
        absl::StrCat("Corrupt record at offset ", offset_, " of '", path_, "': ", what));
  };
  const auto read = [&](char* out, size_t n) -> absl::StatusOr<size_t> {
    absl::StatusOr<size_t> got = Read(out, n);
    if (!got.ok()) return corrupt(std::string(got.status().message()));
    return got;
  };
  char header[12];
  TW_ASSIGN_OR_RETURN(const size_t got, read(header, sizeof(header)));
  if (got == 0) return false;
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
  TW_ASSIGN_OR_RETURN(const size_t data_got, read(record->data(), length));
  if (data_got != length) return corrupt("truncated data");
  TW_ASSIGN_OR_RETURN(const size_t footer_got, read(footer, sizeof(footer)));
  if (footer_got != sizeof(footer)) return corrupt("truncated data");
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
