// The Unicode kernels (unicode_ops.cc) with TensorFlow's results and
// messages (TF 2.21, tf.raw_ops).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "testing/status_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::StatusIs;

Tensor Strings(std::vector<std::string> v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}

template <typename T>
std::vector<int64_t> Widened(const Tensor& t) {
  return std::vector<int64_t>(t.data<T>(), t.data<T>() + t.NumElements());
}

struct Decoded {
  std::vector<int64_t> splits, chars, starts;
};

Decoded Decode(std::vector<std::string> input, const std::string& encoding,
               std::vector<std::pair<std::string, AttrValue>> attrs = {}) {
  KernelRunner r("UnicodeDecodeWithOffsets");
  r.Attr("input_encoding", encoding);
  for (const auto& [name, value] : attrs) r.Attr(name, value);
  absl::StatusOr<std::vector<Tensor>> out = r.Run({Strings(std::move(input))});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return {Widened<int64_t>((*out)[0]), Widened<int32_t>((*out)[1]), Widened<int64_t>((*out)[2])};
}

AttrValue A(const char* s) {
  AttrValue a;
  a.set_s(s);
  return a;
}
AttrValue A(int64_t i) {
  AttrValue a;
  a.set_i(i);
  return a;
}
AttrValue A(bool b) {
  AttrValue a;
  a.set_b(b);
  return a;
}

TEST(UnicodeOpsTest, DecodeUtf8WithOffsets) {
  Decoded d = Decode({"h\xc3\xa9llo", "",
                      "\xf0\x9f\x98\x80"
                      "a",
                      "a\xff"
                      "b"},
                     "UTF-8");
  EXPECT_THAT(d.splits, ElementsAre(0, 5, 5, 7, 10));
  EXPECT_THAT(d.chars, ElementsAre(104, 233, 108, 108, 111, 128512, 97, 97, 65533, 98));
  EXPECT_THAT(d.starts, ElementsAre(0, 1, 3, 4, 5, 0, 4, 0, 1, 2));
}

