// The Executor batond's registry sees: each task goes to the executor its
// spec names, the supervisor on this machine (executor/local/) or Slurm
// (executor/slurm/), and so does everything later asked about it. Both
// keep a task's files in the same folder (its output log, or a link to
// the job's on a shared file system), so reads need no routing.
#ifndef BATON_EXECUTOR_ROUTING_EXECUTOR_H_
#define BATON_EXECUTOR_ROUTING_EXECUTOR_H_

#include "baton/core/ports.h"
#include "baton/executor/local/local_executor.h"
#include "baton/executor/slurm/slurm_executor.h"

namespace baton {

class RoutingExecutor : public Executor {
 public:
  RoutingExecutor(LocalExecutor* local, SlurmExecutor* slurm)
      : local_(local), slurm_(slurm) {}

  void SetListener(ExecutorListener* listener) override {
    local_->SetListener(listener);
    slurm_->SetListener(listener);
  }
  std::string TaskDir(const TaskId& id) const override {
    return local_->TaskDir(id);
  }
  std::string OutputPath(const TaskId& id) const override {
    return local_->OutputPath(id);
  }
  Result<uint64_t> OutputSize(const TaskRecord& task) const override {
    return local_->OutputSize(task);
  }
  void Start(const TaskRecord& task) override {
    if (task.spec.slurm) {
      slurm_->Start(task);
    } else {
      local_->Start(task);
    }
  }
  void Kill(const TaskId& id, std::chrono::milliseconds grace) override {
    if (slurm_->Owns(id)) {
      slurm_->Kill(id, grace);
    } else {
      local_->Kill(id, grace);
    }
  }
  void CloseStdin(const TaskId& id) override {
    if (slurm_->Owns(id)) {
      slurm_->CloseStdin(id);
    } else {
      local_->CloseStdin(id);
    }
  }
  void Adopt(const std::vector<TaskRecord>& live) override {
    std::vector<TaskRecord> local, slurm;
    for (const TaskRecord& task : live)
      (task.spec.slurm ? slurm : local).push_back(task);
    local_->Adopt(local);
    slurm_->Adopt(slurm);
  }

 private:
  LocalExecutor* local_;
  SlurmExecutor* slurm_;
};

}  // namespace baton

#endif  // BATON_EXECUTOR_ROUTING_EXECUTOR_H_
