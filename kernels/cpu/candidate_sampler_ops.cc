// The candidate samplers of sampled softmax and NCE, TF's draws for the same
// seeds, and ComputeAccidentalHits.
//
// Each call reserves 512 blocks of the node's Philox stream per sampled
// candidate (TF's 2048 32-bit samples) and draws from their start one word
// at a time, as TF's SimplePhilox; a rejection loop that needs more words
// reads on past the reservation, as TF's does. With unique, candidates are
// drawn until num_sampled distinct ones are found, and the expected counts
// become 1 - (1 - p)^tries (TF's approximation); without, p * num_sampled.
// - Uniform: an exact uniform integer of [0, range) from 64-bit words.
// - LogUniform: floor(exp(u * log(range + 1))) - 1, Zipf's law over the ids.
// - LearnedUnigram (and its ThreadUnsafe twin): weights that start at 1 and
//   count every true class seen after each call; an exact uniform draw
//   below their total picks the id whose running sum passes it (TF's
//   WeightedPicker, here a Fenwick tree).
// - FixedUnigram: weights from unigrams or a vocabulary CSV's last column,
//   raised to distortion, after num_reserved_ids zero weights, only the ids
//   of this shard; drawn with Walker's alias table as TF builds it.
// Where TF loops forever or CHECK-fails (unique draws from fewer reachable
// ids than num_sampled), the kernel refuses with InvalidArgument.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "core/file_io.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/random_op_base.h"

namespace towerflow {
namespace {

// What every sampler has: ids in [0, range), each drawn with a probability.
class RangeSampler {
 public:
  explicit RangeSampler(int64_t range) : range_(range) {}
  virtual ~RangeSampler() = default;
  int64_t range() const { return range_; }
  virtual int64_t Sample(PhiloxWords& words) const = 0;
  virtual float Probability(int64_t value) const = 0;
  // How many distinct ids Sample can return (unique draws need num_sampled).
  virtual int64_t Reachable() const { return range_; }
  // After each call: the learned samplers count the true classes.
  virtual void Update(const int64_t* /*values*/, int64_t /*n*/) {}

 private:
  const int64_t range_;
};

class UniformSampler : public RangeSampler {
 public:
  explicit UniformSampler(int64_t range) : RangeSampler(range), inv_range_(1.0 / range) {}
  int64_t Sample(PhiloxWords& words) const override {
    return static_cast<int64_t>(words.Uniform64(static_cast<uint64_t>(range())));
  }
  float Probability(int64_t) const override { return inv_range_; }

 private:
  const float inv_range_;
};

class LogUniformSampler : public RangeSampler {
 public:
  explicit LogUniformSampler(int64_t range)
      : RangeSampler(range), log_range_(std::log1p(static_cast<double>(range))) {}
  int64_t Sample(PhiloxWords& words) const override {
    const double e = std::exp(words.UniformDouble() * log_range_);
    // Near a range of 2^63, e can pass int64's range (TF's cast overflows).
    if (e >= 9223372036854775807.0) return range() - 1;
    const int64_t value = static_cast<int64_t>(e) - 1;
    return value % range();  // rounding could reach range itself
  }
  float Probability(int64_t value) const override {
    return std::log((value + 2.0) / (value + 1.0)) / log_range_;
  }

 private:
  const double log_range_;
};

// Integer weights per id in a Fenwick tree: the id whose running sum first
// passes a uniform draw below the total, as TF's WeightedPicker.
class LearnedUnigramSampler : public RangeSampler {
 public:
  // `storage` holds 2 * range int32s (the weights and the tree).
  LearnedUnigramSampler(int64_t range, Tensor storage)
      : RangeSampler(range), storage_(std::move(storage)) {
    weights_ = storage_.data<int32_t>();
    tree_ = weights_ + range;
    std::fill(weights_, weights_ + range, 1);
    for (int64_t i = 1; i <= range; ++i) tree_[i - 1] = static_cast<int32_t>(i & -i);
    total_ = static_cast<int32_t>(range);
    top_ = 1;
    while (top_ * 2 <= range) top_ *= 2;
  }
  int64_t Sample(PhiloxWords& words) const override {
    int32_t position = static_cast<int32_t>(words.Uniform(static_cast<uint32_t>(total_)));
    int64_t index = 0;  // 1-based Fenwick walk: the last index with sum <= position
    for (int64_t step = top_; step > 0; step /= 2) {
      const int64_t next = index + step;
      if (next <= range() && tree_[next - 1] <= position) {
        index = next;
        position -= tree_[next - 1];
      }
    }
    return index;
  }
  float Probability(int64_t value) const override {
    return static_cast<float>(weights_[value]) / total_;
  }
  void Update(const int64_t* values, int64_t n) override {
    const int64_t updates =
        std::min<int64_t>(n, std::numeric_limits<int32_t>::max() - int64_t{total_});
    for (int64_t i = 0; i < updates; ++i) {
      ++weights_[values[i]];
      for (int64_t j = values[i] + 1; j <= range(); j += j & -j) ++tree_[j - 1];
    }
    total_ += static_cast<int32_t>(updates);
  }

