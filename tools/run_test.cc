// Feeds for `towerflow run` and `saved_model run`: NumPy .npy files, and
// serialized tf.Examples from JSON.
#include "tools/run.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/logging_ops.h"
#include "ops/gen/queue_ops.h"
#include "proto/example.pb.h"
#include "proto/meta_graph.pb.h"
#include "proto/queue_runner.pb.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "tools/saved_model_cli.h"

namespace towerflow {
namespace {

using testing::StatusIs;

// A version-1 .npy file as numpy writes it: the header padded with spaces
// and a newline to 64 bytes.
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data,
                const std::string& order = "False") {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

TEST(TensorFromNpyTest, ReadsWhatNumpyWrites) {
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor f,
      tools::TensorFromNpy(Npy("<f4", "(2, 2)", Bytes<float>({1, 2, 3, 4.5f})), DT_FLOAT));
  EXPECT_THAT(f, TensorIs<float>({2, 2}, {1, 2, 3, 4.5f}));
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor i, tools::TensorFromNpy(Npy("<i8", "(3,)", Bytes<int64_t>({-1, 0, 7})), DT_INT64));
  EXPECT_THAT(i, TensorIs<int64_t>({3}, {-1, 0, 7}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor s,
                          tools::TensorFromNpy(Npy("|u1", "()", std::string("\xff", 1)), DT_UINT8));
  EXPECT_THAT(s, TensorIs<uint8_t>({}, {255}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor e, tools::TensorFromNpy(Npy("<f8", "(0, 3)", ""), DT_DOUBLE));
  EXPECT_EQ(e.shape(), TensorShape({0, 3}));
}

// 16-bit floats are read and printed as numbers (the JSON of a half was
// "values": "" once).
TEST(TensorJsonTest, HalfAndBfloat16AreNumbers) {
  TW_ASSERT_OK_AND_ASSIGN(Tensor h, tools::TensorFromJson("[1.5, -0.1, 65504]", DT_HALF));
  EXPECT_THAT(h, TensorEq(Bits<half>({3}, {0x3e00, 0xae66, 0x7bff})));
  EXPECT_EQ(tools::TensorToJson(h),
            R"({"dtype":"half","shape":[3],"values":[1.5,-0.0999755859375,65504.0]})");
  TW_ASSERT_OK_AND_ASSIGN(Tensor b, tools::TensorFromJson("[[0.1], [3e38]]", DT_BFLOAT16));
  EXPECT_THAT(b, TensorEq(Bits<bfloat16>({2, 1}, {0x3dcd, 0x7f62})));
  EXPECT_EQ(tools::TensorToJson(b),
            R"({"dtype":"bfloat16","shape":[2,1],"values":[0.10009765625,3.00405527047391e+38]})");
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor n,
      tools::TensorFromNpy(Npy("<f2", "(2,)", Bytes<uint16_t>({0x3c00, 0xc000})), DT_HALF));
  EXPECT_THAT(n, TensorEq(Bits<half>({2}, {0x3c00, 0xc000})));
}

// Quantized types (QuantizeV2's output, quantize_weights' constants) are
// their integers both ways, as numpy shows TF's.
TEST(TensorJsonTest, QuantizedTypesAreTheirIntegers) {
  TW_ASSERT_OK_AND_ASSIGN(Tensor q, tools::TensorFromJson("[[0, 200], [255, 7]]", DT_QUINT8));
  EXPECT_EQ(q.dtype(), DT_QUINT8);
  EXPECT_EQ(tools::TensorToJson(q), R"({"dtype":"quint8","shape":[2,2],"values":[0,200,255,7]})");
  TW_ASSERT_OK_AND_ASSIGN(Tensor w, tools::TensorFromJson("[-2147483648, 5]", DT_QINT32));
  EXPECT_EQ(tools::TensorToJson(w), R"({"dtype":"qint32","shape":[2],"values":[-2147483648,5]})");
  EXPECT_FALSE(tools::TensorFromJson("[-1]", DT_QUINT8).ok());  // as uint8 would
}

// Complex numbers print as [real, imaginary] pairs (an FFT's output).
TEST(TensorJsonTest, ComplexNumbersArePairs) {
  EXPECT_EQ(tools::TensorToJson(Literal<complex64>({2}, {{1.5f, -2}, {0, 0.25f}})),
            R"({"dtype":"complex64","shape":[2],"values":[[1.5,-2.0],[0.0,0.25]]})");
  EXPECT_EQ(tools::TensorToJson(Literal<complex128>({1, 1}, {{std::nan(""), 1}})),
            R"({"dtype":"complex128","shape":[1,1],"values":[[NaN,1.0]]})");
}

// NaN and the infinities print as Python's json module writes them (not
// all as null) and read back, as tokens or strings; strings that only look
// like them stay strings.
TEST(TensorJsonTest, NonFiniteNumbersRoundTripAsPythonsTokens) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor t = Literal<float>({4}, {std::nanf(""), inf, -inf, 1.5f});
  const std::string json = tools::TensorToJson(t);
  EXPECT_EQ(json, R"({"dtype":"float","shape":[4],"values":[NaN,Infinity,-Infinity,1.5]})");
  TW_ASSERT_OK_AND_ASSIGN(Tensor back,
                          tools::TensorFromJson("[NaN, Infinity, -Infinity, 1.5]", DT_FLOAT));
  EXPECT_TRUE(std::isnan(back.data<float>()[0]));
  EXPECT_EQ(back.data<float>()[1], inf);
  EXPECT_EQ(back.data<float>()[2], -inf);
  TW_ASSERT_OK_AND_ASSIGN(Tensor quoted, tools::TensorFromJson(R"(["-Infinity", 2])", DT_DOUBLE));
  EXPECT_EQ(quoted.data<double>()[0], -std::numeric_limits<double>::infinity());
  EXPECT_THAT(tools::TensorFromJson("[NaN]", DT_INT32),
              StatusIs(absl::StatusCode::kInvalidArgument, "value 0 (NaN) does not fit int32"));
  TW_ASSERT_OK_AND_ASSIGN(Tensor words, tools::TensorFromJson(R"(["NaN", "a NaN"])", DT_STRING));
  EXPECT_EQ(words.data<std::string>()[1], "a NaN");
  EXPECT_EQ(tools::TensorToJson(words),
            R"({"dtype":"string","shape":[2],"values":["NaN","a NaN"]})");
}

