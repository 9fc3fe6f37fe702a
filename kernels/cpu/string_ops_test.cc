// The elementwise string kernels (string_ops.cc), base64 and ReduceJoin
// (string_encoding_ops.cc) and the hash buckets (io_ops.cc) with
// TensorFlow's results and messages (TF 2.21, tf.raw_ops).
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Strings(std::vector<std::string> v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}

std::vector<std::string> Texts(const Tensor& t) {
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.NumElements());
}

// "Hello", "ÀbÇ é", "", "x y".
const std::vector<std::string> kWords = {"Hello",
                                         "\xc3\x80"
                                         "b\xc3\x87 \xc3\xa9",
                                         "", "x y"};

TEST(StringOpsTest, LengthInBytesAndCharacters) {
  KernelRunner bytes("StringLength");
  EXPECT_THAT(RunOk(bytes, {Strings(kWords)}), TensorIs<int32_t>({4}, {5, 8, 0, 3}));
  KernelRunner chars("StringLength");
  chars.Attr("unit", "UTF8_CHAR");
  EXPECT_THAT(RunOk(chars, {Strings(kWords)}), TensorIs<int32_t>({4}, {5, 5, 0, 3}));
}

TEST(StringOpsTest, CaseAsciiOrUtf8) {
  KernelRunner lower("StringLower");
  EXPECT_THAT(Texts(RunOk(lower, {Strings(kWords)})), ElementsAre("hello",
                                                                  "\xc3\x80"
                                                                  "b\xc3\x87 \xc3\xa9",
                                                                  "", "x y"));
  KernelRunner upper("StringUpper");
  EXPECT_THAT(Texts(RunOk(upper, {Strings(kWords)})), ElementsAre("HELLO",
                                                                  "\xc3\x80"
                                                                  "B\xc3\x87 \xc3\xa9",
                                                                  "", "X Y"));
  KernelRunner lower8("StringLower");
  lower8.Attr("encoding", "utf-8");
  EXPECT_THAT(Texts(RunOk(lower8, {Strings(kWords)})), ElementsAre("hello",
                                                                   "\xc3\xa0"
                                                                   "b\xc3\xa7 \xc3\xa9",
                                                                   "", "x y"));
  KernelRunner upper8("StringUpper");
  upper8.Attr("encoding", "utf-8");
  EXPECT_THAT(Texts(RunOk(upper8, {Strings(kWords)})), ElementsAre("HELLO",
                                                                   "\xc3\x80"
                                                                   "B\xc3\x87 \xc3\x89",
                                                                   "", "X Y"));
  EXPECT_THAT(upper8.Run({Strings({"ok", "\xc3"})}).status().message(),
              HasSubstr("String at index 1 is not valid UTF-8"));
  KernelRunner latin("StringLower");
  latin.Attr("encoding", "latin1");
  EXPECT_THAT(latin.Run({Strings({"a"})}).status().message(),
              HasSubstr("only utf-8 or '' (no encoding) is supported, received latin1"));
}

