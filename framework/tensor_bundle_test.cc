#include "framework/tensor_bundle.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/crc32c.h"
#include "core/file_io.h"
#include "framework/tensor_views.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table_builder.h"
#include "snappy.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::google::protobuf::UnknownField;
using ::google::protobuf::UnknownFieldSet;
using ::testing::ElementsAre;
using ::testing::Pair;
using testing::StatusIs;

void WriteFile(const std::string& path, const std::string& bytes) {
  TW_ASSERT_OK(WriteFileAtomically(path, bytes));
}

// ------------------------------------------------------------------------
// An independent reader of LevelDB-format tables, to check what the writer
// produces without its own code: footer -> index block -> data blocks, each
// block's masked CRC-32C checked and, when its type byte says so,
// snappy-decompressed.

uint64_t Varint(absl::string_view* in) {
  uint64_t v = 0;
  for (int shift = 0; !in->empty(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  ADD_FAILURE() << "truncated varint";
  return 0;
}

std::string Block(absl::string_view file, absl::string_view* handle) {
  const uint64_t offset = Varint(handle), size = Varint(handle);
  EXPECT_LE(offset + size + 5, file.size());
  const absl::string_view contents = file.substr(offset, size);
  uint32_t stored;
  std::memcpy(&stored, file.data() + offset + size + 1, 4);
  EXPECT_EQ(crc32c::Unmask(stored), crc32c::Value(file.substr(offset, size + 1)));
  const char type = file[offset + size];
  EXPECT_TRUE(type == 0 || type == 1) << "block type: raw or snappy";
  std::string raw;
  if (type == 0) return std::string(contents);
  EXPECT_TRUE(snappy::Uncompress(contents.data(), contents.size(), &raw));
  return raw;
}

std::vector<std::pair<std::string, std::string>> BlockEntries(absl::string_view block) {
  uint32_t restarts;
  std::memcpy(&restarts, block.data() + block.size() - 4, 4);
  absl::string_view in = block.substr(0, block.size() - 4 - 4 * restarts);
  std::vector<std::pair<std::string, std::string>> out;
  std::string key;
  while (!in.empty()) {
    const uint64_t shared = Varint(&in), unshared = Varint(&in), value_size = Varint(&in);
    key = key.substr(0, shared) + std::string(in.substr(0, unshared));
    in.remove_prefix(unshared);
    out.emplace_back(key, std::string(in.substr(0, value_size)));
    in.remove_prefix(value_size);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> DecodeTable(const std::string& file) {
  EXPECT_GE(file.size(), 48u);
  uint64_t magic;
  std::memcpy(&magic, file.data() + file.size() - 8, 8);
  EXPECT_EQ(magic, 0xdb4775248b80fb57ull);
  absl::string_view footer = absl::string_view(file).substr(file.size() - 48);
  Block(file, &footer);  // metaindex
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [separator, handle] : BlockEntries(Block(file, &footer))) {
    absl::string_view h = handle;
    for (auto& kv : BlockEntries(Block(file, &h))) out.push_back(std::move(kv));
  }
  return out;
}

// A message decoded without its schema: field number -> the field (for
// messages without repeated fields). The fields' bytes live in `set`.
class Fields {
 public:
  explicit Fields(const std::string& bytes) {
    EXPECT_TRUE(set_.ParseFromString(bytes));
    for (int i = 0; i < set_.field_count(); ++i) index_[set_.field(i).number()] = i;
  }
  const UnknownField& at(int number) const { return set_.field(index_.at(number)); }
  size_t count(int number) const { return index_.count(number); }
  size_t size() const { return index_.size(); }

 private:
  UnknownFieldSet set_;
  std::map<int, int> index_;
};

TEST(TensorBundleTest, IndexIsTensorFlowsTableWithTheFieldsTensorFlowReads) {
  const std::string prefix = testing::MakeTempDir("fields") + "/model.ckpt-7";
  const Tensor kernel = Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor step = Scalar<int64_t>(7);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleWriter> writer, BundleWriter::Create(prefix));
  TW_ASSERT_OK(writer->Add("global_step", step));
  TW_ASSERT_OK(writer->Add("dense/kernel", kernel));
  TW_ASSERT_OK(writer->Finish());

  // The data file: the tensors in the order they were added, no padding.
  const std::string data = testing::ReadFileOrDie(prefix + ".data-00000-of-00001");
  ASSERT_EQ(data.size(), 8u + 24u);
  EXPECT_EQ(data.substr(0, 8), std::string(static_cast<const char*>(step.raw_data()), 8));
  EXPECT_EQ(data.substr(8), std::string(static_cast<const char*>(kernel.raw_data()), 24));

  const std::vector<std::pair<std::string, std::string>> table =
      DecodeTable(testing::ReadFileOrDie(prefix + ".index"));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0].first, "");
  EXPECT_EQ(table[1].first, "dense/kernel");
  EXPECT_EQ(table[2].first, "global_step");

  // BundleHeaderProto: num_shards 1, endianness LITTLE (the default, absent),
  // version { producer: 1 }.
  Fields header(table[0].second);
  ASSERT_EQ(header.size(), 2u);
  EXPECT_EQ(header.at(1).varint(), 1u);
  Fields version(header.at(3).length_delimited());
  ASSERT_EQ(version.size(), 1u);
  EXPECT_EQ(version.at(1).varint(), 1u);

  // BundleEntryProto: dtype 1 (DT_FLOAT), shape {dim {size: 2} dim {size: 3}},
  // offset 8, size 24, crc32c as a fixed32 holding the masked CRC.
  Fields entry(table[1].second);
  EXPECT_EQ(entry.at(1).varint(), 1u);
  UnknownFieldSet shape;
  ASSERT_TRUE(shape.ParseFromString(entry.at(2).length_delimited()));
  ASSERT_EQ(shape.field_count(), 2);
  EXPECT_EQ(Fields(shape.field(0).length_delimited()).at(1).varint(), 2u);
  EXPECT_EQ(Fields(shape.field(1).length_delimited()).at(1).varint(), 3u);
  EXPECT_EQ(entry.count(3), 0u) << "shard 0 is the default";
  EXPECT_EQ(entry.at(4).varint(), 8u);
  EXPECT_EQ(entry.at(5).varint(), 24u);
  ASSERT_EQ(entry.at(6).type(), UnknownField::TYPE_FIXED32);
  EXPECT_EQ(entry.at(6).fixed32(), crc32c::Mask(crc32c::Value(data.substr(8))));
  Fields step_entry(table[2].second);
  EXPECT_EQ(step_entry.at(1).varint(), 9u);  // DT_INT64
  EXPECT_EQ(step_entry.count(2), 1u);        // a scalar: an empty shape message
  EXPECT_EQ(step_entry.count(4), 0u);        // offset 0
  EXPECT_EQ(step_entry.at(5).varint(), 8u);
}

