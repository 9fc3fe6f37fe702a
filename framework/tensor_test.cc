#include "framework/tensor.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "core/tensor_proto_util.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::StatusIs;

TensorProto Parse(const std::string& text) {
  TensorProto p;
  EXPECT_TRUE(ParseTextProto(text, &p).ok()) << text;
  return p;
}

TEST(AllocatorTest, CpuAllocatorCountsBytesInUseAndPeak) {
  Allocator* a = CpuAllocator();
  const Allocator::Stats before = *a->GetStats();
  void* p = a->AllocateRaw(kTensorAlignment, 1 << 20);
  ASSERT_NE(p, nullptr);
  const Allocator::Stats during = *a->GetStats();
  EXPECT_GE(during.bytes_in_use - before.bytes_in_use, 1 << 20);
  EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  EXPECT_EQ(during.num_allocs, before.num_allocs + 1);
  EXPECT_GE(during.largest_alloc_size, 1 << 20);
  a->DeallocateRaw(p);
  EXPECT_EQ(a->GetStats()->bytes_in_use, before.bytes_in_use);
}

// See Note [The CPU allocator's cache]: a large buffer released waits for
// the next request of its size class (eight classes per power of two).
TEST(AllocatorTest, CpuAllocatorReusesLargeBuffersOfTheirSizeClass) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the cache is off under AddressSanitizer";
#endif
  Allocator* a = CpuAllocator();
  const int64_t in_use = a->GetStats()->bytes_in_use;
  void* p = a->AllocateRaw(kTensorAlignment, 1000000);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 1000000);
  EXPECT_EQ(a->GetStats()->bytes_in_use - in_use, 1 << 20);  // its class: 1 MiB
  a->DeallocateRaw(p);
  EXPECT_EQ(a->GetStats()->bytes_in_use, in_use);
  void* same_class = a->AllocateRaw(kTensorAlignment, 1040000);
  void* next_class = a->AllocateRaw(kTensorAlignment, 1100000);  // 1.125 MiB
  EXPECT_EQ(same_class, p);
  EXPECT_NE(next_class, p);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(next_class) % kTensorAlignment, 0u);
  EXPECT_EQ(a->GetStats()->bytes_in_use - in_use, (1 << 20) + (9 << 17));
  a->DeallocateRaw(same_class);
  a->DeallocateRaw(next_class);
  EXPECT_EQ(a->GetStats()->bytes_in_use, in_use);
}