TEST(TensorFromNpyTest, RefusesWhatItCannotFeedExactly) {
  const std::string four = Bytes<float>({1, 2, 3, 4});
  EXPECT_THAT(
      tools::TensorFromNpy(Npy("<f4", "(2, 2)", four), DT_DOUBLE),
      StatusIs(absl::StatusCode::kInvalidArgument, "holds float ('<f4'), the input is double"));
  EXPECT_THAT(
      tools::TensorFromNpy(Npy("<f4", "(3, 2)", four), DT_FLOAT),
      StatusIs(absl::StatusCode::kInvalidArgument, "needs 24 bytes of data, the file has 16"));
  EXPECT_THAT(tools::TensorFromNpy(Npy(">f4", "(4,)", four), DT_FLOAT),
              StatusIs(absl::StatusCode::kUnimplemented, "'>f4'"));
  EXPECT_THAT(tools::TensorFromNpy(Npy("<f4", "(2, 2)", four, "True"), DT_FLOAT),
              StatusIs(absl::StatusCode::kUnimplemented, "Fortran order"));
  EXPECT_THAT(tools::TensorFromNpy(Npy("<f4", "(-1,)", four), DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(tools::TensorFromNpy("{'descr': '<f4'}", DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a .npy file"));
  const std::string good = Npy("<f4", "(2, 2)", four);
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(tools::TensorFromNpy(good.substr(0, n), DT_FLOAT).ok()) << n;
  }
}

// --input_examples: TF's saved_model_cli JSON to serialized tf.Examples.
TEST(ExamplesFromJsonTest, BuildsTheExamplesTFWould) {
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor t, tools::ExamplesFromJson(
                    R"([{"x": [1.5, 2], "id": [7, 9223372036854775807], "s": ["a", ""]}, {}])"));
  ASSERT_EQ(t.shape(), TensorShape({2}));
  Example e;
  ASSERT_TRUE(e.ParseFromString(t.data<std::string>()[0]));
  const auto& f = e.features().feature();
  ASSERT_EQ(f.at("x").float_list().value_size(), 2);
  EXPECT_EQ(f.at("x").float_list().value(0), 1.5f);
  EXPECT_EQ(f.at("x").float_list().value(1), 2.0f);  // an integer in a float list
  ASSERT_EQ(f.at("id").int64_list().value_size(), 2);
  EXPECT_EQ(f.at("id").int64_list().value(1), INT64_MAX);
  EXPECT_EQ(f.at("s").bytes_list().value(1), "");
  ASSERT_TRUE(e.ParseFromString(t.data<std::string>()[1]));
  EXPECT_TRUE(e.features().feature().empty());

  EXPECT_THAT(tools::ExamplesFromJson("{\"x\": [1]}"),
              StatusIs(absl::StatusCode::kInvalidArgument, "a JSON list of objects"));
  EXPECT_THAT(tools::ExamplesFromJson("[[1]]"),
              StatusIs(absl::StatusCode::kInvalidArgument, "example 0 is not a JSON object"));
  EXPECT_THAT(tools::ExamplesFromJson(R"([{}, {"x": 1}])"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "example 1, feature 'x' is not a list of values"));
  EXPECT_THAT(tools::ExamplesFromJson(R"([{"x": [1, 2.5]}])"),
              StatusIs(absl::StatusCode::kInvalidArgument, "example 0, feature 'x' holds 2.5"));
  EXPECT_THAT(tools::ExamplesFromJson(R"([{"x": ["a", [1]]}])"),
              StatusIs(absl::StatusCode::kInvalidArgument, "holds [1]"));
  EXPECT_THAT(tools::ExamplesFromJson(R"([{"x": []}])"),
              StatusIs(absl::StatusCode::kInvalidArgument, "feature 'x' is empty"));
  EXPECT_THAT(tools::ExamplesFromJson(R"([{"x": [9223372036854775808]}])"),
              StatusIs(absl::StatusCode::kInvalidArgument, "does not fit an int64"));
}

// JSON feeds: integers exactly in range (no silent wrap-around), lists no
// deeper than a tensor's rank, whatever the input asks.
TEST(TensorFromJsonTest, RefusesWhatDoesNotFit) {
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor big, tools::TensorFromJson("[9223372036854775807, -9223372036854775808]", DT_INT64));
  EXPECT_THAT(big, TensorIs<int64_t>({2}, {INT64_MAX, INT64_MIN}));
  EXPECT_THAT(tools::TensorFromJson("[9223372036854775808]", DT_INT64),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "value 0 (9223372036854775808) does not fit int64"));
  EXPECT_THAT(tools::TensorFromJson("[9.3e18]", DT_INT64),
              StatusIs(absl::StatusCode::kInvalidArgument, "does not fit int64"));
  EXPECT_THAT(tools::TensorFromJson("[2147483648]", DT_INT32),
              StatusIs(absl::StatusCode::kInvalidArgument, "does not fit int32"));
  EXPECT_THAT(tools::TensorFromJson("[-1]", DT_UINT8),
              StatusIs(absl::StatusCode::kInvalidArgument, "does not fit uint8"));
  EXPECT_THAT(tools::TensorFromJson("[2.5]", DT_INT32),
              StatusIs(absl::StatusCode::kInvalidArgument, "does not fit int32"));
  TW_ASSERT_OK_AND_ASSIGN(Tensor whole, tools::TensorFromJson("[255, 3.0]", DT_UINT8));
  EXPECT_THAT(whole, TensorIs<uint8_t>({2}, {255, 3}));

  // 30,000 nested lists (which once overflowed the stack): a clear error.
  const std::string deep = std::string(30000, '[') + "1" + std::string(30000, ']');
  EXPECT_THAT(tools::TensorFromJson(deep, DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "lists nested deeper than the 254 dimensions a tensor can have"));
}