 private:
  Tensor storage_;
  int32_t* weights_ = nullptr;
  int32_t* tree_ = nullptr;
  int32_t total_ = 0;
  int64_t top_ = 1;
};

// Fixed weights drawn through Walker's alias table, built as TF's
// DistributionSampler: each id's share of n, the short ids (share < 1)
// paired from the back with the long ones, leftovers their own alias.
class FixedUnigramSampler : public RangeSampler {
 public:
  // `weights` (one per id) and `table` (a float and an int32 per id).
  FixedUnigramSampler(Tensor weights, float total, Tensor table)
      : RangeSampler(weights.NumElements()),
        weights_(std::move(weights)),
        table_(std::move(table)),
        total_(total) {
    const int64_t n = range();
    const float* w = weights_.data<float>();
    prob_ = table_.data<float>();
    alt_ = reinterpret_cast<int32_t*>(prob_ + n);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += w[i];
    std::vector<double> share(n);
    std::vector<int32_t> high, low;
    for (int64_t i = 0; i < n; ++i) {
      alt_[i] = -1;
      share[i] = w[i] * n / sum;
      (share[i] < 1.0 ? low : high).push_back(static_cast<int32_t>(i));
    }
    while (!high.empty() && !low.empty()) {
      const int32_t l = low.back(), h = high.back();
      low.pop_back();
      high.pop_back();
      alt_[l] = h;
      share[h] -= 1.0 - share[l];
      (share[h] < 1.0 ? low : high).push_back(h);
    }
    for (int64_t i = 0; i < n; ++i) prob_[i] = static_cast<float>(share[i]);
    for (const std::vector<int32_t>* rest : {&high, &low}) {
      for (const int32_t i : *rest) {
        prob_[i] = 1.0f;
        alt_[i] = i;
      }
    }
    // An id is drawn when its bucket keeps it (prob > 0) or another bucket
    // passes to it (that bucket's prob < 1, so a uniform can reach it).
    std::vector<bool> reached(n, false);
    for (int64_t i = 0; i < n; ++i) {
      if (prob_[i] > 0) reached[i] = true;
      if (!(prob_[i] >= 1.0f) && alt_[i] >= 0) reached[alt_[i]] = true;
    }
    reachable_ = std::count(reached.begin(), reached.end(), true);
  }
  int64_t Sample(PhiloxWords& words) const override {
    const float r = words.UniformFloat();
    const uint32_t i = words.Uniform(static_cast<uint32_t>(range()));
    return r < prob_[i] ? static_cast<int64_t>(i) : int64_t{alt_[i]};
  }
  float Probability(int64_t value) const override { return weights_.data<float>()[value] / total_; }
  int64_t Reachable() const override { return reachable_; }

