// Lookup tables (ops/lookup_ops.cc) as resources of the device's
// ResourceMgr, with TF's semantics and messages:
// - HashTableV2 is filled once: by InitializeTableV2, LookupTableImportV2 or
//   InitializeTableFromTextFileV2; filling it again with the same entries
//   is a no-op, with others FailedPrecondition; reading it before
//   FailedPrecondition ("Table not initialized."); a key given two values
//   while filling is FailedPrecondition.
// - MutableHashTableV2 starts empty; LookupTableInsertV2 adds or
//   overwrites, LookupTableImportV2 replaces the whole content.
// Keys are int32, int64 or string; values int32, int64, float, double,
// bool or string, one scalar per key. A value is kept as its element's
// bytes (a string as itself), so one table type serves every pair.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_mgr.h"
#include "kernels/kernel_util.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

using Key = std::variant<int64_t, std::string>;
using Entries = absl::flat_hash_map<Key, std::string>;

bool KeyDtypeOk(DataType t) { return t == DT_INT32 || t == DT_INT64 || t == DT_STRING; }
bool ValueDtypeOk(DataType t) {
  return t == DT_INT32 || t == DT_INT64 || t == DT_FLOAT || t == DT_DOUBLE || t == DT_BOOL ||
         t == DT_STRING;
}

Key KeyAt(const Tensor& keys, int64_t i) {
  switch (keys.dtype()) {
    case DT_STRING:
      return keys.data<std::string>()[i];
    case DT_INT32:
      return int64_t{keys.data<int32_t>()[i]};
    default:
      return keys.data<int64_t>()[i];
  }
}

std::string ValueAt(const Tensor& values, int64_t i) {
  if (values.dtype() == DT_STRING) return values.data<std::string>()[i];
  const size_t size = TensorElementSize(values.dtype());
  return std::string(static_cast<const char*>(values.raw_data()) + i * size, size);
}

void SetValue(const std::string& value, Tensor* out, int64_t i) {
  if (out->dtype() == DT_STRING) {
    out->data<std::string>()[i] = value;
  } else {
    std::memcpy(static_cast<char*>(out->raw_data()) + i * value.size(), value.data(), value.size());
  }
}

std::string KeyString(const Key& key) {
  return std::holds_alternative<std::string>(key) ? std::get<std::string>(key)
                                                  : absl::StrCat(std::get<int64_t>(key));
}

// A value as TF's messages print it.
std::string ValueString(DataType dtype, const std::string& value) {
  const auto as = [&](auto v) {
    std::memcpy(&v, value.data(), sizeof(v));
    return v;
  };
  switch (dtype) {
    case DT_STRING:
      return value;
    case DT_INT32:
      return absl::StrCat(as(int32_t{}));
    case DT_INT64:
      return absl::StrCat(as(int64_t{}));
    case DT_FLOAT:
      return absl::StrCat(as(float{}));
    case DT_DOUBLE:
      return absl::StrCat(as(double{}));
    default:
      return as(bool{}) ? "true" : "false";
  }
}

class LookupTable : public ResourceBase {
 public:
  LookupTable(DataType key_dtype, DataType value_dtype, bool is_mutable, std::string name)
      : key_dtype_(key_dtype),
        value_dtype_(value_dtype),
        mutable_(is_mutable),
        name_(std::move(name)) {}

  DataType key_dtype() const { return key_dtype_; }
  DataType value_dtype() const { return value_dtype_; }
  bool is_mutable() const { return mutable_; }
  std::string DebugString() const override {
    return absl::StrCat(mutable_ ? "MutableHashTable<" : "HashTable<", DataTypeString(key_dtype_),
                        ", ", DataTypeString(value_dtype_), "> ", name_);
  }

  // Fills a HashTable (Initialize, Import, text files), or replaces a
  // mutable table's content (Import).
  absl::Status Fill(Entries entries) {
    absl::MutexLock lock(&mu_);
    if (!mutable_ && initialized_) {
      if (entries == entries_) return absl::OkStatus();
      return absl::FailedPreconditionError("Table was already initialized with different data.");
    }
    entries_ = std::move(entries);
    initialized_ = true;
    return absl::OkStatus();
  }

