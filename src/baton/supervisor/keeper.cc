#include "baton/supervisor/keeper.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "baton/supervisor/journal.h"
#include "baton/supervisor/process_info.h"
#include "baton/util/clock.h"
#include "baton/util/log.h"

namespace baton {
namespace {

// The supervisor's pid while it can still be signalled (0 once it ended:
// its pid may then be reused).
volatile sig_atomic_t g_supervisor = 0;

void PassOnSigterm(int) {
  int saved = errno;
  if (g_supervisor > 0)
    ::kill(static_cast<pid_t>(g_supervisor), SIGTERM);
  errno = saved;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

// Closes every fd but `keep_fd`: the keeper must hold neither the
// supervisor's lock nor its starter's ready pipe.
void CloseAllBut(int keep_fd) {
  if (keep_fd < 0) {
    ::close_range(0, UINT_MAX, 0);
    return;
  }
  if (keep_fd > 0)
    ::close_range(0, static_cast<unsigned>(keep_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(keep_fd) + 1, UINT_MAX, 0);
}

[[noreturn]] void RunKeeper(pid_t supervisor, const std::string& journal,
                            int log_fd) {
  if (log_fd >= 0)
    SetLogTarget(log_fd, "keeper");
  ::prctl(PR_SET_NAME, "baton-keeper");
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    BATON_LOG_WARN("PR_SET_CHILD_SUBREAPER: {}", std::strerror(errno));
  g_supervisor = supervisor;
  struct sigaction pass {};
  pass.sa_handler = PassOnSigterm;
  pass.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &pass, nullptr);
  for (int ignored : {SIGPIPE, SIGHUP, SIGINT})
    ::signal(ignored, SIG_IGN);
  // An ignored SIGCHLD (inherited across exec) would reap our children
  // before we could read their ends.
  ::signal(SIGCHLD, SIG_DFL);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, SIGTERM);
  ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);

  int supervisor_status = 0;
  for (;;) {
    siginfo_t info{};
    // WNOWAIT: the child stays a zombie, so its stat (start time) is still
    // there and its pid cannot be reused before its record is written.
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0) {
      if (errno == EINTR)
        continue;
      break;  // ECHILD: nothing is left to keep.
    }
    pid_t pid = info.si_pid;
    if (pid == supervisor) {
      g_supervisor = 0;
      ::waitpid(pid, &supervisor_status, 0);
      if (WIFEXITED(supervisor_status) && WEXITSTATUS(supervisor_status) == 0)
        break;
      BATON_LOG_WARN(
          "the supervisor (pid {}) died ({}); recording the ends of the tasks "
          "it left",
          pid, ExitCodeOf(supervisor_status));
      continue;
    }
    auto stat = ReadProcStat(pid);
    // A task's leader leads its own session; others are members of some
    // task's group, which nobody asks about.
    if (stat && stat->session == pid) {
      ReapedRecord record{pid, stat->start_ticks, WaitStatusOf(info),
                          WallMillis()};
      if (!AppendReapedRecord(journal, record))
        BATON_LOG_ERROR("pid {}: end not recorded in {}", pid, journal);
    }
    ::waitpid(pid, nullptr, 0);
  }
  ::_exit(ExitCodeOf(supervisor_status));
}

}  // namespace

void StartKeeper(const std::string& journal_path, int keep_fd) {
  // Blocked across the fork: a SIGTERM that comes before the keeper's
  // handler is set would kill the keeper (RunKeeper unblocks it), and one
  // to the supervisor waits for its loop's signalfd.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &term, nullptr);
  pid_t child = ::fork();
  if (child < 0) {
    BATON_LOG_WARN(
        "no keeper (fork: {}): the ends of tasks will be lost if "
        "the supervisor dies",
        std::strerror(errno));
    return;
  }
  if (child == 0)
    return;
  CloseAllBut(keep_fd);
  RunKeeper(child, journal_path, keep_fd);
}

}  // namespace baton