TEST(StringOpsTest, AsStringFormatsAsTensorFlow) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto run = [](const Tensor& x, std::vector<std::pair<std::string, AttrValue>> attrs) {
    KernelRunner r("AsString");
    for (const auto& [k, v] : attrs) r.Attr(k, v);
    return Texts(RunOk(r, {x}));
  };
  const auto a = [](auto v) {
    AttrValue out;
    SetAttrValue(v, &out);
    return out;
  };
  EXPECT_THAT(run(Literal<float>({6}, {1.5f, -0.25f, 1e10f, nan, inf, 3}), {}),
              ElementsAre("1.500000", "-0.250000", "10000000000.000000", "nan", "inf", "3.000000"));
  const Tensor pi = Literal<float>({3}, {1.5f, -0.25f, 3.14159f});
  EXPECT_THAT(run(pi, {{"precision", a(int64_t{2})}}), ElementsAre("1.50", "-0.25", "3.14"));
  EXPECT_THAT(run(pi, {{"scientific", a(true)}}),
              ElementsAre("1.500000e+00", "-2.500000e-01", "3.141590e+00"));
  EXPECT_THAT(run(Literal<float>({4}, {1.5f, -0.25f, 3.14159f, 1e10f}), {{"shortest", a(true)}}),
              ElementsAre("1.5", "-0.25", "3.14159", "1e+10"));
  const Tensor ints = Literal<int32_t>({3}, {1, -25, 300});
  EXPECT_THAT(run(ints, {{"width", a(int64_t{5})}, {"fill", a("0")}}),
              ElementsAre("00001", "-0025", "00300"));
  EXPECT_THAT(run(ints, {{"width", a(int64_t{5})}}), ElementsAre("    1", "  -25", "  300"));
  EXPECT_THAT(run(Literal<bool>({2}, {true, false}), {}), ElementsAre("true", "false"));
  EXPECT_THAT(run(Literal<double>({2}, {1.5, 0.1}), {}), ElementsAre("1.500000", "0.100000"));
  EXPECT_THAT(run(Literal<int64_t>({1}, {int64_t{1} << 40}), {}), ElementsAre("1099511627776"));
  EXPECT_THAT(run(Strings({"ab"}), {}), ElementsAre("ab"));

  KernelRunner precise_int("AsString");
  precise_int.Attr("precision", int64_t{2});
  EXPECT_THAT(precise_int.Run({ints}).status().message(),
              HasSubstr("precision not supported for datatype int32"));
  KernelRunner long_fill("AsString");
  long_fill.Attr("fill", "ab");
  EXPECT_THAT(long_fill.Run({pi}).status().message(),
              HasSubstr("Fill string must be one or fewer characters"));
  KernelRunner both("AsString");
  both.Attr("scientific", true).Attr("shortest", true);
  EXPECT_THAT(both.Run({pi}).status().message(),
              HasSubstr("Cannot select both scientific and shortest notation"));
}

TEST(StringOpsTest, StringToNumberAsTensorFlow) {
  KernelRunner floats("StringToNumber");
  const Tensor got = RunOk(floats, {Strings({"1.5", " 2", "-3e2", "0x10", "inf", "nan"})});
  EXPECT_THAT(std::vector<float>(got.data<float>(), got.data<float>() + 5),
              ElementsAre(1.5f, 2, -300, 16, std::numeric_limits<float>::infinity()));
  EXPECT_TRUE(std::isnan(got.data<float>()[5]));
  KernelRunner ints("StringToNumber");
  ints.Attr("out_type", DT_INT32);
  EXPECT_THAT(RunOk(ints, {Strings({"15", "-2", "+7"})}), TensorIs<int32_t>({3}, {15, -2, 7}));
  for (const char* bad : {"1.5", "99999999999"}) {
    EXPECT_THAT(
        ints.Run({Strings({bad})}).status().message(),
        HasSubstr(std::string("StringToNumberOp could not correctly convert string: ") + bad));
  }
  EXPECT_THAT(floats.Run({Strings({"1.5x"})}).status().message(),
              HasSubstr("StringToNumberOp could not correctly convert string: 1.5x"));
}

TEST(StringOpsTest, SubstrAsTensorFlow) {
  KernelRunner r("Substr");
  EXPECT_THAT(Texts(RunOk(r, {Strings({"Hello", "World"}), Literal<int32_t>({2}, {1, -3}),
                              Literal<int32_t>({2}, {3, 10})})),
              ElementsAre("ell", "rld"));
  Tensor grid(DT_STRING, TensorShape({2, 2}));
  const char* words[] = {"Hello", "World", "ab", "cd"};
  for (int i = 0; i < 4; ++i) grid.data<std::string>()[i] = words[i];
  EXPECT_THAT(Texts(RunOk(r, {grid, Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({2}, {2, 1})})),
              ElementsAre("He", "o", "ab", "d"));
  EXPECT_THAT(Texts(RunOk(r, {Strings({"Hello"}), Scalar<int32_t>(1), Scalar<int32_t>(-1)})),
              ElementsAre("ello"));
  EXPECT_THAT(
      r.Run({Strings({"Hello"}), Scalar<int32_t>(6), Scalar<int32_t>(1)}).status().message(),
      HasSubstr("pos 6 out of range for string b'Hello' at index 0"));
  KernelRunner chars("Substr");
  chars.Attr("unit", "UTF8_CHAR");
  EXPECT_THAT(Texts(RunOk(chars, {Strings({kWords[1]}), Scalar<int64_t>(1), Scalar<int64_t>(2)})),
              ElementsAre("b\xc3\x87"));
}