  absl::Status Insert(const Tensor& keys, const Tensor& values) {
    if (!mutable_) {
      return absl::UnimplementedError(
          "Insert not supported by InitializableLookupTable implementations");
    }
    absl::MutexLock lock(&mu_);
    for (int64_t i = 0; i < keys.NumElements(); ++i) {
      entries_.insert_or_assign(KeyAt(keys, i), ValueAt(values, i));
    }
    return absl::OkStatus();
  }

  absl::Status Find(const Tensor& keys, const std::string& fallback, Tensor* out) const {
    absl::ReaderMutexLock lock(&mu_);
    if (!mutable_ && !initialized_) {
      return absl::FailedPreconditionError("Table not initialized.");
    }
    for (int64_t i = 0; i < keys.NumElements(); ++i) {
      auto it = entries_.find(KeyAt(keys, i));
      SetValue(it == entries_.end() ? fallback : it->second, out, i);
    }
    return absl::OkStatus();
  }

  int64_t Size() const {
    absl::ReaderMutexLock lock(&mu_);
    return static_cast<int64_t>(entries_.size());
  }

  absl::Status Export(KernelContext* ctx) const {
    absl::ReaderMutexLock lock(&mu_);
    const int64_t n = static_cast<int64_t>(entries_.size());
    TW_ASSIGN_OR_RETURN(Tensor * keys, ctx->allocate_output(0, TensorShape({n})));
    TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(1, TensorShape({n})));
    int64_t i = 0;
    for (const auto& [key, value] : entries_) {
      if (key_dtype_ == DT_STRING) {
        keys->data<std::string>()[i] = std::get<std::string>(key);
      } else if (key_dtype_ == DT_INT32) {
        keys->data<int32_t>()[i] = static_cast<int32_t>(std::get<int64_t>(key));
      } else {
        keys->data<int64_t>()[i] = std::get<int64_t>(key);
      }
      SetValue(value, values, i++);
    }
    return absl::OkStatus();
  }

 private:
  const DataType key_dtype_, value_dtype_;
  const bool mutable_;
  const std::string name_;
  mutable absl::Mutex mu_;
  Entries entries_ ABSL_GUARDED_BY(mu_);
  bool initialized_ ABSL_GUARDED_BY(mu_) = false;
};

// Adds key -> value to `entries` being filled: a key given two values is
// TF's FailedPrecondition.
absl::Status AddEntry(Entries* entries, Key key, std::string value, DataType value_dtype) {
  auto [it, added] = entries->try_emplace(std::move(key), std::move(value));
  if (added || it->second == value) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("HashTable has different value for same key. Key ", KeyString(it->first),
                   " has ", ValueString(value_dtype, it->second), " and trying to add value ",
                   ValueString(value_dtype, value)));
}

// HashTableV2 and MutableHashTableV2: the handle of the table named by
// shared_name (or the node), made on first use.
class TableHandleOp : public OpKernel {
 public:
  explicit TableHandleOp(bool is_mutable) : mutable_(is_mutable) {}
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(ResourceName(c, &container_, &name_));
    TW_RETURN_IF_ERROR(c.GetAttr("key_dtype", &key_dtype_));
    TW_RETURN_IF_ERROR(c.GetAttr("value_dtype", &value_dtype_));
    if (!KeyDtypeOk(key_dtype_) || !ValueDtypeOk(value_dtype_)) {
      return absl::UnimplementedError(absl::StrCat(
          "Lookup tables of ", DataTypeString(key_dtype_), " keys and ",
          DataTypeString(value_dtype_),
          " values are not implemented (keys: int32, int64, string; values: int32, int64, "
          "float, double, bool, string)"));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(
        std::shared_ptr<LookupTable> table,
        ctx->resource_manager()->LookupOrCreate<LookupTable>(
            container_, name_, [&]() -> absl::StatusOr<std::shared_ptr<LookupTable>> {
              return std::make_shared<LookupTable>(key_dtype_, value_dtype_, mutable_, name_);
            }));
    if (table->key_dtype() != key_dtype_ || table->value_dtype() != value_dtype_ ||
        table->is_mutable() != mutable_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Table ", name_, " exists as ", table->DebugString(), ", not with ",
          DataTypeString(key_dtype_), " keys and ", DataTypeString(value_dtype_), " values"));
    }
    Tensor handle(DT_RESOURCE, TensorShape());
    *handle.data<ResourceHandle>() =
        ResourceHandle{ctx->device()->name(), container_, name_, "LookupTable"};
    return ctx->set_output(0, handle);
  }

 private:
  const bool mutable_;
  std::string container_, name_;
  DataType key_dtype_ = DT_INVALID, value_dtype_ = DT_INVALID;
};

