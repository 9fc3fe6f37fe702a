// Handles the DSL passes around: Operation (a node), Output (one output of a
// node), Input (an Output or a constant literal) and InputList.
//
//   Output x = ops::Placeholder(s, DT_FLOAT);
//   Output y = ops::Mul(s, x, 0.5);        // 0.5 becomes a float Const
//   Output z = ops::AddN(s, {x, y});       // an InputList
//   x.name();                              // "Placeholder:0"
//
// Literals: a C++ scalar (float, double, int, int64_t, bool, a string) or a
// nested initializer list ({{1, 2}, {3, 4}}) is turned into a Const node when
// an op consumes it. Its dtype follows the literal (1 is int32, 1.0 double),
// but an op converts it to the dtype its argument needs: to floating types
// with rounding (0.1 for a float input is a float Const), to integer and
// bool types only when exact (2.5 for an int32 input is an error).
//
// These are value types over Node pointers owned by the Graph; they stay
// valid as long as the node does. Thread-compatible.
#ifndef TOWERFLOW_GRAPH_OUTPUT_H_
#define TOWERFLOW_GRAPH_OUTPUT_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/tensor_proto_util.h"
#include "core/tensor_shape.h"
#include "core/types.h"
#include "graph/graph.h"

namespace towerflow {

class Output;

class Operation {
 public:
  Operation() = default;
  explicit Operation(Node* node) : node_(node) {}

  Node* node() const { return node_; }
  bool valid() const { return node_ != nullptr; }
  // REQUIRES: valid().
  const std::string& name() const { return node_->name(); }
  int num_outputs() const { return node_->num_outputs(); }
  int num_inputs() const { return node_->num_inputs(); }
  Output output(int i) const;
  DataType output_type(int i) const { return node_->output_type(i); }

  bool operator==(const Operation& o) const { return node_ == o.node_; }
  bool operator!=(const Operation& o) const { return node_ != o.node_; }
  template <typename H>
  friend H AbslHashValue(H h, const Operation& op) {
    return H::combine(std::move(h), op.node_);
  }

 private:
  Node* node_ = nullptr;
};

class Output {
 public:
  Output() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): a node is its first output.
  Output(Node* node, int index = 0) : op_(node), index_(index) {}
  Output(const Operation& op, int index) : op_(op), index_(index) {}

  Operation op() const { return op_; }
  Node* node() const { return op_.node(); }
  int index() const { return index_; }
  bool valid() const { return op_.valid() && index_ >= 0 && index_ < op_.num_outputs(); }
  // REQUIRES: valid() for the accessors below.
  DataType type() const { return op_.output_type(index_); }
  // What build-time shape inference knows of this output.
  const PartialTensorShape& shape() const { return node()->output_shape(index_); }
  // "node:index", TensorFlow's tensor name ("MatMul:0").
  std::string name() const;

  bool operator==(const Output& o) const { return op_ == o.op_ && index_ == o.index_; }
  bool operator!=(const Output& o) const { return !(*this == o); }
  template <typename H>
  friend H AbslHashValue(H h, const Output& out) {
    return H::combine(std::move(h), out.op_, out.index_);
  }

 private:
  Operation op_;
  int index_ = 0;
};

inline Output Operation::output(int i) const { return Output(node_, i); }

using OutputList = std::vector<Output>;

class Input {
 public:
  // A constant literal: a scalar, a nested list, or a TensorProto.
  class Initializer {
   public:
    template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    // NOLINTNEXTLINE(google-explicit-constructor)
    Initializer(T value) : Initializer(MakeScalar(value)) {}
    // NOLINTNEXTLINE(google-explicit-constructor)
    Initializer(const char* value);
    // NOLINTNEXTLINE(google-explicit-constructor)
    Initializer(const std::string& value);
    // NOLINTNEXTLINE(google-explicit-constructor)
    Initializer(const TensorProto& tensor);
    // Nested lists: every element must have the same shape; mixed numeric
    // types are promoted (int32 < int64 < float < double).
    Initializer(std::initializer_list<Initializer> elements);
    // `values` laid out as `shape` (row-major).
    template <typename T>
    Initializer(std::initializer_list<T> values, const TensorShape& shape);

    const absl::Status& status() const { return status_; }
    const TensorProto& tensor() const { return tensor_; }

   private:
    friend class Input;
    // An empty literal; only Inputs holding an Output have one.
    Initializer() = default;

    template <typename T>
    static TensorProto MakeScalar(T value);

    absl::Status status_;
    TensorProto tensor_;
  };

  // NOLINTNEXTLINE(google-explicit-constructor)
  Input(const Output& output) : output_(output), is_output_(true) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Input(Node* node) : Input(Output(node, 0)) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Input(const Initializer& init) : init_(init) {}
  Input(std::initializer_list<Initializer> init) : init_(init) {}
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  // NOLINTNEXTLINE(google-explicit-constructor)
  Input(T value) : init_(value) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Input(const char* value) : init_(value) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Input(const std::string& value) : init_(value) {}

  bool is_output() const { return is_output_; }
  // REQUIRES: is_output().
  const Output& output() const { return output_; }
  // REQUIRES: !is_output().
  const Initializer& initializer() const { return init_; }

 private:
  Output output_;
  Initializer init_;
  bool is_output_ = false;
};

class InputList {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor)
  InputList(const OutputList& outputs) : inputs_(outputs.begin(), outputs.end()) {}
  InputList(std::initializer_list<Input> inputs) : inputs_(inputs) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  InputList(std::vector<Input> inputs) : inputs_(std::move(inputs)) {}

  const std::vector<Input>& inputs() const { return inputs_; }
  size_t size() const { return inputs_.size(); }

 private:
  std::vector<Input> inputs_;
};

// ------------------------------------------------------------------ details

template <typename T>
TensorProto Input::Initializer::MakeScalar(T value) {
  // C++'s int is TensorFlow's int32; long and long long are int64.
  if constexpr (std::is_same_v<T, bool>) {
    return MakeScalarTensorProto<bool>(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (sizeof(T) <= sizeof(float)) {
      return MakeScalarTensorProto<float>(static_cast<float>(value));
    } else {
      return MakeScalarTensorProto<double>(static_cast<double>(value));
    }
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return MakeScalarTensorProto<uint8_t>(value);
  } else if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
    return MakeScalarTensorProto<uint64_t>(value);
  } else if constexpr (sizeof(T) <= sizeof(int32_t) && std::is_signed_v<T>) {
    return MakeScalarTensorProto<int32_t>(static_cast<int32_t>(value));
  } else if constexpr (sizeof(T) <= sizeof(int32_t)) {
    return MakeScalarTensorProto<uint32_t>(static_cast<uint32_t>(value));
  } else {
    return MakeScalarTensorProto<int64_t>(static_cast<int64_t>(value));
  }
}

template <typename T>
Input::Initializer::Initializer(std::initializer_list<T> values, const TensorShape& shape) {
  if (!shape.IsValid()) {
    status_ = shape.status();
    return;
  }
  if (static_cast<int64_t>(values.size()) != shape.num_elements()) {
    status_ = absl::InvalidArgumentError(absl::StrCat("Initializer has ", values.size(),
                                                      " values but shape ", shape.DebugString(),
                                                      " needs ", shape.num_elements()));
    return;
  }
  tensor_ = MakeTensorProto<T>(values, shape);
}

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_OUTPUT_H_
