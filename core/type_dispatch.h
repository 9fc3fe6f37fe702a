// Dispatch from a runtime DataType to the C++ element type, for code that
// handles every dtype alike (proto conversion, Cast, printing).
//
//   VisitNumberType(t.dtype(), [&](auto zero) {
//     using T = decltype(zero);
//     Use(t.flat<T>());
//   });
//
// Header-only; thread-safe.
#ifndef TOWERFLOW_CORE_TYPE_DISPATCH_H_
#define TOWERFLOW_CORE_TYPE_DISPATCH_H_

#include <cstdint>

#include "core/float16.h"
#include "core/types.h"

namespace towerflow {

// Calls f(T{}) with the C++ element type of a fixed-size numeric dtype.
// Returns false for other dtypes.
template <typename F>
inline bool VisitNumberType(DataType dtype, F&& f) {
  switch (dtype) {
    case DT_FLOAT:
      f(float{});
      return true;
    case DT_DOUBLE:
      f(double{});
      return true;
    case DT_HALF:
      f(half{});
      return true;
    case DT_BFLOAT16:
      f(bfloat16{});
      return true;
    case DT_INT32:
      f(int32_t{});
      return true;
    case DT_INT64:
      f(int64_t{});
      return true;
    case DT_UINT8:
      f(uint8_t{});
      return true;
    case DT_INT8:
      f(int8_t{});
      return true;
    case DT_INT16:
      f(int16_t{});
      return true;
    case DT_UINT16:
      f(uint16_t{});
      return true;
    case DT_UINT32:
      f(uint32_t{});
      return true;
    case DT_UINT64:
      f(uint64_t{});
      return true;
    case DT_BOOL:
      f(bool{});
      return true;
    case DT_COMPLEX64:
      f(complex64{});
      return true;
    case DT_COMPLEX128:
      f(complex128{});
      return true;
    default:
      return false;
  }
}

// Calls f(S{}) with the integer type that stores a quantized dtype's values
// (qint8 int8_t, quint8 uint8_t, qint16 int16_t, quint16 uint16_t, qint32
// int32_t; TF's layout). Returns false for other dtypes. The tensor's
// elements are read through raw_data(): data<S>() checks the dtype.
template <typename F>
inline bool VisitQuantizedType(DataType dtype, F&& f) {
  switch (dtype) {
    case DT_QINT8:
      f(int8_t{});
      return true;
    case DT_QUINT8:
      f(uint8_t{});
      return true;
    case DT_QINT16:
      f(int16_t{});
      return true;
    case DT_QUINT16:
      f(uint16_t{});
      return true;
    case DT_QINT32:
      f(int32_t{});
      return true;
    default:
      return false;
  }
}

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_TYPE_DISPATCH_H_
