// Numbers from text as TF's strings::safe_strto* read them (StringToNumber,
// DecodeCSV): surrounding ASCII whitespace allowed; integers in base 10
// with an optional sign, refused when they overflow; floats whatever strtod
// reads of the whole rest (hex, inf, nan; overflow gives inf), float by
// strtof so that it rounds once.
#ifndef TOWERFLOW_KERNELS_CPU_PARSE_NUMBER_H_
#define TOWERFLOW_KERNELS_CPU_PARSE_NUMBER_H_

#include <cstdlib>
#include <string>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace towerflow {

template <typename T>
bool ParseNumber(absl::string_view s, T* out) {
  const std::string trimmed(absl::StripAsciiWhitespace(s));
  if constexpr (std::is_floating_point_v<T>) {
    if (trimmed.empty()) return false;
    char* end = nullptr;
    const T v = std::is_same_v<T, float> ? std::strtof(trimmed.c_str(), &end)
                                         : std::strtod(trimmed.c_str(), &end);
    if (end != trimmed.c_str() + trimmed.size()) return false;
    *out = v;
    return true;
  } else {
    return absl::SimpleAtoi(trimmed, out);
  }
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_PARSE_NUMBER_H_
