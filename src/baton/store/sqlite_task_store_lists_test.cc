// SqliteTaskStore's lists, counts and pages (sqlite_task_store_lists.cc).
#include "baton/store/sqlite_task_store_test_fixture.h"

namespace baton {
namespace store_test {
namespace {

TEST_F(SqliteTaskStoreTest, ListsVisibleTasksNewestFirst) {
  auto store = OpenStore();
  // Created in this order: a1 u2 b3 a4(running) u5(running) a6.
  const struct {
    const char* owner;
    TaskStatus status;
  } kTasks[] = {
      {"a", TaskStatus::kCompleted}, {"", TaskStatus::kFailed},
      {"b", TaskStatus::kCompleted}, {"a", TaskStatus::kRunning},
      {"", TaskStatus::kWaiting},    {"a", TaskStatus::kKilled},
  };
  int64_t number = 0;
  for (const auto& t : kTasks) {
    ASSERT_TRUE(store->PutTask(
        MakeTask(TaskKind::kShell, ++number, t.owner, t.status)));
  }
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a"})),
              (std::vector<std::string>{"shell-6", "shell-5", "shell-4",
                                        "shell-2", "shell-1"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = ""})),
              (std::vector<std::string>{"shell-5", "shell-2"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "b", .include_live = false})),
              (std::vector<std::string>{"shell-3", "shell-2"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a", .include_terminal = false})),
              (std::vector<std::string>{"shell-5", "shell-4"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a", .limit = 2})),
              (std::vector<std::string>{"shell-6", "shell-5"}));
    EXPECT_EQ(*store->CountTasks({.owner = "a", .limit = 2}), 5u);
    EXPECT_EQ(*store->CountTasks({.owner = "a", .include_live = false}), 3u);
    EXPECT_EQ(*store->CountTasks({.owner = ""}), 2u);
    EXPECT_TRUE(store
                    ->ListTasks({.owner = "a",
                                 .include_live = false,
                                 .include_terminal = false})
                    ->empty());
  };
  check("pending");
  ASSERT_TRUE(store->Flush());
  check("flushed");
  store.reset();
  store = OpenStore();
  check("reopened");
}

// A person's view (the board): a page of ended tasks, the most recent end
// first, filtered in SQL as TaskFilter::Matches filters in memory, with the
// day's counts and every label; the same whether the tasks are pending,
// flushed, or some of each.
TEST_F(SqliteTaskStoreTest, PagesEndedTasksByTheirEndWithFiltersAndCounts) {
  auto store = OpenStore();
  auto ended = [](TaskKind kind, int64_t number, std::string owner,
                  TaskStatus status, int64_t ended_ms) {
    TaskRecord task = MakeTask(kind, number, std::move(owner), status);
    task.ended_ms = ended_ms;
    return task;
  };
  TaskRecord t1 = ended(TaskKind::kShell, 1, "a", TaskStatus::kCompleted, 5000);
  t1.spec.label = "build";
  TaskRecord t2 = ended(TaskKind::kShell, 2, "", TaskStatus::kFailed, 7000);
  t2.spec.shell_command = "make Test";
  TaskRecord t3 = ended(TaskKind::kAgent, 3, "", TaskStatus::kCompleted, 6000);
  t3.spec.shell_command.reset();
  t3.spec.agent =
      AgentSpec{.adapter = AdapterKind::kClaude, .brief = "Fix the LOGIN bug"};
  t3.spec.label = "fix";
  TaskRecord t4 = ended(TaskKind::kShell, 4, "b", TaskStatus::kKilled, 8000);
  t4.spec.label = "secret";
  TaskRecord t5 = ended(TaskKind::kShell, 5, "", TaskStatus::kRunning, 0);
  t5.spec.label = "deploy";
  // Ends in the same millisecond as shell-2: the status name decides.
  TaskRecord t6 =
      ended(TaskKind::kShell, 6, "a", TaskStatus::kInterrupted, 7000);
  TaskRecord t7 = ended(TaskKind::kShell, 7, "", TaskStatus::kCompleted, 9000);
  t7.spec.shell_command.reset();
  t7.spec.argv = {"echo", "Needle"};
  for (const auto& task : {t1, t2, t3, t4, t5, t6, t7})
    ASSERT_TRUE(store->PutTask(task));

  auto page = [&](TaskFilter filter, size_t offset = 0, size_t limit = 50) {
    auto got = store->PageEnded({.owner = "a",
                                 .filter = std::move(filter),
                                 .offset = offset,
                                 .limit = limit,
                                 .counted_since_ms = 6500});
    EXPECT_TRUE(got) << got.error().message;
    return got ? *got : EndedPage{};
  };
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EndedPage all = page({});
    EXPECT_EQ(Ids(all.tasks),
              (std::vector<std::string>{"shell-7", "shell-6", "shell-2",
                                        "agent-3", "shell-1"}));
    EXPECT_EQ(all.total, 5u);
    EXPECT_EQ(all.ended_since,
              (std::map<std::string, size_t>{
                  {"completed", 1}, {"failed", 1}, {"interrupted", 1}}));
    EXPECT_EQ(all.labels, (std::vector<std::string>{"build", "deploy", "fix"}));
    EndedPage second = page({}, 1, 2);
    EXPECT_EQ(Ids(second.tasks),
              (std::vector<std::string>{"shell-6", "shell-2"}));
    EXPECT_EQ(second.total, 5u);
    EXPECT_TRUE(page({}, 5).tasks.empty());
    EXPECT_EQ(Ids(page({.kind = "agent"}).tasks),
              (std::vector<std::string>{"agent-3"}));
    EXPECT_EQ(Ids(page({.status = "failed"}).tasks),
              (std::vector<std::string>{"shell-2"}));
    EXPECT_EQ(Ids(page({.label = "build"}).tasks),
              (std::vector<std::string>{"shell-1"}));
    EXPECT_EQ(page({.label = "secret"}).total, 0u);
    for (const auto& [search, id] :
         std::vector<std::pair<std::string, std::string>>{
             {"needle", "shell-7"},
             {"login", "agent-3"},
             {"make t", "shell-2"},
             {"shell-6", "shell-6"}}) {
      EndedPage found = page({.search = search});
      EXPECT_EQ(Ids(found.tasks), std::vector<std::string>{id}) << search;
      EXPECT_EQ(found.total, 1u) << search;
      // The same rule in memory, for live and pending tasks.
      TaskFilter filter{.search = search};
      EXPECT_TRUE(filter.Matches(*store->GetTask(*TaskId::Parse(id)).value()))
          << search;
    }
    // Without a session: the unowned tasks only.
    auto unowned = store->PageEnded({.owner = ""});
    ASSERT_TRUE(unowned);
    EXPECT_EQ(Ids(unowned->tasks),
              (std::vector<std::string>{"shell-7", "shell-2", "agent-3"}));
    EXPECT_EQ(unowned->labels, (std::vector<std::string>{"deploy", "fix"}));
    EXPECT_TRUE(unowned->owners.empty());
    // The owner filter, within what the session sees: a's own, the
    // unowned (""), and nothing of b's.
    EXPECT_EQ(all.owners, std::vector<std::string>{"a"});
    EndedPage own = page({.owner = "a"});
    EXPECT_EQ(Ids(own.tasks), (std::vector<std::string>{"shell-6", "shell-1"}));
    EXPECT_EQ(own.total, 2u);
    EXPECT_EQ(own.ended_since, all.ended_since);  // Counts are unfiltered.
    EXPECT_EQ(Ids(page({.owner = ""}).tasks),
              (std::vector<std::string>{"shell-7", "shell-2", "agent-3"}));
    EXPECT_EQ(page({.owner = "b"}).total, 0u);
    EXPECT_EQ(page({.owner = "a", .status = "interrupted"}).total, 1u);
    EXPECT_EQ(page({.owner = "", .label = "fix"}).total, 1u);
    // A person's session sees every session's tasks, and every session.
    auto person = store->PageEnded(
        {.owner = std::string(kPersonSession), .counted_since_ms = 6500});
    ASSERT_TRUE(person) << person.error().message;
    EXPECT_EQ(Ids(person->tasks),
              (std::vector<std::string>{"shell-7", "shell-4", "shell-6",
                                        "shell-2", "agent-3", "shell-1"}));
    EXPECT_EQ(person->total, 6u);
    EXPECT_EQ(person->ended_since,
              (std::map<std::string, size_t>{{"completed", 1},
                                             {"failed", 1},
                                             {"interrupted", 1},
                                             {"killed", 1}}));
    EXPECT_EQ(person->labels,
              (std::vector<std::string>{"build", "deploy", "fix", "secret"}));
    EXPECT_EQ(person->owners, (std::vector<std::string>{"a", "b"}));
    auto of_b = store->PageEnded(
        {.owner = std::string(kPersonSession), .filter = {.owner = "b"}});
    ASSERT_TRUE(of_b);
    EXPECT_EQ(Ids(of_b->tasks), std::vector<std::string>{"shell-4"});
    EXPECT_EQ(of_b->total, 1u);
    // And its plain list: every task, newest first, and their count.
    auto listed = store->ListTasks({.owner = std::string(kPersonSession)});
    ASSERT_TRUE(listed);
    EXPECT_EQ(Ids(*listed), (std::vector<std::string>{
                                "shell-7", "shell-6", "shell-5", "shell-4",
                                "agent-3", "shell-2", "shell-1"}));
    EXPECT_EQ(*store->CountTasks({.owner = std::string(kPersonSession)}), 7u);
  };
  check("pending");
  ASSERT_TRUE(store->Flush());
  check("flushed");

  // Some pending, some flushed: a pending end lands in its place on every
  // page, and counts once.
  TaskRecord t8 = ended(TaskKind::kShell, 8, "", TaskStatus::kCompleted, 6500);
  t8.spec.label = "late";
  ASSERT_TRUE(store->PutTask(t8));
  t5.status = TaskStatus::kFailed;  // The running one ends, pending.
  t5.ended_ms = 9500;
  ASSERT_TRUE(store->PutTask(t5));
  for (const char* when : {"mixed", "flushed again"}) {
    SCOPED_TRACE(when);
    EndedPage all = page({});
    EXPECT_EQ(Ids(all.tasks), (std::vector<std::string>{
                                  "shell-5", "shell-7", "shell-6", "shell-2",
                                  "shell-8", "agent-3", "shell-1"}));
    EXPECT_EQ(all.total, 7u);
    EXPECT_EQ(Ids(page({}, 3, 2).tasks),
              (std::vector<std::string>{"shell-2", "shell-8"}));
    EXPECT_EQ(all.ended_since,
              (std::map<std::string, size_t>{
                  {"completed", 2}, {"failed", 2}, {"interrupted", 1}}));
    EXPECT_EQ(all.labels,
              (std::vector<std::string>{"build", "deploy", "fix", "late"}));
    EXPECT_EQ(Ids(page({.status = "failed"}).tasks),
              (std::vector<std::string>{"shell-5", "shell-2"}));
    ASSERT_TRUE(store->Flush());
  }
}

TEST_F(SqliteTaskStoreTest, ReadsOverlayPendingWritesOnFlushedRows) {
  auto store = OpenStore();
  for (int64_t n = 1; n <= 4; ++n) {
    ASSERT_TRUE(store->PutTask(
        MakeTask(TaskKind::kShell, n, "a", TaskStatus::kRunning)));
  }
  ASSERT_TRUE(store->Flush());

  // Pending: shell-2 ends, shell-5 starts, shell-3 ends unnoticed.
  TaskRecord two = **store->GetTask(TaskId{TaskKind::kShell, 2});
  two.status = TaskStatus::kCompleted;
  two.end_seen = true;
  ASSERT_TRUE(store->PutTask(two));
  TaskRecord three = **store->GetTask(TaskId{TaskKind::kShell, 3});
  three.status = TaskStatus::kFailed;
  ASSERT_TRUE(store->PutTask(three));
  ASSERT_TRUE(
      store->PutTask(MakeTask(TaskKind::kShell, 5, "a", TaskStatus::kQueued)));

  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_EQ((*store->GetTask(TaskId{TaskKind::kShell, 2}))->status,
              TaskStatus::kCompleted);
    EXPECT_EQ(Ids(*store->LoadLiveTasks()),
              (std::vector<std::string>{"shell-1", "shell-4", "shell-5"}));
    EXPECT_EQ(Ids(*store->LoadUnnoticedTasks()),
              (std::vector<std::string>{"shell-3"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a", .limit = 3})),
              (std::vector<std::string>{"shell-5", "shell-4", "shell-3"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a", .include_live = false})),
              (std::vector<std::string>{"shell-3", "shell-2"}));
    EXPECT_EQ(*store->CountTasks({.owner = "a", .include_terminal = false}),
              3u);
  };
  check("pending");
  ASSERT_TRUE(store->Flush());
  check("flushed");
}

TEST_F(SqliteTaskStoreTest, UnnoticedTasksAreOwnedEndedAndUnseen) {
  auto store = OpenStore();
  auto put = [&](int64_t n, const char* owner, TaskStatus status, bool seen,
                 bool told) {
    TaskRecord task = MakeTask(TaskKind::kShell, n, owner, status);
    task.end_seen = seen;
    task.notice_delivered = told;
    ASSERT_TRUE(store->PutTask(task));
  };
  put(1, "a", TaskStatus::kCompleted, false, false);   // Yes.
  put(2, "", TaskStatus::kCompleted, false, false);    // Unowned.
  put(3, "a", TaskStatus::kRunning, false, false);     // Live.
  put(4, "a", TaskStatus::kFailed, true, false);       // Seen.
  put(5, "b", TaskStatus::kInterrupted, false, true);  // Told.
  put(6, "b", TaskStatus::kKilled, false, false);      // Yes.
  EXPECT_EQ(Ids(*store->LoadUnnoticedTasks()),
            (std::vector<std::string>{"shell-1", "shell-6"}));
  ASSERT_TRUE(store->Flush());
  EXPECT_EQ(Ids(*store->LoadUnnoticedTasks()),
            (std::vector<std::string>{"shell-1", "shell-6"}));
}

// The store at 100,000 tasks: each read the daemon and the board make goes
// by an index, not a scan. A check of the indexes, not a benchmark: held to
// SQLite's own count of its work (steps, and steps in full scans), not to
// milliseconds, so it fails on a lost index on any machine and never on a
// busy one. The times are printed for a person reading the log.
TEST_F(SqliteTaskStoreTest, StaysFastWithHundredThousandTasks) {
  using Clock = std::chrono::steady_clock;
  constexpr int64_t kTasks = 100'000;
  {
    auto store = OpenStore();
    for (int64_t n = 1; n <= kTasks; ++n) {
      // Ten sessions and unowned tasks; one in a thousand still live, one
      // in five hundred ended unnoticed.
      std::string owner = n % 11 == 0 ? "" : fmt::format("session-{}", n % 10);
      TaskStatus status =
          n % 1000 == 0 ? TaskStatus::kRunning : TaskStatus::kCompleted;
      TaskRecord task = MakeTask(TaskKind::kShell, n, owner, status);
      task.end_seen = n % 500 != 7;
      task.output_path = fmt::format("/state/tasks/shell-{}/output.log", n);
      ASSERT_TRUE(store->PutTask(task));
    }
    ASSERT_TRUE(store->Flush());
  }

  // The work and the time of one read (or of a run of them).
  std::unique_ptr<SqliteTaskStore> store;
  std::string times;
  auto measure = [&](const char* name, auto&& read) {
    QueryWork before = store ? store->read_work() : QueryWork{};
    auto start = Clock::now();
    read();
    double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    QueryWork work = store->read_work();
    work.steps -= before.steps;
    work.scan_steps -= before.scan_steps;
    times += fmt::format(" {} {:.2f} ms ({} steps, {} in scans);", name, ms,
                         work.steps, work.scan_steps);
    return work;
  };

  QueryWork open = measure("open", [&] { store = OpenStore(); });
  ASSERT_NE(store, nullptr);
  std::mt19937 rng(7);
  QueryWork gets = measure("1000 gets", [&] {
    for (int i = 0; i < 1000; ++i) {
      TaskId id{TaskKind::kShell, static_cast<int64_t>(rng() % kTasks) + 1};
      auto task = store->GetTask(id);
      ASSERT_TRUE(task && task->has_value());
    }
  });
  QueryWork lists;
  for (const char* owner : {"session-3", "", "session-9"}) {
    for (bool live_only : {false, true}) {
      Result<std::vector<TaskRecord>> tasks;
      QueryWork list = measure("list(20)", [&] {
        tasks = store->ListTasks(
            {.owner = owner, .include_terminal = !live_only, .limit = 20});
      });
      lists.steps = std::max(lists.steps, list.steps);
      lists.scan_steps += list.scan_steps;
      ASSERT_TRUE(tasks);
      EXPECT_EQ(tasks->size(),
                std::min<size_t>(
                    20, *store->CountTasks(
                            {.owner = owner, .include_terminal = !live_only})));
    }
  }
  Result<std::vector<TaskRecord>> live;
  QueryWork live_work = measure("live", [&] { live = store->LoadLiveTasks(); });
  Result<std::vector<TaskRecord>> unnoticed;
  QueryWork unnoticed_work =
      measure("unnoticed", [&] { unnoticed = store->LoadUnnoticedTasks(); });
  Result<size_t> count;
  QueryWork count_work = measure(
      "count", [&] { count = store->CountTasks({.owner = "session-3"}); });
  // The board's first load: a page of the history, its total, the day's
  // counts and the labels.
  decltype(store->PageEnded({})) page;
  QueryWork page_work = measure("ended page", [&] {
    page = store->PageEnded({.owner = "", .limit = 50});
  });
  std::printf("  100k tasks:%s\n", times.c_str());

  // Full scans only of the partial indexes, which hold just what the read
  // wants (the 100 live tasks, the 200 unnoticed ends), and for the board's
  // totals, of the index of ended tasks: never of the table.
  EXPECT_EQ(open.scan_steps, 0) << times;
  EXPECT_EQ(gets.scan_steps, 0) << times;
  EXPECT_EQ(count_work.scan_steps, 0) << times;
  EXPECT_LE(lists.scan_steps, 3 * 200) << times;
  EXPECT_LE(live_work.scan_steps, 100) << times;
  EXPECT_LE(unnoticed_work.scan_steps, 200) << times;
  EXPECT_LE(page_work.scan_steps, 100'000) << times;
  // And each stays near the work it does now (SQLite 3.40, Debian 12), with
  // room for another SQLite's plans: a read takes a few dozen steps a row
  // it returns, a count a few dozen per index entry it counts.
  EXPECT_LT(open.steps, 1'000) << times;
  EXPECT_LT(gets.steps, 100 * 1000) << times;        // now 36 a get
  EXPECT_LT(lists.steps, 6'000) << times;            // now 2,928 at most
  EXPECT_LT(live_work.steps, 8'000) << times;        // now 3,615
  EXPECT_LT(unnoticed_work.steps, 14'000) << times;  // now 6,567
  EXPECT_LT(count_work.steps, 450'000) << times;     // 9,091 entries
  EXPECT_LT(page_work.steps, 1'600'000) << times;    // ~100,000 entries

  ASSERT_TRUE(live && unnoticed && count && page);
  EXPECT_EQ(live->size(), 100u);
  EXPECT_GT(unnoticed->size(), 100u);
  EXPECT_GT(*count, 9000u);
  EXPECT_EQ(page->tasks.size(), 50u);
  EXPECT_GT(page->total, 9000u);
}

}  // namespace
}  // namespace store_test
}  // namespace baton
