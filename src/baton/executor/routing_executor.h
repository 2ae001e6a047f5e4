// The Executor batond's registry sees: each task goes to the first
// executor, in the router's order, that Takes its spec (the last one takes
// the rest: the supervisor on this machine), and so does everything later
// asked about it (the one that Owns it). It knows no executor by name: a
// new one is a folder of its own and one more entry where batond makes
// the router (daemon/daemon.cc). All keep a task's files in the same
// folder (its output log, or a link to a job's on a shared file system),
// so reads go to the last, with no routing.
#ifndef BATON_EXECUTOR_ROUTING_EXECUTOR_H_
#define BATON_EXECUTOR_ROUTING_EXECUTOR_H_

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "baton/core/ports.h"

namespace baton {

class RoutingExecutor : public Executor {
 public:
  // REQUIRES: at least one executor, the last the one that takes the rest.
  explicit RoutingExecutor(std::vector<Executor*> executors)
      : executors_(std::move(executors)) {}

  void SetListener(ExecutorListener* listener) override {
    for (Executor* executor : executors_)
      executor->SetListener(listener);
  }
  void Flush() override {
    for (Executor* executor : executors_)
      executor->Flush();
  }
  bool Owns(const TaskId& id) const override {
    return std::any_of(executors_.begin(), executors_.end(),
                       [&](const Executor* e) { return e->Owns(id); });
  }
  std::string TaskDir(const TaskId& id) const override {
    return executors_.back()->TaskDir(id);
  }
  std::string OutputPath(const TaskId& id) const override {
    return executors_.back()->OutputPath(id);
  }
  Result<uint64_t> OutputSize(const TaskRecord& task) const override {
    return executors_.back()->OutputSize(task);
  }
  // A remote task that no executor takes would run here, on the last:
  // refused instead.
  Status Accepts(const TaskSpec& spec) const override {
    size_t index = IndexFor(spec);
    if (spec.remote && index + 1 == executors_.size()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("this batond has no executor '{}'",
                                   spec.remote->executor));
    }
    return executors_[index]->Accepts(spec);
  }
  void Preflight(const TaskSpec& spec,
                 std::function<void(Status)> done) override {
    For(spec).Preflight(spec, std::move(done));
  }
  void Start(const TaskRecord& task) override { For(task.spec).Start(task); }
  void Kill(const TaskId& id, std::chrono::milliseconds grace) override {
    OwnerOf(id).Kill(id, grace);
  }
  void CloseStdin(const TaskId& id) override { OwnerOf(id).CloseStdin(id); }
  void Adopt(const std::vector<TaskRecord>& live) override {
    std::vector<std::vector<TaskRecord>> parts(executors_.size());
    for (const TaskRecord& task : live)
      parts[IndexFor(task.spec)].push_back(task);
    for (size_t i = 0; i < executors_.size(); ++i)
      executors_[i]->Adopt(parts[i]);
  }

 private:
  size_t IndexFor(const TaskSpec& spec) const {
    for (size_t i = 0; i + 1 < executors_.size(); ++i) {
      if (executors_[i]->Takes(spec))
        return i;
    }
    return executors_.size() - 1;
  }
  Executor& For(const TaskSpec& spec) const {
    return *executors_[IndexFor(spec)];
  }
  Executor& OwnerOf(const TaskId& id) const {
    for (size_t i = 0; i + 1 < executors_.size(); ++i) {
      if (executors_[i]->Owns(id))
        return *executors_[i];
    }
    return *executors_.back();
  }

  std::vector<Executor*> executors_;
};

}  // namespace baton

#endif  // BATON_EXECUTOR_ROUTING_EXECUTOR_H_
