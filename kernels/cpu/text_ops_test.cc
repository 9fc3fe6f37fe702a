// The text kernels (text_ops.cc) and PrintV2 with TensorFlow's results and
// messages (TF 2.21, tf.raw_ops).
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
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
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::towerflow::testing::StatusIs;

Tensor Strings(std::vector<std::string> v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}

std::vector<std::string> Texts(const Tensor& t) {
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.NumElements());
}

std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.NumElements());
}

struct Sparse {
  std::vector<int64_t> indices;
  std::vector<std::string> values;
  std::vector<int64_t> shape;
};

Sparse RunSplit(KernelRunner& r, std::vector<std::string> input, const std::string& sep) {
  absl::StatusOr<std::vector<Tensor>> out = r.Run({Strings(std::move(input)), Scalar(sep)});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return {Ints((*out)[0]), Texts((*out)[1]), Ints((*out)[2])};
}

TEST(TextOpsTest, StringSplitV2IsPythonsSplit) {
  KernelRunner spaces("StringSplitV2");
  Sparse s = RunSplit(spaces, {"hello world", "  a  b ", "", "x,y,,z"}, "");
  EXPECT_THAT(s.indices, ElementsAre(0, 0, 0, 1, 1, 0, 1, 1, 3, 0));
  EXPECT_THAT(s.values, ElementsAre("hello", "world", "a", "b", "x,y,,z"));
  EXPECT_THAT(s.shape, ElementsAre(4, 2));

  KernelRunner comma("StringSplitV2");
  s = RunSplit(comma, {"hello world", "  a  b ", "", "x,y,,z"}, ",");
  EXPECT_THAT(s.indices, ElementsAre(0, 0, 1, 0, 2, 0, 3, 0, 3, 1, 3, 2, 3, 3));
  EXPECT_THAT(s.values, ElementsAre("hello world", "  a  b ", "", "x", "y", "", "z"));
  EXPECT_THAT(s.shape, ElementsAre(4, 4));

  // ASCII whitespace only: \x1c, U+0085 and U+00A0 do not split.
  KernelRunner ascii("StringSplitV2");
  s = RunSplit(ascii, {"a\tb\nc\vd\fe\rf\x1cg\xc2\x85h\xc2\xa0i"}, "");
  EXPECT_THAT(s.values, ElementsAre("a", "b", "c", "d", "e", "f\x1cg\xc2\x85h\xc2\xa0i"));
}

TEST(TextOpsTest, StringSplitV2MaxSplit) {
  KernelRunner sep("StringSplitV2");
  sep.Attr("maxsplit", int64_t{1});
  Sparse s = RunSplit(sep, {"a<>b<><>c", "<>"}, "<>");
  EXPECT_THAT(s.values, ElementsAre("a", "b<><>c", "", ""));
  EXPECT_THAT(s.shape, ElementsAre(2, 2));
  // On whitespace the rest keeps its trailing spaces.
  KernelRunner spaces("StringSplitV2");
  spaces.Attr("maxsplit", int64_t{2});
  s = RunSplit(spaces, {"a b c d", "  a  b c "}, "");
  EXPECT_THAT(s.indices, ElementsAre(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2));
  EXPECT_THAT(s.values, ElementsAre("a", "b", "c d", "a", "b", "c "));
}