// A DT_HALF scalar (its bits: 0x3800 is 0.5).
Tensor Half(float) {
  Tensor t(DT_HALF, TensorShape({1}));
  const uint16_t bits = 0x3800;
  std::memcpy(t.raw_data(), &bits, 2);
  return t;
}

TEST(TensorBundleTest, RoundTripsEveryKindOfTensor) {
  const std::string prefix = testing::MakeTempDir("round_trip") + "/sub/dir/ckpt";
  Tensor strings(DT_STRING, TensorShape({3}));
  strings.data<std::string>()[0] = "";
  strings.data<std::string>()[1] = "towers";
  strings.data<std::string>()[2] = std::string(300, 'x');  // a two-byte varint length
  Tensor no_strings(DT_STRING, TensorShape({0, 2}));
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"w", Literal<float>({2, 2}, {1.5f, -2, 3, 4})},
      {"d", Literal<double>({3}, {0.1, 0.2, 0.3})},
      {"step", Scalar<int64_t>(123456789012LL)},
      {"mask", Literal<bool>({2}, {true, false})},
      {"empty", Literal<float>({0, 4}, {})},
      {"u8", Literal<uint8_t>({4}, {0, 1, 254, 255})},
      {"half", Half(0.5f)},
      {"names", strings},
      {"no_names", no_strings},
  };
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleWriter> writer, BundleWriter::Create(prefix));
  for (const auto& [name, t] : tensors) TW_ASSERT_OK(writer->Add(name, t));
  TW_ASSERT_OK(writer->Finish());

  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  EXPECT_EQ(reader->header().num_shards(), 1);
  ASSERT_EQ(reader->entries().size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    TW_ASSERT_OK_AND_ASSIGN(Tensor back, reader->Read(name));
    ASSERT_EQ(back.dtype(), t.dtype()) << name;
    ASSERT_EQ(back.shape(), t.shape()) << name;
    if (t.dtype() == DT_STRING) {
      for (int64_t i = 0; i < t.NumElements(); ++i) {
        EXPECT_EQ(back.data<std::string>()[i], t.data<std::string>()[i]);
      }
    } else {
      EXPECT_EQ(std::memcmp(back.raw_data(), t.raw_data(), t.TotalBytes()), 0) << name;
    }
  }
  EXPECT_THAT(reader->Read("nope"),
              StatusIs(absl::StatusCode::kNotFound, "Key nope not found in checkpoint"));
  // Nothing is left beside the two files.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(prefix.substr(0, prefix.rfind('/')))) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_THAT(files, ElementsAre("ckpt.data-00000-of-00001", "ckpt.index"));
}

