// TF 2's summary writers in a graph, through a session: the events file
// they write, read back, against what TF 2.21 writes for the same ops
// (tf.raw_ops in a tf.compat.v1 session, read with summary_iterator).
#include <dirent.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/record_io.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/logging_ops.h"
#include "proto/event.pb.h"
#include "runtime/client_session.h"
#include "testing/files.h"
#include "testing/status_matchers.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;
using ::towerflow::testing::StatusIs;

// The files in `dir`.
std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

// The events of `path`.
std::vector<Event> Events(const std::string& path) {
  std::vector<Event> events;
  absl::StatusOr<std::unique_ptr<RecordReader>> reader = RecordReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return events;
  std::string record;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->ReadRecord(&record);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    events.emplace_back();
    EXPECT_TRUE(events.back().ParseFromString(record));
  }
  return events;
}

class SummaryWriterTest : public ::testing::Test {
 protected:
  absl::Status Run(const std::vector<Operation>& targets) {
    if (!session_) session_.emplace(root_);
    std::vector<Tensor> out;
    return session_->Run({}, {}, targets, &out);
  }

  Scope root_ = Scope::NewRootScope();
  std::optional<ClientSession> session_;
  // The writer makes the directory (a fresh one per test).
  const std::string logdir_ =
      testing::MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
      "/logs";
  const Output writer_ = ops::SummaryWriter(root_, ops::SummaryWriter::SharedName("w"));
  const Output step_ = ops::Const(root_, int64_t{3});
};

TEST_F(SummaryWriterTest, WritesTensorFlowsEvents) {
  // Nothing is written until more than max_queue (2) events wait, or a
  // flush (flush_millis is 24 days).
  Operation create = ops::CreateSummaryFileWriter(
                         root_, writer_, ops::Const(root_, logdir_), ops::Const(root_, 2),
                         ops::Const(root_, 2147483647), ops::Const(root_, std::string(".v2")))
                         .operation;
  Operation scalar =
      ops::WriteScalarSummary(root_, writer_, step_, ops::Const(root_, std::string("loss")),
                              ops::Const(root_, 0.5f))
          .operation;
  Operation tensor =
      ops::WriteSummary(root_, writer_, step_, ops::Const(root_, {1.0f, 2.0f}),
                        ops::Const(root_, std::string("t")), ops::Const(root_, std::string("")))
          .operation;
  Operation histogram =
      ops::WriteHistogramSummary(root_, writer_, step_, ops::Const(root_, std::string("h")),
                                 ops::Const(root_, {1.0f, 2.0f, 2.5f}))
          .operation;
  Tensor ones(DT_FLOAT, TensorShape({2, 2, 2, 3}));
  for (int i = 0; i < ones.NumElements(); ++i) ones.data<float>()[i] = 1;
  Tensor bad_color = Literal<uint8_t>({4}, {255, 0, 0, 255});
  Operation image = ops::WriteImageSummary(
                        root_, writer_, step_, ops::Const(root_, std::string("img")),
                        ops::Const(root_, ones.AsProto()), ops::Const(root_, bad_color.AsProto()),
                        ops::WriteImageSummary::MaxImages(1))
                        .operation;
  Operation flush = ops::FlushSummaryWriter(root_, writer_).operation;
  Operation close = ops::CloseSummaryWriter(root_, writer_).operation;

  TW_ASSERT_OK(Run({create}));
  TW_ASSERT_OK(Run({create}));  // the writer exists: no second file
  const std::vector<std::string> files = Files(logdir_);
  ASSERT_THAT(files, SizeIs(1));
  EXPECT_TRUE(absl::StartsWith(files[0], "events.out.tfevents.")) << files[0];
  EXPECT_TRUE(absl::EndsWith(files[0], ".v2")) << files[0];
  const std::string path = logdir_ + "/" + files[0];
  TW_ASSERT_OK(Run({scalar}));
  TW_ASSERT_OK(Run({tensor}));
  EXPECT_THAT(Events(path), SizeIs(1));  // the file version only: two wait
  TW_ASSERT_OK(Run({histogram}));        // a third: all go
  EXPECT_THAT(Events(path), SizeIs(4));
  TW_ASSERT_OK(Run({image}));
  TW_ASSERT_OK(Run({flush}));
  TW_ASSERT_OK(Run({close}));
  EXPECT_THAT(Run({scalar}), StatusIs(absl::StatusCode::kNotFound, "summary writer 'w'"));

  const std::vector<Event> events = Events(path);
  ASSERT_THAT(events, SizeIs(5));
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_EQ(events[i].step(), 3);
    EXPECT_GE(events[i].wall_time(), events[0].wall_time());
    ASSERT_THAT(events[i].summary().value(), SizeIs(1));
  }
  const Summary::Value& loss = events[1].summary().value(0);
  EXPECT_EQ(loss.tag(), "loss");
  EXPECT_EQ(loss.simple_value(), 0.5f);
  const Summary::Value& t = events[2].summary().value(0);
  EXPECT_EQ(t.tag(), "t");
  EXPECT_EQ(t.tensor().dtype(), DT_FLOAT);
  EXPECT_EQ(t.tensor().tensor_content(), std::string("\000\000\200?\000\000\000@", 8));
  const HistogramProto& h = events[3].summary().value(0).histo();
  EXPECT_EQ(events[3].summary().value(0).tag(), "h");
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 2.5);
  EXPECT_EQ(h.num(), 3);
  EXPECT_EQ(h.sum(), 5.5);
  EXPECT_EQ(h.sum_squares(), 11.25);
  EXPECT_THAT(
      h.bucket_limit(),
      ElementsAre(0.917246389039776, 1.0089710279437536, 1.9661990955585713, 2.1628190051144287,
                  2.3791009056258718, 2.6170109961884593, 1.7976931348623157e+308));
  EXPECT_THAT(h.bucket(), ElementsAre(0, 1, 0, 1, 0, 1, 0));
  const Summary::Value& img = events[4].summary().value(0);
  EXPECT_EQ(img.tag(), "img/image");
  EXPECT_EQ(img.image().height(), 2);
  EXPECT_EQ(img.image().width(), 2);
  EXPECT_EQ(img.image().colorspace(), 3);
  EXPECT_EQ(img.image().encoded_image_string(),
            std::string("\211PNG\r\n\032\n\000\000\000\rIHDR\000\000\000\002\000\000\000\002\010"
                        "\002\000\000\000\375\324\232s\000\000\000\026IDAT\010\231c\374\377\377?"
                        "\003\003\003\023\003\003\003\003\003\003\000$\006\003\001\2320\242\373"
                        "\000\000\000\000IEND\256B`\202",
                        79));
}

