// keras::SGD, Adam, RMSprop, Adagrad and OptimizerFromConfig (keras/model.h).
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "keras/model.h"
#include "train/optimizers.h"

namespace towerflow {
namespace keras {

// ---- Optimizers ----------------------------------------------------------------

Optimizer SGD(double learning_rate, double momentum, bool nesterov) {
  return {"SGD",
          learning_rate,
          [momentum, nesterov](::towerflow::Input lr) -> std::shared_ptr<train::Optimizer> {
            if (momentum == 0) return std::make_shared<train::GradientDescentOptimizer>(lr);
            return std::make_shared<train::MomentumOptimizer>(lr, momentum, nesterov);
          },
          {{"momentum", momentum}, {"nesterov", nesterov ? 1.0 : 0.0}}};
}

Optimizer Adam(double learning_rate, double beta_1, double beta_2, double epsilon) {
  return {"Adam",
          learning_rate,
          [beta_1, beta_2, epsilon](::towerflow::Input lr) {
            return std::make_shared<train::AdamOptimizer>(lr, beta_1, beta_2, epsilon);
          },
          {{"beta_1", beta_1}, {"beta_2", beta_2}, {"epsilon", epsilon}}};
}

Optimizer RMSprop(double learning_rate, double rho, double epsilon) {
  return {"RMSprop",
          learning_rate,
          [rho, epsilon](::towerflow::Input lr) {
            return std::make_shared<train::RMSPropOptimizer>(lr, rho, 0.0, epsilon);
          },
          {{"rho", rho}, {"epsilon", epsilon}}};
}

Optimizer Adagrad(double learning_rate, double initial_accumulator_value) {
  return {"Adagrad",
          learning_rate,
          [initial_accumulator_value](::towerflow::Input lr) {
            return std::make_shared<train::AdagradOptimizer>(lr, initial_accumulator_value);
          },
          {{"initial_accumulator_value", initial_accumulator_value}}};
}

absl::StatusOr<Optimizer> OptimizerFromConfig(const std::string& name, double learning_rate,
                                              const std::map<std::string, double>& config) {
  // The defaults, overridden by `config`.
  std::map<std::string, double> values;
  if (name == "SGD") values = SGD().config;
  if (name == "Adam") values = Adam().config;
  if (name == "RMSprop") values = RMSprop().config;
  if (name == "Adagrad") values = Adagrad().config;
  if (values.empty()) return absl::InvalidArgumentError(absl::StrCat("Unknown optimizer: ", name));
  for (const auto& [key, value] : config) {
    if (values.count(key) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Optimizer ", name, ": unknown hyper-parameter ", key));
    }
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat("Optimizer ", name, ": ", key, " is ", value));
    }
    values[key] = value;
  }
  if (name == "SGD") return SGD(learning_rate, values["momentum"], values["nesterov"] != 0);
  if (name == "Adam") {
    return Adam(learning_rate, values["beta_1"], values["beta_2"], values["epsilon"]);
  }
  if (name == "RMSprop") return RMSprop(learning_rate, values["rho"], values["epsilon"]);
  return Adagrad(learning_rate, values["initial_accumulator_value"]);
}

}  // namespace keras
}  // namespace towerflow
