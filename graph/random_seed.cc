#include "graph/random_seed.h"

namespace towerflow {
namespace {

constexpr int64_t kMaxInt32 = (int64_t{1} << 31) - 1;

// TensorFlow's _truncate_seed: seeds live in [0, 2^31 - 1).
int64_t TruncateSeed(int64_t seed) {
  const int64_t r = seed % kMaxInt32;
  return r < 0 ? r + kMaxInt32 : r;
}

}  // namespace

std::pair<int64_t, int64_t> GetSeeds(const Graph& graph, std::optional<int64_t> op_seed) {
  std::pair<int64_t, int64_t> seeds;
  if (graph.seed().has_value()) {
    const int64_t op = op_seed.has_value() ? *op_seed : graph.num_node_ids();
    seeds = {TruncateSeed(*graph.seed()), TruncateSeed(op)};
  } else if (op_seed.has_value()) {
    seeds = {kDefaultGraphSeed, TruncateSeed(*op_seed)};
  } else {
    return {0, 0};
  }
  // (0, 0) means "nondeterministic" to the kernels; avoid it when seeded.
  if (seeds.first == 0 && seeds.second == 0) seeds.second = kMaxInt32;
  return seeds;
}

}  // namespace towerflow
