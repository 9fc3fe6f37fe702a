// Lookup tables (kernels/cpu/lookup_table_ops.cc) against TensorFlow 2.21
// (tf.raw_ops on these inputs): the values found, and TF's errors for
// reading an empty table, filling one twice, keys given two values, and
// malformed vocabulary files.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

template <typename V>
AttrValue AttrOf(const V& v) {
  AttrValue a;
  SetAttrValue(v, &a);
  return a;
}

Tensor Strings(std::vector<std::string> v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}
Tensor String(const std::string& s) {
  Tensor t(DT_STRING, TensorShape());
  *t.data<std::string>() = s;
  return t;
}

Tensor Table(const std::string& name, DataType key, DataType value, bool is_mutable = false) {
  KernelRunner r(is_mutable ? "MutableHashTableV2" : "HashTableV2");
  r.Attr("shared_name", name).Attr("key_dtype", key).Attr("value_dtype", value);
  return RunOk(r, {});
}

absl::StatusOr<std::vector<Tensor>> RunOp(
    const char* op, std::vector<Tensor> inputs,
    std::vector<std::pair<std::string, AttrValue>> attrs = {}) {
  KernelRunner r(op);
  for (const auto& [name, value] : attrs) r.Attr(name, value);
  return r.Run(inputs);
}

