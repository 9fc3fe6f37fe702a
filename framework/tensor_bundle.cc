#include "framework/tensor_bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/crc32c.h"
#include "core/status_macros.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"

namespace towerflow {
namespace {

// TF's kTensorBundleVersion and kTensorBundleMinProducer.
constexpr int kBundleVersion = 1;
constexpr int kBundleMinProducer = 0;
// TF's table::Options::block_size.
constexpr size_t kIndexBlockSize = 262144;
// LevelDB's (and TF's) table footer: two block handles padded to 40 bytes,
// then the magic number.
constexpr size_t kFooterSize = 48;
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kBlockTrailerSize = 5;  // type byte + CRC-32C
// More shards than any real checkpoint has; a header claiming more is
// corrupt.
constexpr int kMaxShards = 1 << 20;

void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// False at the end of `in` or past 10 bytes.
bool GetVarint64(absl::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

uint32_t CrcOfLength(uint32_t crc, uint64_t length) {
  // TF checksums a length as a uint32 when it fits (what older checkpoints
  // did), else as a uint64; little-endian either way.
  if (length <= UINT32_MAX) {
    const uint32_t l = static_cast<uint32_t>(length);
    return crc32c::Extend(crc, absl::string_view(reinterpret_cast<const char*>(&l), 4));
  }
  return crc32c::Extend(crc, absl::string_view(reinterpret_cast<const char*>(&length), 8));
}

// The serialized form of a string tensor and its (unmasked) CRC.
std::string EncodeStrings(const Tensor& t, uint32_t* crc) {
  const absl::Span<const std::string> strings = t.span<std::string>();
  std::string out;
  *crc = 0;
  for (const std::string& s : strings) {
    PutVarint64(&out, s.size());
    *crc = CrcOfLength(*crc, s.size());
  }
  const uint32_t length_crc = crc32c::Mask(*crc);
  const absl::string_view stored(reinterpret_cast<const char*>(&length_crc), 4);
  out.append(stored.data(), stored.size());
  *crc = crc32c::Extend(*crc, stored);
  for (const std::string& s : strings) {
    out += s;
    *crc = crc32c::Extend(*crc, s);
  }
  return out;
}

// Strings and the types of a fixed whole number of bytes: not resources,
// variants or refs, nor the packed sub-byte types (int4, float4...), which
// Towerflow's tensors do not hold (their DataTypeSize is 0; an entry with
// one was a division by zero, found by fuzz/checkpoint).
bool IsBundleDtype(DataType dtype) {
  return IsValidDataType(dtype) && !IsRefType(dtype) &&
         (dtype == DT_STRING || DataTypeSize(dtype) > 0) && dtype != DT_RESOURCE &&
         dtype != DT_VARIANT;
}

absl::Status FromLevelDb(const leveldb::Status& s, const std::string& path) {
  if (s.ok()) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat(path, ": not a valid checkpoint index (", s.ToString(), ")"));
}

// LevelDB's output and input, kept in memory: the index is small, and the
// files themselves are written and read here with Towerflow's crash-safe
// I/O.
class StringSink : public leveldb::WritableFile {
 public:
  leveldb::Status Append(const leveldb::Slice& data) override {
    contents_.append(data.data(), data.size());
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }
  const std::string& contents() const { return contents_; }

 private:
  std::string contents_;
};

class StringSource : public leveldb::RandomAccessFile {
 public:
  explicit StringSource(absl::string_view contents) : contents_(contents) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* scratch) const override {
    if (offset > contents_.size() || n > contents_.size() - offset) {
      return leveldb::Status::Corruption("a block lies past the end of the file");
    }
    std::memcpy(scratch, contents_.data() + offset, n);
    *result = leveldb::Slice(scratch, n);
    return leveldb::Status::OK();
  }