TEST(TensorBundleTest, RefusesWhatCheckpointsCannotHold) {
  const std::string prefix = testing::MakeTempDir("refuse") + "/ckpt";
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleWriter> writer, BundleWriter::Create(prefix));
  TW_ASSERT_OK(writer->Add("a", Scalar<float>(1)));
  EXPECT_THAT(writer->Add("a", Scalar<float>(2)),
              StatusIs(absl::StatusCode::kInvalidArgument, "duplicate tensor name 'a'"));
  EXPECT_THAT(writer->Add("", Scalar<float>(2)),
              StatusIs(absl::StatusCode::kInvalidArgument, "a tensor name is empty"));
  EXPECT_THAT(writer->Add("h", Tensor(DT_RESOURCE, TensorShape())),
              StatusIs(absl::StatusCode::kInvalidArgument, "which checkpoints cannot hold"));
}

TEST(TensorBundleTest, AbandonedWriterLeavesNoFiles) {
  const std::string dir = testing::MakeTempDir("abandoned");
  {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleWriter> writer,
                            BundleWriter::Create(dir + "/ckpt"));
    TW_ASSERT_OK(writer->Add("a", Scalar<float>(1)));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_THAT(BundleReader::Open(dir + "/ckpt"),
              StatusIs(absl::StatusCode::kNotFound, "ckpt.index does not exist"));
}

// ------------------------------------------------------------------------
// TensorFlow's own files.

std::string FixtureVariables(const std::string& model) {
  return absl::StrCat("tf/saved_models/", model, "/00000123/variables/variables");
}

TEST(TensorBundleTest, ReadsTensorFlowsHalfPlusTwoVariables) {
  std::string index;
  TW_SKIP_WITHOUT_REFERENCE(index, FixtureVariables("half_plus_two_cpu") + ".index");
  const std::string prefix = index.substr(0, index.size() - 6);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  std::vector<std::string> names;
  for (const auto& [name, entry] : reader->entries()) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("a", "a2", "b", "c", "c2"));
  const std::map<std::string, float> expected = {
      {"a", 0.5f}, {"a2", 0.5f}, {"b", 2.0f}, {"c", 3.0f}, {"c2", 3.0f}};
  for (const auto& [name, value] : expected) {
    TW_ASSERT_OK_AND_ASSIGN(Tensor t, reader->Read(name));
    EXPECT_THAT(t, TensorIs<float>({}, {value})) << name;
  }
}

