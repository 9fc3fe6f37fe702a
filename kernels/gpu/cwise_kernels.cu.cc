// CUDA kernels behind kernels/gpu/launch.h: elementwise maths and
// comparisons with broadcasting (the functors of kernels/cwise_functors.h,
// which the CPU kernels use too), selects, fills and casts. Grid-stride
// loops over 64-bit indices, 256 threads a block.
#include "kernels/gpu/cwise_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cwise_functors.h"
#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

// The maths kernels read T as DeviceValue<T> says: the 16-bit floats
// widened to float for F, the result rounded once.
template <typename T, typename F>
__global__ void UnaryKernel(const T* x, T* y, int64_t n) {
  const F f;
  TW_GRID_LOOP(i, n) { y[i] = DeviceValue<T>::Narrow(f(DeviceValue<T>::Widen(x[i]))); }
}

template <typename T, typename Out, typename F>
__global__ void BinaryKernel(const T* x, const T* y, Out* z, int64_t n) {
  const F f;
  TW_GRID_LOOP(i, n) {
    z[i] = DeviceValue<Out>::Narrow(f(DeviceValue<T>::Widen(x[i]), DeviceValue<T>::Widen(y[i])));
  }
}

template <typename T>
__global__ void IsFiniteKernel(const T* x, bool* y, int64_t n) {
  TW_GRID_LOOP(i, n) { y[i] = isfinite(DeviceValue<T>::Widen(x[i])); }
}

template <typename T, typename Out, typename F>
__global__ void BroadcastBinaryKernel(const T* x, const T* y, Out* z, int64_t n, Broadcast b) {
  const F f;
  TW_GRID_LOOP(i, n) {
    int64_t rest = i, xi = 0, yi = 0;
    for (int d = b.rank - 1; d >= 0; --d) {
      const int64_t k = rest % b.dims[d];
      rest /= b.dims[d];
      xi += k * b.x_strides[d];
      yi += k * b.y_strides[d];
    }
    z[i] = DeviceValue<Out>::Narrow(f(DeviceValue<T>::Widen(x[xi]), DeviceValue<T>::Widen(y[yi])));
  }
}

template <typename T>
__global__ void SelectKernel(const bool* c, const T* t, const T* e, T* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = c[i] ? t[i] : e[i]; }
}

template <typename T>
__global__ void BroadcastSelectKernel(const bool* c, const T* t, const T* e, T* out, int64_t n,
                                      SelectBroadcast b) {
  TW_GRID_LOOP(i, n) {
    int64_t rest = i, ci = 0, ti = 0, ei = 0;
    for (int d = b.rank - 1; d >= 0; --d) {
      const int64_t k = rest % b.dims[d];
      rest /= b.dims[d];
      ci += k * b.c_strides[d];
      ti += k * b.t_strides[d];
      ei += k * b.e_strides[d];
    }
    out[i] = c[ci] ? t[ti] : e[ei];
  }
}

template <typename T>
__global__ void BroadcastCopyKernel(const T* x, T* out, int64_t n, Broadcast b) {
  TW_GRID_LOOP(i, n) {
    int64_t rest = i, xi = 0;
    for (int d = b.rank - 1; d >= 0; --d) {
      xi += (rest % b.dims[d]) * b.x_strides[d];
      rest /= b.dims[d];
    }
    out[i] = x[xi];
  }
}

template <typename T>
__global__ void LeakyReluKernel(const T* x, T* y, int64_t n, MathOf<T> alpha) {
  using V = DeviceValue<T>;
  TW_GRID_LOOP(i, n) {
    const MathOf<T> v = V::Widen(x[i]);
    y[i] = V::Narrow(v > MathOf<T>(0) ? v : v * alpha);
  }
}

template <typename T>
__global__ void LeakyReluGradKernel(const T* g, const T* f, T* out, int64_t n, MathOf<T> alpha) {
  using V = DeviceValue<T>;
  TW_GRID_LOOP(i, n) {
    const MathOf<T> v = V::Widen(g[i]);
    out[i] = V::Narrow(V::Widen(f[i]) > MathOf<T>(0) ? v : v * alpha);
  }
}

