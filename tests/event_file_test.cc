// TensorBoard event files written by TensorFlow 1.7/1.8 read back through
// Towerflow's TFRecord reader and Event/GraphDef/MetaGraphDef protos: every
// checksum holds, and the graph in the events equals the extracted fixture.
#include <string>
#include <vector>

#include "core/proto_io.h"
#include "core/record_io.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "proto/event.pb.h"
#include "proto/meta_graph.pb.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

std::vector<Event> ReadEvents(const std::string& path) {
  std::vector<Event> events;
  absl::StatusOr<std::unique_ptr<RecordReader>> reader = RecordReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return events;
  std::string record;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->ReadRecord(&record);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    Event event;
    EXPECT_TRUE(ParseBinaryProto(record, &event).ok());
    events.push_back(event);
  }
  return events;
}

TEST(EventFileTest, PartitionEventsHoldTheGraphAndMetaGraph) {
  std::string events_path, graph_path, meta_path;
  TW_SKIP_WITHOUT_REFERENCE(events_path,
                            "tf/events/events.out.tfevents.1525149583.jintao-VirtualBox");
  TW_SKIP_WITHOUT_REFERENCE(graph_path, "tf/graphs/mnist_partition_graph.pb");
  TW_SKIP_WITHOUT_REFERENCE(meta_path, "tf/graphs/mnist_partition.meta");
  const std::vector<Event> events = ReadEvents(events_path);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GT(events[0].wall_time(), 1.5e9);

  ASSERT_EQ(events[1].what_case(), Event::kGraphDef);
  GraphDef from_events;
  TW_ASSERT_OK(ParseBinaryProto(events[1].graph_def(), &from_events));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef fixture, ReadGraphDef(graph_path));
  EXPECT_EQ(SerializeDeterministic(from_events), SerializeDeterministic(fixture));

  ASSERT_EQ(events[2].what_case(), Event::kMetaGraphDef);
  MetaGraphDef meta;
  TW_ASSERT_OK(ParseBinaryProto(events[2].meta_graph_def(), &meta));
  TW_ASSERT_OK_AND_ASSIGN(MetaGraphDef meta_fixture, ReadMetaGraphDef(meta_path));
  EXPECT_EQ(SerializeDeterministic(meta), SerializeDeterministic(meta_fixture));
  EXPECT_EQ(meta.meta_info_def().tensorflow_version(), "1.7.0");
}

TEST(EventFileTest, LogEventsHoldAnImportableGraph) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/events/events.out.tfevents.1524890698.jintao-VirtualBox");
  const std::vector<Event> events = ReadEvents(path);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  int graphs = 0;
  for (const Event& e : events) {
    if (e.what_case() != Event::kGraphDef) continue;
    ++graphs;
    GraphDef def;
    TW_ASSERT_OK(ParseBinaryProto(e.graph_def(), &def));
    Graph graph;
    TW_EXPECT_OK(ImportGraphDef(def, &graph));
    EXPECT_GT(graph.num_nodes(), 0);
  }
  EXPECT_EQ(graphs, 1);
}

}  // namespace
}  // namespace towerflow
