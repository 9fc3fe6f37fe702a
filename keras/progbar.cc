#include "keras/progbar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace towerflow {
namespace keras {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Keras: "%.4f", or "%.4e" for magnitudes up to 1e-3.
std::string FormatValue(double v) {
  return std::abs(v) > 1e-3 ? absl::StrFormat("%.4f", v) : absl::StrFormat("%.4e", v);
}

}  // namespace

bool IsTerminal(const std::ostream* out) {
  if (out == &std::cout) return isatty(STDOUT_FILENO) == 1;
  if (out == &std::cerr) return isatty(STDERR_FILENO) == 1;
  return false;
}

Progbar::Progbar(int64_t target, std::ostream* out, bool dynamic, Clock clock)
    : target_(target),
      out_(out),
      dynamic_(dynamic),
      clock_(clock ? std::move(clock) : Clock(SteadySeconds)),
      start_(clock_()) {}

void Progbar::Update(int64_t current, const std::vector<std::pair<std::string, double>>& values,
                     double weight) {
  current_ = current;
  for (const auto& [name, value] : values) {
    auto it = sums_.begin();
    while (it != sums_.end() && it->first != name) ++it;
    if (it == sums_.end()) {
      sums_.push_back({name, {0, 0}});
      it = sums_.end() - 1;
    }
    it->second.first += value * weight;
    it->second.second += weight;
  }
  if (!dynamic_ || out_ == nullptr) return;
  const std::string line = Line(false, {});
  *out_ << '\r' << line;
  if (line.size() < last_width_) *out_ << std::string(last_width_ - line.size(), ' ');
  last_width_ = line.size();
  out_->flush();
}

void Progbar::Finish(const std::vector<std::pair<std::string, double>>& extra) {
  if (out_ == nullptr) return;
  const std::string line = Line(true, extra);
  if (dynamic_) *out_ << '\r';
  *out_ << line;
  if (dynamic_ && line.size() < last_width_) *out_ << std::string(last_width_ - line.size(), ' ');
  *out_ << '\n';
  out_->flush();
}

std::vector<std::pair<std::string, double>> Progbar::Means() const {
  std::vector<std::pair<std::string, double>> means;
  for (const auto& [name, sum] : sums_) {
    means.push_back({name, sum.second > 0 ? sum.first / sum.second : 0});
  }
  return means;
}

std::string Progbar::Line(bool final,
                          const std::vector<std::pair<std::string, double>>& extra) const {
  std::string line;
  if (target_ <= 0) {
    line = absl::StrFormat("%7d/Unknown", current_);  // Keras's bar without a target
  } else {
    const int digits = static_cast<int>(std::to_string(target_).size());
    line = absl::StrFormat("%*d/%d [", digits, current_, target_);
    const double progress = static_cast<double>(current_) / target_;
    const int width = static_cast<int>(30 * std::min(progress, 1.0));
    if (width > 0) {
      line += std::string(width - 1, '=');
      line += current_ < target_ ? '>' : '=';
    }
    line += std::string(30 - width, '.') + "]";
  }
  const double elapsed = clock_() - start_;
  const double per_step = current_ > 0 ? elapsed / current_ : 0;
  if (final || target_ <= 0 || current_ >= target_) {
    absl::StrAppend(&line, absl::StrFormat(" - %.0fs", elapsed));
    if (per_step >= 1) {
      absl::StrAppend(&line, absl::StrFormat(" %.0fs/step", per_step));
    } else if (per_step >= 1e-3) {
      absl::StrAppend(&line, absl::StrFormat(" %.0fms/step", per_step * 1e3));
    } else {
      absl::StrAppend(&line, absl::StrFormat(" %.0fus/step", per_step * 1e6));
    }
  } else {
    const double eta = per_step * (target_ - current_);
    if (eta > 3600) {
      absl::StrAppend(
          &line, absl::StrFormat(" - ETA: %d:%02d:%02d", static_cast<int>(eta) / 3600,
                                 (static_cast<int>(eta) % 3600) / 60, static_cast<int>(eta) % 60));
    } else if (eta > 60) {
      absl::StrAppend(&line, absl::StrFormat(" - ETA: %d:%02d", static_cast<int>(eta) / 60,
                                             static_cast<int>(eta) % 60));
    } else {
      absl::StrAppend(&line, absl::StrFormat(" - ETA: %ds", static_cast<int>(eta)));
    }
  }
  for (const auto& [name, mean] : Means())
    absl::StrAppend(&line, " - ", name, ": ", FormatValue(mean));
  for (const auto& [name, value] : extra)
    absl::StrAppend(&line, " - ", name, ": ", FormatValue(value));
  return line;
}

}  // namespace keras
}  // namespace towerflow
