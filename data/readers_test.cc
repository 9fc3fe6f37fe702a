#include "data/readers.h"

#include <sys/stat.h>
#include <zlib.h>

#include <fstream>
#include <string>

#include "core/file_io.h"
#include "core/record_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace data {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void WriteGzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), bytes.size()), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// An IDX header: type code, then the dimensions, big-endian.
std::string IdxHeader(unsigned char type, std::vector<uint32_t> dims) {
  std::string h = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) h.push_back(static_cast<char>(d >> shift));
  }
  return h;
}

std::vector<Element> DrainOk(const Dataset& d) {
  std::vector<Element> out;
  std::unique_ptr<Iterator> it = d.MakeIterator();
  while (true) {
    absl::StatusOr<std::optional<Element>> e = it->GetNext();
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok() || !e->has_value()) return out;
    out.push_back(**e);
  }
}

// The status that ends a pass.
absl::Status DrainError(const Dataset& d) {
  std::unique_ptr<Iterator> it = d.MakeIterator();
  while (true) {
    absl::StatusOr<std::optional<Element>> e = it->GetNext();
    if (!e.ok()) return e.status();
    if (!e->has_value()) return absl::OkStatus();
  }
}

TEST(IdxTest, ReadsPlainAndGzippedFilesOfEveryType) {
  const std::string dir = testing::MakeTempDir("idx");
  const std::string u8 = IdxHeader(0x08, {2, 3}) + std::string("\x01\x02\x03\xfe\x05\xff", 6);
  WriteBytes(dir + "/u8.idx", u8);
  WriteGzip(dir + "/u8.idx.gz", u8);
  for (const char* name : {"/u8.idx", "/u8.idx.gz"}) {
    TW_ASSERT_OK_AND_ASSIGN(Tensor t, ReadIdxFile(dir + name));
    EXPECT_THAT(t, TensorIs<uint8_t>({2, 3}, {1, 2, 3, 254, 5, 255})) << name;
  }
  // int32 -2 and 258, big-endian.
  WriteBytes(dir + "/i32.idx",
             IdxHeader(0x0C, {2}) + std::string("\xff\xff\xff\xfe\x00\x00\x01\x02", 8));
  TW_ASSERT_OK_AND_ASSIGN(Tensor i32, ReadIdxFile(dir + "/i32.idx"));
  EXPECT_THAT(i32, TensorIs<int32_t>({2}, {-2, 258}));
  // float 1.5 (0x3FC00000).
  WriteBytes(dir + "/f.idx", IdxHeader(0x0D, {1}) + std::string("\x3f\xc0\x00\x00", 4));
  TW_ASSERT_OK_AND_ASSIGN(Tensor f, ReadIdxFile(dir + "/f.idx"));
  EXPECT_THAT(f, TensorIs<float>({1}, {1.5f}));
}

