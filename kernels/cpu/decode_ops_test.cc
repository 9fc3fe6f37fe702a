// DecodeRaw, DecodePaddedRaw and DecodeCSV (decode_ops.cc), DecodeCompressed
// and DecodeJSONExample (decode_compressed_ops.cc) against TensorFlow 2.21's
// values and messages (tf.raw_ops on these inputs).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "proto/example.pb.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

Tensor Strings(const TensorShape& shape, std::vector<std::string> v) {
  return Literal<std::string>(shape, v);
}

TEST(DecodeRawTest, BytesAsNumbersInEitherOrder) {
  KernelRunner f("DecodeRaw");
  f.Attr("out_type", DT_FLOAT);
  EXPECT_THAT(RunOk(f, {Strings({2}, {std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8),
                                      std::string("\x00\x00\x40\x40\x00\x00\x80\x40", 8)})}),
              TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  KernelRunner be("DecodeRaw");
  be.Attr("out_type", DT_INT16).Attr("little_endian", false);
  EXPECT_THAT(RunOk(be, {Strings({1, 1}, {"\x01\x02\x03\x04"})}),
              TensorIs<int16_t>({1, 1, 2}, {258, 772}));
  // A complex number's parts swap one by one: TF's (1+2j) either way.
  KernelRunner c("DecodeRaw");
  c.Attr("out_type", DT_COMPLEX64).Attr("little_endian", false);
  EXPECT_THAT(RunOk(c, {Strings({1}, {std::string("\x3f\x80\x00\x00\x40\x00\x00\x00", 8)})}),
              TensorIs<complex64>({1, 1}, {{1, 2}}));
  KernelRunner b("DecodeRaw");
  b.Attr("out_type", DT_BOOL);
  EXPECT_THAT(RunOk(b, {Strings({}, {std::string("\x00\x01\x02", 3)})}),
              TensorIs<bool>({3}, {false, true, true}));
  EXPECT_THAT(RunOk(f, {Strings({0, 3}, {})}), TensorIs<float>({0, 3, 0}, {}));
  EXPECT_THAT(f.Run({Strings({1}, {"abcde"})}),
              StatusIs(kInvalid,
                       "Input to DecodeRaw has length 5 that is not a multiple of 4, the size of "
                       "float"));
  EXPECT_THAT(f.Run({Strings({2}, {"abcd", "abcdabcd"})}),
              StatusIs(kInvalid,
                       "DecodeRaw requires input strings to all be the same size, but element 1 "
                       "has size 4 != 8"));
}

TEST(DecodePaddedRawTest, PadsAndCutsToFixedLength) {
  KernelRunner r("DecodePaddedRaw");
  r.Attr("out_type", DT_INT16);
  EXPECT_THAT(RunOk(r, {Strings({2}, {std::string("\x01\x00\x02", 3),
                                      std::string("\x03\x00\x04\x00\x05\x00", 6)}),
                        Scalar<int32_t>(4)}),
              TensorIs<int16_t>({2, 2}, {1, 2, 3, 4}));
  KernelRunner be("DecodePaddedRaw");
  be.Attr("out_type", DT_INT16).Attr("little_endian", false);
  EXPECT_THAT(RunOk(be, {Strings({1}, {std::string("\x01\x00\x02", 3)}), Scalar<int32_t>(4)}),
              TensorIs<int16_t>({1, 2}, {256, 512}));
  EXPECT_THAT(
      r.Run({Strings({1}, {"abc"}), Scalar<int32_t>(3)}),
      StatusIs(kInvalid, "fixed_length (3) must be a multiple of the size of out_type (2)"));
  EXPECT_THAT(r.Run({Strings({1}, {"abc"}), Scalar<int32_t>(-2)}),
              StatusIs(kInvalid, "fixed_length (-2) must be greater than zero."));
  EXPECT_THAT(r.Run({Strings({1}, {"abc"}), Literal<int32_t>({1}, {2})}),
              StatusIs(kInvalid, "k must be scalar, got shape [1]"));
}

// Columns float, int32, string, double, int64 with defaults 0.5, 7, "x",
// 1.5, 9.
absl::StatusOr<std::vector<Tensor>> Csv(
    const Tensor& records, const std::vector<std::pair<std::string, AttrValue>>& attrs = {}) {
  KernelRunner r("DecodeCSV");
  for (const auto& [name, value] : attrs) r.Attr(name, value);
  return r.Run({records, Literal<float>({1}, {0.5f}), Literal<int32_t>({1}, {7}),
                Strings({1}, {"x"}), Literal<double>({1}, {1.5}), Literal<int64_t>({1}, {9})});
}

