// TF 1's readers through a session: files named by a queue, records and
// keys, counts and states as TF 2.21 gives them (tf.raw_ops in graph mode on
// the same files), and reads that wait for work from other steps.
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/record_io.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/queue_ops.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class ReaderTest : public ::testing::Test {
 protected:
  ReaderTest() : dir_(testing::MakeTempDir("readers")) {
    WriteBytes(Path("a.txt"), "head\nline one\r\nline two\n\nlast");
    WriteBytes(Path("b.txt"), "x\ny\n");
    std::string fixed;
    for (int i = 0; i < 23; ++i) fixed.push_back(static_cast<char>(i));
    WriteBytes(Path("fixed.bin"), fixed);
    std::unique_ptr<RecordWriter> w = *RecordWriter::Open(Path("r.tfrecord"));
    for (const char* r : {"alpha", "", "gamma!"}) EXPECT_TRUE(w->WriteRecord(r).ok());
    EXPECT_TRUE(w->Close().ok());
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // A closed queue of `works` (file names).
  Output Works(const std::vector<std::string>& works, bool close = true) {
    Output q = ops::FIFOQueueV2(root_, {DT_STRING},
                                ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}));
    Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(works.size())}));
    for (size_t i = 0; i < works.size(); ++i) t.data<std::string>()[i] = works[i];
    setup_.push_back(ops::QueueEnqueueManyV2(root_, q, {ops::Const(root_, t.AsProto())}).operation);
    if (close) setup_.push_back(ops::QueueCloseV2(root_, q).operation);
    return q;
  }

  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Output> fetches,
                                          const RunOptions& options = {}) {
    if (!session_) {
      session_.emplace(root_);
      for (const Operation& op : setup_) {
        std::vector<Tensor> none;
        TW_RETURN_IF_ERROR(session_->Run({}, {}, {op}, &none));
      }
    }
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session_->Run(options, {}, fetches, {}, &out, nullptr));
    return out;
  }

  // "key=value [records, works]" after one read, or the error.
  std::string ReadOnce(Output reader, const ops::ReaderReadV2& read) {
    absl::StatusOr<std::vector<Tensor>> r = Run({read.key, read.value});
    if (!r.ok()) return std::string(absl::StatusCodeToString(r.status().code()));
    return absl::StrCat((*r)[0].data<std::string>()[0], "=", (*r)[1].data<std::string>()[0],
                        Counts(reader));
  }
  std::string Counts(Output reader) {
    absl::StatusOr<std::vector<Tensor>> c =
        Run({ops::ReaderNumRecordsProducedV2(root_, reader),
             ops::ReaderNumWorkUnitsCompletedV2(root_, reader)});
    if (!c.ok()) return c.status().ToString();
    return absl::StrCat(" [", (*c)[0].data<int64_t>()[0], ",", (*c)[1].data<int64_t>()[0], "]");
  }

  const std::string dir_;
  Scope root_ = Scope::NewRootScope();
  std::vector<Operation> setup_;
  std::optional<ClientSession> session_;
};

TEST_F(ReaderTest, TextLinesSkipHeadersAndStripLineEnds) {
  Output reader = ops::TextLineReaderV2(root_, ops::TextLineReaderV2::Attrs().SkipHeaderLines(1));
  ops::ReaderReadV2 read(root_, reader, Works({Path("a.txt"), Path("b.txt")}));
  std::vector<std::string> got;
  for (int i = 0; i < 6; ++i) got.push_back(ReadOnce(reader, read));
  const std::string a = Path("a.txt"), b = Path("b.txt");
  EXPECT_THAT(got, ElementsAre(a + ":2=line one [1,0]", a + ":3=line two [2,0]", a + ":4= [3,0]",
                               a + ":5=last [4,0]", b + ":2=y [5,1]", "OUT_OF_RANGE"));
}

