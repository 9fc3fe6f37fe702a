#include "data/readers.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "core/record_io.h"
#include "core/status_macros.h"

namespace towerflow {
namespace data {
namespace {

// The whole (decompressed) contents of a gzip or plain file: zlib reads a
// file without the gzip magic as it is.
absl::StatusOr<std::string> ReadMaybeGzipped(const std::string& path) {
  TW_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));
  errno = 0;
  gzFile file = gzdopen(fd, "rb");
  if (file == nullptr) {
    const int err = errno == 0 ? ENOMEM : errno;
    ::close(fd);
    return ErrnoStatus(err, "Cannot open", path);
  }
  std::string out;
  char chunk[1 << 16];
  while (true) {
    const int got = gzread(file, chunk, sizeof(chunk));
    if (got < 0) {
      int code = 0;
      const std::string why = gzerror(file, &code);
      gzclose(file);
      return absl::DataLossError(absl::StrCat("'", path, "': corrupt gzip data: ", why));
    }
    if (got == 0) break;
    out.append(chunk, got);
  }
  // A gzip stream cut short reads as a clean end; zlib flags it here.
  int code = 0;
  const std::string why = gzerror(file, &code);
  gzclose(file);
  if (code != Z_OK) {
    return absl::DataLossError(absl::StrCat("'", path, "': corrupt gzip data: ", why));
  }
  return out;
}

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Copies `n` big-endian values of `size` bytes into host order.
void CopyBigEndian(const unsigned char* in, int64_t n, int size, char* out) {
  for (int64_t i = 0; i < n; ++i) {
    for (int b = 0; b < size; ++b)
      out[i * size + b] = static_cast<char>(in[i * size + size - 1 - b]);
  }
}

// The elements of a list of files, one file after the other, each read
// through the iterator `open` makes for it.
class FileListDataset final : public DatasetBase {
 public:
  // An iterator over one file's elements.
  using OpenFn = std::function<absl::StatusOr<std::unique_ptr<Iterator>>(const std::string&)>;

  FileListDataset(std::vector<std::string> files, OpenFn open)
      : files_(std::move(files)), open_(std::move(open)) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(files_, open_);
  }

 private:
  class It final : public Iterator {
   public:
    It(const std::vector<std::string>& files, const OpenFn& open) : files_(files), open_(open) {}
    absl::StatusOr<std::optional<Element>> GetNext() override {
      while (!failed_) {
        if (current_ == nullptr) {
          if (next_file_ >= files_.size()) return std::nullopt;
          absl::StatusOr<std::unique_ptr<Iterator>> opened = open_(files_[next_file_++]);
          if (!opened.ok()) return Fail(opened.status());
          current_ = *std::move(opened);
        }
        absl::StatusOr<std::optional<Element>> e = current_->GetNext();
        if (!e.ok()) return Fail(e.status());
        if (e->has_value()) return e;
        current_.reset();
      }
      return std::nullopt;
    }

   private:
    absl::Status Fail(absl::Status status) {
      failed_ = true;  // an error ends the pass
      return status;
    }

    // Copies: an iterator may outlive its dataset (Interleave's do).
    const std::vector<std::string> files_;
    const OpenFn open_;
    std::unique_ptr<Iterator> current_;
    size_t next_file_ = 0;
    bool failed_ = false;
  };

  const std::vector<std::string> files_;
  const OpenFn open_;
};

// The records of one CIFAR-10 file, read a record at a time.
class CifarFileIterator final : public Iterator {
 public:
  CifarFileIterator(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  ~CifarFileIterator() override { std::fclose(file_); }

  absl::StatusOr<std::optional<Element>> GetNext() override {
    unsigned char record[kCifar10RecordBytes];
    const size_t got = std::fread(record, 1, sizeof(record), file_);
    if (got == 0 && std::feof(file_)) return std::nullopt;
    if (got != sizeof(record)) {
      return absl::DataLossError(absl::StrCat("'", path_, "': record ", index_, " is truncated (",
                                              got, " of ", kCifar10RecordBytes, " bytes)"));
    }
    if (record[0] > 9) {
      return absl::DataLossError(absl::StrCat("'", path_, "': record ", index_, " has label ",
                                              int{record[0]}, ", not 0..9"));
    }
    Tensor image(DT_UINT8, TensorShape({32, 32, 3}));
    uint8_t* pixels = image.data<uint8_t>();
    // Planes (channel, row, col) to interleaved (row, col, channel).
    for (int c = 0; c < 3; ++c) {
      for (int p = 0; p < 32 * 32; ++p) pixels[p * 3 + c] = record[1 + c * 1024 + p];
    }
    Tensor label(DT_INT32, TensorShape({}));
    label.data<int32_t>()[0] = record[0];
    ++index_;
    return Element{std::move(image), std::move(label)};
  }

 private:
  std::FILE* file_;
  const std::string path_;
  int64_t index_ = 0;
};

class RecordFileIterator final : public Iterator {
 public:
  explicit RecordFileIterator(std::unique_ptr<RecordReader> reader) : reader_(std::move(reader)) {}

