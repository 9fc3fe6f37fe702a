#include "framework/op_def_source.h"

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace towerflow {
namespace {

struct Source {
  absl::Mutex mu;
  OpDefSource find ABSL_GUARDED_BY(mu);
};

Source& TheSource() {
  static Source* const source = new Source;
  return *source;
}

}  // namespace

void SetOpDefSource(OpDefSource source) {
  Source& s = TheSource();
  absl::MutexLock lock(&s.mu);
  s.find = std::move(source);
}

const OpDef* FindOpDefFromSource(const std::string& op) {
  OpDefSource find;
  {
    Source& s = TheSource();
    absl::MutexLock lock(&s.mu);
    find = s.find;
  }
  return find ? find(op) : nullptr;
}

}  // namespace towerflow