TEST(TensorFromJsonTest, FindsTheShapeAsTheListsClose) {
  TW_ASSERT_OK_AND_ASSIGN(Tensor scalar, tools::TensorFromJson("-7", DT_INT32));
  EXPECT_THAT(scalar, TensorIs<int32_t>({}, {-7}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor m, tools::TensorFromJson("[[[1],[2]],[[3],[4]]]", DT_INT64));
  EXPECT_THAT(m, TensorIs<int64_t>({2, 2, 1}, {1, 2, 3, 4}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor empty, tools::TensorFromJson("[[],[],[]]", DT_FLOAT));
  EXPECT_EQ(empty.shape(), TensorShape({3, 0}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor b, tools::TensorFromJson("[true, 0, 2]", DT_BOOL));
  EXPECT_THAT(b, TensorIs<bool>({3}, {true, false, true}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor u, tools::TensorFromJson("[4294967295]", DT_UINT32));
  EXPECT_THAT(u, TensorIs<uint32_t>({1}, {4294967295u}));

  for (const auto& [json, where] :
       std::vector<std::pair<std::string, std::string>>{{"[[1,2],[3]]", "values[1]"},
                                                        {"[[1,2],[3,4,5]]", "values[1]"},
                                                        {"[1,[2]]", "values[1]"},
                                                        {"[[1],2]", "values[1]"},
                                                        {"[[],[1]]", "values[1]"},
                                                        {"[[[1]],[2]]", "values[1][0]"}}) {
    EXPECT_THAT(tools::TensorFromJson(json, DT_FLOAT),
                StatusIs(absl::StatusCode::kInvalidArgument, "ragged list at " + where))
        << json;
  }
  EXPECT_THAT(tools::TensorFromJson("[1, {\"a\": 2}]", DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument, "value 1 is an object, not a float"));
  EXPECT_THAT(tools::TensorFromJson("[1, 2", DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument, "not JSON at byte"));
  EXPECT_THAT(tools::TensorFromJson("[null]", DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument, "value 0 (null) is not a number"));
  EXPECT_THAT(tools::TensorFromJson("[1]", DT_RESOURCE),
              StatusIs(absl::StatusCode::kInvalidArgument, "cannot feed JSON as resource"));
}

// Note [Feeds parsed as a stream]: the values count against
// max_tensor_bytes as they come, the text and the buffer against the host
// budget, and a feed file larger than the budget leaves room for is not read.
TEST(TensorFromJsonTest, ReadsWithinTheSessionsLimits) {
  const int64_t in_use = CpuAllocator()->GetStats()->bytes_in_use;
  std::string hundred = "[0";
  for (int i = 1; i < 100; ++i) hundred += "," + std::to_string(i);
  hundred += "]";
  const MemoryLimits ample{/*max_tensor_bytes=*/400, in_use + (int64_t{1} << 30)};
  TW_ASSERT_OK_AND_ASSIGN(Tensor t, tools::TensorFromJson(hundred, DT_FLOAT, ample));
  EXPECT_EQ(t.NumElements(), 100);
  EXPECT_EQ(t.data<float>()[99], 99.0f);
  EXPECT_THAT(
      tools::TensorFromJson(hundred, DT_DOUBLE, ample),
      StatusIs(absl::StatusCode::kResourceExhausted, "past the session's max_tensor_bytes of 400"));
  const MemoryLimits tight{int64_t{1} << 30, in_use + 1000};
  EXPECT_THAT(
      tools::TensorFromJson(hundred, DT_FLOAT, tight),
      StatusIs(absl::StatusCode::kResourceExhausted, "past the session's host memory budget of"));
  EXPECT_THAT(tools::TensorFromNpy(Npy("<f8", "(200,)", std::string(1600, '\0')), DT_DOUBLE, ample),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "shape [200] and type double: 1600 bytes, past the session's "
                       "max_tensor_bytes of 400"));

  const std::string dir = testing::MakeTempDir("feed_limits");
  std::ofstream(dir + "/big.json") << hundred;
  TW_ASSERT_OK_AND_ASSIGN(Tensor from_file,
                          tools::TensorFromJsonOrFile("@" + dir + "/big.json", DT_FLOAT, ample));
  EXPECT_EQ(from_file.NumElements(), 100);
  const MemoryLimits no_room{int64_t{1} << 30, CpuAllocator()->GetStats()->bytes_in_use + 100};
  EXPECT_THAT(tools::TensorFromJsonOrFile("@" + dir + "/big.json", DT_FLOAT, no_room),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "big.json' has " + std::to_string(hundred.size()) +
                           " bytes, more than the 100 its reader may hold"));
}

TEST(ParseDeviceCountTest, ReadsTypeEqualsCount) {
  TW_ASSERT_OK_AND_ASSIGN(auto counts, tools::ParseDeviceCount({"CPU=3", "GPU=0"}));
  EXPECT_EQ(counts, (std::map<std::string, int>{{"CPU", 3}, {"GPU", 0}}));
  for (const char* bad : {"CPU", "CPU=", "=2", "CPU=two", "CPU=-1", "CPU=1=2"}) {
    EXPECT_THAT(tools::ParseDeviceCount({bad}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         std::string("--device_count '") + bad + "' is not TYPE=N"));
  }
}

// What `towerflow run` prints, returned or streamed alike: fetches in order
// (JSON: one object in key order), non-finite floats as Python's tokens, and
// a fetch past max_output_elements refused by name.
TEST(RunGraphTest, PrintsOrStreamsTheFetchesAndRefusesHugeOnes) {
  const std::string dir = testing::MakeTempDir("run_graph");
  const std::string graph = dir + "/g.pbtxt";
  {
    std::ofstream(graph) << R"pb(
      node {
        name: "b"
        op: "Const"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
        attr {
          key: "value"
          value {
            tensor {
              dtype: DT_FLOAT
              tensor_shape { dim { size: 3 } }
              float_val: [ 0.5, nan, -inf ]
            }
          }
        }
      }
      node {
        name: "a"
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
              tensor_shape {
                dim { size: 2 }
                dim { size: 2 }
              }
              int_val: [ 1, 2, 3, 4 ]
            }
          }
        }
      }
    )pb";
  }
  tools::RunCommand command;
  command.graph_path = graph;
  command.fetches = {"b", "a"};
  TW_ASSERT_OK_AND_ASSIGN(std::string text, tools::RunGraph(command));
  EXPECT_EQ(text, "b: float [3] [0.5,NaN,-Infinity]\na: int32 [2,2] [1,2,3,4]\n");
  std::ostringstream streamed;
  command.out = &streamed;
  TW_ASSERT_OK_AND_ASSIGN(std::string returned, tools::RunGraph(command));
  EXPECT_EQ(returned, "");
  EXPECT_EQ(streamed.str(), text);
  command.out = nullptr;
  command.json = true;
  TW_ASSERT_OK_AND_ASSIGN(text, tools::RunGraph(command));
  EXPECT_EQ(text,
            "{\"a\":{\"dtype\":\"int32\",\"shape\":[2,2],\"values\":[1,2,3,4]},"
            "\"b\":{\"dtype\":\"float\",\"shape\":[3],\"values\":[0.5,NaN,-Infinity]}}\n");
  command.max_output_elements = 3;
  EXPECT_THAT(tools::RunGraph(command),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "fetch 'a' has 4 elements (shape [2,2]), past --max_output_elements=3; "
                       "raise the flag to print it"));
}

