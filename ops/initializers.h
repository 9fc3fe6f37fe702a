// Variable initializers: the ops that compute a variable's first value.
//
//   Variable w = GetVariable(s, "weights", TensorShape({5, 5, 3, 64}), DT_FLOAT,
//                            initializers::TruncatedNormal(0.05));
//   Variable b = GetVariable(s, "biases", TensorShape({64}), DT_FLOAT,
//                            initializers::Constant(0.1));
//
// Each mirrors its TensorFlow 1.x namesake, ops and numbers included:
// VarianceScaling divides the stddev of a truncated normal by .8796..., the
// stddev of a unit normal truncated at two standard deviations, and
// GlorotUniform draws from [-sqrt(6 / (fan_in + fan_out)), +...]. Random
// initializers take an optional op seed (see graph/random_seed.h).
//
// Initializers are cheap values; copies share nothing mutable.
#ifndef TOWERFLOW_OPS_INITIALIZERS_H_
#define TOWERFLOW_OPS_INITIALIZERS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/tensor_shape.h"
#include "core/types.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace initializers {

class Initializer {
 public:
  // Adds the ops computing a value of `shape` and `dtype` under `scope` and
  // returns it; an invalid Output after recording an error in the scope.
  using Fn = std::function<Output(const Scope& scope, const TensorShape& shape, DataType dtype)>;

  // No initializer: GetVariable picks the default (GlorotUniform for
  // floating types, Zeros for integers and bool).
  Initializer() = default;
  Initializer(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}

  bool valid() const { return static_cast<bool>(fn_); }
  const std::string& name() const { return name_; }
  // REQUIRES: valid().
  Output operator()(const Scope& scope, const TensorShape& shape, DataType dtype) const {
    return fn_(scope, shape, dtype);
  }

 private:
  std::string name_;
  Fn fn_;
};

// Every element equals `value` (a scalar), or the variable takes `value`
// whole when it has the variable's number of elements.
Initializer Constant(const Input::Initializer& value);
Initializer Zeros();
Initializer Ones();
Initializer RandomUniform(double minval = 0.0, double maxval = 1.0,
                          std::optional<int64_t> seed = std::nullopt);
Initializer RandomNormal(double mean = 0.0, double stddev = 1.0,
                         std::optional<int64_t> seed = std::nullopt);
Initializer TruncatedNormal(double stddev = 1.0, double mean = 0.0,
                            std::optional<int64_t> seed = std::nullopt);

enum class FanMode { kFanIn, kFanOut, kFanAvg };
enum class Distribution { kTruncatedNormal, kUntruncatedNormal, kUniform };

// Scale divided by the fan (TensorFlow's variance_scaling_initializer).
// Fans: a matrix [in, out]; a conv filter [h, w, in, out] has fan_in
// h * w * in and fan_out h * w * out.
Initializer VarianceScaling(double scale = 1.0, FanMode mode = FanMode::kFanIn,
                            Distribution distribution = Distribution::kTruncatedNormal,
                            std::optional<int64_t> seed = std::nullopt);
// VarianceScaling(1, fan_avg, uniform): TensorFlow's default for get_variable.
Initializer GlorotUniform(std::optional<int64_t> seed = std::nullopt);
// VarianceScaling(2, fan_in, truncated normal) (He et al.).
Initializer HeNormal(std::optional<int64_t> seed = std::nullopt);

// The fans TensorFlow computes for a shape (both 1 for a scalar).
void ComputeFans(const TensorShape& shape, double* fan_in, double* fan_out);

}  // namespace initializers
}  // namespace towerflow

#endif  // TOWERFLOW_OPS_INITIALIZERS_H_