// The table input 0 names, checked against the node's key and value types
// (TF's "Signature mismatch").
absl::StatusOr<std::shared_ptr<LookupTable>> TableInput(KernelContext* ctx, DataType key,
                                                        DataType value, const char* op) {
  TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
  absl::StatusOr<std::shared_ptr<LookupTable>> table =
      ctx->resource_manager()->Lookup<LookupTable>(h->container, h->name);
  if (absl::IsNotFound(table.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat("Table ", h->name, " does not exist (its table op has not run)"));
  }
  TW_RETURN_IF_ERROR(table.status());
  if (key != DT_INVALID && ((*table)->key_dtype() != key || (*table)->value_dtype() != value)) {
    const auto signature = [](DataType k, DataType v) {
      return absl::StrCat("resource, ", DataTypeString(k), ", ", DataTypeString(v), "->",
                          DataTypeString(v));
    };
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": Signature mismatch, have: ", signature(key, value),
                     " expected: ", signature((*table)->key_dtype(), (*table)->value_dtype())));
  }
  return table;
}

// A kernel on a table whose key and value types are attrs `key`, `value`.
class TableKernel : public OpKernel {
 public:
  TableKernel(const char* key, const char* value) : key_attr_(key), value_attr_(value) {}
  absl::Status Init(const KernelConstruction& c) override {
    if (key_attr_ == nullptr) return absl::OkStatus();
    TW_RETURN_IF_ERROR(c.GetAttr(key_attr_, &key_));
    return c.GetAttr(value_attr_, &value_);
  }

 protected:
  absl::StatusOr<std::shared_ptr<LookupTable>> Table(KernelContext* ctx) const {
    return TableInput(ctx, key_, value_, ctx->op().c_str());
  }

 private:
  const char* key_attr_;
  const char* value_attr_;
  DataType key_ = DT_INVALID, value_ = DT_INVALID;
};

// keys and values of one size, as one table's entries.
absl::StatusOr<Entries> EntriesOf(const Tensor& keys, const Tensor& values) {
  if (keys.NumElements() != values.NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat("Keys and values must have the same size ",
                                                   keys.NumElements(), " vs ",
                                                   values.NumElements()));
  }
  Entries entries;
  for (int64_t i = 0; i < keys.NumElements(); ++i) {
    TW_RETURN_IF_ERROR(AddEntry(&entries, KeyAt(keys, i), ValueAt(values, i), values.dtype()));
  }
  return entries;
}

class InitializeTableOp : public TableKernel {
 public:
  InitializeTableOp() : TableKernel("Tkey", "Tval") {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<LookupTable> table, Table(ctx));
    TW_ASSIGN_OR_RETURN(Entries entries, EntriesOf(ctx->input(1), ctx->input(2)));
    return table->Fill(std::move(entries));
  }
};