 private:
  Tensor weights_;
  Tensor table_;
  float* prob_ = nullptr;
  int32_t* alt_ = nullptr;
  const float total_;
  int64_t reachable_ = 0;
};

// TF's approximate expected count of an id of probability p among
// `batch` draws that took `tries` tries.
float ExpectedCount(float p, int batch, int64_t tries) {
  if (tries == batch) return p * batch;
  return -std::expm1(static_cast<float>(tries) * std::log1p(-p));
}

// The samplers' kernel. The sampler is made at the first call (the learned
// and fixed ones keep a tensor per id, within the session's memory limits)
// and kept, with the count of the learned ones, for the node's life.
class CandidateSamplerOp : public RandomOpBase {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(RandomOpBase::Init(c));
    TW_RETURN_IF_ERROR(c.GetAttr("num_true", &num_true_));
    TW_RETURN_IF_ERROR(c.GetAttr("num_sampled", &num_sampled_));
    TW_RETURN_IF_ERROR(c.GetAttr("unique", &unique_));
    for (const int64_t v : {num_true_, num_sampled_}) {
      if (v > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat("num_true and num_sampled must fit an int32, got ", v));
      }
    }
    return InitSampler(c);
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& true_classes = ctx->input(0);
    if (true_classes.dims() != 2) {
      return absl::InvalidArgumentError("true_classes must be a matrix");
    }
    const int64_t batch = true_classes.dim_size(0);
    if (true_classes.dim_size(1) != num_true_) {
      // TF's message, its numbers in this order.
      return absl::InvalidArgumentError(
          absl::StrCat("true_classes must have num_true columns, "
                       "expected: ",
                       true_classes.dim_size(1), " was: ", num_true_));
    }
    absl::MutexLock lock(&mu_);
    if (sampler_ == nullptr) {
      TW_ASSIGN_OR_RETURN(sampler_, MakeSampler(ctx));
    }
    const int64_t range = sampler_->range();
    if (unique_ && num_sampled_ > range) {
      return absl::InvalidArgumentError("Sampler's range is too small.");
    }
    const int64_t* truth = true_classes.data<int64_t>();
    const int64_t n_true = true_classes.NumElements();
    for (int64_t i = 0; i < n_true; ++i) {
      if (truth[i] < 0 || truth[i] >= range) {
        return absl::InvalidArgumentError(
            absl::StrCat("`true_candidate` out of range [0, ", range, "), received ", truth[i]));
      }
    }
    if (unique_ && sampler_->Reachable() < num_sampled_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot draw ", num_sampled_, " distinct candidates: only ", sampler_->Reachable(),
          " of the ", range, " ids have a positive weight (TensorFlow's kernel never returns)"));
    }
    TW_ASSIGN_OR_RETURN(Tensor * sampled, ctx->allocate_output(0, TensorShape({num_sampled_})));
    TW_ASSIGN_OR_RETURN(Tensor * true_expected,
                        ctx->allocate_output(1, TensorShape({batch, num_true_})));
    TW_ASSIGN_OR_RETURN(Tensor * sampled_expected,
                        ctx->allocate_output(2, TensorShape({num_sampled_})));
    PhiloxStream stream = generator().Reserve(static_cast<uint64_t>(num_sampled_) * 512);
    TW_ASSIGN_OR_RETURN(const int64_t tries, Draw(stream, sampled->data<int64_t>()));
    const int64_t* ids = sampled->data<int64_t>();
    float* sampled_counts = sampled_expected->data<float>();
    float* true_counts = true_expected->data<float>();
    for (int64_t i = 0; i < num_sampled_; ++i) {
      sampled_counts[i] = Expected(sampler_->Probability(ids[i]), tries);
    }
    for (int64_t i = 0; i < n_true; ++i) {
      true_counts[i] = Expected(sampler_->Probability(truth[i]), tries);
    }
    sampler_->Update(truth, n_true);
    return absl::OkStatus();
  }

 protected:
  // Reads the sampler's attrs (and checks what TF checks at construction).
  virtual absl::Status InitSampler(const KernelConstruction& c) = 0;
  virtual absl::StatusOr<std::unique_ptr<RangeSampler>> MakeSampler(KernelContext* ctx) = 0;
  int64_t num_sampled() const { return num_sampled_; }

  // Draws num_sampled ids into `ids`; returns how many draws it took.
  virtual absl::StatusOr<int64_t> Draw(PhiloxStream& stream, int64_t* ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    PhiloxWords words(&stream);
    if (!unique_) {
      for (int64_t i = 0; i < num_sampled_; ++i) ids[i] = sampler_->Sample(words);
      return num_sampled_;
    }
    int64_t tries = 0;
    absl::flat_hash_set<int64_t> used;
    used.reserve(num_sampled_);
    int64_t picked = 0;
    while (picked < num_sampled_) {
      if (++tries >= std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "could not draw ", num_sampled_, " distinct candidates in ", tries, " tries"));
      }
      const int64_t id = sampler_->Sample(words);
      if (used.insert(id).second) ids[picked++] = id;
    }
    return tries;
  }
  // The expected count of an id of probability p.
  virtual float Expected(float p, int64_t tries) const {
    return ExpectedCount(p, static_cast<int>(num_sampled_), tries);
  }

  absl::Mutex mu_;
  std::unique_ptr<RangeSampler> sampler_ ABSL_GUARDED_BY(mu_);

 private:
  int64_t num_true_ = 0;
  int64_t num_sampled_ = 0;
  bool unique_ = false;
};