template <typename T>
__global__ void FillKernel(const T* value, T* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = *value; }
}

template <typename T>
__global__ void FillConstantKernel(T value, T* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = value; }
}

template <typename From, typename To>
__global__ void CastKernel(const From* in, To* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = static_cast<To>(in[i]); }
}

__global__ void CastToHalfKernel(const float* in, uint16_t* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = __half_as_ushort(__float2half_rn(in[i])); }
}
__global__ void CastToBfloat16Kernel(const float* in, uint16_t* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = __bfloat16_as_ushort(__float2bfloat16_rn(in[i])); }
}
__global__ void CastFromHalfKernel(const uint16_t* in, float* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = __half2float(__ushort_as_half(in[i])); }
}
__global__ void CastFromBfloat16Kernel(const uint16_t* in, float* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = __bfloat162float(__ushort_as_bfloat16(in[i])); }
}

template <typename T, typename Out, typename F>
cudaError_t LaunchBinaryOf(const T* x, const T* y, Out* z, int64_t n, const Broadcast* bcast,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (bcast == nullptr) {
    BinaryKernel<T, Out, F><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(x, y, z, n);
  } else {
    BroadcastBinaryKernel<T, Out, F>
        <<<GridSize(n), kThreadsPerBlock, 0, stream>>>(x, y, z, n, *bcast);
  }
  return cudaGetLastError();
}

}  // namespace

