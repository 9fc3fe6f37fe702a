#include "data/dataset.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {
namespace data {
namespace {

// ------------------------------------------------------------ slices

class SlicesDataset final : public DatasetBase {
 public:
  explicit SlicesDataset(Element components) : components_(std::move(components)) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(components_);
  }

 private:
  class It final : public Iterator {
   public:
    // Tensors share their buffers: the copy is cheap and outlives the dataset.
    explicit It(const Element& components) : components_(components) {}
    absl::StatusOr<std::optional<Element>> GetNext() override {
      if (next_ >= components_[0].dim_size(0)) return std::nullopt;
      Element out;
      for (const Tensor& c : components_) {
        TW_ASSIGN_OR_RETURN(Tensor row, c.Slice(next_, next_ + 1));
        std::vector<int64_t> dims(c.shape().dim_sizes().begin() + 1, c.shape().dim_sizes().end());
        TW_ASSIGN_OR_RETURN(Tensor element, row.Reshaped(TensorShape(dims)));
        out.push_back(std::move(element));
      }
      ++next_;
      return out;
    }

   private:
    const Element components_;
    int64_t next_ = 0;
  };

  const Element components_;
};

// ------------------------------------------------------------ batch

class BatchDataset final : public DatasetBase {
 public:
  BatchDataset(Dataset input, int64_t size, bool drop_remainder)
      : input_(std::move(input)), size_(size), drop_remainder_(drop_remainder) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(input_.MakeIterator(), size_, drop_remainder_);
  }

 private:
  class It final : public Iterator {
   public:
    It(std::unique_ptr<Iterator> input, int64_t size, bool drop_remainder)
        : input_(std::move(input)), size_(size), drop_remainder_(drop_remainder) {}
    absl::StatusOr<std::optional<Element>> GetNext() override {
      if (size_ <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Batch size must be greater than zero, got ", size_));
      }
      std::vector<Element> rows;
      while (static_cast<int64_t>(rows.size()) < size_) {
        TW_ASSIGN_OR_RETURN(std::optional<Element> e, input_->GetNext());
        if (!e.has_value()) break;
        rows.push_back(std::move(*e));
      }
      if (rows.empty()) return std::nullopt;
      if (drop_remainder_ && static_cast<int64_t>(rows.size()) < size_) return std::nullopt;
      Element out;
      for (size_t c = 0; c < rows[0].size(); ++c) {
        std::vector<Tensor> parts;
        for (const Element& r : rows) {
          if (r.size() != rows[0].size()) {
            return absl::InvalidArgumentError(absl::StrCat("Batch: elements have ", rows[0].size(),
                                                           " and ", r.size(), " components"));
          }
          parts.push_back(r[c]);
        }
        absl::StatusOr<Tensor> stacked = Stack(parts);
        if (!stacked.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("Batch: component ", c, ": ", stacked.status().message()));
        }
        out.push_back(*std::move(stacked));
      }
      return out;
    }

   private:
    std::unique_ptr<Iterator> input_;
    const int64_t size_;
    const bool drop_remainder_;
  };

  const Dataset input_;
  const int64_t size_;
  const bool drop_remainder_;
};

// ------------------------------------------------------------ repeat, take

class RepeatDataset final : public DatasetBase {
 public:
  RepeatDataset(Dataset input, int64_t count) : input_(std::move(input)), count_(count) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(input_, count_);
  }

 private:
  class It final : public Iterator {
   public:
    It(const Dataset& input, int64_t count) : input_(input), count_(count) {}
    absl::StatusOr<std::optional<Element>> GetNext() override {
      while (count_ < 0 || pass_ < count_) {
        if (current_ == nullptr) current_ = input_.MakeIterator();
        TW_ASSIGN_OR_RETURN(std::optional<Element> e, current_->GetNext());
        if (e.has_value()) {
          produced_in_pass_ = true;
          return e;
        }
        // An empty pass would repeat forever: stop.
        if (!produced_in_pass_) return std::nullopt;
        current_.reset();
        produced_in_pass_ = false;
        ++pass_;
      }
      return std::nullopt;
    }

   private:
    const Dataset input_;
    const int64_t count_;
    int64_t pass_ = 0;
    bool produced_in_pass_ = false;
    std::unique_ptr<Iterator> current_;
  };

  const Dataset input_;
  const int64_t count_;
};

class TakeDataset final : public DatasetBase {
 public:
  TakeDataset(Dataset input, int64_t count) : input_(std::move(input)), count_(count) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(input_.MakeIterator(), count_);
  }

 private:
  class It final : public Iterator {
   public:
    It(std::unique_ptr<Iterator> input, int64_t count) : input_(std::move(input)), left_(count) {}
    absl::StatusOr<std::optional<Element>> GetNext() override {
      if (left_ == 0) return std::nullopt;
      TW_ASSIGN_OR_RETURN(std::optional<Element> e, input_->GetNext());
      if (e.has_value() && left_ > 0) --left_;
      return e;
    }

   private:
    std::unique_ptr<Iterator> input_;
    int64_t left_;
  };

  const Dataset input_;
  const int64_t count_;
};