// LookupTableImportV2 (import) and LookupTableInsertV2.
class ImportOrInsertOp : public TableKernel {
 public:
  explicit ImportOrInsertOp(bool import) : TableKernel("Tin", "Tout"), import_(import) {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<LookupTable> table, Table(ctx));
    const Tensor& keys = ctx->input(1);
    const Tensor& values = ctx->input(2);
    if (!import_) {
      if (keys.NumElements() != values.NumElements()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expected shape ", keys.shape().DebugString(), " for value, got ",
                         values.shape().DebugString()));
      }
      return table->Insert(keys, values);
    }
    TW_ASSIGN_OR_RETURN(Entries entries, EntriesOf(keys, values));
    return table->Fill(std::move(entries));
  }

 private:
  const bool import_;
};

class FindOp : public TableKernel {
 public:
  FindOp() : TableKernel("Tin", "Tout") {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<LookupTable> table, Table(ctx));
    const Tensor& keys = ctx->input(1);
    const Tensor& fallback = ctx->input(2);
    if (fallback.NumElements() != 1 || fallback.dims() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected shape [] or [1] for default value, got ", fallback.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, keys.shape()));
    return table->Find(keys, ValueAt(fallback, 0), out);
  }
};

class SizeOp : public TableKernel {
 public:
  SizeOp() : TableKernel(nullptr, nullptr) {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<LookupTable> table, Table(ctx));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({})));
    *out->data<int64_t>() = table->Size();
    return absl::OkStatus();
  }
};

class ExportOp : public TableKernel {
 public:
  ExportOp() : TableKernel("Tkeys", "Tvalues") {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<LookupTable> table, Table(ctx));
    return table->Export(ctx);
  }
};

