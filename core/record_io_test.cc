#include "core/record_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/crc32c.h"
#include "core/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::MakeTempDir;
using ::towerflow::testing::ReadFileOrDie;
using ::towerflow::testing::StatusIs;

TEST(Crc32cTest, StandardVectors) {
  EXPECT_EQ(crc32c::Value(""), 0u);
  EXPECT_EQ(crc32c::Value("123456789"), 0xe3069283u);
  EXPECT_EQ(crc32c::Value(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(crc32c::Value(std::string(32, '\xff')), 0x62a8ab43u);
  // Extending piecewise equals hashing the whole.
  EXPECT_EQ(crc32c::Extend(crc32c::Value("12345"), "6789"), 0xe3069283u);
}

TEST(Crc32cTest, TensorBoardMaskedVector) {
  // TensorBoard's test: Event{file_version: "CRC test, one two"}.
  const std::string data(
      "\x1a\x11"
      "CRC test, one two",
      19);
  EXPECT_EQ(crc32c::Mask(crc32c::Value(data)), 0x5794d08au);
  EXPECT_EQ(crc32c::Unmask(crc32c::Mask(0x12345678u)), 0x12345678u);
}

TEST(RecordIoTest, WriteThenReadRoundTrips) {
  const std::string path = MakeTempDir("records") + "/r.tfrecord";
  {
    TW_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path));
    for (const char* r : {"first", "", "third record"}) TW_ASSERT_OK(writer->WriteRecord(r));
    TW_ASSERT_OK(writer->Close());
    EXPECT_THAT(writer->WriteRecord("late"), StatusIs(absl::StatusCode::kFailedPrecondition));
  }
  EXPECT_EQ(ReadFileOrDie(path).size(), 3 * 16 + 5 + 12u);
  TW_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path));
  std::vector<std::string> records;
  std::string r;
  while (true) {
    TW_ASSERT_OK_AND_ASSIGN(bool more, reader->ReadRecord(&r));
    if (!more) break;
    records.push_back(r);
  }
  EXPECT_EQ(records, (std::vector<std::string>{"first", "", "third record"}));
}

class CorruptRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = MakeTempDir("corrupt") + "/r.tfrecord";
    TW_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path_));
    TW_ASSERT_OK(writer->WriteRecord("hello world"));
    TW_ASSERT_OK(writer->Close());
    bytes_ = ReadFileOrDie(path_);
  }
  absl::StatusOr<bool> ReadFirst(const std::string& bytes) {
    EXPECT_TRUE(WriteFileAtomically(path_, bytes).ok());
    absl::StatusOr<std::unique_ptr<RecordReader>> reader = RecordReader::Open(path_);
    if (!reader.ok()) return reader.status();
    std::string record;
    return (*reader)->ReadRecord(&record);
  }
  std::string path_, bytes_;
};

TEST_F(CorruptRecordTest, FlippedDataBitIsDataLoss) {
  std::string b = bytes_;
  b[14] ^= 0x01;
  EXPECT_THAT(ReadFirst(b), StatusIs(absl::StatusCode::kDataLoss,
                                     "offset 0 of '" + path_ + "': the data's checksum"));
}

TEST_F(CorruptRecordTest, FlippedLengthIsCaughtBeforeAllocating) {
  std::string b = bytes_;
  b[7] = '\x40';  // length ~ 2^62
  EXPECT_THAT(ReadFirst(b), StatusIs(absl::StatusCode::kDataLoss, "the length's checksum"));
}

TEST_F(CorruptRecordTest, TruncationIsDataLoss) {
  EXPECT_THAT(ReadFirst(bytes_.substr(0, 5)),
              StatusIs(absl::StatusCode::kDataLoss, "truncated header"));
  EXPECT_THAT(ReadFirst(bytes_.substr(0, bytes_.size() - 2)),
              StatusIs(absl::StatusCode::kDataLoss, "truncated data"));
}

TEST(RecordIoTest, MissingFileIsNotFound) {
  EXPECT_THAT(RecordReader::Open("/nonexistent/events"), StatusIs(absl::StatusCode::kNotFound));
}

// A FIFO or a device is refused at once (open() on a FIFO would wait for a
// writer; /dev/zero would read forever).
TEST(RecordIoTest, OnlyRegularFilesAreRead) {
  const std::string fifo = testing::MakeTempDir("record_fifo") + "/events";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(RecordReader::Open(fifo).status(),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition, "is not a regular file"));
  EXPECT_THAT(RecordReader::Open("/dev/zero").status(),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition, "is not a regular file"));
  // A symbolic link to a device is the device.
  const std::string link = testing::MakeTempDir("record_link") + "/checkpoint";
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  EXPECT_THAT(ReadFileToString(link).status(),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition, "is not a regular file"));
}

// TF 2.21's tf.io.TFRecordWriter(path, options="ZLIB" / "GZIP") of the
// records "abc", "", "hello world": the framed records deflated as one
// stream, in zlib's and gzip's wrapping.
const std::string kTfZlibRecords(
    "\x78\x9c\x63\x66\x80\x80\x0d\x33\x3d\xf9\x12\x93\x92\xf3\xc2\x3f"
    "\x2a\x42\x45\x18\x34\x99\x67\xb0\xdf\x78\xd5\xb4\x88\x1b\xca\x6f"
    "\x13\xfd\xca\x92\x91\x9a\x93\x93\xaf\x50\x9e\x5f\x94\x93\xc2\x50"
    "\x77\x23\x17\x00\xa0\x33\x10\x10",
    56);
