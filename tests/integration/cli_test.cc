// The CLI against a real batond and real processes, one daemon per test.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A FIFO at `path`, opened here for reading (without blocking, so before
// any writer) or for writing (read-write, so it never blocks and what is
// written stays until a reader takes it).
UniqueFd MakeFifo(const std::string& path, int flags) {
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  return UniqueFd(::open(path.c_str(), flags | O_CLOEXEC));
}

// Whether `fd` becomes readable within `timeout`.
bool Readable(const UniqueFd& fd, milliseconds timeout) {
  pollfd polled{fd.get(), POLLIN, 0};
  return ::poll(&polled, 1, static_cast<int>(timeout.count())) == 1;
}

class CliTest : public BatonTest {};

TEST_F(CliTest, RunWaitOutput) {
  std::string id = Run("echo hello; echo world >&2");
  EXPECT_EQ(id, "shell-1");
  auto waited = Baton({"wait", id});
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  // The status, then the output's last lines, read without consuming.
  EXPECT_EQ(waited.out,
            "shell-1 completed (exit code: 0)\n"
            "  output (last 2 lines of 12 bytes):\n    hello\n    world\n");
  auto output = Baton({"output", id});
  EXPECT_EQ(output.out, "hello\nworld\n");
  auto task = Status(id);
  EXPECT_EQ(task["status"], "completed");
  EXPECT_EQ(task["exit_code"], 0);
  EXPECT_EQ(task["output_bytes"], 12);
}

TEST_F(CliTest, RunWaitExitsWithTheCommandsOwnCode) {
  EXPECT_EQ(Baton({"run", "--wait", "--", "exit 7"}).exit_code, 7);
  EXPECT_EQ(Baton({"run", "--wait", "--", "kill -TERM $$"}).exit_code, 143);
  auto task = Status("shell-2");
  EXPECT_EQ(task["status"], "failed");
  EXPECT_EQ(task["detail"], "signal: SIGTERM");
}