TEST(TensorBundleTest, RewritesTensorFlowsFilesByteForByte) {
  for (const std::string model : {"half_plus_two_cpu", "counter", "half_plus_two_tf2_cpu"}) {
    std::string index;
    TW_SKIP_WITHOUT_REFERENCE(index, FixtureVariables(model) + ".index");
    const std::string prefix = index.substr(0, index.size() - 6);
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
    // Add in the order TF wrote the bytes.
    std::vector<std::pair<int64_t, std::string>> by_offset;
    for (const auto& [name, entry] : reader->entries()) by_offset.push_back({entry.offset(), name});
    std::sort(by_offset.begin(), by_offset.end());
    const std::string out = testing::MakeTempDir("rewrite_" + model) + "/variables";
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleWriter> writer, BundleWriter::Create(out));
    for (const auto& [offset, name] : by_offset) {
      TW_ASSERT_OK_AND_ASSIGN(Tensor t, reader->Read(name));
      TW_ASSERT_OK(writer->Add(name, t));
    }
    TW_ASSERT_OK(writer->Finish());
    EXPECT_EQ(testing::ReadFileOrDie(out + ".index"), testing::ReadFileOrDie(index)) << model;
    EXPECT_EQ(testing::ReadFileOrDie(out + ".data-00000-of-00001"),
              testing::ReadFileOrDie(prefix + ".data-00000-of-00001"))
        << model;
  }
}

TEST(TensorBundleTest, ReadsTensorFlow2sObjectGraphString) {
  std::string index;
  TW_SKIP_WITHOUT_REFERENCE(index, FixtureVariables("half_plus_two_tf2_cpu") + ".index");
  const std::string prefix = index.substr(0, index.size() - 6);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  TW_ASSERT_OK_AND_ASSIGN(Tensor graph, reader->Read("_CHECKPOINTABLE_OBJECT_GRAPH"));
  ASSERT_EQ(graph.dtype(), DT_STRING);
  ASSERT_EQ(graph.NumElements(), 1);
  // A serialized TrackableObjectGraph: non-empty and a valid message.
  UnknownFieldSet fields;
  EXPECT_GT(graph.data<std::string>()[0].size(), 100u);
  EXPECT_TRUE(fields.ParseFromString(graph.data<std::string>()[0]));
}

// ------------------------------------------------------------------------
// Other writers' tables, merging, corruption.

// Writes an index with LevelDB directly: any entries, any compression.
void WriteIndex(const std::string& path,
                const std::vector<std::pair<std::string, std::string>>& kvs,
                leveldb::CompressionType compression) {
  leveldb::Env* env = leveldb::Env::Default();
  leveldb::WritableFile* file = nullptr;
  ASSERT_TRUE(env->NewWritableFile(path, &file).ok());
  leveldb::Options options;
  options.compression = compression;
  leveldb::TableBuilder builder(options, file);
  for (const auto& [k, v] : kvs) builder.Add(k, v);
  ASSERT_TRUE(builder.Finish().ok());
  ASSERT_TRUE(file->Close().ok());
  delete file;
}

std::string Header(int num_shards) {
  BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.mutable_version()->set_producer(1);
  return header.SerializeAsString();
}

BundleEntryProto FloatEntry(std::vector<int64_t> dims, int64_t offset, absl::string_view bytes) {
  BundleEntryProto entry;
  entry.set_dtype(DT_FLOAT);
  for (int64_t d : dims) entry.mutable_shape()->add_dim()->set_size(d);
  entry.set_offset(offset);
  entry.set_size(static_cast<int64_t>(bytes.size()));
  entry.set_crc32c(crc32c::Mask(crc32c::Value(bytes)));
  return entry;
}

TEST(TensorBundleTest, ReadsSnappyCompressedIndexes) {
  const std::string prefix = testing::MakeTempDir("snappy") + "/ckpt";
  std::string data;
  std::vector<std::pair<std::string, std::string>> kvs = {{"", Header(1)}};
  for (int i = 0; i < 200; ++i) {
    const float v = static_cast<float>(i);
    const std::string bytes(reinterpret_cast<const char*>(&v), 4);
    kvs.push_back({absl::StrFormat("layer_%03d/weights", i),
                   FloatEntry({}, static_cast<int64_t>(data.size()), bytes).SerializeAsString()});
    data += bytes;
  }
  WriteFile(prefix + ".data-00000-of-00001", data);
  WriteIndex(prefix + ".index", kvs, leveldb::kSnappyCompression);
  // The entries repeat themselves, so LevelDB did compress the block.
  EXPECT_LT(testing::ReadFileOrDie(prefix + ".index").size(), 200u * 20);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  EXPECT_EQ(reader->entries().size(), 200u);
  TW_ASSERT_OK_AND_ASSIGN(Tensor t, reader->Read("layer_123/weights"));
  EXPECT_THAT(t, TensorIs<float>({}, {123.0f}));
}