// Threads taking and releasing buffers of a few classes at once each get a
// buffer of their own (the pattern they write survives) and leave the count
// where it was. TSan checks the cache's locking (CI runs this test under it).
TEST(AllocatorTest, CpuAllocatorCacheIsThreadSafe) {
  Allocator* a = CpuAllocator();
  const int64_t in_use = a->GetStats()->bytes_in_use;
  std::atomic<int> corrupted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([a, t, &corrupted] {
      for (int i = 0; i < 200; ++i) {
        const size_t bytes = (size_t{256} << 10) * (1 + (i + t) % 3) + 64 * t;
        auto* p = static_cast<unsigned char*>(a->AllocateRaw(kTensorAlignment, bytes));
        if (p == nullptr) {
          ++corrupted;
          continue;
        }
        const unsigned char mark = static_cast<unsigned char>(t * 50 + i);
        std::memset(p, mark, bytes);
        std::this_thread::yield();
        if (p[0] != mark || p[bytes - 1] != mark) ++corrupted;
        a->DeallocateRaw(p);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(corrupted.load(), 0);
  EXPECT_EQ(a->GetStats()->bytes_in_use, in_use);
}

TEST(TensorTest, AllocatesAlignedBufferWithShapeAndDtype) {
  TW_ASSERT_OK_AND_ASSIGN(Tensor t, Tensor::Allocate(CpuAllocator(), DT_FLOAT, {2, 3}));
  EXPECT_EQ(t.dtype(), DT_FLOAT);
  EXPECT_EQ(t.shape(), TensorShape({2, 3}));
  EXPECT_EQ(t.NumElements(), 6);
  EXPECT_EQ(t.TotalBytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
  t.matrix<float>()(1, 2) = 5.0f;
  EXPECT_EQ(t.flat<float>()(5), 5.0f);
}

TEST(TensorTest, OverflowingShapeIsInvalidArgumentNotACrash) {
  // 2^62 float elements need 2^64 bytes.
  EXPECT_THAT(
      Tensor::Allocate(CpuAllocator(), DT_FLOAT, TensorShape({int64_t{1} << 31, int64_t{1} << 31}))
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "needs too many bytes"));
  EXPECT_THAT(Tensor::Allocate(CpuAllocator(), DT_FLOAT_REF, TensorShape({2})).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "cannot hold elements"));
}

TEST(TensorTest, CopiesShareTheBuffer) {
  Tensor a(DT_INT32, {3});
  EXPECT_TRUE(a.RefCountIsOne());
  Tensor b = a;
  EXPECT_TRUE(a.SharesBufferWith(b));
  EXPECT_FALSE(a.RefCountIsOne());
  b.flat<int32_t>()(0) = 7;
  EXPECT_EQ(a.flat<int32_t>()(0), 7);
  TW_ASSERT_OK_AND_ASSIGN(Tensor c, a.DeepCopy());
  EXPECT_FALSE(c.SharesBufferWith(a));
  EXPECT_EQ(c.flat<int32_t>()(0), 7);
}

TEST(TensorTest, MovesAndAssignmentsKeepTheCountAndFreeTheBufferOnce) {
  const int64_t before = CpuAllocator()->GetStats()->bytes_in_use;
  {
    Tensor a(DT_STRING, {2});
    a.flat<std::string>()(1) = std::string(100, 'x');  // destroyed with the buffer
    Tensor b = a;
    Tensor c = std::move(b);
    EXPECT_FALSE(b.SharesBufferWith(a));  // moved from
    EXPECT_TRUE(c.SharesBufferWith(a));
    EXPECT_FALSE(a.RefCountIsOne());
    c = c;  // self-assignment keeps the reference
    EXPECT_TRUE(c.SharesBufferWith(a));
    c = Tensor(DT_FLOAT, {1});
    EXPECT_TRUE(a.RefCountIsOne());
    Tensor d;
    EXPECT_FALSE(d.RefCountIsOne());
    d = a;
    d = std::move(c);
    EXPECT_TRUE(a.RefCountIsOne());
    EXPECT_EQ(a.flat<std::string>()(1), std::string(100, 'x'));
  }
  EXPECT_EQ(CpuAllocator()->GetStats()->bytes_in_use, before);
}

// A reader on another thread lets go of a shared buffer; the writer, seeing
// itself the only owner, writes in place. The count's acquire/release
// ordering makes that safe (ThreadSanitizer checks it: --config=tsan).
TEST(TensorTest, TheLastOwnerWritesAfterTheOthersLetGo) {
  Tensor t(DT_INT64, {64});
  for (int i = 0; i < 64; ++i) t.flat<int64_t>()(i) = i;
  std::atomic<int64_t> sum{0};
  std::thread reader([copy = t, &sum]() mutable {
    int64_t s = 0;
    for (int i = 0; i < 64; ++i) s += copy.flat<int64_t>()(i);
    sum = s;
    copy = Tensor();  // lets go
  });
  while (!t.RefCountIsOne()) std::this_thread::yield();
  for (int i = 0; i < 64; ++i) t.flat<int64_t>()(i) = -1;
  reader.join();
  EXPECT_EQ(sum.load(), 64 * 63 / 2);
}

TEST(TensorTest, FromProtoMakesEveryNonzeroBoolByteTrue) {
  TensorProto p;
  p.set_dtype(DT_BOOL);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  p.set_tensor_content(std::string("\x01\x20\x00", 3));
  TW_ASSERT_OK_AND_ASSIGN(Tensor t, Tensor::FromProto(p));
  const auto* bytes = static_cast<const uint8_t*>(t.raw_data());
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(bytes[1], 1);
  EXPECT_EQ(bytes[2], 0);
  EXPECT_EQ(t.SummarizeValue(3), "1 1 0");
}

TEST(TensorTest, QuantizedTypesPrintTheirIntegers) {
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor q, Tensor::FromProto(Parse("dtype: DT_QINT8 tensor_shape { dim { size: 3 } } "
                                        "tensor_content: '\\x80\\x01\\x7f'")));
  EXPECT_EQ(q.SummarizeValue(3), "-128 1 127");
  EXPECT_EQ(q.SummarizeValue(2), "-128 1...");
}

// TF writes a quantized constant of one repeated value (or a few) in
// int_val; the last one fills the rest.
TEST(TensorTest, QuantizedTypesReadIntVal) {
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor u8, Tensor::FromProto(Parse("dtype: DT_QUINT8 tensor_shape { dim { size: 3 } } "
                                         "int_val: 5")));
  EXPECT_EQ(u8.SummarizeValue(3), "5 5 5");
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor i32, Tensor::FromProto(Parse("dtype: DT_QINT32 tensor_shape { dim { size: 3 } } "
                                          "int_val: -2147483648 int_val: 7")));
  EXPECT_EQ(i32.SummarizeValue(3), "-2147483648 7 7");
  for (const char* type : {"DT_QINT8", "DT_QINT16", "DT_QUINT16"}) {
    TW_ASSERT_OK_AND_ASSIGN(
        Tensor t, Tensor::FromProto(Parse(absl::StrCat("dtype: ", type,
                                                       " tensor_shape { dim { size: 2 } } "
                                                       "int_val: -1 int_val: 100"))));
    EXPECT_EQ(t.SummarizeValue(2), type == std::string("DT_QUINT16") ? "65535 100" : "-1 100");
  }
}