  absl::StatusOr<std::optional<Element>> GetNext() override {
    std::string record;
    TW_ASSIGN_OR_RETURN(bool more, reader_->ReadRecord(&record));
    if (!more) return std::nullopt;
    Tensor t(DT_STRING, TensorShape({}));
    t.data<std::string>()[0] = std::move(record);
    return Element{std::move(t)};
  }

 private:
  std::unique_ptr<RecordReader> reader_;
};

absl::Status CheckFiles(const std::vector<std::string>& files, const char* what) {
  if (files.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no files"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> ReadIdxFile(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::string bytes, ReadMaybeGzipped(path));
  const auto corrupt = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat("'", path, "' is not a valid IDX file: ", what));
  };
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 4) return corrupt(absl::StrCat("only ", bytes.size(), " bytes"));
  if (p[0] != 0 || p[1] != 0) return corrupt("the magic number does not start with two zeros");
  DataType dtype;
  int size;
  switch (p[2]) {
    case 0x08:
      dtype = DT_UINT8, size = 1;
      break;
    case 0x09:
      dtype = DT_INT8, size = 1;
      break;
    case 0x0B:
      dtype = DT_INT16, size = 2;
      break;
    case 0x0C:
      dtype = DT_INT32, size = 4;
      break;
    case 0x0D:
      dtype = DT_FLOAT, size = 4;
      break;
    case 0x0E:
      dtype = DT_DOUBLE, size = 8;
      break;
    default:
      return corrupt(absl::StrCat("unknown type code 0x", absl::Hex(p[2])));
  }
  const int rank = p[3];
  const size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (bytes.size() < header) {
    return corrupt(absl::StrCat("the header of ", rank, " dimensions is truncated"));
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) dims.push_back(BigEndian32(p + 4 + 4 * d));
  absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) return corrupt(std::string(shape.status().message()));
  const int64_t n = shape->num_elements();
  const size_t data_bytes = bytes.size() - header;
  if (n > static_cast<int64_t>(data_bytes / size) || data_bytes != static_cast<size_t>(n) * size) {
    return corrupt(absl::StrCat("shape ", shape->DebugString(), " needs ", n * size,
                                " bytes of data, the file has ", data_bytes));
  }
  Tensor out(dtype, *shape);
  CopyBigEndian(p + header, n, size, static_cast<char*>(out.raw_data()));
  return out;
}

absl::StatusOr<Dataset> MnistDataset(const std::string& images_path,
                                     const std::string& labels_path) {
  TW_ASSIGN_OR_RETURN(Tensor images, ReadIdxFile(images_path));
  TW_ASSIGN_OR_RETURN(Tensor labels, ReadIdxFile(labels_path));
  if (images.dtype() != DT_UINT8 || images.dims() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", images_path, "' holds ", DataTypeString(images.dtype()),
                     images.shape().DebugString(), ", not uint8 images [n, rows, cols]"));
  }
  if (labels.dtype() != DT_UINT8 || labels.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", labels_path, "' holds ", DataTypeString(labels.dtype()),
                     labels.shape().DebugString(), ", not uint8 labels [n]"));
  }
  if (images.dim_size(0) != labels.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat("'", images_path, "' has ", images.dim_size(0),
                                                   " images but '", labels_path, "' has ",
                                                   labels.dim_size(0), " labels"));
  }
  TW_ASSIGN_OR_RETURN(Tensor nhwc,
                      images.Reshaped(TensorShape(
                          {images.dim_size(0), images.dim_size(1), images.dim_size(2), 1})));
  Tensor labels32(DT_INT32, labels.shape());
  for (int64_t i = 0; i < labels.NumElements(); ++i) {
    labels32.data<int32_t>()[i] = labels.data<uint8_t>()[i];
  }
  return Dataset::FromTensorSlices({nhwc, labels32});
}

absl::StatusOr<Dataset> Cifar10Dataset(const std::vector<std::string>& files) {
  TW_RETURN_IF_ERROR(CheckFiles(files, "Cifar10Dataset"));
  for (const std::string& path : files) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "Cannot open", path);
    if (st.st_size % kCifar10RecordBytes != 0) {
      return absl::DataLossError(absl::StrCat("'", path, "' has ", st.st_size,
                                              " bytes, not a whole number of ", kCifar10RecordBytes,
                                              "-byte CIFAR-10 records"));
    }
  }
  auto open = [](const std::string& path) -> absl::StatusOr<std::unique_ptr<Iterator>> {
    TW_ASSIGN_OR_RETURN(std::FILE * file, OpenRegularFileStream(path));
    return std::unique_ptr<Iterator>(new CifarFileIterator(file, path));
  };
  return Dataset(std::make_shared<FileListDataset>(files, open));
}

absl::StatusOr<Dataset> TFRecordDataset(const std::vector<std::string>& files,
                                        RecordCompression compression) {
  TW_RETURN_IF_ERROR(CheckFiles(files, "TFRecordDataset"));
  auto open = [compression](const std::string& path) -> absl::StatusOr<std::unique_ptr<Iterator>> {
    TW_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader,
                        RecordReader::Open(path, compression));
    return std::unique_ptr<Iterator>(new RecordFileIterator(std::move(reader)));
  };
  return Dataset(std::make_shared<FileListDataset>(files, open));
}

}  // namespace data
}  // namespace towerflow