AttrValue Attr(const std::string& s) {
  AttrValue a;
  SetAttrValue(s, &a);
  return a;
}

TEST(DecodeCsvTest, FieldsDefaultsAndQuotes) {
  const auto out = Csv(Strings({3}, {"1.5,2,abc,3.25,40", ",,,,", " 2 , 3 ,  s ,1e3,-5"}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({3}, {1.5f, 0.5f, 2}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({3}, {2, 7, 3}));
  EXPECT_THAT((*out)[2], TensorIs<std::string>({3}, {"abc", "x", "  s "}));
  EXPECT_THAT((*out)[3], TensorIs<double>({3}, {3.25, 1.5, 1000}));
  EXPECT_THAT((*out)[4], TensorIs<int64_t>({3}, {40, 9, -5}));
  const auto quoted = Csv(Strings({1}, {"\"1.5\",\"2\",\"a,b\"\"c\",3,4"}));
  ASSERT_TRUE(quoted.ok()) << quoted.status();
  EXPECT_THAT((*quoted)[2], TensorIs<std::string>({1}, {"a,b\"c"}));
  const auto na =
      Csv(Strings({1}, {"NA|2|NA|3|4"}), {{"na_value", Attr("NA")}, {"field_delim", Attr("|")}});
  ASSERT_TRUE(na.ok()) << na.status();
  EXPECT_THAT((*na)[0], TensorIs<float>({1}, {0.5f}));
  EXPECT_THAT((*na)[2], TensorIs<std::string>({1}, {"x"}));
  // inf, nan, signs, overflow to inf, leading zeros: safe_strto*'s syntax.
  const auto numbers = Csv(Strings({1}, {"1e40,+2,x,-nan,007"}));
  ASSERT_TRUE(numbers.ok()) << numbers.status();
  EXPECT_TRUE(std::isinf((*numbers)[0].data<float>()[0]));
  EXPECT_TRUE(std::isnan((*numbers)[3].data<double>()[0]));
  EXPECT_THAT((*numbers)[4], TensorIs<int64_t>({1}, {7}));
}

TEST(DecodeCsvTest, SelectedColumns) {
  KernelRunner r("DecodeCSV");
  AttrValue cols;
  SetAttrValue(std::vector<int64_t>{1, 4}, &cols);
  r.Attr("select_cols", cols);
  const auto out =
      r.Run({Strings({2}, {"1,2,3,4,5,6", "a,b,c,d,,f"}), Strings({0}, {}), Strings({1}, {"-"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<std::string>({2}, {"2", "b"}));
  EXPECT_THAT((*out)[1], TensorIs<std::string>({2}, {"5", "-"}));
}

TEST(DecodeCsvTest, BadRecordsHaveTensorFlowsMessages) {
  EXPECT_THAT(Csv(Strings({1}, {"1,2,x,3"})),
              StatusIs(kInvalid, "Expect 5 fields but have 4 in record 0"));
  EXPECT_THAT(Csv(Strings({2}, {"1,2,x,3,4", "1,2.5,x,3,4"})),
              StatusIs(kInvalid, "Field 1 in record 1 is not a valid int32: 2.5"));
  EXPECT_THAT(Csv(Strings({1}, {"1,3000000000,x,3,4"})),
              StatusIs(kInvalid, "Field 1 in record 0 is not a valid int32: 3000000000"));
  EXPECT_THAT(Csv(Strings({1}, {"1,2,\"x\"y,3,4"})),
              StatusIs(kInvalid, "Quote inside a string has to be escaped by another quote"));
  EXPECT_THAT(Csv(Strings({1}, {"1,2,\"xy,3,4"})),
              StatusIs(kInvalid, "Quoted field has to end with quote followed by delim or end"));
  EXPECT_THAT(Csv(Strings({1}, {"1,2,x\"y,3,4"})),
              StatusIs(kInvalid, "Unquoted fields cannot have quotes/CRLFs inside"));
  EXPECT_THAT(Csv(Strings({1}, {""})),
              StatusIs(kInvalid, "Expect 5 fields but have 0 in record 0"));
  KernelRunner required("DecodeCSV");
  EXPECT_THAT(required.Run({Strings({1}, {",2"}), Literal<float>({0}, {}), Scalar<int32_t>(3)}),
              StatusIs(kInvalid, "Field 0 is required but missing in record 0!"));
}

std::vector<std::string> Decompress(const std::string& type, std::vector<std::string> in,
                                    absl::Status* status = nullptr) {
  KernelRunner k("DecodeCompressed");
  k.Attr("compression_type", type);
  absl::StatusOr<std::vector<Tensor>> out = k.Run({Strings({static_cast<int64_t>(in.size())}, in)});
  if (status != nullptr) *status = out.status();
  return out.ok() ? Values<std::string>((*out)[0]) : std::vector<std::string>{};
}

// zlib.compress(b"hello world"), gzip.compress(b"hello gzip", mtime=0) and
// zlib.compress(b""): TF's outputs, and its handling of the edges: an empty
// string is empty, bytes after the stream's end are ignored.
TEST(DecodeCompressedTest, InflatesAsTensorFlow) {
  const std::string zlib = absl::HexStringToBytes("789ccb48cdc9c95728cf2fca4901001a0b045d");
  const std::string gzip =
      absl::HexStringToBytes("1f8b0800000000000203cb48cdc9c95748afca2c0000196ad2df0a000000");
  const std::string empty = absl::HexStringToBytes("789c030000000001");
  EXPECT_EQ(Decompress("ZLIB", {zlib, empty, "", zlib + "extra", zlib + zlib}),
            (std::vector<std::string>{"hello world", "", "", "hello world", "hello world"}));
  EXPECT_EQ(Decompress("GZIP", {gzip}), std::vector<std::string>{"hello gzip"});
  EXPECT_EQ(Decompress("", {"abc"}), std::vector<std::string>{"abc"});
  KernelRunner matrix("DecodeCompressed");
  matrix.Attr("compression_type", "ZLIB");
  EXPECT_EQ(Values<std::string>(RunOk(matrix, {Strings({1, 2}, {zlib, zlib})})),
            (std::vector<std::string>{"hello world", "hello world"}));

  absl::Status status;
  Decompress("ZLIB", {"abc"}, &status);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss,
                               "inflate() failed with error -3: incorrect header check"));
  Decompress("ZLIB", {gzip}, &status);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss, "incorrect header check"));
  // TF returns "he" for a stream cut short; Towerflow says so.
  Decompress("ZLIB", {zlib.substr(0, 5)}, &status);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss,
                               "the ZLIB stream ends after 5 bytes, before its end marker"));
  Decompress("BZ2", {zlib}, &status);
  EXPECT_THAT(status,
              StatusIs(kInvalid, "Only ZLIB, ZSTD, GZIP or NONE are supported compressions"));
}