TEST(UnicodeOpsTest, MalformedUtf8IsReplacedPerMaximalSubpart) {
  // ICU's (and TF's) reading: a truncated sequence is one error; an
  // overlong form, a surrogate or a code point past U+10FFFF is one per byte.
  Decoded d = Decode(
      {"a\xff"
       "b",
       "\xe2\x82", "\xe2\x82x", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98",
       "a\x80\x80"
       "b"},
      "UTF-8");
  EXPECT_THAT(d.splits, ElementsAre(0, 3, 4, 6, 8, 11, 15, 16, 20));
  EXPECT_THAT(d.chars, ElementsAre(97, 65533, 98, 65533, 65533, 120, 65533, 65533, 65533, 65533,
                                   65533, 65533, 65533, 65533, 65533, 65533, 97, 65533, 65533, 98));
  Decoded ignored = Decode({"a\xff"
                            "b\xe2\x82x"},
                           "UTF-8", {{"errors", A("ignore")}});
  EXPECT_THAT(ignored.chars, ElementsAre(97, 98, 120));
  EXPECT_THAT(ignored.starts, ElementsAre(0, 2, 5));
  Decoded question = Decode({"a\xff"
                             "b"},
                            "UTF-8", {{"replacement_char", A(int64_t{63})}});
  EXPECT_THAT(question.chars, ElementsAre(97, 63, 98));

  KernelRunner strict("UnicodeDecode");
  strict.Attr("input_encoding", "UTF-8").Attr("errors", "strict");
  EXPECT_THAT(RunOk(strict, {Strings({"ab"})}, 1), TensorIs<int32_t>({2}, {97, 98}));
  EXPECT_THAT(strict.Run({Strings({"a\xff"
                                   "b"})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Invalid formatting on input string"));
}

TEST(UnicodeOpsTest, ControlCharactersReplacedOnRequest) {
  Decoded d = Decode({"a\x01\tb\x7f\xc2\x85"}, "UTF-8", {{"replace_control_characters", A(true)}});
  EXPECT_THAT(d.chars, ElementsAre(97, 65533, 65533, 98, 127, 133));
  Decoded ignored =
      Decode({"a\x01"
              "b\xff",
              "\xe2\x82"},
             "UTF-8", {{"replace_control_characters", A(true)}, {"errors", A("ignore")}});
  EXPECT_THAT(ignored.splits, ElementsAre(0, 2, 2));
  EXPECT_THAT(ignored.chars, ElementsAre(97, 98));
  EXPECT_THAT(ignored.starts, ElementsAre(0, 2));
}

TEST(UnicodeOpsTest, DecodeOtherEncodingsThroughIcu) {
  Decoded utf16 =
      Decode({std::string("\0a\0b", 4), std::string("\xd8=\xde\x00", 4), std::string("\xde\x00", 2),
              std::string("\0", 1), std::string("\0a\xd8\0\0b", 6)},
             "UTF-16-BE");
  EXPECT_THAT(utf16.splits, ElementsAre(0, 2, 3, 4, 5, 8));
  EXPECT_THAT(utf16.chars, ElementsAre(97, 98, 128512, 65533, 65533, 97, 65533, 98));
  EXPECT_THAT(utf16.starts, ElementsAre(0, 2, 0, 0, 0, 0, 2, 4));
  Decoded utf32 = Decode({std::string("\0\0\0a\0\x01\xf6\0", 8), std::string("\0\x11\0\0", 4),
                          std::string("\0\0\xd8\0", 4), std::string("\0\0", 2)},
                         "UTF-32-BE");
  EXPECT_THAT(utf32.chars, ElementsAre(97, 128512, 65533, 65533, 65533));
  EXPECT_THAT(Decode({"\xe9t\xe9"}, "ISO-8859-1").chars, ElementsAre(233, 116, 233));
  EXPECT_THAT(Decode({"\x82\xa0"}, "Shift_JIS").chars, ElementsAre(12354));
  // A byte-order mark is a character.
  EXPECT_THAT(Decode({"\xef\xbb\xbf"
                      "a"},
                     "UTF-8")
                  .chars,
              ElementsAre(65279, 97));

  KernelRunner unknown("UnicodeDecode");
  unknown.Attr("input_encoding", "bogus-enc");
  EXPECT_THAT(unknown.Run({Strings({"ab"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Could not create converter for input encoding: bogus-enc"));
  KernelRunner range("UnicodeDecode");
  range.Attr("input_encoding", "UTF-8").Attr("replacement_char", int64_t{0x110000});
  EXPECT_THAT(range.Run({Strings({"ab"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "replacement_char out of unicode codepoint range"));
}

TEST(UnicodeOpsTest, DecodeFlattensAnyShapeWithInt32Splits) {
  KernelRunner r("UnicodeDecode");
  r.Attr("input_encoding", "UTF-8").Attr("Tsplits", DT_INT32);
  auto out = r.Run({Literal<std::string>({2, 2}, {"ab", "c", "", "d"})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({5}, {0, 2, 3, 3, 4}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({4}, {97, 98, 99, 100}));
}

std::vector<std::string> Encode(std::vector<int32_t> values, std::vector<int64_t> splits,
                                const std::string& encoding, const std::string& errors = "replace",
                                int64_t replacement = 0xFFFD) {
  KernelRunner r("UnicodeEncode");
  r.Attr("output_encoding", encoding).Attr("errors", errors);
  r.Attr("replacement_char", replacement);
  const int64_t n = static_cast<int64_t>(values.size());
  const int64_t rows = static_cast<int64_t>(splits.size());
  Tensor out = RunOk(r, {Literal<int32_t>({n}, values), Literal<int64_t>({rows}, splits)});
  return std::vector<std::string>(out.data<std::string>(),
                                  out.data<std::string>() + out.NumElements());
}

TEST(UnicodeOpsTest, EncodeRowsOfCodePoints) {
  EXPECT_THAT(Encode({104, 233, 0x1F600, 97, 98}, {0, 2, 3, 5}, "UTF-8"),
              ElementsAre("h\xc3\xa9", "\xf0\x9f\x98\x80", "ab"));
  EXPECT_THAT(Encode({104, -1, 0xD800, 0x110000}, {0, 4}, "UTF-8"),
              ElementsAre("h\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
  EXPECT_THAT(Encode({104, -1, 0xD800, 0x110000}, {0, 4}, "UTF-8", "ignore"), ElementsAre("h"));
  EXPECT_THAT(Encode({104, 0x1F600}, {0, 2}, "UTF-16-BE"),
              ElementsAre(std::string("\0h\xd8=\xde\0", 6)));
  EXPECT_THAT(Encode({104, 0x1F600}, {0, 2}, "UTF-32-BE"),
              ElementsAre(std::string("\0\0\0h\0\x01\xf6\0", 8)));
  EXPECT_THAT(Encode({104, 0xD800, 0xDFFF, 0xFFFE, 0x10FFFF}, {0, 5}, "UTF-16-BE"),
              ElementsAre(std::string("\0h\xff\xfd\xff\xfd\xff\xfe\xdb\xff\xdf\xff", 12)));
  // A surrogate replacement character is U+FFFD in UTF-8, as ICU writes it.
  EXPECT_THAT(Encode({104, 0xD800}, {0, 2}, "UTF-8", "replace", 0xD800),
              ElementsAre("h\xef\xbf\xbd"));
  EXPECT_THAT(Encode({}, {0}, "UTF-8"), ElementsAre());
}

TEST(UnicodeOpsTest, EncodeRefusesBadSplits) {
  const auto run = [](std::vector<int32_t> values, Tensor splits, const std::string& errors) {
    KernelRunner r("UnicodeEncode");
    r.Attr("output_encoding", "UTF-8").Attr("errors", errors);
    const int64_t n = static_cast<int64_t>(values.size());
    return r.Run({Literal<int32_t>({n}, values), splits}).status();
  };
  const auto invalid = [](const std::string& message) {
    return StatusIs(absl::StatusCode::kInvalidArgument, message);
  };
  EXPECT_THAT(run({104, 105}, Literal<int64_t>({3}, {0, 3, 2}), "replace"),
              invalid("Values in input_splits must be less than or equal to input_tensor length."));
  EXPECT_THAT(run({104, 105}, Literal<int64_t>({4}, {0, 2, 1, 2}), "replace"),
              invalid("Values in input_splits must be equal or in ascending order."));
  EXPECT_THAT(run({104, 105}, Literal<int64_t>({3}, {0, -1, 2}), "replace"),
              invalid("Values in input_splits must be equal or in ascending order."));
  EXPECT_THAT(run({104, 105}, Literal<int64_t>({1, 2}, {0, 2}), "replace"),
              invalid("Both the input_tensor and input_splits should be of rank 1."));
  EXPECT_THAT(run({104, 105}, Literal<int64_t>({2}, {1, 3}), "replace"),
              invalid("First value in input_splits must be zero."));
  EXPECT_THAT(run({104}, Literal<int64_t>({2}, {0, 2}), "replace"),
              invalid("Last value in input_splits must be equal to length of input_tensor."));
  EXPECT_THAT(run({104}, Literal<int64_t>({0}, {}), "replace"),
              invalid("Input_splits should contain elements"));
  EXPECT_THAT(run({104, -5}, Literal<int64_t>({2}, {0, 2}), "strict"),
              invalid("Code point is out of range for Unicode, or is a surrogate."));
}

TEST(UnicodeOpsTest, TranscodeAndScript) {
  KernelRunner utf16("UnicodeTranscode");
  utf16.Attr("input_encoding", "UTF-8").Attr("output_encoding", "UTF-16-BE");
  EXPECT_THAT(
      RunOk(utf16, {Strings({"h\xc3\xa9",
                             "a\xff"
                             "b"})}),
      TensorIs<std::string>({2}, {std::string("\0h\0\xe9", 4), std::string("\0a\xff\xfd\0b", 6)}));
  KernelRunner ignore("UnicodeTranscode");
  ignore.Attr("input_encoding", "UTF-8").Attr("output_encoding", "UTF-8").Attr("errors", "ignore");
  EXPECT_THAT(RunOk(ignore, {Strings({"h\xc3\xa9",
                                      "a\xff"
                                      "b"})}),
              TensorIs<std::string>({2}, {"h\xc3\xa9", "ab"}));

  KernelRunner script("UnicodeScript");
  EXPECT_THAT(RunOk(script, {Literal<int32_t>({6}, {97, 0x3B1, 0x4E00, -1, 0x110000, 32})}),
              TensorIs<int32_t>({6}, {25, 14, 17, -1, -1, 0}));
}

}  // namespace
}  // namespace towerflow