TEST_F(ReaderTest, ReadUpToStopsAtTheEndOfAFile) {
  Output reader = ops::TextLineReaderV2(root_);
  ops::ReaderReadUpToV2 read(root_, reader, Works({Path("a.txt"), Path("b.txt")}),
                             ops::Const(root_, int64_t{3}));
  const std::string a = Path("a.txt"), b = Path("b.txt");
  TW_ASSERT_OK_AND_ASSIGN(auto first, Run({read.keys, read.values}));
  EXPECT_THAT(first[0], TensorIs<std::string>({3}, {a + ":1", a + ":2", a + ":3"}));
  EXPECT_THAT(first[1], TensorIs<std::string>({3}, {"head", "line one", "line two"}));
  EXPECT_EQ(Counts(reader), " [3,0]");
  TW_ASSERT_OK_AND_ASSIGN(auto second, Run({read.keys, read.values}));
  EXPECT_THAT(second[0], TensorIs<std::string>({2}, {a + ":4", a + ":5"}));
  EXPECT_THAT(second[1], TensorIs<std::string>({2}, {"", "last"}));
  EXPECT_EQ(Counts(reader), " [5,1]");
  TW_ASSERT_OK_AND_ASSIGN(auto third, Run({read.keys, read.values}));
  EXPECT_THAT(third[1], TensorIs<std::string>({2}, {"x", "y"}));
  EXPECT_EQ(Counts(reader), " [7,2]");
  EXPECT_THAT(Run({read.keys}).status(),
              testing::StatusIs(absl::StatusCode::kOutOfRange, "is closed and has insufficient"));
}

TEST_F(ReaderTest, ManyEmptyFilesInARowCostNoStack) {
  // Each empty file ends at once and the next is dequeued at once: a loop,
  // not a recursion through the dequeue's callback.
  WriteBytes(Path("empty.txt"), "");
  std::vector<std::string> works(100000, Path("empty.txt"));
  works.push_back(Path("b.txt"));
  Output reader = ops::TextLineReaderV2(root_);
  ops::ReaderReadV2 read(root_, reader, Works(works));
  EXPECT_EQ(ReadOnce(reader, read), Path("b.txt") + ":1=x [1,100000]");
}

TEST_F(ReaderTest, FixedLengthRecordsBetweenHeaderAndFooter) {
  // Bytes 0..22: header 2, records of 5, footer 3 give 3 records (the 3
  // bytes left before the footer are none); hops of 3 give 7 overlapping.
  Output plain = ops::FixedLengthRecordReaderV2(
      root_, 5, ops::FixedLengthRecordReaderV2::Attrs().HeaderBytes(2).FooterBytes(3));
  Output hops = ops::FixedLengthRecordReaderV2(
      root_, 4, ops::FixedLengthRecordReaderV2::Attrs().HeaderBytes(1).HopBytes(3));
  ops::ReaderReadUpToV2 read_plain(root_, plain, Works({Path("fixed.bin")}),
                                   ops::Const(root_, int64_t{10}));
  ops::ReaderReadUpToV2 read_hops(root_, hops, Works({Path("fixed.bin")}),
                                  ops::Const(root_, int64_t{10}));
  TW_ASSERT_OK_AND_ASSIGN(auto got, Run({read_plain.keys, read_plain.values, read_hops.values}));
  const std::string f = Path("fixed.bin");
  EXPECT_THAT(got[0], TensorIs<std::string>({3}, {f + ":0", f + ":1", f + ":2"}));
  EXPECT_THAT(got[1], TensorIs<std::string>({3}, {"\x02\x03\x04\x05\x06", "\x07\x08\x09\x0a\x0b",
                                                  "\x0c\x0d\x0e\x0f\x10"}));
  EXPECT_THAT(got[2], TensorIs<std::string>(
                          {7}, {"\x01\x02\x03\x04", "\x04\x05\x06\x07", "\x07\x08\x09\x0a",
                                "\x0a\x0b\x0c\x0d", "\x0d\x0e\x0f\x10", "\x10\x11\x12\x13",
                                "\x13\x14\x15\x16"}));
}

TEST_F(ReaderTest, TFRecordKeysAreRecordOffsets) {
  Output reader = ops::TFRecordReaderV2(root_);
  ops::ReaderReadUpToV2 read(root_, reader, Works({Path("r.tfrecord"), Path("r.tfrecord")}),
                             ops::Const(root_, int64_t{2}));
  const std::string r = Path("r.tfrecord");
  TW_ASSERT_OK_AND_ASSIGN(auto a, Run({read.keys, read.values}));
  EXPECT_THAT(a[0], TensorIs<std::string>({2}, {r + ":0", r + ":21"}));
  EXPECT_THAT(a[1], TensorIs<std::string>({2}, {"alpha", ""}));
  TW_ASSERT_OK_AND_ASSIGN(auto b, Run({read.keys, read.values}));
  EXPECT_THAT(b[0], TensorIs<std::string>({1}, {r + ":37"}));
  EXPECT_THAT(b[1], TensorIs<std::string>({1}, {"gamma!"}));
  TW_ASSERT_OK_AND_ASSIGN(auto c, Run({read.keys}));
  EXPECT_THAT(c[0], TensorIs<std::string>({2}, {r + ":0", r + ":21"}));
  EXPECT_EQ(Counts(reader), " [5,1]");
}

