// The bad-input tables: the templates T1-T8 of
// ../shared/reference/BAD_INPUTS.md applied to every CPU kernel.
//
// Each family lists valid cases (op, attrs, inputs). The mutation engine
// derives bad variants of every case — each input made a scalar, a
// vector, one rank higher, empty along each dimension (T1, T2); integer
// inputs filled with -1, -2^31, 2^31-1, 0xdeadbeef, -1.25e12, 2^62 (T3,
// T4); float inputs filled with NaN, +-Inf, 1e20, -0.0 and a denormal
// (T8); integer attrs and list entries set to 0, -1, 0x7fffffff and 2^62
// (T5) — and runs each through KernelRunner. Every run must return a
// Status (a crash or sanitizer report fails the whole binary) and an error
// must be one of the codes bad input deserves, never Internal or Unknown.
// Each variant runs twice: through KernelRunner, and as Const nodes of an
// imported GraphDef run by a Session (import-time shape functions too).
// T6 (dtype confusion) and T7 (list arity) are checked where they are
// caught: the runner's type checks as the executor's, and NodeDef
// validation. Specific advisories get explicit cases at the end.
#include <dlfcn.h>
#include <sys/resource.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/jpeg.h"
#include "core/png.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/testing/bad_inputs_cases.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "runtime/session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

using bad_inputs::A;
using bad_inputs::ArrayCases;
using bad_inputs::Case;
using bad_inputs::F;
using bad_inputs::I32;
using bad_inputs::ImageCodecCases;
using bad_inputs::InputPipelineCases;
using bad_inputs::Ints;
using bad_inputs::ListCases;
using bad_inputs::MathCases;
using bad_inputs::NnCases;
using bad_inputs::OptimizerCases;
using bad_inputs::QuantizationCases;
using bad_inputs::QuantizedInferenceCases;
using bad_inputs::SamplingCases;
using bad_inputs::SparseCases;
using bad_inputs::SpecialFunctionCases;
using bad_inputs::StateCases;
using bad_inputs::Str;

// ---- Mutations ----

template <typename T>
Tensor FilledLike(const Tensor& t, T v) {
  return Filled<T>(t.shape(), v);
}

// Same dtype, other shapes (T1, T2).
std::vector<Tensor> ShapeMutations(const Tensor& t) {
  std::vector<TensorShape> shapes = {TensorShape({}), TensorShape({1}), TensorShape({0}),
                                     TensorShape({2, 2, 2, 2, 2})};
  std::vector<int64_t> dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  std::vector<int64_t> up = dims;
  up.push_back(1);
  shapes.push_back(TensorShape(up));
  for (size_t d = 0; d < dims.size(); ++d) {
    std::vector<int64_t> e = dims;
    e[d] = 0;
    shapes.push_back(TensorShape(e));
  }
  std::vector<Tensor> out;
  for (const TensorShape& s : shapes) {
    Tensor m(t.dtype(), s);
    if (t.dtype() == DT_STRING) {
      for (int64_t i = 0; i < m.NumElements(); ++i) m.data<std::string>()[i] = "x";
    } else if (t.dtype() == DT_VARIANT) {  // the case's list, in tensors of other shapes
      for (int64_t i = 0; i < m.NumElements() && t.NumElements() > 0; ++i) {
        m.data<Variant>()[i] = t.data<Variant>()[0];
      }
    } else if (m.NumElements() > 0) {
      std::memset(m.raw_data(), 1, m.TotalBytes());  // small positive ints / finite floats
      if (t.dtype() == DT_FLOAT) m.flat<float>().setConstant(1);
      if (t.dtype() == DT_BOOL) m.flat<bool>().setConstant(true);
    }
    out.push_back(m);
  }
  return out;
}

// Same shape, hostile values (T3, T4, T8).
std::vector<Tensor> ValueMutations(const Tensor& t) {
  std::vector<Tensor> out;
  if (t.dtype() == DT_INT32) {
    for (int32_t v : {-1, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                      static_cast<int32_t>(0xdeadbeef), -1879048192, 0}) {
      out.push_back(FilledLike<int32_t>(t, v));
    }
  } else if (t.dtype() == DT_INT64) {
    for (int64_t v : {int64_t{-1}, int64_t{-1250000000000}, int64_t{1} << 62,
                      std::numeric_limits<int64_t>::max(), int64_t{0xdeadbeef}}) {
      out.push_back(FilledLike<int64_t>(t, v));
    }
  } else if (t.dtype() == DT_FLOAT) {
    for (float v : {std::nanf(""), INFINITY, -INFINITY, 1e20f, -0.0f, 1e-45f}) {
      out.push_back(FilledLike<float>(t, v));
    }
  }
  return out;
}