TEST(TensorTest, SixteenBitFloatsRoundTripAndPrintAsNumbers) {
  // half_val holds the bits, repeated as a short list is.
  TW_ASSERT_OK_AND_ASSIGN(Tensor h,
                          Tensor::FromProto(Parse("dtype: DT_HALF tensor_shape { dim { size: 3 } } "
                                                  "half_val: 15872 half_val: 48640")));
  EXPECT_EQ(h.SummarizeValue(3), "1.5 -1.5 -1.5");
  TW_ASSERT_OK_AND_ASSIGN(Tensor back, Tensor::FromProto(h.AsProto()));
  EXPECT_EQ(back.SummarizeValue(3), "1.5 -1.5 -1.5");
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor b, Tensor::FromProto(Parse("dtype: DT_BFLOAT16 tensor_shape { } half_val: 15821")));
  EXPECT_EQ(b.DebugString(), "Tensor<type: bfloat16 shape: [] values: 0.100098>");
  EXPECT_EQ(b.AsProto().half_val(0), 15821);
}

TEST(TensorTest, FromProtoReadsTensorContent) {
  TensorProto p = MakeTensorProto<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  ASSERT_FALSE(p.tensor_content().empty());
  TW_ASSERT_OK_AND_ASSIGN(Tensor t, Tensor::FromProto(p));
  EXPECT_THAT(t.span<float>(), ElementsAre(1, 2, 3, 4));
}

TEST(TensorTest, FromProtoRepeatsTheLastValueOfAShortList) {
  // As TF's Deep MNIST bias initialiser: shape [32], one float_val 0.1.
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor t, Tensor::FromProto(Parse("dtype: DT_FLOAT tensor_shape { dim { size: 5 } } "
                                        "float_val: 1 float_val: 0.5")));
  EXPECT_THAT(t.span<float>(), ElementsAre(1, 0.5, 0.5, 0.5, 0.5));
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor i, Tensor::FromProto(Parse("dtype: DT_INT64 tensor_shape { dim { size: 3 } } "
                                        "int64_val: -4")));
  EXPECT_THAT(i.span<int64_t>(), ElementsAre(-4, -4, -4));
}