TEST(IdxTest, CorruptFilesAreDataLossNamingTheFile) {
  const std::string dir = testing::MakeTempDir("idx_bad");
  const std::string good = IdxHeader(0x08, {2, 2}) + std::string("\x01\x02\x03\x04", 4);
  WriteBytes(dir + "/short.idx", good.substr(0, good.size() - 1));
  EXPECT_THAT(ReadIdxFile(dir + "/short.idx"),
              StatusIs(absl::StatusCode::kDataLoss,
                       "short.idx' is not a valid IDX file: shape [2,2] needs 4 bytes of data, "
                       "the file has 3"));
  WriteBytes(dir + "/long.idx", good + "x");
  EXPECT_THAT(ReadIdxFile(dir + "/long.idx"), StatusIs(absl::StatusCode::kDataLoss, "long.idx"));
  WriteBytes(dir + "/magic.idx", std::string("\x01\x00\x08\x01", 4));
  EXPECT_THAT(ReadIdxFile(dir + "/magic.idx"),
              StatusIs(absl::StatusCode::kDataLoss, "magic number"));
  WriteBytes(dir + "/type.idx", IdxHeader(0x07, {1}) + "a");
  EXPECT_THAT(ReadIdxFile(dir + "/type.idx"),
              StatusIs(absl::StatusCode::kDataLoss, "unknown type code 0x7"));
  WriteBytes(dir + "/header.idx", IdxHeader(0x08, {4, 4}).substr(0, 9));
  EXPECT_THAT(ReadIdxFile(dir + "/header.idx"),
              StatusIs(absl::StatusCode::kDataLoss, "header of 2 dimensions is truncated"));
  // A huge header with no data behind it allocates nothing.
  WriteBytes(dir + "/huge.idx", IdxHeader(0x08, {0xffffffff, 0xffffffff, 0xffffffff}));
  EXPECT_THAT(ReadIdxFile(dir + "/huge.idx"), StatusIs(absl::StatusCode::kDataLoss, "huge.idx"));
  // A gzip stream cut short, and one with a flipped byte.
  WriteGzip(dir + "/good.gz", good + std::string(4000, '\x07'));
  TW_ASSERT_OK_AND_ASSIGN(std::string gz, ReadFileToString(dir + "/good.gz"));
  WriteBytes(dir + "/cut.gz", gz.substr(0, gz.size() / 2));
  EXPECT_THAT(ReadIdxFile(dir + "/cut.gz"),
              StatusIs(absl::StatusCode::kDataLoss, "cut.gz': corrupt gzip data"));
  std::string flipped = gz;
  flipped[flipped.size() - 6] ^= 0x55;  // inside the CRC-32 trailer
  WriteBytes(dir + "/flipped.gz", flipped);
  EXPECT_THAT(ReadIdxFile(dir + "/flipped.gz"),
              StatusIs(absl::StatusCode::kDataLoss, "flipped.gz': corrupt gzip data"));
  EXPECT_THAT(ReadIdxFile(dir + "/absent.idx"),
              StatusIs(absl::StatusCode::kNotFound, "absent.idx"));
}

TEST(MnistTest, ImagesGetAChannelAndLabelsBecomeInt32) {
  const std::string dir = testing::MakeTempDir("mnist");
  WriteBytes(dir + "/images",
             IdxHeader(0x08, {3, 1, 2}) + std::string("\x00\x01\x02\x03\x04\x05", 6));
  WriteBytes(dir + "/labels", IdxHeader(0x08, {3}) + std::string("\x07\x00\x09", 3));
  TW_ASSERT_OK_AND_ASSIGN(Dataset d, MnistDataset(dir + "/images", dir + "/labels"));
  const std::vector<Element> all = DrainOk(d);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_THAT(all[1][0], TensorIs<uint8_t>({1, 2, 1}, {2, 3}));
  EXPECT_THAT(all[1][1], TensorIs<int32_t>({}, {0}));
  EXPECT_THAT(all[2][1], TensorIs<int32_t>({}, {9}));

  WriteBytes(dir + "/two_labels", IdxHeader(0x08, {2}) + std::string("\x01\x02", 2));
  EXPECT_THAT(MnistDataset(dir + "/images", dir + "/two_labels"),
              StatusIs(absl::StatusCode::kInvalidArgument, "has 3 images but '"));
  EXPECT_THAT(MnistDataset(dir + "/labels", dir + "/labels"),
              StatusIs(absl::StatusCode::kInvalidArgument, "not uint8 images [n, rows, cols]"));
}

