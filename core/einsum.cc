#include "core/einsum.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace towerflow {
namespace {

absl::StatusOr<EinsumTerm> ParseTerm(absl::string_view term, absl::string_view equation) {
  EinsumTerm t;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (absl::ascii_isalpha(static_cast<unsigned char>(c))) {
      t.labels.push_back(c);
    } else if (c == '.' && term.substr(i, 3) == "...") {
      if (t.has_ellipsis) {
        return absl::InvalidArgumentError(
            absl::StrCat("Einsum equation '", equation, "' has two ellipses in one term"));
      }
      t.has_ellipsis = true;
      t.labels.push_back(kEllipsisLabel);
      i += 2;
    } else if (c != ' ') {
      return absl::InvalidArgumentError(
          absl::StrCat("Einsum equation '", equation, "' has the invalid character '",
                       term.substr(i, 1), "'; labels are letters and '...'"));
    }
  }
  return t;
}

}  // namespace

absl::StatusOr<EinsumEquation> ParseEinsum(absl::string_view equation, int num_inputs) {
  if (num_inputs < 1 || num_inputs > 2) {
    return absl::InvalidArgumentError(absl::StrCat("Einsum takes 1 or 2 inputs, got ", num_inputs));
  }
  std::vector<absl::string_view> sides = absl::StrSplit(equation, "->");
  if (sides.size() > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Einsum equation '", equation, "' has more than one '->'"));
  }
  std::vector<absl::string_view> terms = absl::StrSplit(sides[0], ',');
  if (static_cast<int>(terms.size()) != num_inputs) {
    return absl::InvalidArgumentError(absl::StrCat("Einsum equation '", equation, "' has ",
                                                   terms.size(), " input terms for ", num_inputs,
                                                   " inputs"));
  }
  EinsumEquation eq;
  std::map<int, int> counts;
  bool any_ellipsis = false;
  for (absl::string_view term : terms) {
    absl::StatusOr<EinsumTerm> t = ParseTerm(term, equation);
    if (!t.ok()) return t.status();
    for (int label : t->labels) ++counts[label];
    any_ellipsis = any_ellipsis || t->has_ellipsis;
    eq.inputs.push_back(*std::move(t));
  }
  if (sides.size() == 2) {
    absl::StatusOr<EinsumTerm> out = ParseTerm(sides[1], equation);
    if (!out.ok()) return out.status();
    eq.output = *std::move(out);
    for (int label : eq.output.labels) {
      if (label != kEllipsisLabel && counts.count(label) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Einsum equation '", equation, "': output label '",
                         std::string(1, static_cast<char>(label)), "' is in no input"));
      }
    }
  } else {
    if (any_ellipsis) {
      eq.output.labels.push_back(kEllipsisLabel);
      eq.output.has_ellipsis = true;
    }
    for (const auto& [label, count] : counts) {  // std::map: alphabetical
      if (label != kEllipsisLabel && count == 1) eq.output.labels.push_back(label);
    }
  }
  return eq;
}

absl::StatusOr<EinsumDims> ResolveEinsum(const EinsumEquation& eq,
                                         const std::vector<std::vector<int64_t>>& input_dims) {
  if (input_dims.size() != eq.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Einsum has ", eq.inputs.size(), " input terms but ", input_dims.size(), " inputs"));
  }
  EinsumDims r;
  std::map<int, int64_t>& size = r.sizes;
  int ellipsis_rank = 0;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const EinsumTerm& t = eq.inputs[i];
    const int letters = static_cast<int>(t.labels.size()) - (t.has_ellipsis ? 1 : 0);
    const int rank = static_cast<int>(input_dims[i].size());
    const int extra = rank - letters;
    if (extra < 0 || (!t.has_ellipsis && extra != 0)) {
      return absl::InvalidArgumentError(absl::StrCat("Einsum input ", i, " has rank ", rank,
                                                     " but its term names ", letters, " dimensions",
                                                     t.has_ellipsis ? " and an ellipsis" : ""));
    }
    ellipsis_rank = std::max(ellipsis_rank, extra);
    std::vector<int> labels;
    for (int label : t.labels) {
      if (label != kEllipsisLabel) {
        labels.push_back(label);
        continue;
      }
      for (int k = extra - 1; k >= 0; --k) labels.push_back(kEllipsisLabel + k);
    }
    std::map<int, int64_t> own;  // this input's size of each label
    for (size_t d = 0; d < labels.size(); ++d) {
      const int label = labels[d];
      const int64_t n = input_dims[i][d];
      // A label repeated within one input is a diagonal: its dims agree.
      auto [mine, first] = own.emplace(label, n);
      if (!first) {
        if (mine->second != -1 && n != -1 && mine->second != n) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Einsum input ", i, " repeats label '", std::string(1, static_cast<char>(label)),
              "' (a diagonal) over dimensions of sizes ", mine->second, " and ", n,
              "; they must be equal"));
        }
        if (mine->second == -1) mine->second = n;
      }
      auto it = size.find(label);
      if (it == size.end()) {
        size[label] = n;
        continue;
      }
      int64_t& s = it->second;  // -1: unknown
      // Sizes agree, or a 1 broadcasts against the other.
      if (s == -1) {
        if (n != 1) s = n;
      } else if (n == -1) {
        if (s == 1) s = -1;
      } else if (s == 1) {
        s = n;
      } else if (n != 1 && n != s) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Einsum dimension ", d, " of input ", i, " has size ", n, " but ",
            label >= kEllipsisLabel
                ? std::string("that ellipsis dimension")
                : absl::StrCat("label '", std::string(1, static_cast<char>(label)), "'"),
            " has size ", s, " elsewhere (sizes must match or be 1)"));
      }
    }
    r.inputs.push_back(std::move(labels));
  }
  for (int label : eq.output.labels) {
    if (label != kEllipsisLabel) {
      r.output.push_back(label);
      continue;
    }
    for (int k = ellipsis_rank - 1; k >= 0; --k) r.output.push_back(kEllipsisLabel + k);
  }
  for (int label : r.output) {
    auto it = size.find(label);
    r.output_dims.push_back(it == size.end() ? 1 : it->second);
  }
  return r;
}

absl::StatusOr<std::string> EinsumLetters(const std::vector<std::vector<int>>& inputs,
                                          const std::vector<int>& output) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::map<int, char> letter;
  const auto term = [&](const std::vector<int>& labels) -> absl::StatusOr<std::string> {
    std::string s;
    for (int label : labels) {
      auto it = letter.find(label);
      if (it == letter.end()) {
        if (letter.size() >= 52) {
          return absl::UnimplementedError("Einsum with more than 52 distinct dimensions");
        }
        it = letter.emplace(label, kLetters[letter.size()]).first;
      }
      s += it->second;
    }
    return s;
  };
  std::string eq;
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<std::string> t = term(inputs[i]);
    if (!t.ok()) return t.status();
    absl::StrAppend(&eq, i > 0 ? "," : "", *t);
  }
  absl::StatusOr<std::string> out = term(output);
  if (!out.ok()) return out.status();
  return absl::StrCat(eq, "->", *out);
}

}  // namespace towerflow