TEST(TensorTest, FromProtoWithoutValuesIsZeros) {
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor t, Tensor::FromProto(
                    Parse("dtype: DT_DOUBLE tensor_shape { dim { size: 2 } dim { size: 2 } }")));
  EXPECT_THAT(t.span<double>(), ElementsAre(0, 0, 0, 0));
  TW_ASSERT_OK_AND_ASSIGN(
      Tensor s, Tensor::FromProto(Parse("dtype: DT_STRING tensor_shape { dim { size: 2 } }")));
  EXPECT_THAT(s.span<std::string>(), ElementsAre("", ""));
}

TEST(TensorTest, FromProtoRejectsWrongSizes) {
  EXPECT_THAT(Tensor::FromProto(Parse("dtype: DT_FLOAT tensor_shape { dim { size: 2 } } "
                                      "tensor_content: '\\000\\000\\200?'"))
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "tensor_content has 4 bytes, but shape [2] of float needs 8"));
  EXPECT_THAT(Tensor::FromProto(Parse("dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
                                      "int_val: 1 int_val: 2"))
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "int_val has 2 values"));
  EXPECT_THAT(
      Tensor::FromProto(Parse("dtype: DT_FLOAT tensor_shape { dim { size: -3 } }")).status(),
      StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(TensorTest, ProtoRoundTripKeepsValues) {
  Tensor t(DT_INT32, {2, 2});
  auto m = t.matrix<int32_t>();
  m(0, 0) = 1;
  m(0, 1) = -2;
  m(1, 0) = 3;
  m(1, 1) = 400000;
  TW_ASSERT_OK_AND_ASSIGN(Tensor back, Tensor::FromProto(t.AsProto()));
  EXPECT_EQ(back.shape(), TensorShape({2, 2}));
  EXPECT_THAT(back.span<int32_t>(), ElementsAre(1, -2, 3, 400000));
  Tensor s(DT_STRING, {2});
  s.flat<std::string>()(0) = "ab";
  s.flat<std::string>()(1) = "c";
  TW_ASSERT_OK_AND_ASSIGN(Tensor sback, Tensor::FromProto(s.AsProto()));
  EXPECT_THAT(sback.span<std::string>(), ElementsAre("ab", "c"));
}

TEST(TensorTest, SliceAndReshapeShareTheBuffer) {
  Tensor t(DT_FLOAT, {3, 2});
  for (int i = 0; i < 6; ++i) t.flat<float>()(i) = i;
  TW_ASSERT_OK_AND_ASSIGN(Tensor rows, t.Slice(1, 3));
  EXPECT_EQ(rows.shape(), TensorShape({2, 2}));
  EXPECT_THAT(rows.span<float>(), ElementsAre(2, 3, 4, 5));
  EXPECT_TRUE(rows.SharesBufferWith(t));
  TW_ASSERT_OK_AND_ASSIGN(Tensor flat, t.Reshaped(TensorShape({6})));
  EXPECT_EQ(flat.vec<float>()(5), 5.0f);
  EXPECT_THAT(t.Reshaped(TensorShape({4})).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Cannot reshape a tensor with 6"));
  EXPECT_THAT(t.Slice(2, 4).status(), StatusIs(absl::StatusCode::kInvalidArgument, "out of range"));
}

TEST(TensorTest, DebugStringShowsTypeShapeAndValues) {
  Tensor t(DT_FLOAT, {2});
  t.flat<float>()(0) = 1.5f;
  t.flat<float>()(1) = -2.0f;
  EXPECT_EQ(t.DebugString(), "Tensor<type: float shape: [2] values: 1.5 -2>");
}

}  // namespace
}  // namespace towerflow
