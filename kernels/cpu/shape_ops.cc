// Kernels that compute or change shapes: Shape, ShapeN, Size, Rank,
// Reshape, ExpandDims, Squeeze, Fill, ZerosLike, OnesLike, BroadcastTo,
// BroadcastGradientArgs, Range, InvertPermutation and Cast.
//
// Reshape, ExpandDims and Squeeze share the input's buffer.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_join.h"
#include "core/type_dispatch.h"
#include "framework/tensor_views.h"
#include "kernels/bcast.h"
#include "kernels/cpu/cwise_ops.h"
#include "kernels/cpu/float16_convert.h"
#include "kernels/cpu/list_util.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

class CheapKernel : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
};

// Shape / Size / Rank write int vectors of the input's shape.
class ShapeOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {  // ShapeN has N inputs
      const TensorShape& s = ctx->input(i).shape();
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(i, TensorShape({s.dims()})));
      TW_RETURN_IF_ERROR(
          WriteInts(std::vector<int64_t>(s.dim_sizes().begin(), s.dim_sizes().end()), out));
    }
    return absl::OkStatus();
  }
};

class SizeOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    return WriteInts({ctx->input(0).NumElements()}, out);
  }
};

class RankOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<int32_t>() = ctx->input(0).dims();
    return absl::OkStatus();
  }
};

class ReshapeOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(1), "shape"));
    // TF's rule (since 1.13): the product leaves out zero sizes, and so
    // does the input's count when the target has a zero, so [1, 2, 0] to
    // [2, 0, -1] infers 1.
    int unknown = -1;
    int64_t product = 1;
    bool target_has_zero = false;
    for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
      if (dims[i] == -1) {
        if (unknown != -1) {
          return absl::InvalidArgumentError(
              absl::StrCat("only one input size may be -1, not both ", unknown, " and ", i));
        }
        unknown = i;
      } else if (dims[i] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Size ", i, " must be non-negative, not ", dims[i]));
      } else if (dims[i] == 0) {
        target_has_zero = true;
      } else if (product > std::numeric_limits<int64_t>::max() / dims[i]) {
        return absl::InvalidArgumentError("Reshape: the requested shape's size overflows int64");
      } else {
        product *= dims[i];
      }
    }
    if (unknown != -1) {
      int64_t count = 1;
      bool input_has_zero = false;
      for (int d = 0; d < in.dims(); ++d) {
        if (in.dim_size(d) > 0 || !target_has_zero) {
          count *= in.dim_size(d);
        } else {
          input_has_zero = true;
        }
      }
      if (!input_has_zero && count % product != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input to reshape is a tensor with ", count,
                         " values, but the requested shape requires a multiple of ", product));
      }
      dims[unknown] = count / product;
    }
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    if (shape.num_elements() != in.NumElements()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input to reshape is a tensor with ", in.NumElements(),
                       " values, but the requested shape has ", shape.num_elements()));
    }
    TW_ASSIGN_OR_RETURN(Tensor out, in.Reshaped(shape));
    return ctx->set_output(0, std::move(out));
  }
};

// QuantizedReshape (ops/fake_quant_ops.cc): Reshape of a quantized tensor,
// its range passed on.
class QuantizedReshapeOp : public ReshapeOp {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    for (const auto& [i, name] : {std::pair{2, "input_min"}, std::pair{3, "input_max"}}) {
      if (ctx->input(i).dims() > 1 || ctx->input(i).NumElements() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " must be a scalar or a vector of 1 element"));
      }
    }
    TW_RETURN_IF_ERROR(ReshapeOp::Compute(ctx));
    for (int i = 1; i < 3; ++i) {
      TW_ASSIGN_OR_RETURN(Tensor * range, ctx->allocate_output(i, TensorShape()));
      *range->data<float>() = *ctx->input(i + 1).data<float>();
    }
    return absl::OkStatus();
  }
};

// Bitcast: the input's buffer as `type`, the shape as BitcastShape says.
class BitcastOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("type", &to_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int from_size = DataTypeSize(in.dtype()), to_size = DataTypeSize(to_);
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    if (from_size > to_size && to_size > 0) {
      dims.push_back(from_size / to_size);
    } else if (from_size < to_size && from_size > 0) {
      if (dims.empty() || dims.back() != to_size / from_size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Cannot bitcast ", DataTypeString(in.dtype()), in.shape().DebugString(), " to ",
            DataTypeString(to_), ": the last dimension must be ", to_size / from_size));
      }
      dims.pop_back();
    }
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor out, in.BitcastTo(to_, shape));
    return ctx->set_output(0, std::move(out));
  }

 private:
  DataType to_ = DT_INVALID;
};

class ExpandDimsOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(int64_t dim, IntScalar(ctx->input(1), "dim", /*allow_vector=*/true));
    const int rank = in.dims();
    if (dim < -1 - rank || dim > rank) {
      return absl::InvalidArgumentError(absl::StrCat("Tried to expand dim index ", dim,
                                                     " for tensor with ", rank, " dimensions."));
    }
    if (dim < 0) dim += rank + 1;
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    dims.insert(dims.begin() + dim, 1);
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor out, in.Reshaped(shape));
    return ctx->set_output(0, std::move(out));
  }
};

class SqueezeOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("squeeze_dims", &squeeze_dims_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int rank = in.dims();
    std::vector<bool> squeeze(rank, squeeze_dims_.empty());
    for (int64_t d : squeeze_dims_) {
      TW_ASSIGN_OR_RETURN(int axis, CanonicalAxis(d, rank, "squeeze dimension"));
      if (in.dim_size(axis) != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Can not squeeze dim[", axis, "], expected a dimension of 1, got ", in.dim_size(axis)));
      }
      squeeze[axis] = true;
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) {
      if (!(squeeze[i] && in.dim_size(i) == 1)) dims.push_back(in.dim_size(i));
    }
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor out, in.Reshaped(shape));
    return ctx->set_output(0, std::move(out));
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

// Fill(dims, value) and the *Like ops write one value everywhere.
class FillOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "dims"));
    const Tensor& value = ctx->input(1);
    if (value.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("value must be a scalar, got shape ", value.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (value.dtype() == DT_STRING) {
      std::fill_n(out->data<std::string>(), out->NumElements(), value.data<std::string>()[0]);
      return absl::OkStatus();
    }
    if (!VisitByElementSizeCpu(value.dtype(), [&](auto zero) {
          using U = decltype(zero);
          std::fill_n(RawData<U>(*out), out->NumElements(), *RawData<U>(value));
        })) {
      return UnsupportedDtype("Fill", value.dtype());
    }
    return absl::OkStatus();
  }
};

template <int kValue>
class ConstantLikeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    if (kValue == 0 && in.dtype() == DT_VARIANT) return ZerosLikeVariants(ctx, in, out);
    if (!VisitNumberType(in.dtype(), [&](auto zero) {
          using T = decltype(zero);
          std::fill_n(out->data<T>(), out->NumElements(), static_cast<T>(kValue));
        })) {
      return UnsupportedDtype(ctx->op(), in.dtype());
    }
    return absl::OkStatus();
  }
};

// BroadcastTo(input, shape).
class BroadcastToOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(1), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    const BCast b(in.shape(), shape);
    TW_RETURN_IF_ERROR(CheckBroadcastTo(b, in.shape(), shape));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    absl::Status status;
    const bool supported = VisitByElementSizeCpu(in.dtype(), [&](auto zero) {
      using U = decltype(zero);
      status = Broadcast<U>(d, in, b, out);
    });
    if (!supported) return UnsupportedDtype("BroadcastTo", in.dtype());
    return status;
  }

 private:
  template <typename U>
  static absl::Status Broadcast(const Eigen::ThreadPoolDevice& d, const Tensor& in, const BCast& b,
                                Tensor* out) {
    const BCast::Vec& r = b.result_shape();
    if (in.NumElements() == out->NumElements()) {
      std::copy_n(RawData<U>(in), in.NumElements(), RawData<U>(*out));
      return absl::OkStatus();
    }
    switch (r.size()) {
#define TW_BROADCAST_CASE(N)                                                       \
  case N:                                                                          \
    RawMap<U, N>(*out, r).device(d) =                                              \
        RawMap<U, N>(in, b.x_reshape()).broadcast(cwise::AsArray<N>(b.x_bcast())); \
    return absl::OkStatus();
      TW_BROADCAST_CASE(1)
      TW_BROADCAST_CASE(2)
      TW_BROADCAST_CASE(3)
      TW_BROADCAST_CASE(4)
      TW_BROADCAST_CASE(5)
#undef TW_BROADCAST_CASE
      default:
        return absl::UnimplementedError(
            absl::StrCat("BroadcastTo to ", r.size(), " collapsed dimensions is not supported"));
    }
  }
};

class BroadcastGradientArgsOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> s0, IntVector(ctx->input(0), "s0"));
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> s1, IntVector(ctx->input(1), "s1"));
    const BCast b(absl::MakeConstSpan(s0), absl::MakeConstSpan(s1));
    if (!b.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("Incompatible shapes: [",
                                                     absl::StrJoin(s0, ","), "] vs. [",
                                                     absl::StrJoin(s1, ","), "]"));
    }
    for (int i = 0; i < 2; ++i) {
      const BCast::Vec& idx = i == 0 ? b.grad_x_reduce_idx() : b.grad_y_reduce_idx();
      TW_ASSIGN_OR_RETURN(Tensor * out,
                          ctx->allocate_output(i, TensorShape({static_cast<int64_t>(idx.size())})));
      TW_RETURN_IF_ERROR(WriteInts(idx, out));
    }
    return absl::OkStatus();
  }
};

// ConcatOffset(concat_dim, shapes...): where each input of a concatenation
// starts in its output (TF's graphs of ConcatV2's gradient slice with them).
class ConcatOffsetOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& concat_dim = ctx->input(0);
    if (concat_dim.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Concat dim tensor should be a scalar integer, but got shape ",
                       concat_dim.shape().DebugString()));
    }
    const int n = ctx->num_inputs() - 1;
    std::vector<std::vector<int64_t>> shapes(n);
    for (int i = 0; i < n; ++i) {
      const Tensor& shape = ctx->input(1 + i);
      if (shape.dims() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i + 1, " should be a vector, but got shape ", shape.shape().DebugString()));
      }
      TW_ASSIGN_OR_RETURN(shapes[i], IntVector(shape, "shape"));
    }
    const int64_t dims = static_cast<int64_t>(shapes[0].size());
    const int64_t cdim = IntAt(concat_dim, 0);
    const int64_t axis = cdim < 0 ? cdim + dims : cdim;
    if (axis < 0 || axis >= dims) {
      return absl::InvalidArgumentError(
          absl::StrCat("Concat dim is out of range: ", cdim, " vs. ", dims));
    }
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      if (static_cast<int64_t>(shapes[i].size()) != dims) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " should contain ", dims,
                                                       " elements, but got ", shapes[i].size()));
      }
      std::vector<int64_t> out(dims, 0);
      for (int64_t j = 0; j < dims; ++j) {
        if (j == axis) {
          out[j] = offset;
          offset += shapes[i][j];
        } else if (shapes[i][j] != shapes[0][j]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "All dimensions except ", axis, " must match. Input ", i, " has shape [",
              absl::StrJoin(shapes[i], " "), "] and doesn't match input 0 with shape [",
              absl::StrJoin(shapes[0], " "), "]."));
        }
      }
      TW_ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(i, TensorShape({dims})));
      TW_RETURN_IF_ERROR(WriteInts(out, t));
    }
    return absl::OkStatus();
  }
};

// Range(start, limit, delta) -> [start, start + delta, ...) up to limit.
template <typename T>
class RangeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    for (int i = 0; i < 3; ++i) {
      if (ctx->input(i).dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat("Range's inputs must be scalars, input ", i,
                                                       " has shape ",
                                                       ctx->input(i).shape().DebugString()));
      }
    }
    const T start = *ctx->input(0).data<T>(), limit = *ctx->input(1).data<T>(),
            delta = *ctx->input(2).data<T>();
    if (delta == 0) return absl::InvalidArgumentError("Requires delta != 0: 0");
    if (delta > 0 ? start > limit : start < limit) {
      return absl::InvalidArgumentError(
          absl::StrCat("Requires start ", delta > 0 ? "<=" : ">=", " limit when delta ",
                       delta > 0 ? ">" : "<", " 0: ", start, "/", limit));
    }
    // TensorFlow's length, computed in T: Range(0, 0.3, 0.1) has 3 floats.
    double size;
    if constexpr (std::is_integral_v<T>) {
      const __int128 span = static_cast<__int128>(limit) - start;
      const __int128 step = delta < 0 ? -static_cast<__int128>(delta) : delta;
      size = static_cast<double>(((span < 0 ? -span : span) + step - 1) / step);
    } else {
      size = static_cast<double>(std::ceil(std::abs((limit - start) / delta)));
    }
    if (!(size <= static_cast<double>(int64_t{1} << 40))) {
      return absl::InvalidArgumentError(absl::StrCat("Range of ", size, " elements is too large"));
    }
    const int64_t n = static_cast<int64_t>(size);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({n})));
    T* o = out->data<T>();
    // Wide arithmetic: every value lies between start and limit.
    using Wide = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    for (int64_t i = 0; i < n; ++i) {
      o[i] = static_cast<T>(static_cast<Wide>(start) + static_cast<Wide>(i) * delta);
    }
    return absl::OkStatus();
  }
};