 private:
  absl::string_view contents_;
};

// The footer's two block handles must lie inside the file: LevelDB
// allocates a block's size before reading it, and the footer has no CRC.
absl::Status CheckFooter(absl::string_view file, const std::string& path) {
  if (file.size() < kFooterSize) {
    return absl::DataLossError(absl::StrCat(path, ": not a valid checkpoint index (", file.size(),
                                            " bytes, shorter than a table footer)"));
  }
  absl::string_view footer = file.substr(file.size() - kFooterSize);
  uint64_t magic = 0;
  std::memcpy(&magic, footer.data() + kFooterSize - 8, 8);
  if (magic != kTableMagic) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a valid checkpoint index (bad table magic number)"));
  }
  const uint64_t blocks_end = file.size() - kFooterSize;
  for (const char* what : {"metaindex", "index"}) {
    uint64_t offset = 0, size = 0;
    if (!GetVarint64(&footer, &offset) || !GetVarint64(&footer, &size) || offset > blocks_end ||
        size > blocks_end - offset || kBlockTrailerSize > blocks_end - offset - size) {
      return absl::DataLossError(absl::StrCat(path, ": not a valid checkpoint index (the ", what,
                                              " block handle lies outside the file)"));
    }
  }
  return absl::OkStatus();
}

// Reads every key and value of a table in `file` (the bytes of `path`).
absl::Status ReadTable(const std::string& file, const std::string& path,
                       std::vector<std::pair<std::string, std::string>>* out) {
  TW_RETURN_IF_ERROR(CheckFooter(file, path));
  StringSource source(file);
  leveldb::Options options;
  options.paranoid_checks = true;  // the index block's CRC
  leveldb::ReadOptions read_options;
  read_options.verify_checksums = true;  // every data block's CRC
  leveldb::Table* raw = nullptr;
  // A block handle inside a CRC-valid index block cannot be trusted either:
  // a crafted one can ask LevelDB for an impossible allocation.
  try {
    TW_RETURN_IF_ERROR(
        FromLevelDb(leveldb::Table::Open(options, &source, file.size(), &raw), path));
    std::unique_ptr<leveldb::Table> table(raw);
    std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read_options));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out->emplace_back(it->key().ToString(), it->value().ToString());
    }
    return FromLevelDb(it->status(), path);
  } catch (const std::bad_alloc&) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a valid checkpoint index (a block claims an impossible size)"));
  }
}

std::string BuildTable(const std::vector<std::pair<std::string, std::string>>& table) {
  StringSink sink;
  leveldb::Options options;
  options.block_size = kIndexBlockSize;
  // TF 1.x's table default, which TF Serving's SavedModels were written with
  // (LevelDB keeps a block raw when snappy saves less than an eighth).
  options.compression = leveldb::kSnappyCompression;
  leveldb::TableBuilder builder(options, &sink);
  for (const auto& [key, value] : table) builder.Add(key, value);
  // Finish on a string sink cannot fail; keys are sorted (REQUIRES).
  (void)builder.Finish();
  return sink.contents();
}

std::string BuildIndex(const BundleHeaderProto& header,
                       const std::map<std::string, BundleEntryProto>& entries) {
  std::vector<std::pair<std::string, std::string>> table;
  table.reserve(entries.size() + 1);
  table.emplace_back("", header.SerializeAsString());
  for (const auto& [name, entry] : entries) table.emplace_back(name, entry.SerializeAsString());
  return BuildTable(table);
}

BundleHeaderProto MakeHeader(int num_shards) {
  BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kBundleVersion);
  return header;
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadBundleIndexTable(
    const std::string& bytes, const std::string& path) {
  std::vector<std::pair<std::string, std::string>> table;
  TW_RETURN_IF_ERROR(ReadTable(bytes, path, &table));
  return table;
}

std::string BuildBundleIndexTable(const std::vector<std::pair<std::string, std::string>>& table) {
  return BuildTable(table);
}

std::string BundleIndexPath(absl::string_view prefix) { return absl::StrCat(prefix, ".index"); }

std::string BundleDataPath(absl::string_view prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

// ---------------------------------------------------------------- writing

absl::StatusOr<std::unique_ptr<BundleWriter>> BundleWriter::Create(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    TW_RETURN_IF_ERROR(CreateDirectories(prefix.substr(0, slash)));
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> data,
                      AtomicFileWriter::Open(BundleDataPath(prefix, 0, 1)));
  return std::unique_ptr<BundleWriter>(new BundleWriter(prefix, std::move(data)));
}

