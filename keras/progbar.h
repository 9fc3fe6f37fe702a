// Keras's progress bar (keras.utils.Progbar, verbose=1):
//
//   Epoch 1/5
//   469/469 [==============================] - 12s 25ms/step - loss: 0.4512 - accuracy: 0.8401
//
// On a terminal the line is redrawn in place after every step ("\r", with
// "ETA: 3s" until the end); elsewhere (a pipe, a file) it is written once,
// when the epoch ends. Values are the running means of what Update gave,
// weighted by the steps' sizes; values added at the end only (val_loss) are
// shown as given. The clock is injectable for tests.
#ifndef TOWERFLOW_KERAS_PROGBAR_H_
#define TOWERFLOW_KERAS_PROGBAR_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace towerflow {
namespace keras {

class Progbar {
 public:
  // Seconds since some fixed point.
  using Clock = std::function<double()>;

  // `target` steps (0: unknown, "12/Unknown"); `dynamic`: redraw in place
  // (a terminal).
  Progbar(int64_t target, std::ostream* out, bool dynamic, Clock clock = {});

  // Step `current` (1-based) done; `values` are that step's, averaged over
  // the epoch weighted by `weight` (its batch size).
  void Update(int64_t current, const std::vector<std::pair<std::string, double>>& values,
              double weight = 1);
  // Ends the epoch's line with `extra` values (validation) after the means.
  void Finish(const std::vector<std::pair<std::string, double>>& extra = {});

  // The epoch means so far, in first-seen order.
  std::vector<std::pair<std::string, double>> Means() const;

 private:
  std::string Line(bool final, const std::vector<std::pair<std::string, double>>& extra) const;

  int64_t target_;
  std::ostream* out_;
  bool dynamic_;
  Clock clock_;
  double start_;
  int64_t current_ = 0;
  size_t last_width_ = 0;
  // name -> (weighted sum, total weight), in first-seen order.
  std::vector<std::pair<std::string, std::pair<double, double>>> sums_;
};

// Whether `out` is std::cout or std::cerr writing to a terminal.
bool IsTerminal(const std::ostream* out);

}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_PROGBAR_H_