template <typename T>
class InvertPermutationOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& p = ctx->input(0);
    if (p.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("invert_permutation expects a 1D vector, got ", p.shape().DebugString()));
    }
    const int64_t n = p.NumElements();
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.shape()));
    T* o = out->data<T>();
    std::fill_n(o, n, T(-1));
    for (int64_t i = 0; i < n; ++i) {
      const T d = p.data<T>()[i];
      if (d < 0 || d >= n) {
        return absl::InvalidArgumentError(absl::StrCat(d, " is not between 0 and ", n));
      }
      if (o[d] != -1)
        return absl::InvalidArgumentError(absl::StrCat(d, " is duplicated in the input."));
      o[d] = static_cast<T>(i);
    }
    return absl::OkStatus();
  }
};

// Cast(x: SrcT) -> DstT. Float to integer conversions saturate and send NaN
// to 0 (a plain C++ cast of those is undefined behaviour). half and bfloat16
// widen to float exactly and narrow from it rounding to nearest even, as
// Eigen's types (and TensorFlow's Cast) do. A complex number casts to a real
// type (bool too) through its real part, a real one to a complex type with
// imaginary part 0, as TF's.
template <typename Src, typename Dst>
struct CastFn {
  Dst operator()(const Src& x) const {
    if constexpr (kIsComplex<Src> && kIsComplex<Dst>) {
      return Dst(x);
    } else if constexpr (kIsComplex<Src>) {
      return CastFn<typename Src::value_type, Dst>()(x.real());
    } else if constexpr (kIsComplex<Dst>) {
      return Dst(CastFn<Src, typename Dst::value_type>()(x), 0);
    } else if constexpr (kIsFloat16<Src> && !std::is_same_v<Dst, float>) {
      return CastFn<float, Dst>()(static_cast<float>(x));
    } else if constexpr (std::is_same_v<Dst, bool>) {
      return x != Src(0);
    } else if constexpr (kIsFloatingPoint<Src> && std::is_integral_v<Dst>) {
      if (std::isnan(x)) return Dst(0);
      if (x <= static_cast<Src>(std::numeric_limits<Dst>::lowest())) {
        return std::numeric_limits<Dst>::lowest();
      }
      if (x >= static_cast<Src>(std::numeric_limits<Dst>::max())) {
        return std::numeric_limits<Dst>::max();
      }
      return static_cast<Dst>(x);
    } else {
      return static_cast<Dst>(x);
    }
  }
};

template <typename T>
constexpr bool kCastable = std::is_arithmetic_v<T> || kIsFloat16<T> || kIsComplex<T>;

class CastOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("SrcT", &src_));
    TW_RETURN_IF_ERROR(c.GetAttr("DstT", &dst_));
    bool ok = false;
    VisitNumberType(src_, [&](auto s) {
      VisitNumberType(dst_, [&](auto t) {
        using S = decltype(s);
        using D = decltype(t);
        if constexpr (kCastable<S> && kCastable<D>) {
          fn_ = [](const Eigen::ThreadPoolDevice& d, const Tensor& in, Tensor* out) {
            if constexpr ((kIsFloat16<S> && std::is_same_v<D, float>) ||
                          (std::is_same_v<S, float> && kIsFloat16<D>)) {
              ConvertFloat16(d, in, out);  // vectorised (float16_convert.h)
            } else if constexpr (kIsFloatingPoint<S> && kIsFloatingPoint<D> &&
                                 (kIsFloat16<S> != kIsFloat16<D>)) {
              out->flat<D>().device(d) = in.flat<S>().template cast<D>();
            } else {
              out->flat<D>().device(d) = in.flat<S>().unaryExpr(CastFn<S, D>());
            }
          };
          ok = true;
        }
      });
    });
    if (!ok) {
      return absl::UnimplementedError(absl::StrCat("Cast ", DataTypeString(src_), " to ",
                                                   DataTypeString(dst_), " is not supported"));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (src_ == dst_) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    if (in.NumElements() > 0) fn_(ctx->eigen_cpu_device(), in, out);
    return absl::OkStatus();
  }

 private:
  DataType src_ = DT_INVALID, dst_ = DT_INVALID;
  void (*fn_)(const Eigen::ThreadPoolDevice&, const Tensor&, Tensor*) = nullptr;
};

// EnsureShape(input) with attr `shape`: the input as is when its shape is
// compatible with `shape` (unknown dims match any size), else
// InvalidArgument naming the tensor, as TF's.
class EnsureShapeOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    if (c.def().input_size() > 0) input_ = c.def().input(0);
    return c.GetAttr("shape", &shape_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (!PartialTensorShape(x.shape()).IsCompatibleWith(shape_)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Shape of tensor ", input_, " ", x.shape().DebugString(),
                       " is not compatible with expected shape ", shape_.DebugString(), "."));
    }
    return ctx->set_output(0, x);
  }

 private:
  std::string input_;
  PartialTensorShape shape_;
};