// Integer attrs and list(int) entries set to hostile values (T5).
std::vector<std::map<std::string, AttrValue>> AttrMutations(
    const std::map<std::string, AttrValue>& attrs) {
  std::vector<std::map<std::string, AttrValue>> out;
  const std::vector<int64_t> bad = {0, -1, 0x7fffffff, int64_t{1} << 62};
  for (const auto& [name, value] : attrs) {
    if (value.value_case() == AttrValue::kI) {
      for (int64_t b : bad) {
        auto m = attrs;
        m[name].set_i(b);
        out.push_back(m);
      }
    } else if (value.has_list() && value.list().i_size() > 0) {
      for (int k = 0; k < value.list().i_size(); ++k) {
        for (int64_t b : bad) {
          auto m = attrs;
          m[name].mutable_list()->set_i(k, b);
          out.push_back(m);
        }
      }
    }
  }
  return out;
}

// The codes a kernel may answer a bad input with: DataLoss is TF's for bytes
// that do not decompress (DecodeCompressed).
bool AcceptableError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kNotFound:
      return true;
    default:
      return false;
  }
}

// The variant as Const nodes (names prefixed with `prefix`) added to
// `session` by Extend and run: the same values now also pass Const
// decoding and the shape functions at import. Extend leaves the graph as
// it was when it fails. Returns a failure description or "".
std::string RunInGraph(KernelRunner& r, const std::vector<Tensor>& inputs, Session* session,
                       const std::string& prefix) {
  absl::StatusOr<NodeDef> def = r.CompleteNodeDef(inputs);
  if (!def.ok()) return AcceptableError(def.status()) ? "" : def.status().ToString();
  GraphDef g;
  for (size_t i = 0; i < inputs.size(); ++i) {
    NodeDef* c = g.add_node();
    c->set_name(absl::StrCat(prefix, "in", i));
    c->set_op("Const");
    (*c->mutable_attr())["dtype"] = A(inputs[i].dtype());
    *(*c->mutable_attr())["value"].mutable_tensor() = inputs[i].AsProto();
    def->add_input(c->name());
  }
  def->set_name(prefix + "k");
  *g.add_node() = *def;
  absl::Status s = session->Extend(g);
  if (s.ok()) {
    const bool has_outputs = OpRegistry::Global()->Find(def->op())->op_def.output_arg_size() > 0;
    std::vector<Tensor> out;
    s = has_outputs ? session->Run({}, {def->name() + ":0"}, {}, &out)
                    : session->Run({}, {}, {def->name()}, &out);
  }
  return s.ok() || AcceptableError(s) ? "" : absl::StrCat("in a graph: ", s.ToString());
}

// Runs one variant on its own and in `session`'s graph; returns a failure
// description or "".
std::string RunVariant(const std::string& op, const std::map<std::string, AttrValue>& attrs,
                       const std::vector<Tensor>& inputs, Session* session) {
  static int variant = 0;
  KernelRunner r(op);
  for (const auto& [name, value] : attrs) r.Attr(name, value);
  const std::string in_graph = RunInGraph(r, inputs, session, absl::StrCat("v", variant++, "/"));
  if (!in_graph.empty()) return in_graph;
  absl::StatusOr<std::vector<Tensor>> out = r.Run(inputs);
  if (out.ok()) {
    for (const Tensor& t : *out) {
      if (!t.IsInitialized()) return "an output is uninitialised";
    }
    return "";
  }
  if (!AcceptableError(out.status())) return out.status().ToString();
  return "";
}

// Legal but huge requests (OneHot of depth 2^31 - 1, Range over all int32)
// must fail fast with ResourceExhausted instead of paging in tens of GiB.
// KernelRunner's allocator is capped; the Session's host allocator is not,
// so the process's address space is (4 GiB). Not under ASan or TSan, which
// reserve terabytes of shadow memory and cap allocations themselves
// (max_allocation_size_mb: .bazelrc, tools/tsan). TSan is found at run time:
// --config=tsan hides __SANITIZE_THREAD__ from the headers.
void CapAddressSpace() {
#ifndef __SANITIZE_ADDRESS__
  if (dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr) return;
  static const bool capped = [] {
    rlimit limit{size_t{4} << 30, size_t{4} << 30};
    return setrlimit(RLIMIT_AS, &limit) == 0;
  }();
  ASSERT_TRUE(capped);
#endif
}

void RunTable(const std::vector<Case>& cases) {
  CapAddressSpace();
  int variants = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    // One session per case: sessions are cheap to use, not to make.
    absl::StatusOr<std::unique_ptr<Session>> made = NewSession(SessionOptions());
    ASSERT_TRUE(made.ok()) << made.status();
    Session* session = made->get();
    ASSERT_EQ(RunVariant(c.op, c.attrs, c.inputs, session), "") << "the valid case must run";
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      std::vector<Tensor> mutated = ShapeMutations(c.inputs[i]);
      for (Tensor& t : ValueMutations(c.inputs[i])) mutated.push_back(t);
      for (const Tensor& t : mutated) {
        std::vector<Tensor> inputs = c.inputs;
        inputs[i] = t;
        ++variants;
        EXPECT_EQ(RunVariant(c.op, c.attrs, inputs, session), "")
            << "input " << i << " = " << t.DebugString();
      }
    }
    for (const auto& attrs : AttrMutations(c.attrs)) {
      ++variants;
      std::string desc;
      for (const auto& [k, v] : attrs) desc += k + "=" + SummarizeAttrValue(v) + " ";
      EXPECT_EQ(RunVariant(c.op, attrs, c.inputs, session), "") << desc;
    }
  }
  EXPECT_GT(variants, static_cast<int>(cases.size()) * 5);
}

