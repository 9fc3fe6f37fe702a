// Devices with memory of their own, without a GPU: a test device type
// "ACCEL" whose memory is host memory from an allocator that remembers its
// blocks, and whose copies count themselves. Its kernels check that every
// input arrives in the memory its memory type says, so these tests pin down
// what the GPU backend stands on: host-memory arguments (int32 by type,
// HostMemory by kernel), copies in _Arg/_Retval, _Recv between devices and
// between the two memories of one device, and a Const copied once at Init.
#include <map>
#include <set>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/basic_ops.h"
#include "runtime/session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::Contains;
using ::testing::Pair;

constexpr char kAccel[] = "ACCEL";

// Host memory that knows which blocks are "device" memory.
class TrackingAllocator final : public Allocator {
 public:
  std::string Name() const override { return "accel"; }
  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    void* p = CpuAllocator()->AllocateRaw(alignment, num_bytes);
    absl::MutexLock lock(&mu_);
    live_.insert(p);
    return p;
  }
  void DeallocateRaw(void* ptr) override {
    {
      absl::MutexLock lock(&mu_);
      live_.erase(ptr);
    }
    CpuAllocator()->DeallocateRaw(ptr);
  }
  bool Owns(const void* p) {
    absl::MutexLock lock(&mu_);
    return live_.contains(p);
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_set<const void*> live_ ABSL_GUARDED_BY(mu_);
};

TrackingAllocator* AccelMemory() {
  static TrackingAllocator* const a = new TrackingAllocator();
  return a;
}

struct CopyCounts {
  int to_host = 0;
  int from_host = 0;
  int to_device = 0;
};

absl::Mutex counts_mu;
CopyCounts counts ABSL_GUARDED_BY(counts_mu);

CopyCounts TakeCounts() {
  absl::MutexLock lock(&counts_mu);
  CopyCounts c = counts;
  counts = CopyCounts();
  return c;
}

// Whether `t`'s elements are in ACCEL memory (a buffer may be a slice, so
// its data pointer need not start a block: zero-element tensors have none).
bool InAccelMemory(const Tensor& t) { return AccelMemory()->Owns(t.raw_data()); }

class AccelDevice final : public Device {
 public:
  explicit AccelDevice(int i, ThreadPool* pool)
      : Device(LocalDeviceName(kAccel, i), kAccel, AccelMemory(), pool) {}
  bool has_device_memory() const override { return true; }
  // As a GPU's: its kernels run inline on the executor's thread.
  bool kernels_only_enqueue() const override { return true; }
  absl::StatusOr<Tensor> CopyToHost(const Tensor& t) override {
    if (!InAccelMemory(t)) return absl::InternalError("CopyToHost of a host tensor");
    absl::MutexLock lock(&counts_mu);
    ++counts.to_host;
    return t.DeepCopy(CpuAllocator());
  }
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& t) override {
    if (InAccelMemory(t)) return absl::InternalError("CopyFromHost of a device tensor");
    absl::MutexLock lock(&counts_mu);
    ++counts.from_host;
    return t.DeepCopy(AccelMemory());
  }
  absl::StatusOr<Tensor> CopyToDevice(const Tensor& t, Device* dst) override {
    if (!InAccelMemory(t) || dst == this) return absl::InternalError("bad CopyToDevice");
    absl::MutexLock lock(&counts_mu);
    ++counts.to_device;
    return t.DeepCopy(AccelMemory());
  }
};

class AccelFactory final : public DeviceFactory {
 public:
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(int max_count,
                                                                     const std::string& /*task*/,
                                                                     ThreadPool* pool) override {
    std::vector<std::unique_ptr<Device>> devices;
    for (int i = 0; i < (max_count < 0 ? 2 : max_count); ++i) {
      devices.push_back(std::make_unique<AccelDevice>(i, pool));
    }
    return devices;
  }
  int NumPresent() const override { return 2; }
};

// Fails unless every input is where the node's memory types put it.
absl::Status CheckInputs(KernelContext* ctx) {
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    const bool on_host = !InAccelMemory(ctx->input(i));
    if (on_host != ctx->input_on_host(i)) {
      return absl::InternalError(absl::StrCat("input ", i, " of '", ctx->name(), "' is in ",
                                              on_host ? "host" : "device", " memory"));
    }
  }
  return absl::OkStatus();
}

// The threads AddV2 ran on.
absl::Mutex threads_mu;
std::set<std::thread::id> add_threads ABSL_GUARDED_BY(threads_mu);

class AccelAddOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_RETURN_IF_ERROR(CheckInputs(ctx));
    {
      absl::MutexLock lock(&threads_mu);
      add_threads.insert(std::this_thread::get_id());
    }
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, a.shape()));
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      out->flat<float>()(i) = a.flat<float>()(i) + b.flat<float>()(i);
    }
    return absl::OkStatus();
  }
};

// Fill with its float `value` declared host memory, so a value made on the
// device crosses to the host on the same device.
class AccelFillOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_RETURN_IF_ERROR(CheckInputs(ctx));
    TensorShape shape;
    for (int64_t i = 0; i < ctx->input(0).NumElements(); ++i) {
      TW_RETURN_IF_ERROR(shape.AddDim(ctx->input(0).flat<int32_t>()(i)));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    out->flat<float>().setConstant(ctx->input(1).scalar<float>()());
    return absl::OkStatus();
  }
};

// The shape of a device tensor, in host memory (int32).
class AccelShapeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_RETURN_IF_ERROR(CheckInputs(ctx));
    const TensorShape& s = ctx->input(0).shape();
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({s.dims()})));
    for (int i = 0; i < s.dims(); ++i)
      out->flat<int32_t>()(i) = static_cast<int32_t>(s.dim_size(i));
    if (InAccelMemory(*out)) return absl::InternalError("Shape's int32 output in device memory");
    return absl::OkStatus();
  }
};

[[maybe_unused]] const bool registered = [] {
  RegisterDeviceFactory(kAccel, std::make_unique<AccelFactory>());
  RegisterBasicKernels(kAccel);
  RegisterKernel(KernelDefBuilder("AddV2").Device(kAccel).TypeConstraint<float>("T"),
                 MakeFactory<AccelAddOp>());
  RegisterKernel(KernelDefBuilder("Fill").Device(kAccel).HostMemory("value"),
                 MakeFactory<AccelFillOp>());
  RegisterKernel(KernelDefBuilder("Shape").Device(kAccel), MakeFactory<AccelShapeOp>());
  return true;
}();

constexpr char kAccel0[] = "/device:ACCEL:0";
constexpr char kAccel1[] = "/device:ACCEL:1";
constexpr char kCpu0[] = "/device:CPU:0";

std::string Node(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& device,
                 const std::string& attrs = "attr { key: 'T' value { type: DT_FLOAT } }") {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "' device: '", device, "' ");
  for (const std::string& in : inputs) absl::StrAppend(&s, "input: '", in, "' ");
  return absl::StrCat(s, attrs, " }\n");
}

std::string FloatConst(const std::string& name, const std::string& values, int n,
                       const std::string& device) {
  const std::string shape = n < 0 ? "" : absl::StrCat("dim { size: ", n, " }");
  return Node(name, "Const", {}, device,
              absl::StrCat("attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' "
                           "value { tensor { dtype: DT_FLOAT tensor_shape { ",
                           shape, " } ", values, " } } }"));
}

// x (fed) and c on ACCEL:0 are added there; ACCEL:1 doubles the sum and
// fills a [2, 1] tensor with a scalar it made; the CPU adds the sum to
// itself too, and Shape on ACCEL:0 reads only the sum's shape.
constexpr char kFloat[] = "attr { key: 'T' value { type: DT_FLOAT } }";
std::string Graph() {
  return absl::StrCat(
      Node("x", "Placeholder", {}, kAccel0, "attr { key: 'dtype' value { type: DT_FLOAT } }"),
      FloatConst("c", "float_val: 10 float_val: 20", 2, kAccel0),
      Node("y", "AddV2", {"x", "c"}, kAccel0), Node("z", "AddV2", {"y", "y"}, kAccel1),
      Node("on_cpu", "AddV2", {"y", "y"}, kCpu0), FloatConst("a", "float_val: 1.5", -1, kAccel1),
      Node("v", "AddV2", {"a", "a"}, kAccel1),
      Node("dims", "Const", {}, kAccel1,
           "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
           "dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 int_val: 1 } } }"),
      Node("f", "Fill", {"dims", "v"}, kAccel1,
           "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'index_type' value { type: "
           "DT_INT32 } }"),
      Node("s", "Shape", {"y"}, kAccel0,
           absl::StrCat(kFloat, " attr { key: 'out_type' value { type: DT_INT32 } }")));
}

class DeviceMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SessionOptions options;
    options.device_count[kAccel] = 2;
    TW_ASSERT_OK_AND_ASSIGN(session_, NewSession(options));
    GraphDef g;
    TW_ASSERT_OK(ParseTextProto(Graph(), &g));
    TW_ASSERT_OK(session_->Create(g));
    TakeCounts();
  }

  std::unique_ptr<Session> session_;
};