// InitializeTableFromTextFileV2: line by line, the key and the value each a
// column (split at delimiter), the whole line (-2) or the line number plus
// offset (-1); vocab_size lines exactly when not -1.
class InitializeFromTextFileOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("key_index", &key_index_));
    TW_RETURN_IF_ERROR(c.GetAttr("value_index", &value_index_));
    TW_RETURN_IF_ERROR(c.GetAttr("vocab_size", &vocab_size_));
    TW_RETURN_IF_ERROR(c.GetAttr("delimiter", &delimiter_));
    if (c.def().attr().contains("offset")) TW_RETURN_IF_ERROR(c.GetAttr("offset", &offset_));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<LookupTable> table,
                        TableInput(ctx, DT_INVALID, DT_INVALID, "InitializeTableFromTextFileV2"));
    const Tensor& name = ctx->input(1);
    if (name.NumElements() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("filename should be a single string, but got ", name.shape().DebugString()));
    }
    const std::string& filename = name.data<std::string>()[0];
    if (key_index_ == kLineNumber && table->key_dtype() != DT_INT64) {
      return absl::InvalidArgumentError(
          absl::StrCat("Key index for line number requires table key dtype of int64, got ",
                       DataTypeString(table->key_dtype())));
    }
    if (value_index_ == kLineNumber && table->value_dtype() != DT_INT64) {
      return absl::InvalidArgumentError(
          absl::StrCat("Value index for line number requires table value dtype of int64, got ",
                       DataTypeString(table->value_dtype())));
    }
    std::ifstream in(filename);
    if (!in) return absl::NotFoundError(absl::StrCat(filename, "; No such file or directory"));
    Entries entries;
    std::string line;
    int64_t lines = 0;
    while ((vocab_size_ < 0 || lines < vocab_size_) && std::getline(in, line)) {
      if (line.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("Invalid content in ", filename,
                                                       ": empty line found at position ",
                                                       static_cast<int64_t>(in.tellg()), "."));
      }
      const std::vector<std::string> columns = absl::StrSplit(line, delimiter_);
      const int64_t needed = std::max(key_index_, value_index_) + 1;
      if (needed > static_cast<int64_t>(columns.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("Invalid number of columns in ", filename, " line ", lines, " (", line,
                         ") : expected at least ", needed, " got ", columns.size()));
      }
      TW_ASSIGN_OR_RETURN(std::string key_text, Field(key_index_, columns, line, lines));
      TW_ASSIGN_OR_RETURN(std::string value_text, Field(value_index_, columns, line, lines));
      TW_ASSIGN_OR_RETURN(Key key, ParseKey(table->key_dtype(), key_text, lines));
      TW_ASSIGN_OR_RETURN(std::string value, ParseValue(table->value_dtype(), value_text, lines));
      TW_RETURN_IF_ERROR(
          AddEntry(&entries, std::move(key), std::move(value), table->value_dtype()));
      ++lines;
    }
    if (vocab_size_ >= 0 && lines != vocab_size_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid vocab_size in ", filename, ": expected ", vocab_size_, " but got ", lines));
    }
    return table->Fill(std::move(entries));
  }

 private:
  static constexpr int64_t kWholeLine = -2, kLineNumber = -1;

  absl::StatusOr<std::string> Field(int64_t index, const std::vector<std::string>& columns,
                                    const std::string& line, int64_t number) const {
    if (index == kWholeLine) return line;
    if (index == kLineNumber) return absl::StrCat(number + offset_);
    return columns[index];
  }
  static absl::StatusOr<int64_t> ParseInt(const std::string& text, int64_t line) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(text, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Field ", text, " in line ", line, " is not a valid int64."));
    }
    return v;
  }
  static absl::StatusOr<Key> ParseKey(DataType dtype, const std::string& text, int64_t line) {
    if (dtype == DT_STRING) return Key(text);
    TW_ASSIGN_OR_RETURN(int64_t v, ParseInt(text, line));
    if (dtype == DT_INT32 && static_cast<int32_t>(v) != v) {
      return absl::InvalidArgumentError(
          absl::StrCat("Field ", text, " in line ", line, " is not a valid int32."));
    }
    return Key(v);
  }
  static absl::StatusOr<std::string> ParseValue(DataType dtype, const std::string& text,
                                                int64_t line) {
    Tensor one(dtype, TensorShape({1}));
    bool ok = true;
    switch (dtype) {
      case DT_STRING:
        return text;
      case DT_INT64: {
        TW_ASSIGN_OR_RETURN(*one.data<int64_t>(), ParseInt(text, line));
        break;
      }
      case DT_INT32: {
        ok = absl::SimpleAtoi(text, one.data<int32_t>());
        break;
      }
      case DT_FLOAT:
        ok = absl::SimpleAtof(text, one.data<float>());
        break;
      case DT_DOUBLE:
        ok = absl::SimpleAtod(text, one.data<double>());
        break;
      default:
        ok = absl::SimpleAtob(text, one.data<bool>());
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Field ", text, " in line ", line, " is not a valid ", DataTypeString(dtype), "."));
    }
    return ValueAt(one, 0);
  }

  int64_t key_index_ = 0, value_index_ = 0, vocab_size_ = -1, offset_ = 0;
  std::string delimiter_ = "\t";
};

TW_REGISTER_KERNELS(lookup_table_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("HashTableV2"), [] { return std::make_unique<TableHandleOp>(false); });
  RegisterKernel(cpu("MutableHashTableV2"), [] { return std::make_unique<TableHandleOp>(true); });
  RegisterKernel(cpu("InitializeTableV2"), MakeFactory<InitializeTableOp>());
  RegisterKernel(cpu("LookupTableImportV2"),
                 [] { return std::make_unique<ImportOrInsertOp>(true); });
  RegisterKernel(cpu("LookupTableInsertV2"),
                 [] { return std::make_unique<ImportOrInsertOp>(false); });
  RegisterKernel(cpu("LookupTableFindV2"), MakeFactory<FindOp>());
  RegisterKernel(cpu("LookupTableSizeV2"), MakeFactory<SizeOp>());
  RegisterKernel(cpu("LookupTableExportV2"), MakeFactory<ExportOp>());
  RegisterKernel(cpu("InitializeTableFromTextFileV2"), MakeFactory<InitializeFromTextFileOp>());
}

}  // namespace
}  // namespace towerflow