TEST(LookupTableTest, HashTableIsFilledOnceThenRead) {
  const Tensor t = Table("vocab", DT_STRING, DT_INT64);
  EXPECT_THAT(RunOp("LookupTableFindV2", {t, Strings({"a"}), Scalar<int64_t>(-1)}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "Table not initialized."));
  TW_ASSERT_OK(
      RunOp("InitializeTableV2", {t, Strings({"a", "b", "c"}), Literal<int64_t>({3}, {1, 2, 3})})
          .status());
  Tensor keys(DT_STRING, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i)
    keys.data<std::string>()[i] = std::vector<std::string>{"a", "x", "c", "b"}[i];
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          RunOp("LookupTableFindV2", {t, keys, Scalar<int64_t>(-1)}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 2}, {1, -1, 3, 2}));
  // The same entries again are a no-op; others an error.
  TW_ASSERT_OK(
      RunOp("InitializeTableV2", {t, Strings({"c", "b", "a"}), Literal<int64_t>({3}, {3, 2, 1})})
          .status());
  EXPECT_THAT(RunOp("InitializeTableV2", {t, Strings({"d"}), Literal<int64_t>({1}, {4})}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "Table was already initialized with different data."));
  TW_ASSERT_OK_AND_ASSIGN(out, RunOp("LookupTableSizeV2", {t}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({}, {3}));
  EXPECT_THAT(RunOp("LookupTableFindV2", {t, Strings({"a"}), Literal<int64_t>({2}, {1, 2})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected shape [] or [1] for default value, got [2]"));
  EXPECT_THAT(RunOp("LookupTableFindV2", {t, Literal<int32_t>({1}, {1}), Scalar<int64_t>(-1)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Signature mismatch, have: resource, int32, int64->int64 expected: "
                       "resource, string, int64->int64"));
  EXPECT_THAT(RunOp("LookupTableInsertV2", {t, Strings({"q"}), Literal<int64_t>({1}, {9})}),
              StatusIs(absl::StatusCode::kUnimplemented,
                       "Insert not supported by InitializableLookupTable implementations"));
}

TEST(LookupTableTest, DuplicateKeysImportAndExport) {
  const Tensor t = Table("ids", DT_INT64, DT_STRING);
  EXPECT_THAT(
      RunOp("InitializeTableV2", {t, Literal<int64_t>({3}, {1, 2, 1}), Strings({"x", "y", "z"})}),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               "HashTable has different value for same key. Key 1 has x and trying to "
               "add value z"));
  EXPECT_THAT(RunOp("InitializeTableV2", {t, Literal<int64_t>({2}, {1, 2}), Strings({"x"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Keys and values must have the same size 2 vs 1"));
  // A repeated key with one value is fine.
  TW_ASSERT_OK(
      RunOp("InitializeTableV2", {t, Literal<int64_t>({3}, {1, 2, 1}), Strings({"x", "y", "x"})})
          .status());
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      RunOp("LookupTableFindV2", {t, Literal<int64_t>({2}, {2, 5}), String("?")}));
  EXPECT_EQ(out[0].data<std::string>()[0], "y");
  EXPECT_EQ(out[0].data<std::string>()[1], "?");
  TW_ASSERT_OK_AND_ASSIGN(out,
                          RunOp("LookupTableExportV2", {t},
                                {{"Tkeys", AttrOf(DT_INT64)}, {"Tvalues", AttrOf(DT_STRING)}}));
  ASSERT_EQ(out[0].NumElements(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(out[1].data<std::string>()[i], out[0].data<int64_t>()[i] == 1 ? "x" : "y");
  }
}

TEST(LookupTableTest, MutableTableInsertsAndOverwrites) {
  const Tensor t = Table("mutable", DT_STRING, DT_FLOAT, true);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          RunOp("LookupTableFindV2", {t, Strings({"a"}), Scalar<float>(0.5f)}));
  EXPECT_THAT(out[0], TensorIs<float>({1}, {0.5f}));
  TW_ASSERT_OK(
      RunOp("LookupTableInsertV2", {t, Strings({"a", "b"}), Literal<float>({2}, {1.5f, 2.5f})})
          .status());
  TW_ASSERT_OK(
      RunOp("LookupTableInsertV2", {t, Strings({"a"}), Literal<float>({1}, {9})}).status());
  TW_ASSERT_OK_AND_ASSIGN(
      out, RunOp("LookupTableFindV2", {t, Strings({"a", "b", "c"}), Scalar<float>(0.5f)}));
  EXPECT_THAT(out[0], TensorIs<float>({3}, {9, 2.5f, 0.5f}));
  // Import replaces the content.
  TW_ASSERT_OK(
      RunOp("LookupTableImportV2", {t, Strings({"z"}), Literal<float>({1}, {4})}).status());
  TW_ASSERT_OK_AND_ASSIGN(out, RunOp("LookupTableSizeV2", {t}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({}, {1}));
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(LookupTableTest, TextFileInitializers) {
  const std::string vocab = WriteFile("vocab.txt", "apple\t3\nbanana\t5\ncherry\t7\n");
  const auto init = [&](const Tensor& t, int64_t key, int64_t value, int64_t vocab_size,
                        int64_t offset, const std::string& file, const std::string& delimiter) {
    return RunOp("InitializeTableFromTextFileV2", {t, String(file)},
                 {{"key_index", AttrOf(key)},
                  {"value_index", AttrOf(value)},
                  {"vocab_size", AttrOf(vocab_size)},
                  {"offset", AttrOf(offset)},
                  {"delimiter", AttrOf(delimiter)}});
  };
  // Words to line numbers (-1) plus an offset.
  const Tensor lines = Table("lines", DT_STRING, DT_INT64);
  TW_ASSERT_OK(init(lines, 0, -1, -1, 10, vocab, "\t").status());
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      RunOp("LookupTableFindV2", {lines, Strings({"banana", "zzz"}), Scalar<int64_t>(-1)}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({2}, {11, -1}));
  // Column to column, parsed as float.
  const Tensor columns = Table("columns", DT_STRING, DT_FLOAT);
  TW_ASSERT_OK(init(columns, 0, 1, -1, 0, vocab, "\t").status());
  TW_ASSERT_OK_AND_ASSIGN(
      out, RunOp("LookupTableFindV2", {columns, Strings({"cherry"}), Scalar<float>(0)}));
  EXPECT_THAT(out[0], TensorIs<float>({1}, {7}));
  // Line numbers to whole lines (-2), the first two only.
  const Tensor whole = Table("whole", DT_INT64, DT_STRING);
  TW_ASSERT_OK(init(whole, -1, -2, 2, 0, vocab, "\t").status());
  TW_ASSERT_OK_AND_ASSIGN(
      out, RunOp("LookupTableFindV2", {whole, Literal<int64_t>({3}, {0, 1, 2}), String("?")}));
  EXPECT_EQ(out[0].data<std::string>()[0], "apple\t3");
  EXPECT_EQ(out[0].data<std::string>()[2], "?");
  const Tensor bad = Table("bad", DT_STRING, DT_INT64);
  EXPECT_THAT(init(bad, 0, -1, 5, 0, vocab, "\t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Invalid vocab_size in " + vocab + ": expected 5 but got 3"));
  EXPECT_THAT(init(bad, 3, -1, -1, 0, vocab, "\t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Invalid number of columns in " + vocab +
                           " line 0 (apple\t3) : expected at least 4 got 2"));
  EXPECT_THAT(init(bad, 0, -2, -1, 0, vocab, "\t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Field apple\t3 in line 0 is not a valid int64."));
  EXPECT_THAT(init(whole, -1, -1, -1, 0, vocab, "\t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Value index for line number requires table value dtype of int64, got "
                       "string"));
  const std::string gaps = WriteFile("gaps.txt", "a b\n\nc d\n");
  const Tensor words = Table("words", DT_STRING, DT_STRING);
  EXPECT_THAT(init(words, 0, 1, -1, 0, gaps, " "),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Invalid content in " + gaps + ": empty line found at position 5."));
  const std::string repeats = WriteFile("repeats.txt", "a\nb\na\n");
  EXPECT_THAT(init(bad, -2, -1, -1, 0, repeats, "\t"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "HashTable has different value for same key. Key a has 0 and trying to "
                       "add value 2"));
  EXPECT_THAT(init(bad, 0, -1, -1, 0, "/nonexistent/vocab.txt", "\t"),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent/vocab.txt"));
}

}  // namespace
}  // namespace towerflow