TEST_F(DeviceMemoryTest, FeedsAndFetchesCrossOnce) {
  std::vector<Tensor> out;
  TW_ASSERT_OK(session_->Run({{"x", Literal<float>({2}, {1, 2})}}, {"y", "z"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({2}, {11, 22}));
  EXPECT_THAT(out[1], TensorIs<float>({2}, {22, 44}));
  EXPECT_FALSE(InAccelMemory(out[0]));
  EXPECT_FALSE(InAccelMemory(out[1]));
  const CopyCounts c = TakeCounts();
  // x and c in (c when the step's executors are made); y to ACCEL:1 once;
  // y and z out.
  EXPECT_EQ(c.from_host, 2);
  EXPECT_EQ(c.to_device, 1);
  EXPECT_EQ(c.to_host, 2);
}

TEST_F(DeviceMemoryTest, ConstIsCopiedOnceWhenItsKernelIsMade) {
  std::vector<Tensor> out;
  for (int step = 0; step < 3; ++step) {
    TW_ASSERT_OK(session_->Run({{"x", Literal<float>({2}, {0, 0})}}, {"y"}, {}, &out));
    EXPECT_THAT(out[0], TensorIs<float>({2}, {10, 20}));
    const CopyCounts c = TakeCounts();
    EXPECT_EQ(c.from_host, step == 0 ? 2 : 1) << "step " << step;  // c on the first only
    EXPECT_EQ(c.to_host, 1);
  }
}

TEST_F(DeviceMemoryTest, CpuConsumerGetsAHostCopy) {
  std::vector<Tensor> out;
  TW_ASSERT_OK(session_->Run({{"x", Literal<float>({2}, {1, 2})}}, {"on_cpu"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({2}, {22, 44}));
  EXPECT_EQ(TakeCounts().to_host, 1);
}

TEST_F(DeviceMemoryTest, HostMemoryArgumentCrossesWithinTheDevice) {
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata metadata;
  std::vector<Tensor> out;
  TW_ASSERT_OK(session_->Run(options, {}, {"f"}, {}, &out, &metadata));
  EXPECT_THAT(out[0], TensorIs<float>({2, 1}, {3, 3}));
  // a in; v (device memory) to Fill's host `value`: D2H on ACCEL:1; f out.
  // The int32 dims never move.
  const CopyCounts c = TakeCounts();
  EXPECT_EQ(c.from_host, 1);
  EXPECT_EQ(c.to_host, 2);
  std::map<std::string, std::string> ops;
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) ops[n.name()] = n.op();
  }
  EXPECT_THAT(ops, Contains(Pair(::testing::StartsWith("_recv_"), "_HostRecv")));
  EXPECT_THAT(ops, Contains(Pair(::testing::StartsWith("_send_"), "_Send")));
}

TEST_F(DeviceMemoryTest, ShapeOfADeviceTensorStaysOnTheHost) {
  std::vector<Tensor> out;
  TW_ASSERT_OK(session_->Run({{"x", Literal<float>({2}, {1, 2})}}, {"s"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({1}, {2}));
  const CopyCounts c = TakeCounts();
  EXPECT_EQ(c.from_host, 2);  // x and c
  EXPECT_EQ(c.to_host, 0);    // the int32 shape is fetched as is
}

// Four adds ready at once on a device whose kernels only enqueue run on one
// thread, one after another, as a GPU's do (Note [Executor scheduling]);
// on a CPU device all but one would go to the inter-op pool.
TEST(AccelSchedulingTest, ReadyKernelsRunInlineOnOneThread) {
  SessionOptions options;
  options.device_count[kAccel] = 1;
  options.inter_op_parallelism_threads = 4;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  std::string text = FloatConst("c", "float_val: 1 float_val: 2", 2, kAccel0);
  std::vector<std::string> sums;
  for (int i = 0; i < 4; ++i) {
    sums.push_back(absl::StrCat("sum", i));
    absl::StrAppend(&text, Node(sums.back(), "AddV2", {"c", "c"}, kAccel0));
  }
  GraphDef g;
  TW_ASSERT_OK(ParseTextProto(text, &g));
  TW_ASSERT_OK(session->Create(g));
  {
    absl::MutexLock lock(&threads_mu);
    add_threads.clear();
  }
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, sums, {}, &out));
  for (const Tensor& t : out) EXPECT_THAT(t, TensorIs<float>({2}, {2, 4}));
  absl::MutexLock lock(&threads_mu);
  EXPECT_EQ(add_threads.size(), 1u);
}

}  // namespace
}  // namespace towerflow
