// `towerflow run`'s feed parsers: the first byte picks a dtype and the
// parser (JSON or .npy), the rest is the feed.
#include "core/status_macros.h"
#include "fuzz/fuzz_target.h"
#include "tools/run.h"

namespace towerflow {
namespace fuzz {
namespace {

constexpr DataType kDtypes[] = {DT_FLOAT, DT_DOUBLE, DT_INT32,  DT_INT64,
                                DT_UINT8, DT_BOOL,   DT_STRING, DT_INT8};

absl::Status RunFeed(absl::string_view input) {
  if (input.empty()) return absl::InvalidArgumentError("empty");
  const uint8_t selector = static_cast<uint8_t>(input[0]);
  const DataType dtype = kDtypes[selector % 8];
  input.remove_prefix(1);
  TW_ASSIGN_OR_RETURN(const Tensor t, selector & 8
                                          ? tools::TensorFromNpy(input, dtype)
                                          : tools::TensorFromJson(std::string(input), dtype));
  tools::TensorToJson(t);
  return absl::OkStatus();
}

std::vector<std::string> FeedSeeds() {
  // The selector byte: the index of the dtype in kDtypes, | 8 for .npy.
  auto seed = [](int selector, absl::string_view rest) {
    return std::string(1, static_cast<char>(selector)) + std::string(rest);
  };
  // A version 1 .npy of two floats; magic, version, header length and
  // header fill 128 bytes.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  header.resize(117, ' ');
  header.push_back('\n');
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy.push_back(static_cast<char>(header.size()));
  npy.push_back('\0');
  npy += header;
  npy += std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f, 2.0f
  return {
      seed(0, "[[1,2],[3,4.5]]"),
      seed(1, "[1e300,-0.0]"),
      seed(2, "[2147483647,-2147483648]"),
      seed(3, "[[[9223372036854775807]]]"),
      seed(4, "[0,255]"),
      seed(5, "[true,false]"),
      seed(6, "[\"a\",\"\\u00e9\"]"),
      seed(7, "-128"),
      seed(0 | 8, npy),
  };
}

}  // namespace

TW_FUZZ_TARGET(feed, RunFeed, FeedSeeds)

}  // namespace fuzz
}  // namespace towerflow
