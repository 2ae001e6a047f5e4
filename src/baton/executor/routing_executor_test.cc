// The router knows no executor by name: a third executor, here a fake
// "cluster", is one more entry in its list, and a remote task no entry
// takes is refused rather than run on this machine.
#include "baton/executor/routing_executor.h"

#include <gtest/gtest.h>

#include "tests/support/fakes.h"

namespace baton {
namespace {

using testing::FakeExecutor;

// An executor that takes the tasks whose remote executor is `name`.
class NamedExecutor : public FakeExecutor {
 public:
  explicit NamedExecutor(std::string name) : name_(std::move(name)) {}
  bool Takes(const TaskSpec& spec) const override {
    return spec.remote && spec.remote->executor == name_;
  }
  bool Owns(const TaskId& id) const override {
    for (const TaskRecord& task : started) {
      if (task.id == id)
        return true;
    }
    return false;
  }
  Status Accepts(const TaskSpec& spec) const override {
    if (spec.remote->options.contains("refuse"))
      return MakeError(ErrorCode::kInvalidArgument, name_ + " refuses it");
    return {};
  }
  void Preflight(const TaskSpec&, std::function<void(Status)> done) override {
    ++preflights;
    done({});
  }
  int preflights = 0;

 private:
  std::string name_;
};

TaskRecord TaskOn(int64_t number, std::optional<RemoteRequest> remote) {
  TaskRecord task;
  task.id = TaskId{TaskKind::kShell, number};
  task.spec.remote = std::move(remote);
  return task;
}

TEST(RoutingExecutorTest, EachTaskGoesToTheExecutorThatTakesIt) {
  NamedExecutor cluster("cluster");
  FakeExecutor local;
  RoutingExecutor router({&cluster, &local});
  TaskRecord here = TaskOn(1, std::nullopt);
  TaskRecord there = TaskOn(2, RemoteRequest{.executor = "cluster"});
  router.Start(here);
  router.Start(there);
  ASSERT_EQ(local.started.size(), 1u);
  EXPECT_EQ(local.started[0].id, here.id);
  ASSERT_EQ(cluster.started.size(), 1u);
  EXPECT_EQ(cluster.started[0].id, there.id);

  // Later calls go to the executor that owns the task.
  router.Kill(there.id, std::chrono::seconds(1));
  router.Kill(here.id, std::chrono::seconds(1));
  ASSERT_EQ(cluster.kills.size(), 1u);
  EXPECT_EQ(cluster.kills[0].first, there.id);
  ASSERT_EQ(local.kills.size(), 1u);
  EXPECT_EQ(local.kills[0].first, here.id);

  // A restart hands each its own live tasks.
  router.Adopt({here, there});
  ASSERT_EQ(cluster.adopted.size(), 1u);
  EXPECT_EQ(cluster.adopted[0].id, there.id);
  ASSERT_EQ(local.adopted.size(), 1u);
  EXPECT_EQ(local.adopted[0].id, here.id);
}

TEST(RoutingExecutorTest, AsksTheTakerWhetherItAcceptsAndWouldRunIt) {
  NamedExecutor cluster("cluster");
  FakeExecutor local;
  RoutingExecutor router({&cluster, &local});
  TaskSpec refused;
  refused.remote =
      RemoteRequest{.executor = "cluster", .options = Json{{"refuse", true}}};
  auto accepted = router.Accepts(refused);
  ASSERT_FALSE(accepted);
  EXPECT_EQ(accepted.error().message, "cluster refuses it");
  TaskSpec fine;
  fine.remote = RemoteRequest{.executor = "cluster"};
  EXPECT_TRUE(router.Accepts(fine));
  bool answered = false;
  router.Preflight(fine, [&](Status ok) { answered = ok.has_value(); });
  EXPECT_TRUE(answered);
  EXPECT_EQ(cluster.preflights, 1);
  // A task of this machine is the last executor's: accepted as it is.
  EXPECT_TRUE(router.Accepts(TaskSpec{}));
}

TEST(RoutingExecutorTest, ARemoteTaskNoExecutorTakesIsRefusedNotRunHere) {
  NamedExecutor cluster("cluster");
  FakeExecutor local;
  RoutingExecutor router({&cluster, &local});
  TaskSpec spec;
  spec.remote = RemoteRequest{.executor = "kubernetes"};
  auto accepted = router.Accepts(spec);
  ASSERT_FALSE(accepted);
  EXPECT_EQ(accepted.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(accepted.error().message,
            "this batond has no executor 'kubernetes'");
}

}  // namespace
}  // namespace baton