const std::vector<std::string> kBytes = {"hello", "", "a", "\xff\xfe?>", "Towerflow!!"};

TEST(Base64Test, WebSafeWithTensorFlowsPadding) {
  KernelRunner plain("EncodeBase64");
  EXPECT_THAT(Texts(RunOk(plain, {Strings(kBytes)})),
              ElementsAre("aGVsbG8", "", "YQ", "__4_Pg", "VG93ZXJmbG93ISE"));
  KernelRunner padded("EncodeBase64");
  padded.Attr("pad", true);
  EXPECT_THAT(Texts(RunOk(padded, {Strings(kBytes)})),
              ElementsAre("aGVsbG8=", "", "YQ==", "__4_Pg==", "VG93ZXJmbG93ISE="));
  KernelRunner decode("DecodeBase64");
  EXPECT_THAT(
      Texts(RunOk(decode, {Strings({"aGVsbG8", "aGVsbG8=", "", "__4_Pg", "YQ==", "YR", "YWJ"})})),
      ElementsAre("hello", "hello", "", "\xff\xfe?>", "a", "a", "ab"));
  const auto bad = [](const std::string& s) {
    KernelRunner r("DecodeBase64");
    return r.Run({Strings({s})});
  };
  for (const char* s : {"a$b", "+/8=", "YQ=x", "Y Q", "YQ=", "YQ===", "==", "Y===", "YWJjZA="}) {
    EXPECT_THAT(bad(s), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                          "Invalid character found in base64."))
        << s;
  }
  for (const char* s : {"a", "="}) {
    EXPECT_THAT(bad(s), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                          "Base64 string length cannot be 1 modulo 4."))
        << s;
  }
}

TEST(ReduceJoinTest, TheFirstListedDimensionVariesFastest) {
  const Tensor m = Literal<std::string>({2, 3}, {"a", "b", "c", "d", "e", "f"});
  const auto run = [&](std::vector<int32_t> dims, const std::string& sep, bool keep = false) {
    KernelRunner r("ReduceJoin");
    r.Attr("separator", sep).Attr("keep_dims", keep);
    return r.Run({m, Literal<int32_t>({static_cast<int64_t>(dims.size())}, dims)});
  };
  const auto join = [&](std::vector<int32_t> dims, const std::string& sep, bool keep = false) {
    KernelRunner r("ReduceJoin");
    r.Attr("separator", sep).Attr("keep_dims", keep);
    return RunOk(r, {m, Literal<int32_t>({static_cast<int64_t>(dims.size())}, dims)});
  };
  EXPECT_THAT(join({0}, ""), TensorIs<std::string>({3}, {"ad", "be", "cf"}));
  EXPECT_THAT(join({1}, "-"), TensorIs<std::string>({2}, {"a-b-c", "d-e-f"}));
  EXPECT_THAT(join({0, 1}, ","), TensorIs<std::string>({}, {"a,d,b,e,c,f"}));
  EXPECT_THAT(join({1, 0}, ","), TensorIs<std::string>({}, {"a,b,c,d,e,f"}));
  EXPECT_THAT(join({-1}, "", true), TensorIs<std::string>({2, 1}, {"abc", "def"}));
  EXPECT_THAT(join({}, ""), TensorIs<std::string>({2, 3}, {"a", "b", "c", "d", "e", "f"}));
  EXPECT_THAT(run({2}, ""),
              testing::StatusIs(absl::StatusCode::kOutOfRange,
                                "Invalid reduction dimension 2 for input with 2 dimension(s)"));
  EXPECT_THAT(run({1, -1}, ""), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                  "Duplicate reduction dimension -1"));
  KernelRunner empty("ReduceJoin");
  EXPECT_THAT(RunOk(empty, {Literal<std::string>({2, 0}, {}), Literal<int32_t>({1}, {1})}),
              TensorIs<std::string>({2}, {"", ""}));
}