class ShardDataset final : public DatasetBase {
 public:
  ShardDataset(Dataset input, int64_t num_shards, int64_t index)
      : input_(std::move(input)), num_shards_(num_shards), index_(index) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(input_.MakeIterator(), num_shards_, index_);
  }

 private:
  class It final : public Iterator {
   public:
    It(std::unique_ptr<Iterator> input, int64_t num_shards, int64_t index)
        : input_(std::move(input)), num_shards_(num_shards), index_(index) {}
    absl::StatusOr<std::optional<Element>> GetNext() override {
      if (num_shards_ <= 0 || index_ < 0 || index_ >= num_shards_) {
        return absl::InvalidArgumentError(
            absl::StrCat("Shard needs num_shards > 0 and 0 <= index < num_shards, got num_shards ",
                         num_shards_, " and index ", index_));
      }
      while (true) {
        TW_ASSIGN_OR_RETURN(std::optional<Element> e, input_->GetNext());
        if (!e.has_value()) return e;
        if (next_++ % num_shards_ == index_) return e;
      }
    }

   private:
    std::unique_ptr<Iterator> input_;
    const int64_t num_shards_, index_;
    int64_t next_ = 0;  // the input's index of the next element
  };

  const Dataset input_;
  const int64_t num_shards_, index_;
};

// ------------------------------------------------------------ shuffle

class ShuffleDataset final : public DatasetBase {
 public:
  ShuffleDataset(Dataset input, int64_t buffer_size, uint64_t seed)
      : input_(std::move(input)), buffer_size_(buffer_size), seed_(seed) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    // Each pass reshuffles: the k-th iterator uses the k-th seed.
    return std::make_unique<It>(input_.MakeIterator(), buffer_size_, seed_ + passes_++);
  }

 private:
  class It final : public Iterator {
   public:
    It(std::unique_ptr<Iterator> input, int64_t buffer_size, uint64_t seed)
        : input_(std::move(input)), buffer_size_(buffer_size), rng_(seed) {}
    absl::StatusOr<std::optional<Element>> GetNext() override {
      if (buffer_size_ <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Shuffle buffer size must be greater than zero, got ", buffer_size_));
      }
      while (!input_done_ && static_cast<int64_t>(buffer_.size()) < buffer_size_) {
        TW_ASSIGN_OR_RETURN(std::optional<Element> e, input_->GetNext());
        if (!e.has_value()) {
          input_done_ = true;
          break;
        }
        buffer_.push_back(std::move(*e));
      }
      if (buffer_.empty()) return std::nullopt;
      std::uniform_int_distribution<size_t> pick(0, buffer_.size() - 1);
      const size_t i = pick(rng_);
      std::swap(buffer_[i], buffer_.back());
      Element out = std::move(buffer_.back());
      buffer_.pop_back();
      return out;
    }

   private:
    std::unique_ptr<Iterator> input_;
    const int64_t buffer_size_;
    std::mt19937_64 rng_;
    std::vector<Element> buffer_;
    bool input_done_ = false;
  };

  const Dataset input_;
  const int64_t buffer_size_;
  const uint64_t seed_;
  mutable std::atomic<uint64_t> passes_{0};
};

class InterleaveDataset final : public DatasetBase {
 public:
  InterleaveDataset(Dataset input, InterleaveFn fn, int cycle_length, int block_length)
      : input_(std::move(input)), fn_(std::move(fn)), cycle_(cycle_length), block_(block_length) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(input_.MakeIterator(), fn_, cycle_, block_);
  }

 private:
  class It final : public Iterator {
   public:
    It(std::unique_ptr<Iterator> input, InterleaveFn fn, int cycle, int block)
        : input_(std::move(input)), fn_(std::move(fn)), cycle_(cycle), block_(block) {}

    absl::StatusOr<std::optional<Element>> GetNext() override {
      if (cycle_ < 1 || block_ < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Interleave: cycle_length and block_length must be at least 1, got ",
                         cycle_, " and ", block_));
      }
      if (open_.empty()) open_.resize(cycle_);
      // tf.data's order: the current slot gives its next element (moving
      // on after block_length of them); an ended one is closed and the
      // cycle moves on; an empty slot takes the next input element's
      // dataset, until the input ends.
      while (!input_done_ || num_open_ > 0) {
        std::unique_ptr<Iterator>& slot = open_[current_];
        if (slot != nullptr) {
          TW_ASSIGN_OR_RETURN(std::optional<Element> e, slot->GetNext());
          if (e.has_value()) {
            if (++taken_ == block_) Advance();
            return e;
          }
          slot.reset();
          --num_open_;
          Advance();
        } else if (!input_done_) {
          TW_ASSIGN_OR_RETURN(std::optional<Element> e, input_->GetNext());
          if (e.has_value()) {
            TW_ASSIGN_OR_RETURN(Dataset d, fn_(*e));
            slot = d.MakeIterator();
            ++num_open_;
          } else {
            input_done_ = true;
          }
        } else {
          Advance();
        }
      }
      return std::nullopt;
    }

   private:
    void Advance() {
      current_ = (current_ + 1) % cycle_;
      taken_ = 0;
    }

    std::unique_ptr<Iterator> input_;
    const InterleaveFn fn_;
    const int cycle_, block_;
    std::vector<std::unique_ptr<Iterator>> open_;
    int current_ = 0, taken_ = 0, num_open_ = 0;
    bool input_done_ = false;
  };

  const Dataset input_;
  const InterleaveFn fn_;
  const int cycle_, block_;
};

}  // namespace

