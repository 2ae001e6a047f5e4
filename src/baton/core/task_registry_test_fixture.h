// The fixtures of TaskRegistry's tests: the registry over the in-memory
// store, a fake executor and a fake clock (RegistryHarness, which the batch,
// budget and schedule tests build on too), and TaskRegistryTest's helpers to
// start tasks and end a loop iteration, for task_registry_test.cc (ids,
// specs, ends, visibility, kills, leases, lists) and
// task_registry_waits_test.cc (waits, notices, reads).
#ifndef BATON_CORE_TASK_REGISTRY_TEST_FIXTURE_H_
#define BATON_CORE_TASK_REGISTRY_TEST_FIXTURE_H_

#include <gtest/gtest.h>

#include <cerrno>

#include "baton/core/sessions.h"
#include "baton/core/task_registry.h"
#include "tests/support/fakes.h"

namespace baton {
namespace registry_test {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeExecutor;
using testing::FakeTimeline;
using testing::InMemoryTaskStore;

// The registry over the in-memory store, a fake executor and a fake clock:
// where every fixture of the registry's tests starts (Reset: a new registry
// over the same store, as after a restart).
class RegistryHarness : public ::testing::Test {
 protected:
  RegistryHarness() { Reset(); }

  void Reset() {
    registry_ = std::make_unique<TaskRegistry>(&store_, &executor_, &time_,
                                               &time_, TaskRegistry::Options{});
    executor_.SetListener(registry_.get());
  }

  InMemoryTaskStore store_;
  FakeExecutor executor_;
  FakeTimeline time_;
  std::unique_ptr<TaskRegistry> registry_;
};

class TaskRegistryTest : public RegistryHarness {
 protected:
  TaskSpec Shell(std::string command, std::string owner = "") {
    TaskSpec spec;
    spec.shell_command = std::move(command);
    spec.cwd = "/tmp";
    spec.owner = std::move(owner);
    return spec;
  }

  // Starts and spawns a task; returns its id text.
  std::string StartRunning(std::string owner = "") {
    std::optional<Result<TaskRecord>> started;
    registry_->Start(Shell("true", owner),
                     [&](Result<TaskRecord> r) { started = std::move(r); });
    EXPECT_TRUE(started.has_value() && started->has_value());
    EXPECT_EQ((*started)->status, TaskStatus::kQueued);
    std::string id = (*started)->id.ToString();
    Commit();
    executor_.Spawn(executor_.started.back().id);
    EXPECT_EQ(registry_->Get(id, owner)->status, TaskStatus::kRunning);
    return id;
  }

  // Starts an agent task (kind agent); returns its id text.
  std::string StartAgent() {
    TaskSpec spec;
    spec.kind = TaskKind::kAgent;
    spec.argv = {"claude"};
    spec.cwd = "/tmp";
    spec.agent.emplace();
    std::string id;
    registry_->Start(std::move(spec), [&](Result<TaskRecord> r) {
      if (r)
        id = r->id.ToString();
    });
    return id;
  }

  TaskId Id(const std::string& text) { return *TaskId::Parse(text); }

  // The end of a loop iteration of the daemon: the store commits, then the
  // executor gets its requests.
  void Commit() { ASSERT_TRUE(registry_->Commit()); }
  void FailCommits() {
    store_.fail_flush = Error{ErrorCode::kIo, "disk full", ENOSPC};
  }
};

}  // namespace registry_test
}  // namespace baton

#endif  // BATON_CORE_TASK_REGISTRY_TEST_FIXTURE_H_