TEST(TextOpsTest, StringSplitV2RefusesWhatTensorFlowRefuses) {
  KernelRunner scalar("StringSplitV2");
  EXPECT_THAT(
      scalar.Run({Scalar<std::string>("a b"), Scalar<std::string>("")}),
      StatusIs(absl::StatusCode::kInvalidArgument, "input must be a vector, got shape: []"));
  KernelRunner seps("StringSplitV2");
  EXPECT_THAT(seps.Run({Strings({"a b"}), Strings({"", ""})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "sep must be a scalar, got shape: [2]"));
}

TEST(TextOpsTest, StringSplitSplitsAtAnyDelimiterByte) {
  KernelRunner skip("StringSplit");
  Sparse s = RunSplit(skip, {"a,b;;c", "", "x"}, ",;");
  EXPECT_THAT(s.indices, ElementsAre(0, 0, 0, 1, 0, 2, 2, 0));
  EXPECT_THAT(s.values, ElementsAre("a", "b", "c", "x"));
  EXPECT_THAT(s.shape, ElementsAre(3, 3));
  // Empty tokens kept, except that an empty string has none (as TF).
  KernelRunner keep("StringSplit");
  keep.Attr("skip_empty", false);
  s = RunSplit(keep, {"a,b;;c", "", "x"}, ",;");
  EXPECT_THAT(s.indices, ElementsAre(0, 0, 0, 1, 0, 2, 0, 3, 2, 0));
  EXPECT_THAT(s.values, ElementsAre("a", "b", "", "c", "x"));
  EXPECT_THAT(s.shape, ElementsAre(3, 4));
  KernelRunner bytes("StringSplit");
  s = RunSplit(bytes, {"abc", "de"}, "");
  EXPECT_THAT(s.values, ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_THAT(s.shape, ElementsAre(2, 3));
}

TEST(TextOpsTest, StringStripRemovesAsciiWhitespace) {
  KernelRunner r("StringStrip");
  EXPECT_THAT(Texts(RunOk(r, {Strings({"  a b \t\n", "", "\v x\f"})})),
              ElementsAre("a b", "", "x"));
}

std::vector<std::string> Replace(const std::string& pattern, const std::string& rewrite,
                                 std::vector<std::string> input, bool global = true) {
  KernelRunner r("StaticRegexReplace");
  r.Attr("pattern", pattern).Attr("rewrite", rewrite).Attr("replace_global", global);
  return Texts(RunOk(r, {Strings(std::move(input))}));
}

TEST(TextOpsTest, StaticRegexReplaceIsRe2s) {
  EXPECT_THAT(Replace("[!,.]", "", {"hello, world!!", "a.b"}), ElementsAre("hello world", "ab"));
  EXPECT_THAT(Replace("a", "x", {"aaa", "abab"}, false), ElementsAre("xaa", "xbab"));
  EXPECT_THAT(Replace(R"((\w+) (\w+))", R"(\2 \1)", {"john smith"}), ElementsAre("smith john"));
  // Empty matches between every character.
  EXPECT_THAT(Replace("", "-", {"abc"}), ElementsAre("-a-b-c-"));
  EXPECT_THAT(Replace("x*", "-", {"abc"}), ElementsAre("-a-b-c-"));
  // A group the pattern lacks: no replacement, as TF.
  EXPECT_THAT(Replace("(b)", R"(\2)", {"abc"}), ElementsAre("abc"));
  EXPECT_THAT(Replace(R"(\\)", R"(\\\\)", {"a\\b"}), ElementsAre("a\\\\b"));
  // \w is ASCII in RE2: Keras's punctuation strip drops accented letters.
  EXPECT_THAT(Replace(R"([^\w\s])", "",
                      {"\xc3\x80"
                       "B \xc3\xa7"
                       "a"}),
              ElementsAre("B a"));

  KernelRunner bad("StaticRegexReplace");
  bad.Attr("pattern", "(").Attr("rewrite", "-");
  EXPECT_THAT(bad.Run({Strings({"abc"})}), StatusIs(absl::StatusCode::kInvalidArgument,
                                                    "Invalid pattern: (, error: missing ): ("));
}

TEST(TextOpsTest, RegexReplaceAndFullMatchTakeScalarPatterns) {
  KernelRunner replace("RegexReplace");
  EXPECT_THAT(Texts(RunOk(replace, {Strings({"aa", "ba"}), Scalar<std::string>("a"),
                                    Scalar<std::string>("c")})),
              ElementsAre("cc", "bc"));
  // The kernel keeps the compiled pattern; a new one is compiled anew.
  EXPECT_THAT(Texts(RunOk(replace, {Strings({"aa", "ba"}), Scalar<std::string>("b"),
                                    Scalar<std::string>("c")})),
              ElementsAre("aa", "ca"));
  EXPECT_THAT(
      replace.Run({Strings({"aa"}), Strings({"a", "b"}), Scalar<std::string>("c")}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Pattern must be scalar, but received [2]"));
  EXPECT_THAT(
      replace.Run({Strings({"aa"}), Scalar<std::string>("a"), Strings({"c"})}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Rewrite must be scalar, but received [1]"));

  KernelRunner match("RegexFullMatch");
  EXPECT_THAT(RunOk(match, {Strings({"aa", "ba"}), Scalar<std::string>("a+")}),
              TensorIs<bool>({2}, {true, false}));
  EXPECT_THAT(
      match.Run({Strings({"aa"}), Scalar<std::string>("a+(")}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Invalid pattern: a+(, error: missing ): a+("));
}

std::string Format(std::vector<Tensor> inputs, const std::string& template_text,
                   int64_t summarize = 3, const std::string& placeholder = "{}") {
  KernelRunner r("StringFormat");
  DataTypeVector types;
  for (const Tensor& t : inputs) types.push_back(t.dtype());
  r.Attr("T", types).Attr("template", template_text).Attr("placeholder", placeholder);
  r.Attr("summarize", summarize);
  const Tensor out = RunOk(r, inputs);
  return out.NumElements() == 1 ? *out.data<std::string>() : "<no output>";
}

Tensor Iota(std::vector<int64_t> dims) {
  Tensor t(DT_INT64, TensorShape(dims));
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<int64_t>()[i] = i;
  return t;
}

TEST(TextOpsTest, StringFormatShowsTensorsAsTfPrint) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Format({Literal<float>(
                       {9}, {0.1f, 1 / 3.f, 1e10f, 1e-5f, std::numeric_limits<float>::quiet_NaN(),
                             inf, -inf, 100.0f, 123456789.0f})},
                   "{}", 20),
            "[0.1 0.333333343 1e+10 1e-05 nan inf -inf 100 123456792]");
  const std::string all =
      "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 "
      "23]]]";
  EXPECT_EQ(Format({Iota({2, 3, 4})}, "{}"), all);
  EXPECT_EQ(Format({Iota({2, 3, 4})}, "{}", -1), all);
  EXPECT_EQ(Format({Iota({2, 3, 4})}, "{}", 1),
            "[[[0 ... 3]\n  ...\n  [8 ... 11]]\n\n [[12 ... 15]\n  ...\n  [20 ... 23]]]");
  EXPECT_EQ(Format({Iota({2, 3, 4})}, "{}", 0), "[\n\n ...]");
  EXPECT_EQ(Format({Iota({10})}, "{}", 5), "[0 1 2 3 4 5 6 7 8 9]");
  EXPECT_EQ(Format({Iota({7})}, "{}"), "[0 1 2 ... 4 5 6]");
  EXPECT_EQ(Format({Iota({5, 1})}, "{}", 2), "[[0]\n [1]\n ...\n [3]\n [4]]");
  EXPECT_EQ(Format({Tensor(DT_DOUBLE, TensorShape({2, 0, 3}))}, "{}"), "[\n\n ...]");
  EXPECT_EQ(Format({Tensor(DT_DOUBLE, TensorShape({0}))}, "{}"), "[]");
}

TEST(TextOpsTest, StringFormatTemplatesAndElementTypes) {
  EXPECT_EQ(
      Format({Scalar<int32_t>(5), Scalar<std::string>("hi"), Literal<bool>({2}, {true, false})},
             "a {} b {} c {} d"),
      "a 5 b \"hi\" c [1 0] d");
  EXPECT_EQ(Format({Strings({"a", "b c\n"})}, "{}"), "[\"a\" \"b c\\n\"]");
  EXPECT_EQ(Format({}, "no"), "no");
  EXPECT_EQ(Format({Literal<double>({2}, {1.5, 0.1})}, "%s", 3, "%s"), "[1.5 0.1]");
  EXPECT_EQ(Format({Literal<uint8_t>({2}, {1, 2}), Literal<int8_t>({1}, {-3})}, "%s %s", 3, "%s"),
            "[1 2] [-3]");
  // An empty placeholder splits between characters, as absl::StrSplit (and TF).
  EXPECT_EQ(Format({Scalar<float>(1.0f)}, "ab", 3, ""), "a1b");

  KernelRunner two("StringFormat");
  two.Attr("T", DataTypeVector{DT_INT32}).Attr("template", "{} {}").Attr("placeholder", "{}");
  EXPECT_THAT(two.Run({Scalar<int32_t>(5)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "num placeholders in template and num inputs must match: 2 vs. 1"));
}

TEST(TextOpsTest, PrintV2AppendsToAFileOrRefusesAnUnknownStream) {
  const std::string path = ::testing::TempDir() + "/print_v2.txt";
  std::remove(path.c_str());
  KernelRunner r("PrintV2");
  r.Attr("output_stream", "file://" + path).Attr("end", "|\n");
  RunOk(r, {Scalar<std::string>("first")});
  RunOk(r, {Scalar<std::string>("second")});
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "first|\nsecond|\n");
  EXPECT_THAT(r.Run({Strings({"a"})}), StatusIs(absl::StatusCode::kInvalidArgument,
                                                "Input is expected to be scalar, but got [1]"));

  KernelRunner unknown("PrintV2");
  unknown.Attr("output_stream", "nowhere");
  EXPECT_THAT(unknown.Run({Scalar<std::string>("x")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Unknown output stream: nowhere, Valid streams are: stdout stderr "
                       "log(info) log(warning) log(error)"));
}

// tf.strings.ngrams (StringNGrams) on rows [a b c] and [d e], TF 2.21's
// n-grams.
std::vector<Tensor> NGrams(std::vector<int64_t> widths, int64_t pad, bool preserve_short,
                           std::vector<int64_t> splits = {0, 3, 5}) {
  KernelRunner r("StringNGrams");
  r.Attr("separator", std::string(" "))
      .Attr("ngram_widths", widths)
      .Attr("left_pad", std::string("<"))
      .Attr("right_pad", std::string(">"))
      .Attr("pad_width", pad)
      .Attr("preserve_short_sequences", preserve_short);
  absl::StatusOr<std::vector<Tensor>> out =
      r.Run({Strings({"a", "b", "c", "d", "e"}),
             Literal<int64_t>({static_cast<int64_t>(splits.size())}, splits)});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>(2);
}

TEST(TextOpsTest, StringNGramsAreTensorFlows) {
  auto out = NGrams({2, 3}, 0, false);
  EXPECT_THAT(out[0], TensorIs<std::string>({4}, {"a b", "b c", "a b c", "d e"}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({3}, {0, 3, 4}));
  out = NGrams({3}, -1, false);  // padded with width - 1 on each side
  EXPECT_THAT(out[0], TensorIs<std::string>({9}, {"< < a", "< a b", "a b c", "b c >", "c > >",
                                                  "< < d", "< d e", "d e >", "e > >"}));
  out = NGrams({4}, 1, true, {0, 1, 5});  // [a] is too short: kept, padded
  EXPECT_THAT(out[0], TensorIs<std::string>({4}, {"< a >", "< b c d", "b c d e", "c d e >"}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({3}, {0, 1, 4}));
  KernelRunner bad("StringNGrams");
  bad.Attr("separator", std::string(" "))
      .Attr("ngram_widths", {2})
      .Attr("left_pad", std::string(""))
      .Attr("right_pad", std::string(""))
      .Attr("pad_width", int64_t{0})
      .Attr("preserve_short_sequences", false);
  EXPECT_THAT(
      bad.Run({Strings({"a", "b"}), Literal<int64_t>({3}, {0, 3, 2})}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Invalid split value 3, must be in [0, 2]"));
  // A pad_width that would make strings of gigabytes is refused up front.
  bad.Attr("pad_width", int64_t{0x7fffffff}).Attr("preserve_short_sequences", true);
  bad.Attr("ngram_widths", std::vector<int64_t>{});
  const auto huge = bad.Run({Strings({"a", "b"}), Literal<int64_t>({2}, {0, 2})});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument) << huge.status();
}

}  // namespace
}  // namespace towerflow