TEST_F(ReaderTest, CompressedTFRecordsAsTensorFlowReadsThem) {
  // TF 2.21's TFRecordWriter(options="GZIP") of "abc", "", "hello world";
  // TF's TFRecordReader(options="GZIP") keys them by the offsets in the
  // uncompressed stream.
  WriteBytes(Path("r.gz"),
             std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x63\x66\x80\x80\x0d\x33"
                         "\x3d\xf9\x12\x93\x92\xf3\xc2\x3f\x2a\x42\x45\x18\x34\x99\x67\xb0"
                         "\xdf\x78\xd5\xb4\x88\x1b\xca\x6f\x13\xfd\xca\x92\x91\x9a\x93\x93"
                         "\xaf\x50\x9e\x5f\x94\x93\xc2\x50\x77\x23\x17\x00\xf9\x23\xf6\xa3"
                         "\x3e\x00\x00\x00",
                         68));
  Output reader =
      ops::TFRecordReaderV2(root_, ops::TFRecordReaderV2::Attrs().CompressionType("GZIP"));
  ops::ReaderReadUpToV2 read(root_, reader, Works({Path("r.gz")}), ops::Const(root_, int64_t{5}));
  // The same bytes read as ZLIB: TF's DataLoss, naming the file.
  Output as_zlib =
      ops::TFRecordReaderV2(root_, ops::TFRecordReaderV2::Attrs().CompressionType("ZLIB"));
  ops::ReaderReadV2 wrong(root_, as_zlib, Works({Path("r.gz")}));
  const std::string r = Path("r.gz");
  TW_ASSERT_OK_AND_ASSIGN(auto got, Run({read.keys, read.values}));
  EXPECT_THAT(got[0], TensorIs<std::string>({3}, {r + ":0", r + ":19", r + ":35"}));
  EXPECT_THAT(got[1], TensorIs<std::string>({3}, {"abc", "", "hello world"}));
  EXPECT_THAT(Run({wrong.key}).status(),
              testing::StatusIs(absl::StatusCode::kDataLoss,
                                r + "': inflate() failed with error -3: incorrect header check"));
}

TEST_F(ReaderTest, WholeFilesAndMissingOnes) {
  Output reader = ops::WholeFileReaderV2(root_);
  ops::ReaderReadV2 read(root_, reader, Works({Path("b.txt"), Path("nonexistent")}));
  EXPECT_EQ(ReadOnce(reader, read), Path("b.txt") + "=x\ny\n [1,1]");
  EXPECT_EQ(ReadOnce(reader, read), "NOT_FOUND");
}