// Uniform, LogUniform and the learned unigram samplers: range_max ids.
template <typename Sampler>
class RangeSamplerOp : public CandidateSamplerOp {
 protected:
  absl::Status InitSampler(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("range_max", &range_max_));
    if (range_max_ <= 0) return absl::InvalidArgumentError("range_max must be positive");
    if (std::is_same_v<Sampler, LearnedUnigramSampler> &&
        range_max_ >= std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat("range_max must be less than ",
                                                     std::numeric_limits<int32_t>::max(),
                                                     " for unigram samplers, got ", range_max_));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<RangeSampler>> MakeSampler(KernelContext* ctx) override {
    if constexpr (std::is_same_v<Sampler, LearnedUnigramSampler>) {
      TW_ASSIGN_OR_RETURN(Tensor storage,
                          ctx->allocate_temp(DT_INT32, TensorShape({2, range_max_})));
      return std::make_unique<LearnedUnigramSampler>(range_max_, std::move(storage));
    } else {
      return std::make_unique<Sampler>(range_max_);
    }
  }

 private:
  int64_t range_max_ = 0;
};

// The ids in [0, n) that fall to `shard` of `shards` (id % shards == shard).
int64_t IdsOfShard(int64_t n, int64_t shards, int64_t shard) {
  return n > shard ? (n - shard - 1) / shards + 1 : 0;
}

class FixedUnigramSamplerOp : public CandidateSamplerOp {
 protected:
  absl::Status InitSampler(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("range_max", &range_max_));
    TW_RETURN_IF_ERROR(c.GetAttr("vocab_file", &vocab_file_));
    TW_RETURN_IF_ERROR(c.GetAttr("unigrams", &unigrams_));
    TW_RETURN_IF_ERROR(c.GetAttr("distortion", &distortion_));
    TW_RETURN_IF_ERROR(c.GetAttr("num_reserved_ids", &reserved_));
    TW_RETURN_IF_ERROR(c.GetAttr("num_shards", &shards_));
    TW_RETURN_IF_ERROR(c.GetAttr("shard", &shard_));
    if (vocab_file_.empty() && unigrams_.empty()) {
      return absl::InvalidArgumentError("Must provide either vocab_file or unigrams.");
    }
    if (!vocab_file_.empty() && !unigrams_.empty()) {
      return absl::InvalidArgumentError("Must only provide one of vocab_file and unigrams.");
    }
    if (shards_ < 1 || shard_ < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "num_shards must be positive and shard not negative, got ", shards_, " and ", shard_));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<RangeSampler>> MakeSampler(KernelContext* ctx) override {
    // This shard's weights after its reserved ids, each raised to
    // distortion. TF numbers the loaded ids on from the count of the
    // shard's reserved ids (not from num_reserved_ids), and so do we.
    const int64_t reserved = IdsOfShard(std::max<int64_t>(reserved_, 0), shards_, shard_);
    std::vector<float> loaded;
    float total = 0;
    int64_t id = reserved;
    const auto add = [&](float w) {
      if (id % shards_ == shard_) {
        w = std::pow(w, distortion_);
        total += w;
        loaded.push_back(w);
      }
      ++id;
    };
    if (!vocab_file_.empty()) {
      TW_ASSIGN_OR_RETURN(std::string text, ReadFileToString(vocab_file_));
      // Lines as TF's InputBuffer reads them: none in an empty file, no
      // line after a final newline, a trailing \r dropped.
      std::vector<absl::string_view> lines;
      if (!text.empty()) {
        if (text.back() == '\n') text.pop_back();
        lines = absl::StrSplit(text, '\n');
      }
      for (absl::string_view line : lines) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        // The last column of a CSV row.
        const size_t comma = line.rfind(',');
        const absl::string_view last =
            comma == absl::string_view::npos ? line : line.substr(comma + 1);
        float w = 0;
        if (id % shards_ == shard_ && !absl::SimpleAtof(last, &w)) {
          return absl::InvalidArgumentError(
              absl::StrCat("Wrong vocabulary format at line: ", line));
        }
        add(w);
      }
    } else {
      for (const float w : unigrams_) add(w);
    }
    const int64_t size = reserved + static_cast<int64_t>(loaded.size());
    if (size != range_max_) {
      return absl::InvalidArgumentError(
          absl::StrCat("range is ", range_max_, " must be equal to weights size  ", size));
    }
    if (size > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("FixedUnigramCandidateSampler takes at most 2^31 - 1 ids, got ", size));
    }
    TW_ASSIGN_OR_RETURN(Tensor weights, ctx->allocate_temp(DT_FLOAT, TensorShape({size})));
    float* w = weights.data<float>();
    std::fill(w, w + reserved, 0.0f);
    std::copy(loaded.begin(), loaded.end(), w + reserved);
    TW_ASSIGN_OR_RETURN(Tensor table, ctx->allocate_temp(DT_FLOAT, TensorShape({2, size})));
    return std::make_unique<FixedUnigramSampler>(std::move(weights), total, std::move(table));
  }

 private:
  int64_t range_max_ = 0;
  std::string vocab_file_;
  std::vector<float> unigrams_;
  float distortion_ = 1;
  int64_t reserved_ = 0;
  int64_t shards_ = 1;
  int64_t shard_ = 0;
};

