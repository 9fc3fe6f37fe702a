// ResourceMgr: the stateful objects of one device, by (container, name).
//
// Each device owns one ResourceMgr. Variables (resource and TF1 ref
// variables alike) live here as `Var`, so their values survive from one
// Session::Run to the next and are shared by every step running on the
// device. Resources are reference counted: a kernel holding a
// std::shared_ptr keeps one alive even if its container is cleared.
//
//   absl::StatusOr<std::shared_ptr<Var>> v = rm->LookupOrCreate<Var>(
//       "localhost", "w", [] { return std::make_shared<Var>(DT_FLOAT, "w"); });
//
// Thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_RESOURCE_MGR_H_
#define TOWERFLOW_FRAMEWORK_RESOURCE_MGR_H_

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/tensor.h"

namespace towerflow {

// The container a resource op uses when its `container` attr is empty.
inline constexpr char kDefaultContainer[] = "localhost";

// The container of the resources one step makes for itself (a while loop
// gradient's stacks): the session drops it when the step ends.
inline std::string StepContainerName(int64_t step_id) { return absl::StrCat("__step_", step_id); }

class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string DebugString() const = 0;
};

// A variable: a tensor behind a lock. `mu` guards `tensor` and
// `initialized`. Readers take a reader lock and copy the Tensor (sharing the
// buffer); writers take the writer lock and either write in place (when the
// buffer is not shared) or swap in a new buffer, so a value already read is
// never changed under its reader. See Note [Variable copy-on-write] in
// kernels/cpu/variable_ops.cc.
class Var : public ResourceBase {
 public:
  // `name` is the variable's name for messages (its node or shared name).
  Var(DataType dtype, std::string name) : dtype_(dtype), name_(std::move(name)) {}

  DataType dtype() const { return dtype_; }
  const std::string& name() const { return name_; }
  std::string DebugString() const override {
    return absl::StrCat("Var<", DataTypeString(dtype_), " ", name_, ">");
  }

  absl::Mutex mu;
  Tensor tensor ABSL_GUARDED_BY(mu);
  bool initialized ABSL_GUARDED_BY(mu) = false;

 private:
  const DataType dtype_;
  const std::string name_;
};

class ResourceMgr {
 public:
  ResourceMgr() = default;
  ResourceMgr(const ResourceMgr&) = delete;
  ResourceMgr& operator=(const ResourceMgr&) = delete;

  // The resource of type T at (container, name); NotFound when absent.
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> Lookup(const std::string& container,
                                            const std::string& name) const {
    absl::ReaderMutexLock lock(&mu_);
    auto it = resources_.find(Key{container, typeid(T).name(), name});
    if (it == resources_.end()) {
      return absl::NotFoundError(
          absl::StrCat("Resource ", container, "/", name, " does not exist."));
    }
    return std::static_pointer_cast<T>(it->second);
  }

  // The existing resource, or the one `create` makes, stored under the key.
  // An error from `create` is returned and nothing is stored.
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> LookupOrCreate(
      const std::string& container, const std::string& name,
      const std::function<absl::StatusOr<std::shared_ptr<T>>()>& create) {
    absl::MutexLock lock(&mu_);
    const Key key{container, typeid(T).name(), name};
    auto it = resources_.find(key);
    if (it != resources_.end()) return std::static_pointer_cast<T>(it->second);
    absl::StatusOr<std::shared_ptr<T>> made = create();
    if (!made.ok()) return made.status();
    resources_.emplace(key, *made);
    return made;
  }

  // Removes the resource; NotFound when absent.
  template <typename T>
  absl::Status Delete(const std::string& container, const std::string& name) {
    absl::MutexLock lock(&mu_);
    if (resources_.erase(Key{container, typeid(T).name(), name}) == 0) {
      return absl::NotFoundError(
          absl::StrCat("Resource ", container, "/", name, " does not exist."));
    }
    ++removals_;
    return absl::OkStatus();
  }

  // Drops every resource of `container` (all of them when empty).
  void Cleanup(const std::string& container);

  // Every resource of type T, in no particular order.
  template <typename T>
  std::vector<std::shared_ptr<T>> All() const {
    absl::ReaderMutexLock lock(&mu_);
    std::vector<std::shared_ptr<T>> out;
    for (const auto& [key, resource] : resources_) {
      if (std::get<1>(key) == typeid(T).name()) out.push_back(std::static_pointer_cast<T>(resource));
    }
    return out;
  }

  // Counts the resources removed so far (Delete, Cleanup). A kernel that
  // looked a resource up when it was made may hold one the manager no
  // longer has under its name when this changed.
  int64_t removals() const {
    absl::ReaderMutexLock lock(&mu_);
    return removals_;
  }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // container, type, name

  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<ResourceBase>> resources_ ABSL_GUARDED_BY(mu_);
  int64_t removals_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_RESOURCE_MGR_H_
