// Inputs that once crashed, hung or exhausted Towerflow (issue 27's table,
// and what fuzzing found since), each with the Status it must give now,
// quickly: fuzz/corpus/<target>/<file>.
#include <cstdlib>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fuzz/fuzz_target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace fuzz {
namespace {

using ::towerflow::testing::StatusIs;

struct Case {
  const char* target;
  const char* file;
  absl::StatusCode code;
  const char* message;  // a substring of the status message
};

const Target& Find(absl::string_view name) {
  for (const Target& t : Targets()) {
    if (name == t.name) return t;
  }
  std::abort();
}

std::string CorpusFile(const Case& c) {
  for (const std::string& path : CorpusFiles(c.target)) {
    if (std::filesystem::path(path).filename() == c.file) {
      std::optional<std::string> bytes = ReadFile(path);
      EXPECT_TRUE(bytes.has_value()) << path;
      return bytes.value_or("");
    }
  }
  ADD_FAILURE() << "fuzz/corpus/" << c.target << "/" << c.file << " is not in the runfiles";
  return "";
}

class RegressionTest : public ::testing::TestWithParam<Case> {};

TEST_P(RegressionTest, GivesItsStatus) {
  const Case& c = GetParam();
  const absl::Status s = Find(c.target).run(CorpusFile(c));
  EXPECT_THAT(s, StatusIs(c.code, c.message)) << c.file;
}

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
constexpr absl::StatusCode kExhausted = absl::StatusCode::kResourceExhausted;

INSTANTIATE_TEST_SUITE_P(
    Corpus, RegressionTest,
    ::testing::Values(
        // Issue 27's table: SIGABRT in the shape function's constant read.
        Case{"graph", "sum_axes_splat_2e62.pbtxt", kInvalid,
             "A constant of shape [4611686018427387904] has 4611686018427387904 elements, more "
             "than the 16777216"},
        Case{"graph", "sum_axes_no_values_2e62.pbtxt", kInvalid,
             "A constant of shape [4611686018427387904] has 4611686018427387904 elements, more "
             "than the 16777216"},
        // std::bad_alloc.
        Case{"graph", "sum_axes_splat_2e33.pbtxt", kInvalid,
             "A constant of shape [8589934592] has 8589934592 elements"},
        // 73 s and 7.8 GB before an error.
        Case{"graph", "sum_axes_splat_1e9.pbtxt", kInvalid,
             "A constant of shape [1000000000] has 1000000000 elements"},
        Case{"graph", "reshape_shape_splat_2e62.pbtxt", kInvalid,
             "Node 'r' (op 'Reshape') with input shapes [2], [4611686018427387904]: A constant of "
             "shape"},
        // summarize cast to int: SIGABRT in SummarizeValue.
        Case{"graph", "assert_summarize_4294967295.pbtxt", kInvalid, "assertion failed: [1 2 3]"},
        Case{"graph", "print_summarize_2e31.pbtxt", absl::StatusCode::kOk, ""},
        // Session::Run never returned.
        Case{"graph", "recv_without_send.pbtxt", kInvalid,
             "Node 'r' (_Recv) waits for tensor 'edge_1_x' from "
             "/job:localhost/replica:0/task:0/device:CPU:0, which no _Send of this step sends"},
        // Sizes past the session's memory limits.
        Case{"graph", "fill_dims_100000_squared.pbtxt", kExhausted,
             "OOM when allocating tensor with shape [100000,100000] and type float: 40000000000 "
             "bytes, past the session's max_tensor_bytes of 67108864"},
        Case{"graph", "const_splat_2e40.pbtxt", kExhausted,
             "value of Const 'big': OOM when allocating tensor with shape [1099511627776] and type "
             "float: 4398046511104 bytes, past"},
        // A loop that never ends ends at the step deadline.
        Case{"graph", "while_true_forever.pbtxt", absl::StatusCode::kDeadlineExceeded, ""},
        // Found by fuzzing: SIGSEGV in DataTypeString on dtype 209, a ref
        // of DT_INT64_REF.
        Case{"tensor_proto", "dtype_ref_of_ref_209.pb", kInvalid,
             "TensorProto has invalid dtype unknown dtype enum (209)"},
        // Found by fuzzing under UBSan: a bool tensor_content byte of 32
        // read as bool (undefined); nonzero bytes are now true.
        Case{"tensor_proto", "bool_content_byte_32.pbtxt", absl::StatusCode::kOk, ""},
        // Found by structure-aware fuzzing: SIGFPE (a division by the
        // element size, 0) for an entry of dtype int2.
        Case{"checkpoint", "entry_dtype_int2.ckpt", absl::StatusCode::kDataLoss,
             "tensor 'c/.ATTRIBUTES/VARIABLE_VALUE' has dtype int2, which checkpoints cannot "
             "hold"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = std::string(info.param.target) + "_" + info.param.file;
      for (char& ch : name) {
        if (!absl::ascii_isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace fuzz
}  // namespace towerflow