absl::Status BundleWriter::Add(const std::string& name, const Tensor& tensor) {
  if (finished_) return absl::FailedPreconditionError(absl::StrCat(prefix_, " is finished"));
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Checkpoint ", prefix_, ": a tensor name is empty"));
  }
  if (!IsBundleDtype(tensor.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat("Checkpoint ", prefix_, ": tensor '", name,
                                                   "' has dtype ", DataTypeString(tensor.dtype()),
                                                   ", which checkpoints cannot hold"));
  }
  if (entries_.count(name) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Checkpoint ", prefix_, ": duplicate tensor name '", name, "'"));
  }
  BundleEntryProto entry;
  entry.set_dtype(tensor.dtype());
  tensor.shape().AsProto(entry.mutable_shape());
  entry.set_offset(data_->size());
  uint32_t crc = 0;
  if (tensor.dtype() == DT_STRING) {
    const std::string bytes = EncodeStrings(tensor, &crc);
    TW_RETURN_IF_ERROR(data_->Append(bytes));
    entry.set_size(static_cast<int64_t>(bytes.size()));
  } else {
    const absl::string_view bytes(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
    crc = crc32c::Value(bytes);
    TW_RETURN_IF_ERROR(data_->Append(bytes));
    entry.set_size(static_cast<int64_t>(bytes.size()));
  }
  entry.set_crc32c(crc32c::Mask(crc));
  entries_.emplace(name, std::move(entry));
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  if (finished_) return absl::FailedPreconditionError(absl::StrCat(prefix_, " is finished"));
  finished_ = true;
  TW_RETURN_IF_ERROR(data_->Commit());
  return WriteFileAtomically(BundleIndexPath(prefix_), BuildIndex(MakeHeader(1), entries_));
}

// ---------------------------------------------------------------- reading

// One data file, opened on first use.
class BundleReader::DataFile {
 public:
  static absl::StatusOr<std::unique_ptr<DataFile>> Open(std::string path) {
    // O_NONBLOCK: a FIFO in a data file's place must not block the open;
    // it is refused below. Reads of regular files ignore the flag.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) {
        return absl::DataLossError(absl::StrCat(path, ": the checkpoint's data file is missing"));
      }
      return ErrnoStatus(errno, "Cannot open", path);
    }
    std::unique_ptr<DataFile> file(new DataFile(std::move(path), fd));
    struct stat st;
    if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, "Cannot stat", file->path_);
    if (!S_ISREG(st.st_mode)) {
      return absl::DataLossError(absl::StrCat(file->path_, ": not a regular file"));
    }
    file->size_ = static_cast<uint64_t>(st.st_size);
    return file;
  }
  ~DataFile() { ::close(fd_); }

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

  // REQUIRES: offset + n <= size().
  absl::Status ReadAt(uint64_t offset, size_t n, char* out) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (got < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "Cannot read", path_);
      }
      if (got == 0)
        return absl::DataLossError(absl::StrCat(path_, ": shorter than its index says"));
      out += got;
      n -= static_cast<size_t>(got);
      offset += static_cast<uint64_t>(got);
    }
    return absl::OkStatus();
  }

 private:
  DataFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
  uint64_t size_ = 0;
};