TEST(TensorBundleTest, MergesBundlesIntoShards) {
  const std::string dir = testing::MakeTempDir("merge");
  for (int part = 0; part < 2; ++part) {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleWriter> writer,
                            BundleWriter::Create(absl::StrCat(dir, "/tmp/part-", part)));
    TW_ASSERT_OK(writer->Add(absl::StrCat("v", part), Literal<float>({2}, {1.0f * part, 2})));
    TW_ASSERT_OK(writer->Add(absl::StrCat("w", part), Scalar<int32_t>(part)));
    TW_ASSERT_OK(writer->Finish());
  }
  TW_ASSERT_OK(MergeBundles({dir + "/tmp/part-0", dir + "/tmp/part-1"}, dir + "/model.ckpt-5"));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> reader,
                          BundleReader::Open(dir + "/model.ckpt-5"));
  EXPECT_EQ(reader->header().num_shards(), 2);
  EXPECT_EQ(reader->entries().at("v1").shard_id(), 1);
  TW_ASSERT_OK_AND_ASSIGN(Tensor v1, reader->Read("v1"));
  EXPECT_THAT(v1, TensorIs<float>({2}, {1, 2}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor w0, reader->Read("w0"));
  EXPECT_THAT(w0, TensorIs<int32_t>({}, {0}));
  EXPECT_TRUE(std::filesystem::exists(dir + "/model.ckpt-5.data-00001-of-00002"));
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/tmp")) << "the parts' files moved or deleted";

  // A tensor in two bundles.
  for (int part = 0; part < 2; ++part) {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleWriter> writer,
                            BundleWriter::Create(absl::StrCat(dir, "/dup-", part)));
    TW_ASSERT_OK(writer->Add("same", Scalar<float>(1)));
    TW_ASSERT_OK(writer->Finish());
  }
  EXPECT_THAT(MergeBundles({dir + "/dup-0", dir + "/dup-1"}, dir + "/merged"),
              StatusIs(absl::StatusCode::kInvalidArgument, "duplicate tensor 'same'"));
}

// A small valid bundle for the corruption tests.
std::string WriteSmallBundle(const std::string& dir) {
  const std::string prefix = dir + "/ckpt";
  Tensor names(DT_STRING, TensorShape({2}));
  names.data<std::string>()[0] = "tower_0";
  names.data<std::string>()[1] = "tower_1";
  absl::StatusOr<std::unique_ptr<BundleWriter>> writer = BundleWriter::Create(prefix);
  EXPECT_TRUE(writer.ok());
  TW_EXPECT_OK((*writer)->Add("kernel", Literal<float>({2, 2}, {1, 2, 3, 4})));
  TW_EXPECT_OK((*writer)->Add("names", names));
  TW_EXPECT_OK((*writer)->Add("step", Scalar<int64_t>(42)));
  TW_EXPECT_OK((*writer)->Finish());
  return prefix;
}

// Opens and reads every tensor; the first error.
absl::Status ReadAll(const std::string& prefix) {
  absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
  if (!reader.ok()) return reader.status();
  for (const auto& [name, entry] : (*reader)->entries()) {
    absl::StatusOr<Tensor> t = (*reader)->Read(name);
    if (!t.ok()) return t.status();
  }
  return absl::OkStatus();
}

