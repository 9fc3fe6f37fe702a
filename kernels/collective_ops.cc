#include "kernels/collective_ops.h"

#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/device.h"
#include "framework/rendezvous.h"

namespace towerflow {
namespace {

absl::StatusOr<ReduceKind> ParseReduction(const std::string& s) {
  if (s == "sum") return ReduceKind::kSum;
  if (s == "prod") return ReduceKind::kProd;
  if (s == "min") return ReduceKind::kMin;
  if (s == "max") return ReduceKind::kMax;
  return absl::InvalidArgumentError(
      absl::StrCat("reduction must be one of min, max, prod, sum; got '", s, "'"));
}

// A waiting member: what the launcher needs, and how to end it.
class PendingMember final : public Rendezvous::CollectiveMember {
 public:
  PendingMember(AllReduceMember member, AllReduceLauncher launcher, OpKernel::DoneCallback done)
      : member_(member), launcher_(launcher), done_(std::move(done)) {}

  void Abort(const absl::Status& status) override { done_(status); }
  void Finish(const absl::Status& status) { done_(status); }

  const AllReduceMember& member() const { return member_; }
  AllReduceLauncher launcher() const { return launcher_; }
  const std::string& node() const { return member_.ctx->name(); }
  const std::string& device() const { return member_.ctx->device()->name(); }

 private:
  AllReduceMember member_;
  AllReduceLauncher launcher_;
  OpKernel::DoneCallback done_;
};

// InvalidArgument naming the first member that disagrees with members[0].
absl::Status CheckAgree(const std::string& key, const std::vector<PendingMember*>& members) {
  const PendingMember& first = *members[0];
  const Tensor& in0 = *first.member().input;
  for (const PendingMember* m : members) {
    const Tensor& in = *m->member().input;
    std::string what;
    if (m->launcher() != first.launcher()) {
      what = absl::StrCat("runs on ", m->device(), " but '", first.node(), "' on ", first.device(),
                          "; one all-reduce cannot mix device types");
    } else if (in.dtype() != in0.dtype() || in.shape() != in0.shape()) {
      what =
          absl::StrCat("has a ", DataTypeString(in.dtype()), " input of shape ",
                       in.shape().DebugString(), " but '", first.node(), "' has a ",
                       DataTypeString(in0.dtype()), " input of shape ", in0.shape().DebugString());
    } else if (m->member().kind != first.member().kind) {
      what = absl::StrCat("asks for another reduction than '", first.node(), "'");
    }
    if (!what.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("NcclAllReduce '", key, "': member '", m->node(), "' ", what));
    }
  }
  return absl::OkStatus();
}

// Checks the group, runs its launcher, ends every member.
void RunGroup(const std::string& key, Rendezvous::CollectiveGroup group) {
  std::vector<PendingMember*> members;
  for (auto& m : group) members.push_back(static_cast<PendingMember*>(m.get()));
  std::sort(members.begin(), members.end(), [](const PendingMember* a, const PendingMember* b) {
    return std::tie(a->device(), a->node()) < std::tie(b->device(), b->node());
  });
  absl::Status status = CheckAgree(key, members);
  if (status.ok()) {
    std::vector<AllReduceMember> launch;
    for (const PendingMember* m : members) launch.push_back(m->member());
    status = members[0]->launcher()(launch);
  }
  for (PendingMember* m : members) m->Finish(status);
}

class AllReduceOp : public AsyncOpKernel {
 public:
  explicit AllReduceOp(AllReduceLauncher launcher) : launcher_(launcher) {}

  absl::Status Init(const KernelConstruction& c) override {
    std::string reduction;
    TW_RETURN_IF_ERROR(c.GetAttr("reduction", &reduction));
    TW_ASSIGN_OR_RETURN(kind_, ParseReduction(reduction));
    int64_t num_devices = 0;
    TW_RETURN_IF_ERROR(c.GetAttr("num_devices", &num_devices));
    if (num_devices < 1 || num_devices > (1 << 16)) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_devices must be in [1, 65536], got ", num_devices));
    }
    num_devices_ = static_cast<int>(num_devices);
    std::string shared_name;
    TW_RETURN_IF_ERROR(c.GetAttr("shared_name", &shared_name));
    key_ = absl::StrCat("NcclAllReduce;", shared_name);
    shared_name_ = shared_name;
    return absl::OkStatus();
  }

  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    if (ctx->rendezvous() == nullptr) {
      done(absl::InternalError("NcclAllReduce run without a rendezvous"));
      return;
    }
    auto member = std::make_unique<PendingMember>(AllReduceMember{ctx, &ctx->input(0), kind_},
                                                  launcher_, std::move(done));
    Rendezvous::CollectiveGroup group =
        ctx->rendezvous()->JoinCollective(key_, num_devices_, std::move(member));
    if (!group.empty()) RunGroup(shared_name_, std::move(group));
  }

 private:
  const AllReduceLauncher launcher_;
  ReduceKind kind_ = ReduceKind::kSum;
  int num_devices_ = 1;
  std::string key_;
  std::string shared_name_;
};

}  // namespace

void RegisterAllReduceKernels(const std::string& device_type, const std::vector<DataType>& types,
                              AllReduceLauncher launcher) {
  for (DataType t : types) {
    RegisterKernel(KernelDefBuilder("NcclAllReduce").Device(device_type).TypeConstraint("T", t),
                   [launcher] { return std::make_unique<AllReduceOp>(launcher); });
  }
}

}  // namespace towerflow