// tf.io.decode_json_example: TF's bytes for this Example (int64s as strings
// or numbers, bytes as base64) and its message prefix for bad JSON.
TEST(DecodeJsonExampleTest, SerializesAsTensorFlow) {
  KernelRunner k("DecodeJSONExample");
  const std::string json =
      R"({"features": {"feature": {"a": {"int64List": {"value": ["1", 2]}}, )"
      R"("b": {"floatList": {"value": [1.5]}}, "c": {"bytesList": {"value": ["YWJj"]}}}}})";
  const std::vector<std::string> out =
      Values<std::string>(RunOk(k, {Strings({1, 2}, {json, "{}"})}));
  ASSERT_EQ(out.size(), 2u);
  // TF's bytes are {a: int64 [1, 2], b: float [1.5], c: bytes ["abc"]};
  // map entries serialize in no fixed order, so compare the features.
  Example parsed;
  ASSERT_TRUE(parsed.ParseFromString(out[0]));
  const auto& f = parsed.features().feature();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_THAT(f.at("a").int64_list().value(), ::testing::ElementsAre(1, 2));
  EXPECT_THAT(f.at("b").float_list().value(), ::testing::ElementsAre(1.5f));
  EXPECT_THAT(f.at("c").bytes_list().value(), ::testing::ElementsAre("abc"));
  EXPECT_EQ(out[1], "");
  EXPECT_THAT(k.Run({Strings({1}, {"not json"})}),
              StatusIs(kInvalid, "Error while parsing JSON: "));
  EXPECT_THAT(k.Run({Strings({1}, {R"({"bogus": 1})"})}),
              StatusIs(kInvalid, "Error while parsing JSON: "));
}

}  // namespace
}  // namespace towerflow