TEST(BadInputsTest, ArrayOps) { RunTable(ArrayCases()); }
TEST(BadInputsTest, MathOps) { RunTable(MathCases()); }
TEST(BadInputsTest, NnOps) { RunTable(NnCases()); }
TEST(BadInputsTest, StateRandomAndLoggingOps) { RunTable(StateCases()); }
TEST(BadInputsTest, ImageCodecs) { RunTable(ImageCodecCases()); }
TEST(BadInputsTest, ListOps) { RunTable(ListCases()); }
TEST(BadInputsTest, SparseOps) { RunTable(SparseCases()); }
TEST(BadInputsTest, InputPipelineOps) { RunTable(InputPipelineCases()); }
TEST(BadInputsTest, QuantizationOps) { RunTable(QuantizationCases()); }
TEST(BadInputsTest, QuantizedInferenceOps) { RunTable(QuantizedInferenceCases()); }
TEST(BadInputsTest, MoreOptimizerUpdates) { RunTable(OptimizerCases()); }
TEST(BadInputsTest, SamplersAndFractionalPooling) { RunTable(SamplingCases()); }
TEST(BadInputsTest, SpecialFunctions) { RunTable(SpecialFunctionCases()); }

// ---- Specific advisories ----

TEST(BadInputsTest, ReshapeTo255DimsIsAnError) {  // tfsa-2022-085
  KernelRunner r("Reshape");
  const auto out = r.Run({F({0}), Literal<int32_t>({255}, std::vector<int32_t>(255, 0))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BadInputsTest, Conv2DEmptyInputWithExplicitPadding) {  // tfsa-2022-124
  KernelRunner r("Conv2D");
  r.Attr("strides", {1, 1, 1, 1})
      .Attr("padding", "EXPLICIT")
      .Attr("explicit_paddings", {0, 0, 1, 1, 1, 1, 0, 0});
  const auto out = r.Run({F({1, 0, 2, 1}), F({1, 1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 2, 4, 1}));
}

TEST(BadInputsTest, AvgPoolGradHugeNegativeShape) {  // tfsa-2022-100, tfsa-2023-010
  KernelRunner r("AvgPoolGrad");
  r.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_EQ(r.Run({I32({-536870912, -536870912, -536870912, -536870912}), F({1, 1, 1, 1})})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Run({I32({1, 4, 4, 1}), F({1, 5, 5, 1})}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BadInputsTest, DtypeConfusionIsCaughtBeforeTheKernel) {  // CVE-2022-23583
  KernelRunner r("AddV2");
  r.Attr("T", DT_INT32);
  EXPECT_THAT(r.Run({F({2}), F({2})}).status().message(), HasSubstr("should be int32"));
}

TEST(BadInputsTest, ListArityMismatchIsCaught) {  // tfsa-2022-145 family
  KernelRunner r("AddN");
  r.Attr("N", int64_t{3});
  EXPECT_THAT(r.Run({F({2}), F({2})}), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                         "AddN takes 3 inputs, given 2"));
  KernelRunner c("ConcatV2");
  c.Attr("N", int64_t{1});
  EXPECT_THAT(c.Run({F({2}), Scalar<int32_t>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Value for attr 'N' of 1 must be at least minimum 2"));
}

TEST(BadInputsTest, NanSizesAndIndices) {  // tfsa-2022-080 family
  KernelRunner r("Range");
  EXPECT_THAT(
      r.Run({Scalar<float>(0), Scalar<float>(NAN), Scalar<float>(1)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Range of nan elements is too large"));
  EXPECT_THAT(
      r.Run({Scalar<float>(0), Scalar<float>(INFINITY), Scalar<float>(1)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Range of inf elements is too large"));
  KernelRunner c("Cast");
  c.Attr("DstT", DT_INT64);
  EXPECT_THAT(RunOk(c, {Literal<float>({2}, {NAN, -INFINITY})}),
              TensorIs<int64_t>({2}, {0, std::numeric_limits<int64_t>::min()}));
}

TEST(BadInputsTest, GatherNegativeAndHugeIndices) {  // CVE-2021-37654 family
  KernelRunner g("GatherV2");
  for (int32_t bad :
       {-1, 4, 5, std::numeric_limits<int32_t>::max(), static_cast<int32_t>(0xdeadbeef)}) {
    EXPECT_EQ(g.Run({F({4, 2}), I32({0, bad}), Scalar<int32_t>(0)}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace towerflow