TEST(StringToHashBucketTest, StrongAndLegacyHashesAreTensorFlows) {
  KernelRunner strong("StringToHashBucketStrong");
  strong.Attr("num_buckets", int64_t{1000}).Attr("key", {1, 2});
  EXPECT_THAT(RunOk(strong, {Strings(kBytes)}), TensorIs<int64_t>({5}, {622, 435, 646, 884, 722}));
  // The reference key of SipHash's paper, 2^62 buckets: the hashes nearly whole.
  KernelRunner wide("StringToHashBucketStrong");
  wide.Attr("num_buckets", int64_t{1} << 62)
      .Attr("key", {int64_t{0x0706050403020100}, int64_t{0x0f0e0d0c0b0a0908}});
  EXPECT_THAT(RunOk(wide, {Strings(kBytes)}),
              TensorIs<int64_t>({5}, {22433990042967937, 3634364526009126449, 3144613055062689994,
                                      4339166742441961432, 4110617792810658943}));
  KernelRunner legacy("StringToHashBucket");
  legacy.Attr("num_buckets", int64_t{1} << 62);
  EXPECT_THAT(RunOk(legacy, {Strings(kBytes)}),
              TensorIs<int64_t>({5}, {1331861223480393034, 105434511174508091, 2996632905371535868,
                                      651748175265911021, 3220072940391584862}));
  KernelRunner bad_key("StringToHashBucketStrong");
  bad_key.Attr("num_buckets", int64_t{10}).Attr("key", {1});
  EXPECT_THAT(bad_key.Run({Strings(kBytes)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Key must have 2 elements"));
}

// TF 2.21's joins and messages (tf.raw_ops.UnsortedSegmentJoin).
TEST(UnsortedSegmentJoinTest, JoinsEachSegmentInInputOrder) {
  const auto run = [](const Tensor& inputs, const Tensor& ids, int32_t num,
                      const std::string& sep = "") {
    KernelRunner r("UnsortedSegmentJoin");
    r.Attr("separator", sep);
    return r.Run({inputs, ids, Literal<int32_t>({}, {num})});
  };
  const auto strings = [](TensorShape shape, std::vector<std::string> v) {
    return Literal<std::string>(shape, v);
  };
  absl::StatusOr<std::vector<Tensor>> out = run(strings({3, 2}, {"a", "b", "c", "d", "e", "f"}),
                                                Literal<int32_t>({3}, {1, 1, 0}), 2, "-");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<std::string>({2, 2}, {"e", "f", "a-c", "b-d"}));
  out = run(strings({2, 2}, {"a", "b", "c", "d"}), Literal<int32_t>({2, 2}, {0, 1, 1, 0}), 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<std::string>({2}, {"ad", "bc"}));
  // The separator only after a non-empty join so far (TF's); an empty
  // segment stays empty.
  out = run(strings({4}, {"", "x", "y", ""}), Literal<int32_t>({4}, {0, 0, 1, 1}), 3, ":");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<std::string>({3}, {"x", "y:", ""}));
  EXPECT_THAT(
      run(strings({4}, {"a", "b", "c", "d"}), Literal<int32_t>({4}, {1, 0, 1, -1}), 3),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "segment_ids are not allowed to exceed num_segments or to have negative "
                        "values."));
  EXPECT_THAT(run(strings({2}, {"a", "b"}), Literal<int32_t>({3}, {0, 1, 1}), 2),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Segment dimension is 3 while input dimension is 1 in rank 0"));
  EXPECT_THAT(run(strings({2}, {"a", "b"}), Literal<int32_t>({2}, {0, 1}), -1),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Number of segments must be non-negative but got -1"));
  EXPECT_THAT(
      run(strings({}, {"a"}), Literal<int32_t>({}, {0}), 2),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Segment_id cannot have rank 0"));
}

}  // namespace
}  // namespace towerflow