const std::string kTfGzipRecords(
    "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x63\x66\x80\x80\x0d\x33"
    "\x3d\xf9\x12\x93\x92\xf3\xc2\x3f\x2a\x42\x45\x18\x34\x99\x67\xb0"
    "\xdf\x78\xd5\xb4\x88\x1b\xca\x6f\x13\xfd\xca\x92\x91\x9a\x93\x93"
    "\xaf\x50\x9e\x5f\x94\x93\xc2\x50\x77\x23\x17\x00\xf9\x23\xf6\xa3"
    "\x3e\x00\x00\x00",
    68);

std::vector<std::string> ReadAll(const std::string& path, RecordCompression compression,
                                 std::vector<uint64_t>* offsets = nullptr) {
  std::vector<std::string> records;
  auto reader = RecordReader::Open(path, compression);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return records;
  while (true) {
    if (offsets != nullptr) offsets->push_back((*reader)->offset());
    std::string record;
    absl::StatusOr<bool> more = (*reader)->ReadRecord(&record);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    records.push_back(record);
  }
  return records;
}

TEST(CompressedRecordsTest, ReadsWhatTensorFlowWrites) {
  const std::string dir = MakeTempDir("compressed_records");
  TW_ASSERT_OK(WriteFileAtomically(dir + "/r.zlib", kTfZlibRecords));
  TW_ASSERT_OK(WriteFileAtomically(dir + "/r.gz", kTfGzipRecords));
  std::vector<uint64_t> offsets;
  EXPECT_THAT(ReadAll(dir + "/r.zlib", RecordCompression::kZlib, &offsets),
              ::testing::ElementsAre("abc", "", "hello world"));
  // The uncompressed stream's offsets: TF's reader keys ("r:19").
  EXPECT_THAT(offsets, ::testing::ElementsAre(0, 19, 35, 62));
  EXPECT_THAT(ReadAll(dir + "/r.gz", RecordCompression::kGzip),
              ::testing::ElementsAre("abc", "", "hello world"));
  // Streams one after another (files appended) read on.
  TW_ASSERT_OK(WriteFileAtomically(dir + "/twice.gz", kTfGzipRecords + kTfGzipRecords));
  EXPECT_EQ(ReadAll(dir + "/twice.gz", RecordCompression::kGzip).size(), 6);
}

TEST(CompressedRecordsTest, WrongOrCutDataIsDataLoss) {
  const std::string dir = MakeTempDir("bad_compressed_records");
  TW_ASSERT_OK(WriteFileAtomically(dir + "/r.zlib", kTfZlibRecords));
  TW_ASSERT_OK(WriteFileAtomically(dir + "/cut.zlib", kTfZlibRecords.substr(0, 40)));
  std::string record;
  // TF: "inflate() failed with error -3: incorrect header check".
  TW_ASSERT_OK_AND_ASSIGN(auto as_gzip,
                          RecordReader::Open(dir + "/r.zlib", RecordCompression::kGzip));
  EXPECT_THAT(as_gzip->ReadRecord(&record),
              StatusIs(absl::StatusCode::kDataLoss,
                       "Corrupt record at offset 0 of '" + dir +
                           "/r.zlib': inflate() failed with error -3: incorrect header check"));
  // Cut inside the third record (TF: "truncated record at 35").
  TW_ASSERT_OK_AND_ASSIGN(auto cut,
                          RecordReader::Open(dir + "/cut.zlib", RecordCompression::kZlib));
  TW_ASSERT_OK_AND_ASSIGN(bool more, cut->ReadRecord(&record));
  EXPECT_TRUE(more);
  TW_ASSERT_OK_AND_ASSIGN(more, cut->ReadRecord(&record));
  EXPECT_TRUE(more);
  EXPECT_THAT(
      cut->ReadRecord(&record),
      StatusIs(absl::StatusCode::kDataLoss, "Corrupt record at offset 35 of '" + dir +
                                                "/cut.zlib': the compressed stream ends early"));
  // Uncompressed bytes read as plain records are a checksum mismatch.
  TW_ASSERT_OK_AND_ASSIGN(auto plain, RecordReader::Open(dir + "/r.zlib"));
  EXPECT_THAT(plain->ReadRecord(&record), StatusIs(absl::StatusCode::kDataLoss, "offset 0"));
}

TEST(CompressedRecordsTest, TensorFlowsNamesOfTheCompressions) {
  TW_ASSERT_OK_AND_ASSIGN(RecordCompression none, ParseRecordCompression(""));
  EXPECT_EQ(none, RecordCompression::kNone);
  TW_ASSERT_OK_AND_ASSIGN(RecordCompression zlib, ParseRecordCompression("ZLIB"));
  EXPECT_EQ(zlib, RecordCompression::kZlib);
  TW_ASSERT_OK_AND_ASSIGN(RecordCompression gzip, ParseRecordCompression("GZIP"));
  EXPECT_EQ(gzip, RecordCompression::kGzip);
  EXPECT_THAT(ParseRecordCompression("gzip"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "compression_type 'gzip' is none of \"\" (none), \"ZLIB\", \"GZIP\""));
}

}  // namespace
}  // namespace towerflow