TEST(RunGraphTest, NeedsSomethingToRun) {
  tools::RunCommand command;
  command.graph_path = "unread.pbtxt";
  EXPECT_THAT(tools::RunGraph(command), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 "run needs at least one --fetch or --target"));
}

// A TF 1 input pipeline's shape: a queue runner moves the elements of a
// source queue (filled and closed by the targets) into "q", and the fetch
// dequeues a batch from "q".
class RunGraphQueueRunnersTest : public ::testing::Test {
 protected:
  // Writes the pipeline as a MetaGraphDef whose runner's enqueue op first
  // checks `ok` (an Assert), and returns its path.
  std::string WritePipeline(bool ok, bool with_runners = true) {
    Scope root = Scope::NewRootScope();
    const auto scalar = ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})});
    const Output q = ops::FIFOQueueV2(root.WithOpName("q"), {DT_INT64}, scalar.Capacity(2));
    const Output src = ops::FIFOQueueV2(root.WithOpName("src"), {DT_INT64}, scalar);
    ops::QueueEnqueueManyV2(
        root.WithOpName("fill_src"), src,
        {ops::Const(root, {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}})});
    ops::QueueCloseV2(root.WithOpName("close_src"), src);
    const ops::Assert check(root.WithOpName("check"), ops::Const(root, ok),
                            {ops::Const(root, std::string("bad record"))});
    ops::QueueEnqueueV2(root.WithOpName("enqueue").WithControlDependencies({check.operation}), q,
                        {ops::QueueDequeueV2(root.WithOpName("take"), src, {DT_INT64})[0]});
    ops::QueueCloseV2(root.WithOpName("close"), q);
    ops::QueueCloseV2(root.WithOpName("cancel"), q, ops::QueueCloseV2::CancelPendingEnqueues(true));
    ops::QueueDequeueManyV2(root.WithOpName("batch"), q, ops::Const(root, 4), {DT_INT64});
    ops::QueueDequeueManyV2(root.WithOpName("too_big"), q, ops::Const(root, 6), {DT_INT64});
    MetaGraphDef meta;
    EXPECT_TRUE(root.ToGraphDef(meta.mutable_graph_def()).ok());
    if (with_runners) {
      QueueRunnerDef runner;
      runner.set_queue_name("q");
      runner.add_enqueue_op_name("enqueue");
      runner.set_close_op_name("close");
      runner.set_cancel_op_name("cancel");
      (*meta.mutable_collection_def())["queue_runners"].mutable_bytes_list()->add_value(
          runner.SerializeAsString());
    }
    const std::string path = testing::MakeTempDir("run_queue_runners") + "/pipeline.meta";
    std::ofstream(path, std::ios::binary) << meta.SerializeAsString();
    return path;
  }

  tools::RunCommand Command(const std::string& path, const std::string& fetch) {
    tools::RunCommand command;
    command.graph_path = path;
    command.targets = {"fill_src", "close_src"};
    command.fetches = {fetch};
    command.queue_runners = true;
    return command;
  }
};