// Every id of [0, num_sampled), each expected once.
class AllSampler : public RangeSampler {
 public:
  using RangeSampler::RangeSampler;
  int64_t Sample(PhiloxWords&) const override { return 0; }  // not drawn
  float Probability(int64_t) const override { return 1.0f; }
};

class AllCandidateSamplerOp : public CandidateSamplerOp {
 protected:
  absl::Status InitSampler(const KernelConstruction&) override { return absl::OkStatus(); }
  absl::StatusOr<std::unique_ptr<RangeSampler>> MakeSampler(KernelContext*) override {
    return std::make_unique<AllSampler>(num_sampled());
  }
  absl::StatusOr<int64_t> Draw(PhiloxStream&, int64_t* ids) override {
    for (int64_t i = 0; i < num_sampled(); ++i) ids[i] = i;
    return num_sampled();
  }
  float Expected(float, int64_t) const override { return 1.0f; }
};

// The (row, position in sampled) pairs whose sampled candidate is one of
// the row's true classes (the last position of a repeated candidate), in
// row and column order, each weighted -FLT_MAX.
class ComputeAccidentalHitsOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("num_true", &num_true_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& truth = ctx->input(0);
    const Tensor& sampled = ctx->input(1);
    if (truth.dims() != 2 || truth.dim_size(1) != num_true_) {
      return absl::InvalidArgumentError("true_candidates must be a batch_size * num_true matrix");
    }
    if (sampled.dims() != 1) {
      return absl::InvalidArgumentError(
          "sampled_candidates must be a vector, which is typically an output from "
          "CandidateSampler");
    }
    const int64_t* s = sampled.data<int64_t>();
    absl::flat_hash_map<int64_t, int64_t> position;
    position.reserve(sampled.NumElements());
    for (int64_t i = 0; i < sampled.NumElements(); ++i) position[s[i]] = i;
    std::vector<int32_t> rows;
    std::vector<int64_t> ids;
    const int64_t* t = truth.data<int64_t>();
    for (int64_t i = 0; i < truth.NumElements(); ++i) {
      const auto hit = position.find(t[i]);
      if (hit == position.end()) continue;
      rows.push_back(static_cast<int32_t>(i / num_true_));
      ids.push_back(hit->second);
    }
    const int64_t n = static_cast<int64_t>(rows.size());
    TW_ASSIGN_OR_RETURN(Tensor * out_rows, ctx->allocate_output(0, TensorShape({n})));
    TW_ASSIGN_OR_RETURN(Tensor * out_ids, ctx->allocate_output(1, TensorShape({n})));
    TW_ASSIGN_OR_RETURN(Tensor * out_weights, ctx->allocate_output(2, TensorShape({n})));
    std::copy(rows.begin(), rows.end(), out_rows->data<int32_t>());
    std::copy(ids.begin(), ids.end(), out_ids->data<int64_t>());
    std::fill_n(out_weights->data<float>(), n, -FLT_MAX);
    return absl::OkStatus();
  }

 private:
  int64_t num_true_ = 0;
};

TW_REGISTER_KERNELS(candidate_sampler_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("UniformCandidateSampler"), MakeFactory<RangeSamplerOp<UniformSampler>>());
  RegisterKernel(cpu("LogUniformCandidateSampler"),
                 MakeFactory<RangeSamplerOp<LogUniformSampler>>());
  RegisterKernel(cpu("LearnedUnigramCandidateSampler"),
                 MakeFactory<RangeSamplerOp<LearnedUnigramSampler>>());
  RegisterKernel(cpu("ThreadUnsafeUnigramCandidateSampler"),
                 MakeFactory<RangeSamplerOp<LearnedUnigramSampler>>());
  RegisterKernel(cpu("FixedUnigramCandidateSampler"), MakeFactory<FixedUnigramSamplerOp>());
  RegisterKernel(cpu("AllCandidateSampler"), MakeFactory<AllCandidateSamplerOp>());
  RegisterKernel(cpu("ComputeAccidentalHits"), MakeFactory<ComputeAccidentalHitsOp>());
}

}  // namespace
}  // namespace towerflow
