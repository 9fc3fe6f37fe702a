#include "core/record_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include "core/crc32c.h"
#include "core/file_io.h"
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

}  // namespace
}  // namespace towerflow