TEST_F(RunGraphQueueRunnersTest, TheRunnersFillTheQueueTheFetchDequeues) {
  const std::string path = WritePipeline(true);
  TW_ASSERT_OK_AND_ASSIGN(std::string text, tools::RunGraph(Command(path, "batch")));
  EXPECT_EQ(text, "batch: int64 [4] [1,2,3,4]\n");
  // The source's end closed "q" (the runner's close op): a batch larger than
  // what is left is the end of the data, as in TF.
  EXPECT_THAT(tools::RunGraph(Command(path, "too_big")),
              StatusIs(absl::StatusCode::kOutOfRange, "closed"));
}

TEST_F(RunGraphQueueRunnersTest, ARunnersFailureIsTheCommandsError) {
  // The runner's enqueue fails: its cancel op closes "q", so the fetch ends
  // (OutOfRange) instead of waiting, and the command reports why.
  EXPECT_THAT(
      tools::RunGraph(Command(WritePipeline(false), "batch")),
      StatusIs(absl::StatusCode::kInvalidArgument, "queue runner of 'q': running 'enqueue': "));
}

TEST_F(RunGraphQueueRunnersTest, NeedsAMetaGraphWithRunners) {
  EXPECT_THAT(tools::RunGraph(Command(WritePipeline(true, false), "batch")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "has no queue runners (its collection 'queue_runners' is empty or absent)"));
  tools::RunCommand graph_def = Command("g.pbtxt", "batch");
  EXPECT_THAT(tools::RunGraph(graph_def),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--queue_runners needs a MetaGraphDef (a .meta file) for its queue runners; "
                       "g.pbtxt is read as a GraphDef"));
  EXPECT_TRUE(tools::IsMetaGraphPath("dir/model.ckpt-200.meta"));
  EXPECT_TRUE(tools::IsMetaGraphPath("graph.meta.pbtxt"));
  EXPECT_FALSE(tools::IsMetaGraphPath("dir.meta/graph.pb"));
}

}  // namespace
}  // namespace towerflow