// The real Fashion-MNIST test set (Debian's dataset-fashion-mnist, which
// tools/bootstrap.sh installs): its size and first labels.
TEST(MnistTest, ReadsFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  struct stat st;
  if (::stat((dir + "/t10k-labels-idx1-ubyte.gz").c_str(), &st) != 0) {
    GTEST_SKIP() << dir << " is absent (apt-get install dataset-fashion-mnist)";
  }
  TW_ASSERT_OK_AND_ASSIGN(Tensor labels, ReadIdxFile(dir + "/t10k-labels-idx1-ubyte.gz"));
  ASSERT_EQ(labels.NumElements(), 10000);
  EXPECT_EQ(std::vector<uint8_t>(labels.data<uint8_t>(), labels.data<uint8_t>() + 10),
            (std::vector<uint8_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
  TW_ASSERT_OK_AND_ASSIGN(Dataset d, MnistDataset(dir + "/t10k-images-idx3-ubyte.gz",
                                                  dir + "/t10k-labels-idx1-ubyte.gz"));
  TW_ASSERT_OK_AND_ASSIGN(std::optional<Element> first, d.MakeIterator()->GetNext());
  ASSERT_TRUE(first.has_value());
  const Tensor& image = (*first)[0];
  EXPECT_EQ(image.shape(), TensorShape({28, 28, 1}));
  int64_t sum = 0;
  for (int i = 0; i < 784; ++i) sum += image.data<uint8_t>()[i];
  EXPECT_EQ(sum, 33456);
  EXPECT_EQ(image.data<uint8_t>()[14 * 28 + 12], 98);
}

// Two CIFAR-10 records: label, then the red, green and blue planes.
std::string CifarRecord(unsigned char label, unsigned char base) {
  std::string r(1, static_cast<char>(label));
  for (int c = 0; c < 3; ++c) {
    for (int p = 0; p < 1024; ++p) r.push_back(static_cast<char>(base + c * 10 + p % 7));
  }
  return r;
}

TEST(Cifar10Test, RecordsBecomeInterleavedImagesFileAfterFile) {
  const std::string dir = testing::MakeTempDir("cifar");
  WriteBytes(dir + "/data_batch_1.bin", CifarRecord(3, 0) + CifarRecord(9, 100));
  WriteBytes(dir + "/data_batch_2.bin", CifarRecord(0, 50));
  TW_ASSERT_OK_AND_ASSIGN(Dataset d,
                          Cifar10Dataset({dir + "/data_batch_1.bin", dir + "/data_batch_2.bin"}));
  const std::vector<Element> all = DrainOk(d);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_THAT(all[0][1], TensorIs<int32_t>({}, {3}));
  EXPECT_THAT(all[1][1], TensorIs<int32_t>({}, {9}));
  EXPECT_THAT(all[2][1], TensorIs<int32_t>({}, {0}));
  const Tensor& second = all[1][0];
  EXPECT_EQ(second.shape(), TensorShape({32, 32, 3}));
  // Pixel (0, 1) of record 2: planes 100 + p%7 (+10, +20), p = 1.
  const uint8_t* px = second.data<uint8_t>() + 1 * 3;
  EXPECT_EQ((std::vector<int>{px[0], px[1], px[2]}), (std::vector<int>{101, 111, 121}));
  // Pixel (1, 0): p = 32, 32 % 7 = 4.
  px = all[2][0].data<uint8_t>() + 32 * 3;
  EXPECT_EQ((std::vector<int>{px[0], px[1], px[2]}), (std::vector<int>{54, 64, 74}));
}

TEST(Cifar10Test, CorruptFilesAreDataLossNamingTheFile) {
  const std::string dir = testing::MakeTempDir("cifar_bad");
  WriteBytes(dir + "/torn.bin", CifarRecord(1, 0) + "abc");
  EXPECT_THAT(Cifar10Dataset({dir + "/torn.bin"}),
              StatusIs(absl::StatusCode::kDataLoss,
                       "torn.bin' has 3076 bytes, not a whole number of 3073-byte"));
  WriteBytes(dir + "/label.bin", CifarRecord(1, 0) + CifarRecord(12, 0));
  TW_ASSERT_OK_AND_ASSIGN(Dataset d, Cifar10Dataset({dir + "/label.bin"}));
  EXPECT_THAT(DrainError(d),
              StatusIs(absl::StatusCode::kDataLoss, "label.bin': record 1 has label 12"));
  EXPECT_THAT(Cifar10Dataset({dir + "/absent.bin"}),
              StatusIs(absl::StatusCode::kNotFound, "absent.bin"));
  EXPECT_THAT(Cifar10Dataset({}), StatusIs(absl::StatusCode::kInvalidArgument, "no files"));
}

TEST(TFRecordTest, ReadsRecordsAndRejectsCorruptOnes) {
  const std::string dir = testing::MakeTempDir("tfrecord");
  {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RecordWriter> w, RecordWriter::Open(dir + "/a.rec"));
    TW_ASSERT_OK(w->WriteRecord("first"));
    TW_ASSERT_OK(w->WriteRecord(""));
    TW_ASSERT_OK(w->WriteRecord("third record"));
    TW_ASSERT_OK(w->Close());
  }
  TW_ASSERT_OK_AND_ASSIGN(Dataset d, TFRecordDataset({dir + "/a.rec", dir + "/a.rec"}));
  const std::vector<Element> all = DrainOk(d);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0][0].data<std::string>()[0], "first");
  EXPECT_EQ(all[1][0].data<std::string>()[0], "");
  EXPECT_EQ(all[5][0].data<std::string>()[0], "third record");

  TW_ASSERT_OK_AND_ASSIGN(const std::string good, ReadFileToString(dir + "/a.rec"));
  std::string bytes = good;
  bytes[14] ^= 1;  // inside "first"
  WriteBytes(dir + "/bad.rec", bytes);
  TW_ASSERT_OK_AND_ASSIGN(Dataset bad, TFRecordDataset({dir + "/bad.rec"}));
  EXPECT_THAT(DrainError(bad), StatusIs(absl::StatusCode::kDataLoss, "bad.rec"));
  // Cut inside the second record (the first takes 12 + 5 + 4 bytes).
  WriteBytes(dir + "/cut.rec", good.substr(0, 30));
  TW_ASSERT_OK_AND_ASSIGN(Dataset cut, TFRecordDataset({dir + "/cut.rec"}));
  EXPECT_THAT(DrainError(cut), StatusIs(absl::StatusCode::kDataLoss, "offset 21 of '"));
  TW_ASSERT_OK_AND_ASSIGN(Dataset absent, TFRecordDataset({dir + "/absent.rec"}));
  EXPECT_THAT(DrainError(absent), StatusIs(absl::StatusCode::kNotFound, "absent.rec"));
}