absl::StatusOr<Tensor> Concat(const std::vector<Tensor>& parts) {
  if (parts.empty()) return absl::InvalidArgumentError("Concat needs at least one tensor");
  const Tensor& first = parts[0];
  std::vector<int64_t> dims(first.shape().dim_sizes().begin(), first.shape().dim_sizes().end());
  if (dims.empty()) return absl::InvalidArgumentError("cannot concatenate scalars");
  const auto rest = [](const Tensor& t) {
    return std::vector<int64_t>(t.shape().dim_sizes().begin() + 1, t.shape().dim_sizes().end());
  };
  dims[0] = 0;
  for (const Tensor& p : parts) {
    if (p.dtype() != first.dtype() || p.dims() == 0 || rest(p) != rest(first)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot concatenate ", DataTypeString(first.dtype()), first.shape().DebugString(),
          " and ", DataTypeString(p.dtype()), p.shape().DebugString()));
    }
    dims[0] += p.dim_size(0);
  }
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  Tensor out(first.dtype(), shape);
  int64_t offset = 0;  // elements written
  for (const Tensor& p : parts) {
    const int64_t n = p.NumElements();
    if (first.dtype() == DT_STRING) {
      std::copy_n(p.data<std::string>(), n, out.data<std::string>() + offset);
    } else if (n > 0) {
      std::memcpy(static_cast<char*>(out.raw_data()) + offset * DataTypeSize(first.dtype()),
                  p.raw_data(), p.TotalBytes());
    }
    offset += n;
  }
  return out;
}

absl::StatusOr<Tensor> Stack(const std::vector<Tensor>& parts) {
  if (parts.empty()) return absl::InvalidArgumentError("Stack needs at least one tensor");
  std::vector<Tensor> rows;
  for (const Tensor& p : parts) {
    if (p.dtype() != parts[0].dtype() || p.shape() != parts[0].shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot stack ", DataTypeString(parts[0].dtype()), parts[0].shape().DebugString(),
          " and ", DataTypeString(p.dtype()), p.shape().DebugString()));
    }
    std::vector<int64_t> dims = {1};
    for (int64_t d : p.shape().dim_sizes()) dims.push_back(d);
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor row, p.Reshaped(shape));
    rows.push_back(std::move(row));
  }
  return Concat(rows);
}

absl::StatusOr<Dataset> Dataset::FromTensorSlices(const Element& components) {
  if (components.empty()) {
    return absl::InvalidArgumentError("FromTensorSlices needs at least one component");
  }
  for (size_t i = 0; i < components.size(); ++i) {
    const Tensor& c = components[i];
    if (c.dims() == 0) {
      return absl::InvalidArgumentError(absl::StrCat("FromTensorSlices: component ", i,
                                                     " is a scalar; it needs a first "
                                                     "dimension to slice"));
    }
    if (c.dim_size(0) != components[0].dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat("FromTensorSlices: component ", i, " has ",
                                                     c.dim_size(0), " rows but component 0 has ",
                                                     components[0].dim_size(0)));
    }
  }
  return Dataset(std::make_shared<SlicesDataset>(components));
}

Dataset Dataset::Batch(int64_t batch_size, bool drop_remainder) const {
  return Dataset(std::make_shared<BatchDataset>(*this, batch_size, drop_remainder));
}
Dataset Dataset::Repeat(int64_t count) const {
  return Dataset(std::make_shared<RepeatDataset>(*this, count));
}
Dataset Dataset::Take(int64_t count) const {
  return Dataset(std::make_shared<TakeDataset>(*this, count));
}
Dataset Dataset::Shard(int64_t num_shards, int64_t index) const {
  return Dataset(std::make_shared<ShardDataset>(*this, num_shards, index));
}
Dataset Dataset::Interleave(InterleaveFn fn, int cycle_length, int block_length) const {
  return Dataset(
      std::make_shared<InterleaveDataset>(*this, std::move(fn), cycle_length, block_length));
}
Dataset Dataset::Shuffle(int64_t buffer_size, uint64_t seed) const {
  return Dataset(std::make_shared<ShuffleDataset>(*this, buffer_size, seed));
}

}  // namespace data
}  // namespace towerflow