BundleReader::BundleReader(std::string prefix) : prefix_(std::move(prefix)) {}
BundleReader::~BundleReader() = default;

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  const std::string path = BundleIndexPath(prefix);
  absl::StatusOr<std::string> file = ReadFileToString(path);
  if (!file.ok()) {
    if (absl::IsNotFound(file.status())) {
      return absl::NotFoundError(
          absl::StrCat("No checkpoint at ", prefix, ": ", path, " does not exist"));
    }
    return file.status();
  }
  std::vector<std::pair<std::string, std::string>> kvs;
  TW_RETURN_IF_ERROR(ReadTable(*file, path, &kvs));
  std::unique_ptr<BundleReader> reader(new BundleReader(prefix));
  if (kvs.empty() || !kvs[0].first.empty() || !reader->header_.ParseFromString(kvs[0].second)) {
    return absl::DataLossError(
        absl::StrCat(path, ": the bundle header (key \"\") is missing or does not parse"));
  }
  const BundleHeaderProto& h = reader->header_;
  if (h.num_shards() < 1 || h.num_shards() > kMaxShards) {
    return absl::DataLossError(
        absl::StrCat(path, ": the header claims ", h.num_shards(), " shards"));
  }
  if (h.endianness() != BundleHeaderProto::LITTLE) {
    return absl::UnimplementedError(absl::StrCat(path, ": big-endian checkpoints cannot be read"));
  }
  const VersionDef& v = h.version();
  bool bad_consumer = false;
  for (int c : v.bad_consumers()) bad_consumer |= c == kBundleVersion;
  if (v.producer() < kBundleMinProducer || v.min_consumer() > kBundleVersion || bad_consumer) {
    return absl::UnimplementedError(
        absl::StrCat(path, ": checkpoint format version ", v.producer(), " (min consumer ",
                     v.min_consumer(), ") cannot be read by format version ", kBundleVersion));
  }
  for (size_t i = 1; i < kvs.size(); ++i) {
    const std::string& name = kvs[i].first;
    BundleEntryProto entry;
    if (!entry.ParseFromString(kvs[i].second)) {
      return absl::DataLossError(
          absl::StrCat(path, ": the entry of tensor '", name, "' does not parse"));
    }
    const DataType dtype = entry.dtype();
    absl::StatusOr<TensorShape> shape = TensorShape::FromProto(entry.shape());
    if (!IsBundleDtype(dtype) || !shape.ok()) {
      return absl::DataLossError(absl::StrCat(
          path, ": tensor '", name, "' has ",
          shape.ok()
              ? absl::StrCat("dtype ", DataTypeString(dtype), ", which checkpoints cannot hold")
              : absl::StrCat("an invalid shape: ", shape.status().message())));
    }
    if (entry.slices_size() == 0) {
      const bool bad_size = dtype == DT_STRING
                                // At least one length byte per element and the length CRC.
                                ? (shape->num_elements() > 0 &&
                                   (entry.size() < 4 || entry.size() - 4 < shape->num_elements()))
                                : (entry.size() % DataTypeSize(dtype) != 0 ||
                                   entry.size() / DataTypeSize(dtype) != shape->num_elements());
      if (entry.shard_id() < 0 || entry.shard_id() >= h.num_shards() || entry.offset() < 0 ||
          entry.size() < 0 || bad_size) {
        return absl::DataLossError(absl::StrCat(
            path, ": tensor '", name, "' (", DataTypeString(dtype), " ", shape->DebugString(),
            ") has an inconsistent entry: shard ", entry.shard_id(), " of ", h.num_shards(),
            ", offset ", entry.offset(), ", size ", entry.size()));
      }
    }
    reader->entries_.emplace(name, std::move(entry));
  }
  return reader;
}

absl::StatusOr<const BundleEntryProto*> BundleReader::Lookup(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat("Key ", name, " not found in checkpoint ", prefix_));
  }
  return &it->second;
}

TensorShape BundleReader::ShapeOf(const BundleEntryProto& entry) {
  absl::StatusOr<TensorShape> shape = TensorShape::FromProto(entry.shape());
  return shape.ok() ? *shape : TensorShape();
}

absl::StatusOr<BundleReader::DataFile*> BundleReader::Shard(int shard) {
  auto it = shards_.find(shard);
  if (it == shards_.end()) {
    TW_ASSIGN_OR_RETURN(std::unique_ptr<DataFile> file,
                        DataFile::Open(BundleDataPath(prefix_, shard, header_.num_shards())));
    it = shards_.emplace(shard, std::move(file)).first;
  }
  return it->second.get();
}