TEST_F(CliTest, SeveralArgumentsRunAsArgvWithoutAShell) {
  auto run = Baton({"run", "--wait", "--", "printf", "%s|", "a b", "$HOME"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Baton({"output", "shell-1"}).out, "a b|$HOME|");
}

TEST_F(CliTest, EnvCwdAndLabelReachTheTask) {
  std::string id = Run("echo $MODE; pwd", {"--env", "MODE=fast", "--cwd",
                                           "/usr", "--label", "my job"});
  Baton({"wait", id});
  EXPECT_EQ(Baton({"output", id}).out, "fast\n/usr\n");
  auto task = Status(id);
  EXPECT_EQ(task["label"], "my job");
  EXPECT_EQ(task["env"]["MODE"], "fast");
}

// Terminal escapes from a task reach no terminal (issue 35, finding 8): a
// label with them is refused at batond's edge; a command, a kill reason or
// an audit line that holds them is shown with them written out.
TEST_F(CliTest, ControlCharactersAreRefusedInLabelsAndWrittenOutInViews) {
  const std::string title = "\x1b]0;PWNED\a\x1b[2J\x1b[31mred";
  auto refused = Baton({"run", "--label", title, "--", "true"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("label has a control character (\\e) at byte 0"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(Baton({"--json", "ls", "--all"}).json()["tasks"].size(), 0u);
  refused = Baton({"run", "--label", "two\nlines", "--", "true"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;

  std::string id = Run("sleep 30; echo '" + title + "'");
  auto killed = Baton({"kill", "--reason", "stop\n" + title, id});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
  Baton({"wait", id});
  std::string shown = Baton({"ls", "--all"}).out + Baton({"status", id}).out +
                      Baton({"audit"}).out;
  EXPECT_EQ(shown.find('\x1b'), std::string::npos) << shown;
  EXPECT_EQ(shown.find('\a'), std::string::npos) << shown;
  EXPECT_NE(shown.find("\\e]0;PWNED\\x07\\e[2J"), std::string::npos) << shown;
  // JSON keeps the text as it was, escaped by JSON itself.
  EXPECT_EQ(Baton({"--json", "status", id}).out.find('\x1b'),
            std::string::npos);
}

TEST_F(CliTest, WaitAnyReturnsTheFirstToEndAndReportsTheRest) {
  std::string slow = Run("sleep 20");
  std::string fast = Run("sleep 0.3; exit 4");
  std::string slower = Run("sleep 30");
  auto start = std::chrono::steady_clock::now();
  auto waited = Baton({"--json", "wait", slow, fast, slower});
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  EXPECT_EQ(waited.exit_code, 1);  // The one that ended failed.
  auto doc = waited.json();
  ASSERT_EQ(doc["ended"].size(), 1u) << waited.out;
  EXPECT_EQ(doc["ended"][0]["id"], fast);
  EXPECT_EQ(doc["ended"][0]["detail"], "exit code: 4");
  ASSERT_EQ(doc["still_running"].size(), 2u);
  EXPECT_EQ(doc["still_running"][0]["id"], slow);
  EXPECT_EQ(doc["timed_out"], false);
  // The text form asks for ids only and names the rest in order.
  std::string quick = Run("exit 0");
  auto text = Baton({"wait", slow, quick, slower});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("still running: " + slow + " " + slower),
            std::string::npos)
      << text.out;
  // The daemon sends the text form no list: it names the rest itself, each
  // once, in the order asked.
  auto twice = Baton({"wait", slower, quick, slower, slow});
  EXPECT_NE(twice.out.find("still running: " + slower + " " + slow + "\n"),
            std::string::npos)
      << twice.out;

  // The forms of still_running over the protocol.
  auto client = ConnectToDaemon();
  ASSERT_TRUE(client) << client.error().message;
  auto counted = client->Call(WaitRequest{
      .tasks = {slow, quick}, .still_running = StillRunningForm::kNone});
  ASSERT_TRUE(counted) << counted.error().message;
  EXPECT_EQ(counted->still_running_count, 1);
  EXPECT_TRUE(counted->still_running.empty());
  auto ids = client->Call(WaitRequest{.tasks = {slow, quick},
                                      .still_running = StillRunningForm::kIds});
  ASSERT_TRUE(ids) << ids.error().message;
  ASSERT_EQ(ids->still_running.size(), 1u);
  EXPECT_TRUE(ids->still_running[0].id_only);
  EXPECT_EQ(ids->still_running[0].task.id.ToString(), slow);
  // An unknown form, as a raw line: refused with the forms it may take.
  auto raw = RawRequest(R"({"id":99,"op":"wait","tasks":[")" + slow +
                        R"("],"still_running":"all"})");
  auto refused = DecodeReplyLine(raw);
  ASSERT_TRUE(refused) << raw;
  EXPECT_FALSE(refused->ok);
  EXPECT_NE(refused->error.message.find("\"none\""), std::string::npos) << raw;
}

TEST_F(CliTest, WaitAllAndTimeout) {
  std::string a = Run("sleep 0.2"), b = Run("sleep 0.4");
  auto all = Baton({"--json", "wait", "--all", a, b});
  EXPECT_EQ(all.exit_code, 0) << all.out << all.err;
  EXPECT_EQ(all.json()["ended"].size(), 2u);
  std::string long_one = Run("sleep 30");
  auto timed = Baton({"wait", "--timeout", "200ms", long_one});
  EXPECT_EQ(timed.exit_code, 124);
  EXPECT_NE(timed.out.find("still running: " + long_one), std::string::npos);
}

TEST_F(CliTest, KillEscalatesToSigkillForAChildThatIgnoresSigterm) {
  UniqueFd ready = MakeFifo(home_ + "/ready", O_RDONLY | O_NONBLOCK);
  std::string id = Run("trap '' TERM; echo > " + home_ +
                       "/ready; while :; do sleep 0.05; done");
  ASSERT_TRUE(Readable(ready, seconds(20)));  // The trap is set.
  auto start = std::chrono::steady_clock::now();
  auto killed = Baton({"kill", "--grace", "300ms", "--reason", "enough", id});
  EXPECT_EQ(killed.out, id + ": killed\n");
  Baton({"wait", id});
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(4));
  auto task = Status(id);
  EXPECT_EQ(task["status"], "killed");
  EXPECT_EQ(task["detail"], "killed: enough");
  EXPECT_EQ(task["signal"], "SIGKILL");
  EXPECT_EQ(Baton({"kill", id}).out, id + ": had already ended\n");
}

TEST_F(CliTest, KillReachesGrandchildrenInTheGroup) {
  std::string pidfile = home_ + "/grandchild.pid";
  std::string id = Run("sleep 300 & echo $! > " + pidfile + "; wait");
  for (int i = 0; i < 200 && Slurp(pidfile).empty(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  int grandchild = std::atoi(Slurp(pidfile).c_str());
  ASSERT_GT(grandchild, 0);
  Baton({"kill", id});
  Baton({"wait", id});
  EXPECT_TRUE(WaitForPidGone(grandchild, seconds(5)));
  EXPECT_EQ(Status(id)["status"], "killed");
}

TEST_F(CliTest, OutputFarLargerThanAPipeBufferArrivesWholeAndInOrder) {
  std::string id =
      Run("echo first >&2; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo "
          "last >&2");
  ASSERT_EQ(Baton({"wait", id}).exit_code, 0);
  auto output = Baton({"output", id});
  ASSERT_EQ(output.out.size(), 6u + 5000000u + 1u + 5u);
  EXPECT_EQ(output.out.substr(0, 6), "first\n");
  EXPECT_EQ(output.out.substr(output.out.size() - 6), "\nlast\n");
  EXPECT_EQ(output.out.find_first_not_of('x', 6), 5000006u);
}

TEST_F(CliTest, DeathBySignalAndTimeout) {
  std::string segv = Run("kill -SEGV $$");
  std::string slow = Run("sleep 10", {"--timeout", "300ms"});
  Baton({"wait", "--all", segv, slow});
  EXPECT_EQ(Status(segv)["detail"], "signal: SIGSEGV");
  auto timed = Status(slow);
  EXPECT_EQ(timed["status"], "killed");
  EXPECT_EQ(timed["detail"], "timed out after 300ms");
}

// The output arrives while the task runs, not only at its end: the task
// prints 1, then waits until the test has seen the 1 and lets it go on.
TEST_F(CliTest, FollowStreamsUntilTheTaskEnds) {
  UniqueFd go = MakeFifo(home_ + "/go", O_RDWR);
  std::string id = Run("echo 1; read x < " + home_ + "/go; echo 2; echo 3",
                       {"--timeout", "60s"});
  auto follow = StartBaton({"output", "--follow", id});
  EXPECT_TRUE(follow->ReadUntil("1\n", seconds(10))) << follow->out();
  // Not ended: the output came while it ran (batond may hear of the spawn
  // a moment after the output is there).
  EXPECT_EQ(WaitStarted(id)["status"], "running");
  ASSERT_EQ(::write(go.get(), "\n", 1), 1);
  EXPECT_EQ(follow->Finish(seconds(30)), 0) << follow->err();
  EXPECT_EQ(follow->out(), "1\n2\n3\n");
}

TEST_F(CliTest, NewReadsConsumeOffsetReadsDoNot) {
  // The task says on `printed` that abc is out, then waits for `go`.
  UniqueFd printed = MakeFifo(home_ + "/printed", O_RDONLY | O_NONBLOCK);
  UniqueFd go = MakeFifo(home_ + "/go", O_RDWR);
  std::string id = Run("printf abc; echo > " + home_ + "/printed; read x < " +
                           home_ + "/go; printf def",
                       {"--timeout", "60s"}, {{"BATON_SESSION", "s"}});
  std::map<std::string, std::string> s = {{"BATON_SESSION", "s"}};
  ASSERT_TRUE(Readable(printed, seconds(20)));
  EXPECT_EQ(Baton({"output", "--new", id}, s).out, "abc");
  EXPECT_EQ(Baton({"output", "--offset", "1", id}, s).out, "bc");
  ASSERT_EQ(::write(go.get(), "\n", 1), 1);
  Baton({"wait", id}, s);
  EXPECT_EQ(Baton({"output", "--new", id}, s).out, "def");
  EXPECT_EQ(Baton({"output", "--new", id}, s).out, "");
  EXPECT_EQ(Baton({"output", id}, s).out, "abcdef");
}

TEST_F(CliTest, OtherSessionsTasksAreInvisibleAndUntouchable) {
  std::map<std::string, std::string> alice = {{"BATON_SESSION", "alice"}};
  std::map<std::string, std::string> bob = {{"BATON_SESSION", "bob"}};
  std::string id = Run("sleep 30", {}, alice);
  std::string shared = Run("sleep 30");
  auto listed = Baton({"--json", "ls"}, bob).json();
  ASSERT_EQ(listed["tasks"].size(), 1u);
  EXPECT_EQ(listed["tasks"][0]["id"], shared);
  for (auto verb : {"status", "kill", "wait", "output"}) {
    auto refused = Baton({verb, id}, bob);
    EXPECT_EQ(refused.exit_code, 1) << verb;
    EXPECT_NE(refused.err.find("belongs to another session"), std::string::npos)
        << verb << ": " << refused.err;
  }
  EXPECT_EQ(Status(id, alice)["status"], "running");
  EXPECT_EQ(Baton({"--json", "ls"}, alice).json()["tasks"].size(), 2u);
}

// Session "*" is a person's (doc/protocol.md, "A person's session"): it
// sees and reads every session's tasks, what it starts is unowned, and the
// owner is still told of an end the person looked at.
TEST_F(CliTest, APersonsSessionSeesEveryTaskAndLeavesTheNoticeToItsOwner) {
  std::map<std::string, std::string> alice = {{"BATON_SESSION", "alice"}};
  std::map<std::string, std::string> person = {{"BATON_SESSION", "*"}};
  std::string hers = Run("echo hers", {}, alice);
  std::string bobs = Run("sleep 30", {}, {{"BATON_SESSION", "bob"}});
  ASSERT_EQ(Baton({"wait", hers}, person).exit_code, 0);
  EXPECT_EQ(Baton({"output", hers}, person).out, "hers\n");
  EXPECT_EQ(Status(hers, person)["status"], "completed");
  std::string started = Run("true", {}, person);
  EXPECT_TRUE(Status(started, person)["owner"].is_null());
  auto listed = Baton({"--json", "ls"}, person).json();
  std::set<std::string> ids;
  for (const auto& task : listed["tasks"])
    ids.insert(task["id"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{hers, bobs, started}));
  // Bob's task is the person's to stop; bob is told of it.
  EXPECT_EQ(
      Baton({"kill", "--reason", "from the board", bobs}, person).exit_code, 0);
  Baton({"wait", bobs}, person);
  auto bobs_notices = Baton({"notices"}, {{"BATON_SESSION", "bob"}});
  EXPECT_NE(bobs_notices.out.find(bobs + " killed"), std::string::npos)
      << bobs_notices.out;
  // Alice was not told of her task's end yet: the person's looks were not
  // hers.
  auto hers_notices = Baton({"notices"}, alice);
  EXPECT_NE(hers_notices.out.find(hers + " completed"), std::string::npos)
      << hers_notices.out;
  // A person's session holds no lease and no budget.
  auto budget = Baton({"budget"}, person);
  EXPECT_EQ(budget.exit_code, 1);
  EXPECT_NE(budget.err.find("is a person's"), std::string::npos) << budget.err;
  std::string attached = RawRequest(R"({"id":1,"op":"attach","session":"*"})");
  EXPECT_NE(attached.find("cannot attach"), std::string::npos) << attached;
}

TEST_F(CliTest, NoticeOfAnUnseenEndIsDeliveredOnce) {
  std::map<std::string, std::string> s = {{"BATON_SESSION", "s"}};
  std::string quick = Run("true", {}, s);
  auto started = Baton({"run", "--", "sleep 0.5"}, s);
  std::string slow = started.out.substr(0, started.out.find('\n'));
  std::string all_err = started.err;
  for (int i = 0; i < 3; ++i) {
    auto waited = Baton({"wait", slow}, s);
    EXPECT_EQ(waited.exit_code, 0);
    all_err += waited.err + Baton({"ls"}, s).err;
  }
  // `quick` ended unseen: the session is told once, by whichever command
  // came first after its end.
  std::string notice = "notice: " + quick + " completed (exit code: 0)";
  size_t first = all_err.find(notice);
  EXPECT_NE(first, std::string::npos) << all_err;
  EXPECT_EQ(all_err.find(notice, first + 1), std::string::npos) << all_err;
  // The end of `slow` was seen through the wait: never a notice for it.
  EXPECT_EQ(all_err.find(slow + " completed"), std::string::npos) << all_err;
  // Another session is never told.
  EXPECT_EQ(Baton({"notices"}, {{"BATON_SESSION", "other"}}).out, "");
}

TEST_F(CliTest, LeaseExpiryStopsTheTasksOfADetachedSession) {
  std::map<std::string, std::string> env = {{"BATON_SESSION", "agent"},
                                            {"BATON_LEASE", "500ms"}};
  std::string id = Run("sleep 30", {}, env);
  AttachAndLeave("agent");  // The lease starts.
  auto waited = Baton({"wait", "--timeout", "10s", id}, env);
  EXPECT_EQ(waited.exit_code, 1) << waited.out;
  auto task = Status(id, env);
  EXPECT_EQ(task["status"], "killed");
  EXPECT_EQ(task["detail"], "killed: session lease expired");
}

TEST_F(CliTest, IdsAreNeverReusedAcrossDaemonRestarts) {
  EXPECT_EQ(Run("true"), "shell-1");
  ASSERT_EQ(Baton({"daemon", "stop"}).exit_code, 0);
  EXPECT_EQ(Run("true"), "shell-2");
}

TEST_F(CliTest, BadInputGetsAClearErrorAndChangesNothing) {
  std::string id = Run("true", {}, {{"BATON_SESSION", "alice"}});
  std::string live = Run("sleep 30");
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"status", "shell-99"}, 1, "no task shell-99"},
      {{"status", "nonsense"}, 1, "is not a task id"},
      {{"status", id}, 1, "belongs to another session"},
      {{"run", "--", ""}, 1, "empty command"},
      {{"run", "--", "   "}, 1, "empty command"},
      {{"run", "--cwd", "/etc/passwd", "--", "true"}, 1, "not a directory"},
      {{"run", "--cwd", "/no/such/dir", "--", "true"}, 1, "cwd"},
      {{"run", "--", "no-such-program-xyz", "arg"}, 1, "command not found"},
      {{"run", "--", "no-such-program-xyz --flag && true"},
       1,
       "command not found: no-such-program-xyz (the shell line's first "
       "program"},
      // batond asks `sh -n` off its loop; the verdict still comes first.
      {{"run", "--", "if true; echo x"}, 1, "the shell line does not parse"},
      {{"run", "--cwd", "/no/such/dir", "--", "echo 'open"}, 1, "cwd"},
      {{"run", "--timeout", "5x", "--", "true"}, 1, "invalid duration '5x'"},
      {{"run", "--env", "NOEQUALS", "--", "true"}, 1, "NAME=VALUE"},
      {{"wait", "--timeout", "soon", id}, 1, "invalid duration"},
      {{"kill", "--grace", "-1s", id}, 1, "invalid duration"},
      {{"run", "--bogus", "--", "true"}, 2, "--bogus"},
      {{"frobnicate"}, 2, "unknown command 'frobnicate'"},
      // Issue 38: each parse error says what to type.
      {{"run", "ls", "-la"},
       2,
       "baton run: '-la' is not one of its options; to give options to the "
       "command, put -- before it: baton run [OPTIONS] -- COMMAND"},
      {{"run", "--tiemout", "5s", "--", "true"},
       2,
       "baton run: unexpected '--tiemout' (did you mean --timeout?); see "
       "'baton run --help'"},
      {{"sttaus", id}, 2, "unknown command 'sttaus'; did you mean 'status'?"},
      {{"help", "sttaus"}, 2, "did you mean 'status'?"},
      {{"wait"},
       2,
       "baton wait: missing ids (task ids); see 'baton wait --help'"},
      {{"status", id, "extra"},
       2,
       "baton status: unexpected 'extra'; see 'baton status --help'"},
      {{"queue", "ad", "q"},
       2,
       "baton queue: give one of add, set, ls, pause, resume; see 'baton "
       "queue --help'"},
      {{}, 2, "give a command, e.g. baton run -- make test"},
      {{"kill", live, "shell-77"}, 1, "no task shell-77"},
      // Every number typed is parsed without an exception; out of range is
      // an error that shows the text as typed, never a clamped value.
      {{"run", "--timeout", "1" + std::string(400, '0') + "s", "--", "true"},
       1,
       "--timeout: invalid duration"},
      // Issue 12 (F6): a long deadline is refused, never wrapped.
      {{"run", "--timeout", "9999999999", "--", "true"},
       1,
       "is longer than the longest baton takes, 366d"},
      {{"run", "--timeout", "99999999999s", "--", "true"},
       1,
       "is longer than the longest baton takes, 366d"},
      {{"wait", "--timeout", "2600000h", id},
       1,
       "is longer than the longest baton takes, 366d"},
      {{"run", "--priority", "99999999999999999999", "--", "true"},
       2,
       "'99999999999999999999' is not a whole number from -1000000 to "
       "1000000"},
      {{"run", "--retry", "101", "--", "true"},
       2,
       "'101' is not a whole number from 0 to 100"},
      {{"run", "--max-output", "99999999999999999999999G", "--", "true"},
       1,
       "is not a size"},
      {{"delegate", "--max-turns", "99999999999999999999", "x"},
       2,
       "'99999999999999999999' is not a whole number from 1 to"},
      {{"delegate", "--max-cost", "1e999", "x"},
       2,
       "'1e999' is not a number above 0 and at most 1000000000"},
      {{"queue", "add", "q", "--max", "-1"},
       2,
       "'-1' is not a whole number from 0 to 1000000"},
  };
  for (const auto& c : cases) {
    auto result = Baton(c.args);
    std::string shown;
    for (const auto& a : c.args)
      shown += a + " ";
    EXPECT_EQ(result.exit_code, c.exit_code) << shown << result.err;
    EXPECT_NE(result.err.find(c.message), std::string::npos)
        << shown << "-> " << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << shown << "-> " << result.err;
  }
  // Nothing was created or killed by any of them.
  auto listed = Baton({"--json", "ls", "--all"}).json();
  ASSERT_EQ(listed["tasks"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["tasks"][0]["status"], "running");
  EXPECT_EQ(Run("true"), "shell-3");
}

// Issue 38: `ls` was 126 columns whatever the terminal, running and ended
// tasks interleaved, and it had no filters though the board has them.
TEST_F(CliTest, LsFitsTheWidthGroupsAndFilters) {
  std::string failed = Run("exit 3");
  std::string built = Run(
      "echo building a-very-long-target-name-that-goes-on-and-on-and-on-and-"
      "on-until-the-end-of-the-line",
      {"--label", "build"});
  Baton({"wait", "--all", "--timeout", "20s", failed, built});
  std::string running = Run("sleep 30");
  auto lines_of = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    return lines;
  };
  auto narrow = Baton({"ls"}, {{"COLUMNS", "80"}});
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  auto lines = lines_of(narrow.out);
  ASSERT_GE(lines.size(), 4u) << narrow.out;
  EXPECT_TRUE(lines[1].starts_with(running + " ")) << narrow.out;
  for (const std::string& line : lines) {
    size_t chars = 0;
    for (char c : line)
      chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LE(chars, 80u) << narrow.out;
  }
  EXPECT_NE(narrow.out.find("…"), std::string::npos) << narrow.out;
  EXPECT_EQ(narrow.out.find('\x1b'), std::string::npos) << "a pipe";
  auto wide = Baton({"ls"}, {{"COLUMNS", "200"}});
  EXPECT_NE(wide.out.find("build — echo building"), std::string::npos)
      << wide.out;
  // Filters, for the table and --json alike.
  auto only_failed = Baton({"--json", "ls", "--status", "failed"}).json();
  ASSERT_EQ(only_failed["tasks"].size(), 1u) << only_failed.dump();
  EXPECT_EQ(only_failed["tasks"][0]["id"], failed);
  auto labelled = lines_of(Baton({"ls", "--label", "build"}).out);
  ASSERT_EQ(labelled.size(), 2u);
  EXPECT_TRUE(labelled[1].starts_with(built + " ")) << labelled[1];
  EXPECT_EQ(Baton({"ls", "--kind", "agent"}).out, "no tasks match\n");
  auto quiet =
      lines_of(Baton({"ls", "--status", "running,completed", "--quiet"}).out);
  EXPECT_EQ(std::set<std::string>(quiet.begin(), quiet.end()),
            (std::set<std::string>{running, built}));
  auto bad = Baton({"ls", "--status", "done"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--status: 'done' is not a status"), std::string::npos)
      << bad.err;
  Baton({"kill", running});
}

// Issue 38: `baton help run` was an unknown command; it is `baton run
// --help`, and `baton help` is `baton --help`.
TEST_F(CliTest, HelpVerbShowsTheVerbsHelp) {
  auto run = Baton({"help", "run"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, Baton({"run", "--help"}).out);
  EXPECT_NE(run.out.find("Usage: baton run"), std::string::npos) << run.out;
  auto all = Baton({"help"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out, Baton({"--help"}).out);
}

// --help lists every verb, mcp and serve among them; --json keeps a long
// detail whole where the table shortens it.
TEST_F(CliTest, HelpListsEveryVerbAndJsonKeepsLongDetails) {
  auto help = Baton({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* verb :
       {"run", "ls", "wait", "rerun", "rm", "clear", "delegate", "queue", "mcp",
        "serve", "board", "doctor", "worktree", "conflicts", "completion"}) {
    EXPECT_NE(help.out.find(std::string("\n  ") + verb + " "),
              std::string::npos)
        << verb << " missing from:\n"
        << help.out;
  }
  // Grouped, in this order, then examples; a verb's help has its own.
  size_t tasks = help.out.find("\nTasks:\n  run ");
  size_t agents = help.out.find("\nAgents:\n  delegate ");
  size_t admin = help.out.find("\nSet-up and admin:\n");
  size_t examples = help.out.find("\nExamples:\n  baton run -- make test");
  EXPECT_NE(tasks, std::string::npos) << help.out;
  EXPECT_LT(tasks, agents) << help.out;
  EXPECT_LT(agents, admin) << help.out;
  EXPECT_LT(admin, examples) << help.out;
  EXPECT_NE(examples, std::string::npos) << help.out;
  EXPECT_EQ(Baton({"run", "--help"}).out.find("Examples:"), std::string::npos);
  std::string check = "test -f " + std::string(120, 'x');
  std::string id = Run("true", {"--check", check});
  Baton({"wait", "--timeout", "30s", id});
  std::string detail = "check failed: " + check + " (exit code 1)";
  auto listed = Baton({"--json", "ls"}).json();
  ASSERT_EQ(listed["tasks"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["tasks"][0]["detail"], detail);
  auto table = Baton({"ls"}).out;
  EXPECT_EQ(table.find(detail), std::string::npos) << table;
}

TEST_F(CliTest, InsecureOrForeignHomeIsRefused) {
  ASSERT_EQ(chmod(home_.c_str(), 0755), 0);
  auto result = Baton({"ls"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("insecure permissions 0755"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("chmod 700"), std::string::npos);
  ASSERT_EQ(chmod(home_.c_str(), 0700), 0);
  if (geteuid() == 0) {
    ASSERT_EQ(chown(home_.c_str(), 65534, 65534), 0);
    auto foreign = Baton({"ls"});
    EXPECT_EQ(foreign.exit_code, 2);
    EXPECT_NE(foreign.err.find("not by you"), std::string::npos) << foreign.err;
    ASSERT_EQ(chown(home_.c_str(), 0, 0), 0);
  }
  EXPECT_EQ(Baton({"ls"}).exit_code, 0);
}

TEST_F(CliTest, CorruptDatabaseIsRefusedAndLeftUntouched) {
  std::string db = home_ + "/baton.db";
  std::string garbage(8192, '\x5a');
  ASSERT_EQ(chmod(home_.c_str(), 0700), 0);
  std::ofstream(db, std::ios::binary) << garbage;
  auto result = Baton({"ls"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("corrupt"), std::string::npos) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1);
  EXPECT_EQ(Slurp(db), garbage);
}

TEST_F(CliTest, DatabaseFromANewerBatonIsRefused) {
  Run("true");
  ASSERT_EQ(Baton({"daemon", "stop"}).exit_code, 0);
  auto bumped =
      RunProcess({"/usr/bin/env", "python3", "-c",
                  "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
                  "c.execute('PRAGMA user_version=999'); c.commit()",
                  home_ + "/baton.db"},
                 {}, seconds(10));
  if (bumped.exit_code != 0)
    GTEST_SKIP() << "python3 sqlite3 unavailable";
  auto result = Baton({"ls"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("newer baton"), std::string::npos) << result.err;
}

TEST_F(CliTest, FullDiskIsReportedOnTheTaskAndTheDaemonSurvives) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to mount a small tmpfs";
  std::string small = home_ + "/small";
  ASSERT_EQ(mkdir(small.c_str(), 0700), 0);
  if (mount("tmpfs", small.c_str(), "tmpfs", 0, "size=2m,mode=0700") != 0) {
    GTEST_SKIP() << "cannot mount tmpfs here";
  }
  std::map<std::string, std::string> env = {{"BATON_HOME", small}};
  auto run = Baton({"run", "--", "head -c 10000000 /dev/zero"}, env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto waited = Baton({"--json", "wait", "shell-1"}, env);
  auto task = waited.json()["ended"][0];
  EXPECT_NE(task["detail"].get<std::string>().find("disk full"),
            std::string::npos)
      << task.dump();
  EXPECT_EQ(Baton({"daemon", "status"}, env).exit_code, 0);
  Baton({"daemon", "stop", "--kill-tasks"}, env);
  auto pids = RunProcess({"/bin/sh", "-c", "sleep 0.3"}, {}, seconds(5));
  (void)pids;
  umount2(small.c_str(), MNT_DETACH);
}

}  // namespace
}  // namespace baton::testing