TW_REGISTER_KERNELS(shape_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  // These read only shapes, so they serve GPUs too: the shape arguments and
  // results stay in host memory and the tensor's buffer is shared as is.
  // Capturable: they read shapes, which a recorded step fixes, and share
  // buffers (runtime/capture_specializer.h).
  for (const char* device : {kDeviceCpu, kDeviceGpu}) {
    const auto on = [device](const char* op) {
      return KernelDefBuilder(op).Device(device).Capturable();
    };
    RegisterKernel(on("Shape").HostMemory("output"), MakeFactory<ShapeOp>());
    RegisterKernel(on("ShapeN").HostMemory("output"), MakeFactory<ShapeOp>());
    RegisterKernel(on("Size").HostMemory("output"), MakeFactory<SizeOp>());
    RegisterKernel(on("Rank").HostMemory("output"), MakeFactory<RankOp>());
    RegisterKernel(on("Reshape").HostMemory("shape"), MakeFactory<ReshapeOp>());
    RegisterKernel(on("ExpandDims").HostMemory("dim"), MakeFactory<ExpandDimsOp>());
    RegisterKernel(on("Squeeze"), MakeFactory<SqueezeOp>());
    RegisterKernel(on("EnsureShape"), MakeFactory<EnsureShapeOp>());
    // A broadcasting op's gradient is colocated with the op; without a GPU
    // kernel for this shape arithmetic, the placer would move the op and
    // its gradient to the CPU (ResNet's residual adds did, copying every
    // activation both ways).
    RegisterKernel(on("BroadcastGradientArgs")
                       .HostMemory("s0")
                       .HostMemory("s1")
                       .HostMemory("r0")
                       .HostMemory("r1"),
                   MakeFactory<BroadcastGradientArgsOp>());
    RegisterKernel(
        on("ConcatOffset").HostMemory("concat_dim").HostMemory("shape").HostMemory("offset"),
        MakeFactory<ConcatOffsetOp>());
  }
  // CPU only: a GPU node's int32 tensors live in host memory, so a view of
  // a device buffer as int32 would be read on the wrong side.
  for (DataType t : {DT_QUINT8, DT_QINT32}) {  // TF's kernels
    RegisterKernel(cpu("QuantizedReshape").TypeConstraint("T", t).HostMemory("shape"),
                   MakeFactory<QuantizedReshapeOp>());
  }
  RegisterKernel(cpu("Bitcast"), MakeFactory<BitcastOp>());
  RegisterKernel(cpu("Fill"), MakeFactory<FillOp>());
  RegisterKernel(cpu("ZerosLike"), MakeFactory<ConstantLikeOp<0>>());
  RegisterKernel(cpu("OnesLike"), MakeFactory<ConstantLikeOp<1>>());
  RegisterKernel(cpu("BroadcastTo"), MakeFactory<BroadcastToOp>());
  RegisterTypedKernels<RangeOp, float, double, int32_t, int64_t>(cpu("Range"), "Tidx");
  // int32 shape arithmetic of GPU nodes (see cwise_binary_ops.cc): int32
  // tensors live in host memory, so these CPU kernels serve.
  // Capturable: host work on host values, which a recorded step allows
  // only when they are the same every step (runtime/capture_specializer.h).
  const auto gpu_int32 = [](const char* op, const char* attr) {
    return KernelDefBuilder(op).Device(kDeviceGpu).TypeConstraint(attr, DT_INT32).Capturable();
  };
  RegisterKernel(gpu_int32("Range", "Tidx"), MakeFactory<RangeOp<int32_t>>());
  RegisterKernel(gpu_int32("ZerosLike", "T"), MakeFactory<ConstantLikeOp<0>>());
  RegisterKernel(gpu_int32("OnesLike", "T"), MakeFactory<ConstantLikeOp<1>>());
  RegisterTypedKernels<InvertPermutationOp, int32_t, int64_t>(cpu("InvertPermutation"), "T");
  RegisterKernel(cpu("Cast"), MakeFactory<CastOp>());
  // A GPU node's int32 input is in host memory (see cwise_binary_ops.cc);
  // its cast stays there, and a float result is copied to the GPU where
  // used.
  RegisterKernel(KernelDefBuilder("Cast")
                     .Device(kDeviceGpu)
                     .TypeConstraint("SrcT", DT_INT32)
                     .HostMemory("x")
                     .HostMemory("y")
                     .Capturable(),
                 MakeFactory<CastOp>());
}

}  // namespace
}  // namespace towerflow