TEST(TensorBundleTest, EveryTruncationOrBitFlipOfTheIndexIsDataLossOrHarmless) {
  const std::string prefix = WriteSmallBundle(testing::MakeTempDir("index_flips"));
  const std::string good = testing::ReadFileOrDie(prefix + ".index");
  for (size_t n = 0; n < good.size(); ++n) {
    WriteFile(prefix + ".index", good.substr(0, n));
    EXPECT_THAT(ReadAll(prefix), StatusIs(absl::StatusCode::kDataLoss, "ckpt.index")) << n;
  }
  // Neither TF nor LevelDB reads the metaindex block (it lists filters,
  // which bundles have none of) or the footer's padding, so flips there go
  // unnoticed and change nothing; every other flip is caught.
  absl::string_view footer = absl::string_view(good).substr(good.size() - 48);
  const uint64_t meta_offset = Varint(&footer), meta_size = Varint(&footer);
  const auto unread = [&](size_t byte) {
    return (byte >= meta_offset && byte < meta_offset + meta_size + 5) || byte >= good.size() - 48;
  };
  int harmless = 0;
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] ^= static_cast<char>(1 << bit);
      WriteFile(prefix + ".index", bad);
      const absl::Status s = ReadAll(prefix);
      if (s.ok()) {
        ++harmless;
        EXPECT_TRUE(unread(byte)) << "an undetected flip in byte " << byte;
        continue;
      }
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, "ckpt.index")) << byte << ":" << bit;
    }
  }
  EXPECT_LT(harmless, (48 + static_cast<int>(meta_size) + 5) * 8);
}

TEST(TensorBundleTest, EveryTruncationOrBitFlipOfTheDataIsDataLossNamingTheTensor) {
  const std::string prefix = WriteSmallBundle(testing::MakeTempDir("data_flips"));
  const std::string path = prefix + ".data-00000-of-00001";
  const std::string good = testing::ReadFileOrDie(path);
  for (size_t n = 0; n < good.size(); ++n) {
    WriteFile(path, good.substr(0, n));
    EXPECT_THAT(ReadAll(prefix),
                StatusIs(absl::StatusCode::kDataLoss, "ckpt.data-00000-of-00001: tensor '"))
        << n;
  }
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] ^= static_cast<char>(1 << bit);
      WriteFile(path, bad);
      EXPECT_THAT(ReadAll(prefix),
                  StatusIs(absl::StatusCode::kDataLoss, "ckpt.data-00000-of-00001: tensor '"))
          << byte << ":" << bit;
    }
  }
  ::unlink(path.c_str());
  EXPECT_THAT(ReadAll(prefix), StatusIs(absl::StatusCode::kDataLoss, "data file is missing"));
  // A FIFO in its place is refused, not waited on.
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  EXPECT_THAT(ReadAll(prefix), StatusIs(absl::StatusCode::kDataLoss, "not a regular file"));
}

// The index table as keys and values: what BundleWriter wrote reads back
// and is rebuilt byte for byte; a file that is no table is DataLoss.
TEST(TensorBundleTest, IndexTablesReadAndRebuildByteForByte) {
  const std::string prefix = testing::MakeTempDir("table") + "/ckpt";
  auto writer = BundleWriter::Create(prefix);
  ASSERT_TRUE(writer.ok()) << writer.status();
  Tensor w(DT_FLOAT, {3});
  for (int i = 0; i < 3; ++i) w.flat<float>()(i) = i;
  ASSERT_TRUE((*writer)->Add("w", w).ok());
  ASSERT_TRUE((*writer)->Add("b", w).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  const std::string index = testing::ReadFileOrDie(prefix + ".index");
  auto table = ReadBundleIndexTable(index, "x.index");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->size(), 3u);
  EXPECT_EQ((*table)[0].first, "");
  EXPECT_EQ((*table)[1].first, "b");
  EXPECT_EQ((*table)[2].first, "w");
  BundleEntryProto entry;
  ASSERT_TRUE(entry.ParseFromString((*table)[2].second));
  EXPECT_EQ(entry.offset(), 0);
  EXPECT_EQ(entry.size(), 12);
  EXPECT_EQ(BuildBundleIndexTable(*table), index);
  EXPECT_THAT(ReadBundleIndexTable("not a table", "x.index").status(),
              StatusIs(absl::StatusCode::kDataLoss, "x.index: not a valid checkpoint index"));
}

