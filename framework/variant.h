// Variant: the element of a DT_VARIANT tensor (TF's tensorflow::Variant).
//
// A Variant holds one value of a type Towerflow knows, or nothing. Today that
// type is TensorList (framework/tensor_list.h), the value behind TF 2's
// TensorList* ops. Copying a Variant copies its value, as TF's does (a
// TensorList's copy shares its elements' buffers, so it is cheap); a kernel
// that wants to change a value in place does so only when the tensor holding
// it is its own (Tensor::RefCountIsOne), so no one else sees the change.
//
//   Tensor t(DT_VARIANT, TensorShape({}));
//   t.scalar<Variant>()() = Variant(TensorList(DT_FLOAT, PartialTensorShape({2})));
//   const TensorList* list = t.scalar<Variant>()().get<TensorList>();  // null if not one
//
// Thread-compatible.
#ifndef TOWERFLOW_FRAMEWORK_VARIANT_H_
#define TOWERFLOW_FRAMEWORK_VARIANT_H_

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "core/types.h"
#include "proto/tensor.pb.h"

namespace towerflow {

// What a Variant may hold.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // TF's type name ("tensorflow::TensorList"), as VariantTensorDataProto
  // stores it.
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const = 0;
  virtual std::unique_ptr<VariantValue> Clone() const = 0;
  // TF's serialisation of the value (its type's Encode).
  virtual void Encode(VariantTensorDataProto* out) const = 0;
};

class Variant {
 public:
  Variant() = default;
  template <typename T, typename = std::enable_if_t<std::is_base_of_v<VariantValue, T>>>
  explicit Variant(T value) : value_(std::make_unique<T>(std::move(value))) {}
  Variant(const Variant& other) : value_(other.value_ ? other.value_->Clone() : nullptr) {}
  Variant& operator=(const Variant& other) {
    if (this != &other) value_ = other.value_ ? other.value_->Clone() : nullptr;
    return *this;
  }
  Variant(Variant&&) noexcept = default;
  Variant& operator=(Variant&&) noexcept = default;

  bool is_empty() const { return value_ == nullptr; }
  // The value as a T, or nullptr when it is empty or of another type.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value_.get());
  }
  template <typename T>
  T* get() {
    return dynamic_cast<T*>(value_.get());
  }
  std::string TypeName() const { return value_ ? value_->TypeName() : std::string(); }
  // The value's DebugString; "[empty variant]" when there is none.
  std::string DebugString() const;
  // TF's VariantTensorDataProto (empty for an empty Variant).
  VariantTensorDataProto Encode() const;

 private:
  std::unique_ptr<VariantValue> value_;
};

// Decodes TF's encoding of a variant value, of a type Towerflow knows
// (TensorList; defined in tensor_list.cc, beside it). InvalidArgument for
// another type or a corrupt encoding.
absl::StatusOr<Variant> DecodeVariant(const VariantTensorDataProto& data);

template <>
struct DataTypeToEnum<Variant> {
  static constexpr DataType value = DT_VARIANT;
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_VARIANT_H_