absl::StatusOr<Tensor> BundleReader::Read(const std::string& name) {
  TW_ASSIGN_OR_RETURN(const BundleEntryProto* entry, Lookup(name));
  if (entry->slices_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(
        "Checkpoint ", prefix_, ": tensor '", name, "' is saved in ", entry->slices_size(),
        " slices (a partitioned variable), which Towerflow cannot restore"));
  }
  TW_ASSIGN_OR_RETURN(DataFile * file, Shard(entry->shard_id()));
  const uint64_t offset = static_cast<uint64_t>(entry->offset());
  const uint64_t size = static_cast<uint64_t>(entry->size());
  auto loss = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat(file->path(), ": tensor '", name, "': ", what));
  };
  if (offset > file->size() || size > file->size() - offset) {
    return loss(absl::StrCat("its bytes [", offset, ", ", offset + size,
                             ") lie past the end of the ", file->size(), "-byte file"));
  }
  const DataType dtype = entry->dtype();
  const TensorShape shape = ShapeOf(*entry);
  TW_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(CpuAllocator(), dtype, shape));
  uint32_t crc = 0;
  if (dtype != DT_STRING) {
    TW_RETURN_IF_ERROR(file->ReadAt(offset, size, static_cast<char*>(t.raw_data())));
    crc = crc32c::Value(absl::string_view(static_cast<const char*>(t.raw_data()), size));
  } else if (size > 0) {
    std::string bytes(size, '\0');
    TW_RETURN_IF_ERROR(file->ReadAt(offset, size, bytes.data()));
    absl::string_view in(bytes);
    const absl::Span<std::string> strings = t.span<std::string>();
    std::vector<uint64_t> lengths(strings.size());
    uint64_t total = 0;
    for (uint64_t& length : lengths) {
      if (!GetVarint64(&in, &length) || length > in.size() || total + length > in.size()) {
        return loss("malformed string lengths");
      }
      total += length;
      crc = CrcOfLength(crc, length);
    }
    uint32_t stored = 0;
    if (in.size() < 4) return loss("malformed string lengths");
    std::memcpy(&stored, in.data(), 4);
    if (crc32c::Unmask(stored) != crc) return loss("the string lengths' checksum does not match");
    crc = crc32c::Extend(crc, in.substr(0, 4));
    in.remove_prefix(4);
    if (in.size() != total) return loss("the string bytes do not add up to the entry's size");
    for (size_t i = 0; i < strings.size(); ++i) {
      strings[i].assign(in.data(), lengths[i]);
      crc = crc32c::Extend(crc, strings[i]);
      in.remove_prefix(lengths[i]);
    }
  }
  if (crc32c::Unmask(entry->crc32c()) != crc) return loss("checksum mismatch (corrupt data)");
  NormalizeBoolBytes(&t);
  return t;
}

// ---------------------------------------------------------------- merging

absl::Status MergeBundles(const std::vector<std::string>& prefixes,
                          const std::string& merged_prefix) {
  std::map<std::string, BundleEntryProto> entries;
  // Old data file -> its shard in the merged bundle, in merge order.
  std::vector<std::string> data_files;
  for (const std::string& prefix : prefixes) {
    TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
    const int num_shards = reader->header().num_shards();
    const int first = static_cast<int>(data_files.size());
    for (int s = 0; s < num_shards; ++s)
      data_files.push_back(BundleDataPath(prefix, s, num_shards));
    for (const auto& [name, entry] : reader->entries()) {
      if (entry.slices_size() > 0) {
        return absl::UnimplementedError(absl::StrCat("Merging checkpoints: tensor '", name, "' of ",
                                                     prefix, " is saved in slices"));
      }
      BundleEntryProto merged = entry;
      merged.set_shard_id(first + entry.shard_id());
      if (!entries.emplace(name, std::move(merged)).second) {
        return absl::InvalidArgumentError(absl::StrCat("Merging checkpoints: duplicate tensor '",
                                                       name, "' (again in ", prefix, ")"));
      }
    }
  }
  if (data_files.empty()) {
    return absl::InvalidArgumentError("Merging checkpoints: no checkpoint to merge");
  }
  const size_t slash = merged_prefix.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    TW_RETURN_IF_ERROR(CreateDirectories(merged_prefix.substr(0, slash)));
  }
  const int n = static_cast<int>(data_files.size());
  for (int s = 0; s < n; ++s) {
    const std::string to = BundleDataPath(merged_prefix, s, n);
    if (::rename(data_files[s].c_str(), to.c_str()) != 0) {
      return ErrnoStatus(errno, absl::StrCat("Cannot rename ", data_files[s], " to"), to);
    }
  }
  TW_RETURN_IF_ERROR(
      WriteFileAtomically(BundleIndexPath(merged_prefix), BuildIndex(MakeHeader(n), entries)));
  for (const std::string& prefix : prefixes) {
    if (prefix != merged_prefix) ::unlink(BundleIndexPath(prefix).c_str());
  }
  return absl::OkStatus();
}

}  // namespace towerflow