template <typename T, typename F>
cudaError_t LaunchUnary(const T* x, T* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  UnaryKernel<T, F><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

template <typename T, typename F>
cudaError_t LaunchBinary(const T* x, const T* y, T* z, int64_t n, const Broadcast* bcast,
                         cudaStream_t stream) {
  return LaunchBinaryOf<T, T, F>(x, y, z, n, bcast, stream);
}

template <typename T>
cudaError_t LaunchIsFinite(const T* x, bool* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  IsFiniteKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

template <typename T, typename F>
cudaError_t LaunchCompare(const T* x, const T* y, bool* z, int64_t n, const Broadcast* bcast,
                          cudaStream_t stream) {
  return LaunchBinaryOf<T, bool, F>(x, y, z, n, bcast, stream);
}

template <typename T>
cudaError_t LaunchSelect(const bool* condition, const T* t, const T* e, T* out, int64_t n,
                         const SelectBroadcast* bcast, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (bcast == nullptr) {
    SelectKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(condition, t, e, out, n);
  } else {
    BroadcastSelectKernel<T>
        <<<GridSize(n), kThreadsPerBlock, 0, stream>>>(condition, t, e, out, n, *bcast);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchBroadcastCopy(const T* x, T* out, int64_t n, const Broadcast& bcast,
                                cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  BroadcastCopyKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(x, out, n, bcast);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchLeakyRelu(const T* x, T* y, int64_t n, float alpha, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  LeakyReluKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(x, y, n, MathOf<T>(alpha));
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchLeakyReluGrad(const T* g, const T* features, T* out, int64_t n, float alpha,
                                cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  LeakyReluGradKernel<T>
      <<<GridSize(n), kThreadsPerBlock, 0, stream>>>(g, features, out, n, MathOf<T>(alpha));
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchFill(const T* value, T* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  FillKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(value, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchFillConstant(T value, T* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  FillConstantKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(value, out, n);
  return cudaGetLastError();
}

template <typename From, typename To>
cudaError_t LaunchCast(const From* in, To* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  CastKernel<From, To><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, n);
  return cudaGetLastError();
}

cudaError_t LaunchCastToFloat16(const float* in, uint16_t* out, int64_t n, Float16Kind kind,
                                cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (kind == Float16Kind::kHalf) {
    CastToHalfKernel<<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, n);
  } else {
    CastToBfloat16Kernel<<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, n);
  }
  return cudaGetLastError();
}

cudaError_t LaunchCastFromFloat16(const uint16_t* in, float* out, int64_t n, Float16Kind kind,
                                  cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (kind == Float16Kind::kHalf) {
    CastFromHalfKernel<<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, n);
  } else {
    CastFromBfloat16Kernel<<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, n);
  }
  return cudaGetLastError();
}

// The functors the GPU kernels register (kernels/gpu/cwise_ops.cc, and
// L2Loss, AddN and BiasAdd).
// T as the launch takes it; the functors on MathOf<T>.
#define TW_INSTANTIATE_UNARY(T, F) \
  template cudaError_t LaunchUnary<T, functor::F<MathOf<T>>>(const T*, T*, int64_t, cudaStream_t);
#define TW_INSTANTIATE_BINARY(T, F)                                                            \
  template cudaError_t LaunchBinary<T, functor::F<MathOf<T>>>(const T*, const T*, T*, int64_t, \
                                                              const Broadcast*, cudaStream_t);
#define TW_INSTANTIATE_CWISE(T)               \
  TW_INSTANTIATE_UNARY(T, Neg)                \
  TW_INSTANTIATE_UNARY(T, Abs)                \
  TW_INSTANTIATE_UNARY(T, Square)             \
  TW_INSTANTIATE_UNARY(T, Sqrt)               \
  TW_INSTANTIATE_UNARY(T, Rsqrt)              \
  TW_INSTANTIATE_UNARY(T, Exp)                \
  TW_INSTANTIATE_UNARY(T, Log)                \
  TW_INSTANTIATE_UNARY(T, Tanh)               \
  TW_INSTANTIATE_UNARY(T, Sigmoid)            \
  TW_INSTANTIATE_UNARY(T, Relu)               \
  TW_INSTANTIATE_UNARY(T, Reciprocal)         \
  TW_INSTANTIATE_UNARY(T, Floor)              \
  TW_INSTANTIATE_UNARY(T, Softplus)           \
  TW_INSTANTIATE_UNARY(T, Selu)               \
  TW_INSTANTIATE_UNARY(T, Erf)                \
  TW_INSTANTIATE_BINARY(T, Add)               \
  TW_INSTANTIATE_BINARY(T, Sub)               \
  TW_INSTANTIATE_BINARY(T, Mul)               \
  TW_INSTANTIATE_BINARY(T, Div)               \
  TW_INSTANTIATE_BINARY(T, DivNoNan)          \
  TW_INSTANTIATE_BINARY(T, Maximum)           \
  TW_INSTANTIATE_BINARY(T, Minimum)           \
  TW_INSTANTIATE_BINARY(T, SquaredDifference) \
  TW_INSTANTIATE_BINARY(T, FloorDiv)          \
  TW_INSTANTIATE_BINARY(T, Mod)               \
  TW_INSTANTIATE_BINARY(T, FloorMod)          \
  TW_INSTANTIATE_BINARY(T, Pow)               \
  TW_INSTANTIATE_BINARY(T, ReluGrad)          \
  TW_INSTANTIATE_BINARY(T, TanhGrad)          \
  TW_INSTANTIATE_BINARY(T, SigmoidGrad)       \
  TW_INSTANTIATE_BINARY(T, SoftplusGrad)      \
  TW_INSTANTIATE_BINARY(T, SeluGrad)
TW_INSTANTIATE_CWISE(float)
TW_INSTANTIATE_CWISE(double)
TW_INSTANTIATE_CWISE(HalfBits)
TW_INSTANTIATE_CWISE(Bfloat16Bits)
// int64 sums: a loss scale's count of good steps, global steps.
TW_INSTANTIATE_BINARY(int64_t, Add)
#undef TW_INSTANTIATE_CWISE
#undef TW_INSTANTIATE_BINARY
#undef TW_INSTANTIATE_UNARY

template cudaError_t LaunchIsFinite<float>(const float*, bool*, int64_t, cudaStream_t);
template cudaError_t LaunchIsFinite<double>(const double*, bool*, int64_t, cudaStream_t);
template cudaError_t LaunchIsFinite<HalfBits>(const HalfBits*, bool*, int64_t, cudaStream_t);
template cudaError_t LaunchIsFinite<Bfloat16Bits>(const Bfloat16Bits*, bool*, int64_t,
                                                  cudaStream_t);

#define TW_INSTANTIATE(T)                                                              \
  template cudaError_t LaunchLeakyRelu<T>(const T*, T*, int64_t, float, cudaStream_t); \
  template cudaError_t LaunchLeakyReluGrad<T>(const T*, const T*, T*, int64_t, float, cudaStream_t);
TW_INSTANTIATE(float)
TW_INSTANTIATE(double)
TW_INSTANTIATE(HalfBits)
TW_INSTANTIATE(Bfloat16Bits)
#undef TW_INSTANTIATE
#define TW_INSTANTIATE(T)                                                              \
  template cudaError_t LaunchFill<T>(const T*, T*, int64_t, cudaStream_t);             \
  template cudaError_t LaunchFillConstant<T>(T, T*, int64_t, cudaStream_t);            \
  template cudaError_t LaunchBroadcastCopy<T>(const T*, T*, int64_t, const Broadcast&, \
                                              cudaStream_t);
TW_INSTANTIATE(float)
TW_INSTANTIATE(double)
TW_INSTANTIATE(uint16_t)  // the bits of half and bfloat16
#undef TW_INSTANTIATE

#define TW_INSTANTIATE_COMPARE(T, F)                                                               \
  template cudaError_t LaunchCompare<T, functor::F<MathOf<T>>>(const T*, const T*, bool*, int64_t, \
                                                               const Broadcast*, cudaStream_t);
#define TW_INSTANTIATE_COMPARES(T)     \
  TW_INSTANTIATE_COMPARE(T, Equal)     \
  TW_INSTANTIATE_COMPARE(T, NotEqual)  \
  TW_INSTANTIATE_COMPARE(T, Less)      \
  TW_INSTANTIATE_COMPARE(T, LessEqual) \
  TW_INSTANTIATE_COMPARE(T, Greater)   \
  TW_INSTANTIATE_COMPARE(T, GreaterEqual)
TW_INSTANTIATE_COMPARES(float)
TW_INSTANTIATE_COMPARES(double)
TW_INSTANTIATE_COMPARES(int64_t)
TW_INSTANTIATE_COMPARES(HalfBits)
TW_INSTANTIATE_COMPARES(Bfloat16Bits)
TW_INSTANTIATE_COMPARE(bool, LogicalAnd)
TW_INSTANTIATE_COMPARE(bool, LogicalOr)
#undef TW_INSTANTIATE_COMPARES
#undef TW_INSTANTIATE_COMPARE

#define TW_INSTANTIATE_SELECT(T)                                                     \
  template cudaError_t LaunchSelect<T>(const bool*, const T*, const T*, T*, int64_t, \
                                       const SelectBroadcast*, cudaStream_t);
TW_INSTANTIATE_SELECT(uint8_t)
TW_INSTANTIATE_SELECT(uint16_t)
TW_INSTANTIATE_SELECT(uint32_t)
TW_INSTANTIATE_SELECT(uint64_t)
#undef TW_INSTANTIATE_SELECT

#define TW_INSTANTIATE_CAST(From, To) \
  template cudaError_t LaunchCast<From, To>(const From*, To*, int64_t, cudaStream_t);
#define TW_INSTANTIATE_CASTS_FROM(From) \
  TW_INSTANTIATE_CAST(From, float)      \
  TW_INSTANTIATE_CAST(From, double)     \
  TW_INSTANTIATE_CAST(From, int64_t)    \
  TW_INSTANTIATE_CAST(From, bool)
TW_INSTANTIATE_CASTS_FROM(float)
TW_INSTANTIATE_CASTS_FROM(double)
TW_INSTANTIATE_CASTS_FROM(int64_t)
TW_INSTANTIATE_CASTS_FROM(bool)
#undef TW_INSTANTIATE_CASTS_FROM
#undef TW_INSTANTIATE_CAST

}  // namespace gpu
}  // namespace towerflow
