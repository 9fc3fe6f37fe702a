// TensorProto bytes (binary, else text) -> Tensor::FromProto under the fuzz
// limits -> AsProto -> FromProto again, which must give the same tensor.
#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "framework/memory_limits.h"
#include "framework/tensor.h"
#include "framework/tensor_views.h"
#include "fuzz/fuzz_target.h"
#include "proto/tensor.pb.h"

namespace towerflow {
namespace fuzz {
namespace {

absl::Status RunTensorProto(absl::string_view input) {
  TensorProto proto;
  if (!proto.ParseFromArray(input.data(), static_cast<int>(input.size()))) {
    proto.Clear();
    TW_RETURN_IF_ERROR(ParseTextProto(input, &proto));
  }
  const SessionOptions options = FuzzSessionOptions();
  TW_ASSIGN_OR_RETURN(
      const MemoryLimits limits,
      MemoryLimits::FromOptions(options.max_tensor_bytes, options.host_memory_budget_bytes));
  TW_RETURN_IF_ERROR(CheckTensorProtoBytes(proto, limits));
  TW_ASSIGN_OR_RETURN(const Tensor t, Tensor::FromProto(proto));
  t.SummarizeValue(16);
  TW_ASSIGN_OR_RETURN(const Tensor again, Tensor::FromProto(t.AsProto()));
  if (again.dtype() != t.dtype() || again.shape() != t.shape() ||
      again.SummarizeValue(64) != t.SummarizeValue(64)) {
    // A round trip that changes a tensor loses data: a bug, made loud.
    std::abort();
  }
  return absl::OkStatus();
}

std::optional<std::string> MutateTensorProto(const std::string& input, MutationContext& ctx) {
  return MutateProto(input, TensorProto::default_instance(), ProtoFormat::kBinaryOrText, ctx);
}

std::vector<std::string> TensorProtoSeeds() {
  std::vector<std::string> seeds;
  auto add = [&](const Tensor& t) { seeds.push_back(SerializeDeterministic(t.AsProto())); };
  Tensor f(DT_FLOAT, {2, 3});
  for (int i = 0; i < 6; ++i) f.flat<float>()(i) = 0.5f * i;
  add(f);
  Tensor i64(DT_INT64, {3});
  for (int i = 0; i < 3; ++i) i64.flat<int64_t>()(i) = int64_t{1} << (20 * i);
  add(i64);
  Tensor s(DT_STRING, {2});
  s.flat<std::string>()(0) = "towerflow";
  s.flat<std::string>()(1) = std::string(3, '\0');
  add(s);
  Tensor b(DT_BOOL, {});
  b.scalar<bool>()() = true;
  add(b);
  // Text forms: a splat (fewer values than elements) and half values.
  seeds.push_back("dtype: DT_FLOAT tensor_shape { dim { size: 4 } } float_val: 7");
  seeds.push_back(
      "dtype: DT_DOUBLE tensor_shape { dim { size: 2 } dim { size: 1 } } "
      "double_val: [1, 2]");
  seeds.push_back(
      "dtype: DT_INT32 tensor_shape { dim { size: 3 } } tensor_content: "
      "\"\\001\\000\\000\\000\\002\\000\\000\\000\\003\\000\\000\\000\"");
  seeds.push_back("dtype: DT_HALF tensor_shape { dim { size: 2 } } half_val: [15360, 16384]");
  return seeds;
}

}  // namespace

TW_FUZZ_TARGET_WITH_MUTATOR(tensor_proto, RunTensorProto, TensorProtoSeeds, MutateTensorProto)

}  // namespace fuzz
}  // namespace towerflow