TEST_F(ReaderTest, IdentityStateSerializesResetsAndRestoresAsTF) {
  Output reader = ops::IdentityReaderV2(root_);
  ops::ReaderReadV2 read(root_, reader, Works({"w1", "w2", "w3"}));
  Output state = ops::ReaderSerializeStateV2(root_, reader);
  Output saved = ops::Placeholder(root_, DT_STRING);
  EXPECT_EQ(ReadOnce(reader, read), "w1=w1 [1,1]");
  EXPECT_EQ(ReadOnce(reader, read), "w2=w2 [2,2]");
  TW_ASSERT_OK_AND_ASSIGN(auto s, Run({state}));
  // TF 2.21's ReaderBaseState bytes for these counts and work.
  EXPECT_THAT(s[0], TensorIs<std::string>({}, {std::string("\x08\x02\x10\x02\x18\x02\x22\x02w2")}));
  std::vector<Tensor> none;
  TW_ASSERT_OK(session_->Run({}, {}, {ops::ReaderResetV2(root_, reader).operation}, &none));
  EXPECT_EQ(Counts(reader), " [0,0]");
  Operation restore = ops::ReaderRestoreStateV2(root_, reader, saved).operation;
  const auto restore_from = [&](const std::string& bytes) {
    Tensor t(DT_STRING, TensorShape({}));
    t.data<std::string>()[0] = bytes;
    return session_->Run({{saved, t}}, {}, {restore}, &none);
  };
  TW_ASSERT_OK(
      restore_from(std::string("\x08\x01\x10\x01\x18\x01\x22\x01"
                               "a")));
  EXPECT_EQ(Counts(reader), " [1,1]");
  EXPECT_EQ(ReadOnce(reader, read), "w3=w3 [2,2]");
  EXPECT_THAT(restore_from("garbage"),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Could not parse state"));
  EXPECT_EQ(Counts(reader), " [0,0]");  // a failed restore resets, as TF
  Output lines = ops::TextLineReaderV2(root_);
  EXPECT_THAT(Run({ops::ReaderSerializeStateV2(root_, lines)}).status(),
              testing::StatusIs(absl::StatusCode::kUnimplemented, "Reader SerializeState"));
}

TEST_F(ReaderTest, ReadsWaitForWorkFromOtherSteps) {
  Output reader = ops::IdentityReaderV2(root_);
  Output q = Works({}, /*close=*/false);
  ops::ReaderReadV2 read(root_, reader, q);
  Output more = ops::Placeholder(root_, DT_STRING);
  Operation enqueue = ops::QueueEnqueueManyV2(root_, q, {more}).operation;
  TW_ASSERT_OK(Run(std::vector<Output>{}).status());
  std::vector<std::string> keys(2);
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {
    readers.emplace_back([&, i] {
      absl::StatusOr<std::vector<Tensor>> r = Run({read.key});
      keys[i] = r.ok() ? (*r)[0].data<std::string>()[0] : r.status().ToString();
    });
  }
  std::vector<Tensor> none;
  TW_ASSERT_OK(
      session_->Run({{more, Literal<std::string>({2}, {"p", "q"})}}, {}, {enqueue}, &none));
  for (std::thread& t : readers) t.join();
  EXPECT_THAT(keys, UnorderedElementsAre("p", "q"));
}

TEST_F(ReaderTest, AnAbortedReadPassesTheTurnOn) {
  Output reader = ops::IdentityReaderV2(root_);
  Output q = Works({}, /*close=*/false);
  ops::ReaderReadV2 read(root_, reader, q);
  RunOptions deadline;
  deadline.timeout_in_ms = 20;
  EXPECT_THAT(Run({read.key}, deadline).status(),
              testing::StatusIs(absl::StatusCode::kDeadlineExceeded, ""));
  Operation enqueue =
      ops::QueueEnqueueV2(root_, q, {ops::Const(root_, std::string("later"))}).operation;
  std::vector<Tensor> none;
  TW_ASSERT_OK(session_->Run({}, {}, {enqueue}, &none));
  EXPECT_EQ(ReadOnce(reader, read), "later=later [1,1]");
}

TEST_F(ReaderTest, BadQueuesAndAttrsAreErrors) {
  ops::ReaderReadV2 directory(root_, ops::TextLineReaderV2(root_), Works({dir_}));
  ops::ReaderReadV2 fixed_directory(root_, ops::FixedLengthRecordReaderV2(root_, 4), Works({dir_}));
  Output ints = ops::FIFOQueueV2(root_, {DT_INT32});
  setup_.push_back(ops::QueueEnqueueV2(root_, ints, {ops::Const(root_, 1)}).operation);
  ops::ReaderReadV2 read(root_, ops::IdentityReaderV2(root_), ints);
  EXPECT_THAT(Run({read.key}).status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                          "expected a queue of single strings"));
  Output zero = ops::FixedLengthRecordReaderV2(root_, 0);
  EXPECT_THAT(Run({zero}).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "record_bytes 0 > 0"));
  // TF reads a file of an unknown compression uncompressed, after a log line.
  Output brotli =
      ops::TFRecordReaderV2(root_, ops::TFRecordReaderV2::Attrs().CompressionType("BROTLI"));
  EXPECT_THAT(Run({brotli}).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "compression_type 'BROTLI' is none of \"\" (none), \"ZLIB\""));
  EXPECT_THAT(Run({directory.key}).status(),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition, dir_));
  EXPECT_THAT(Run({fixed_directory.key}).status(),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition, dir_));
  ops::ReaderReadUpToV2 negative(root_, ops::TextLineReaderV2(root_), Works({Path("b.txt")}),
                                 ops::Const(root_, int64_t{-1}));
  EXPECT_THAT(Run({negative.keys}).status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                               "num_records must be >= 0, not -1"));
}

}  // namespace
}  // namespace towerflow
