#include "fuzz/mutator.h"

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/record_io.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"

namespace towerflow {
namespace fuzz {
namespace {

// A Const (with a tensor attr) feeding an Identity.
GraphDef SmallGraph() {
  GraphDef g;
  const bool parsed = google::protobuf::TextFormat::ParseFromString(
      R"pb(
        node {
          name: "c"
          op: "Const"
          attr {
            key: "dtype"
            value { type: DT_INT32 }
          }
          attr {
            key: "value"
            value {
              tensor {
                dtype: DT_INT32
                tensor_shape { dim { size: 2 } }
                int_val: [ 2, 3 ]
              }
            }
          }
        }
        node {
          name: "y"
          op: "Identity"
          input: "c"
          attr {
            key: "T"
            value { type: DT_INT32 }
          }
        }
      )pb",
      &g);
  EXPECT_TRUE(parsed);
  return g;
}

TEST(ByteMutatorTest, TheSameSeedGivesTheSameMutantsWithinMaxLen) {
  const std::string in = "node { name: \"a\" op: \"Const\" }";
  ByteMutator a(7), b(7);
  std::set<std::string> distinct;
  for (int i = 0; i < 200; ++i) {
    const std::string ma = a.Mutate(in, {in}, 40);
    EXPECT_EQ(ma, b.Mutate(in, {in}, 40));
    EXPECT_LE(ma.size(), 40u);
    distinct.insert(ma);
  }
  EXPECT_GT(distinct.size(), 150u);
  EXPECT_FALSE(ByteMutator(1).MutateBytes("").empty());  // an empty piece grows
}

TEST(MutateProtoTest, BinaryMutantsParseAndDiffer) {
  const std::string in = SmallGraph().SerializeAsString();
  ByteMutator ctx(3);
  int parsed = 0;
  std::set<std::string> distinct;
  for (int i = 0; i < 500; ++i) {
    std::optional<std::string> out =
        MutateProto(in, GraphDef::default_instance(), ProtoFormat::kBinary, ctx);
    ASSERT_TRUE(out.has_value());
    GraphDef g;
    // Strings mutated as bytes may not be UTF-8 (proto3 refuses them): the
    // parser's own check, which the fuzzing reaches too.
    parsed += g.ParseFromString(*out);
    distinct.insert(*out);
  }
  EXPECT_GT(parsed, 400);
  EXPECT_GT(distinct.size(), 250u);
  EXPECT_FALSE(distinct.count(in));
}

TEST(MutateProtoTest, TextStaysTextAndGarbageIsRefused) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(SmallGraph(), &text);
  ByteMutator ctx(5);
  for (int i = 0; i < 100; ++i) {
    std::optional<std::string> out =
        MutateProto(text, GraphDef::default_instance(), ProtoFormat::kBinaryOrText, ctx);
    ASSERT_TRUE(out.has_value());
    GraphDef g;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(*out, &g)) << *out;
  }
  EXPECT_FALSE(MutateProto("node {", GraphDef::default_instance(), ProtoFormat::kBinaryOrText, ctx)
                   .has_value());
  EXPECT_FALSE(
      MutateProto(text, GraphDef::default_instance(), ProtoFormat::kBinary, ctx).has_value());
}

// Mutations reach deep fields: the Const's tensor inside the attr map
// changes while the nodes stay as they were, and a node's input is
// sometimes replaced by another string of the graph.
TEST(MutateMessageTest, ReachesMapValuesAndCopiesNames) {
  const GraphDef original = SmallGraph();
  ByteMutator ctx(11);
  int tensor_changed = 0, input_renamed = 0;
  // Many tries: which attr entry a site is varies with protobuf's map order
  // from run to run, and with it the random draws after it.
  for (int i = 0; i < 10000; ++i) {
    GraphDef g = original;
    ASSERT_TRUE(MutateMessage(&g, ctx));
    if (g.node_size() != 2 || g.node(0).name() != "c" || g.node(1).name() != "y") continue;
    const auto& attr = g.node(0).attr();
    const auto it = attr.find("value");
    if (it != attr.end() && it->second.has_tensor() &&
        it->second.tensor().SerializeAsString() !=
            original.node(0).attr().at("value").tensor().SerializeAsString()) {
      ++tensor_changed;
    }
    if (g.node(1).input_size() == 1 &&
        (g.node(1).input(0) == "y" || g.node(1).input(0) == "Const" ||
         g.node(1).input(0) == "Identity")) {
      ++input_renamed;
    }
  }
  EXPECT_GT(tensor_changed, 10);
  EXPECT_GT(input_renamed, 0);
}

TEST(RecordsTest, JoinIsWhatRecordWriterWritesAndSplitInvertsIt) {
  const std::vector<std::string> records = {"", "a", std::string(300, 'x')};
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/mutator_records");
  {
    absl::StatusOr<std::unique_ptr<RecordWriter>> w = RecordWriter::Open(path);
    ASSERT_TRUE(w.ok()) << w.status();
    for (const std::string& r : records) ASSERT_TRUE((*w)->WriteRecord(r).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string written(4096, '\0');
  written.resize(std::fread(written.data(), 1, written.size(), f));
  std::fclose(f);

  const std::string joined = JoinRecords(records);
  EXPECT_EQ(joined, written);
  EXPECT_EQ(joined.size(), 3 * 16 + 301u);
  EXPECT_EQ(SplitRecords(joined), records);
  EXPECT_FALSE(SplitRecords(joined.substr(0, joined.size() - 1)).has_value());
  EXPECT_FALSE(SplitRecords("short").has_value());
  EXPECT_EQ(SplitRecords(""), std::vector<std::string>{});
}

TEST(RecordsTest, MutantsKeepValidFramesAndChangeThePayloads) {
  const std::string in = JoinRecords({"first", "second", "third"});
  ByteMutator ctx(13);
  int count_changed = 0, payload_changed = 0;
  for (int i = 0; i < 300; ++i) {
    std::optional<std::string> out =
        MutateRecords(in, ctx, [&ctx](const std::string& p) { return ctx.MutateBytes(p); });
    ASSERT_TRUE(out.has_value());
    std::optional<std::vector<std::string>> records = SplitRecords(*out);
    ASSERT_TRUE(records.has_value());
    // Framed again with valid CRCs: the same bytes JoinRecords writes.
    EXPECT_EQ(JoinRecords(*records), *out);
    if (records->size() != 3) {
      ++count_changed;
    } else if ((*records)[0] != "first" || (*records)[1] != "second" || (*records)[2] != "third") {
      ++payload_changed;
    }
  }
  EXPECT_GT(count_changed, 30);
  EXPECT_GT(payload_changed, 100);
  EXPECT_FALSE(MutateRecords("garbage!", ctx, [](const std::string& p) { return p; }));
}

}  // namespace
}  // namespace fuzz
}  // namespace towerflow