TEST_F(SummaryWriterTest, RawProtosGraphsAndEvents) {
  Summary raw;
  raw.add_value()->set_tag("raw");
  raw.mutable_value(0)->set_simple_value(2);
  Event imported;
  imported.set_step(9);
  imported.set_wall_time(123.5);  // kept, as TF's ImportEvent keeps it
  imported.set_file_version("imported");
  GraphDef graph;
  graph.add_node()->set_name("n");
  Operation create = ops::CreateSummaryFileWriter(root_, writer_, ops::Const(root_, logdir_),
                                                  ops::Const(root_, 10), ops::Const(root_, 0),
                                                  ops::Const(root_, std::string("")))
                         .operation;
  Operation raws = ops::WriteRawProtoSummary(
                       root_, writer_, step_,
                       ops::Const(root_, {raw.SerializeAsString(), raw.SerializeAsString()}))
                       .operation;
  Operation g =
      ops::WriteGraphSummary(root_, writer_, step_, ops::Const(root_, graph.SerializeAsString()))
          .operation;
  Operation event =
      ops::ImportEvent(root_, writer_, ops::Const(root_, imported.SerializeAsString())).operation;
  Operation bad =
      ops::WriteRawProtoSummary(root_, writer_, step_, ops::Const(root_, std::string("\xff", 1)))
          .operation;
  Operation close = ops::CloseSummaryWriter(root_, writer_).operation;
  TW_ASSERT_OK(Run({create}));
  TW_ASSERT_OK(Run({raws}));
  TW_ASSERT_OK(Run({g}));
  TW_ASSERT_OK(Run({event}));
  EXPECT_THAT(Run({bad}), StatusIs(absl::StatusCode::kInvalidArgument, "Bad Summary proto"));
  TW_ASSERT_OK(Run({close}));
  const std::vector<std::string> files = Files(logdir_);
  ASSERT_THAT(files, SizeIs(1));
  const std::vector<Event> events = Events(logdir_ + "/" + files[0]);
  ASSERT_THAT(events, SizeIs(5));
  EXPECT_EQ(events[1].summary().value(0).tag(), "raw");
  EXPECT_EQ(events[2].summary().value(0).simple_value(), 2);
  GraphDef written;
  ASSERT_TRUE(written.ParseFromString(events[3].graph_def()));
  EXPECT_EQ(written.node(0).name(), "n");
  EXPECT_EQ(events[4].file_version(), "imported");
  EXPECT_EQ(events[4].step(), 9);
  EXPECT_EQ(events[4].wall_time(), 123.5);
}

TEST_F(SummaryWriterTest, WhatIsQueuedIsWrittenWhenTheSessionEnds) {
  Operation create = ops::CreateSummaryFileWriter(
                         root_, writer_, ops::Const(root_, logdir_), ops::Const(root_, 10),
                         ops::Const(root_, 2147483647), ops::Const(root_, std::string("")))
                         .operation;
  Operation scalar =
      ops::WriteScalarSummary(root_, writer_, step_, ops::Const(root_, std::string("loss")),
                              ops::Const(root_, 0.25))
          .operation;
  TW_ASSERT_OK(Run({create}));
  TW_ASSERT_OK(Run({scalar}));
  const std::vector<std::string> files = Files(logdir_);
  ASSERT_THAT(files, SizeIs(1));
  EXPECT_THAT(Events(logdir_ + "/" + files[0]), SizeIs(1));  // queued
  session_.reset();  // the session's devices, and their writer, go
  const std::vector<Event> events = Events(logdir_ + "/" + files[0]);
  ASSERT_THAT(events, SizeIs(2));
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 0.25f);
}

TEST_F(SummaryWriterTest, AWriteWithoutAWriterIsNotFound) {
  Operation scalar =
      ops::WriteScalarSummary(root_, writer_, step_, ops::Const(root_, std::string("loss")),
                              ops::Const(root_, {0.5f, 1.0f}))
          .operation;
  EXPECT_THAT(Run({scalar}), StatusIs(absl::StatusCode::kNotFound, "does not exist"));
}

}  // namespace
}  // namespace towerflow