TEST(TFRecordTest, ReadsGzipCompressedFiles) {
  // gzip's format, as TF's TFRecordOptions("GZIP") writes (TF's own bytes
  // are read in core/record_io_test.cc).
  const std::string dir = testing::MakeTempDir("tfrecord_gzip");
  const std::string records = EncodeRecord("first") + EncodeRecord("") + EncodeRecord("third");
  WriteGzip(dir + "/a.rec.gz", records);
  TW_ASSERT_OK_AND_ASSIGN(
      Dataset d, TFRecordDataset({dir + "/a.rec.gz", dir + "/a.rec.gz"}, RecordCompression::kGzip));
  const std::vector<Element> all = DrainOk(d);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0][0].data<std::string>()[0], "first");
  EXPECT_EQ(all[4][0].data<std::string>()[0], "");
  EXPECT_EQ(all[5][0].data<std::string>()[0], "third");
  // Read as ZLIB: the header is wrong, DataLoss naming the file.
  TW_ASSERT_OK_AND_ASSIGN(Dataset wrong,
                          TFRecordDataset({dir + "/a.rec.gz"}, RecordCompression::kZlib));
  EXPECT_THAT(DrainError(wrong),
              StatusIs(absl::StatusCode::kDataLoss, "a.rec.gz': inflate() failed with error -3"));
}

}  // namespace
}  // namespace data
}  // namespace towerflow