TEST(TensorBundleTest, EntriesThatDisagreeWithTheirShapesOrFilesAreDataLoss) {
  const std::string dir = testing::MakeTempDir("lying");
  const std::string prefix = dir + "/ckpt";
  const float values[4] = {1, 2, 3, 4};
  const std::string bytes(reinterpret_cast<const char*>(values), 16);
  WriteFile(prefix + ".data-00000-of-00001", bytes);
  struct Case {
    std::string header;
    BundleEntryProto entry;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({Header(1), FloatEntry({2, 3}, 0, bytes), "has an inconsistent entry"});
  cases.push_back({Header(1), FloatEntry({4}, 4, bytes), "lie past the end"});
  BundleEntryProto far = FloatEntry({4}, 0, bytes);
  far.set_offset(int64_t{1} << 62);
  cases.push_back({Header(1), far, "lie past the end"});
  BundleEntryProto shard = FloatEntry({4}, 0, bytes);
  shard.set_shard_id(3);
  cases.push_back({Header(1), shard, "shard 3 of 1"});
  BundleEntryProto huge = FloatEntry({int64_t{1} << 40, int64_t{1} << 20}, 0, bytes);
  cases.push_back({Header(1), huge, "has an inconsistent entry"});
  BundleEntryProto overflow = FloatEntry({int64_t{1} << 62, 8}, 0, bytes);
  cases.push_back({Header(1), overflow, "invalid shape"});
  BundleEntryProto resource = FloatEntry({4}, 0, bytes);
  resource.set_dtype(DT_RESOURCE);
  cases.push_back({Header(1), resource, "which checkpoints cannot hold"});
  // Packed sub-byte types (an entry of int2 was a division by zero).
  for (DataType packed : {DT_INT4, DT_UINT2, DT_INT2, DT_FLOAT4_E2M1FN}) {
    BundleEntryProto e = FloatEntry({4}, 0, bytes);
    e.set_dtype(packed);
    cases.push_back({Header(1), e, "which checkpoints cannot hold"});
  }
  BundleEntryProto strings = FloatEntry({int64_t{1} << 40}, 0, bytes);
  strings.set_dtype(DT_STRING);
  cases.push_back({Header(1), strings, "has an inconsistent entry"});
  cases.push_back({Header(0), FloatEntry({4}, 0, bytes), "claims 0 shards"});
  cases.push_back({"\xff", FloatEntry({4}, 0, bytes), "header"});
  for (const Case& c : cases) {
    WriteIndex(prefix + ".index", {{"", c.header}, {"t", c.entry.SerializeAsString()}},
               leveldb::kNoCompression);
    EXPECT_THAT(ReadAll(prefix), StatusIs(absl::StatusCode::kDataLoss, c.message))
        << c.entry.ShortDebugString();
  }
  // Newer formats and other byte orders are refused, not misread.
  BundleHeaderProto big;
  big.set_num_shards(1);
  big.set_endianness(BundleHeaderProto::BIG);
  WriteIndex(prefix + ".index", {{"", big.SerializeAsString()}}, leveldb::kNoCompression);
  EXPECT_THAT(ReadAll(prefix), StatusIs(absl::StatusCode::kUnimplemented, "big-endian"));
  BundleHeaderProto newer;
  newer.set_num_shards(1);
  newer.mutable_version()->set_producer(2);
  newer.mutable_version()->set_min_consumer(2);
  WriteIndex(prefix + ".index", {{"", newer.SerializeAsString()}}, leveldb::kNoCompression);
  EXPECT_THAT(ReadAll(prefix), StatusIs(absl::StatusCode::kUnimplemented, "format version 2"));
  // Slices: listed, not read.
  BundleEntryProto sliced = FloatEntry({4}, 0, bytes);
  sliced.add_slices();
  WriteIndex(prefix + ".index", {{"", Header(1)}, {"t", sliced.SerializeAsString()}},
             leveldb::kNoCompression);
  EXPECT_THAT(ReadAll(prefix), StatusIs(absl::StatusCode::kUnimplemented, "slices"));
}

}  // namespace
}  // namespace towerflow
