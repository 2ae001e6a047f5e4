// batond under systemd socket activation (daemon/socket_activation.h),
// with systemd's own test launcher: systemd-socket-activate binds the
// socket and execs batond with LISTEN_PID and LISTEN_FDS, as a user
// manager does for batond.socket. And `baton daemon install-service`'s
// units (doc/install.md).
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "baton/ipc/unix_socket.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::seconds;

constexpr char kActivate[] = "/usr/bin/systemd-socket-activate";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

class SocketActivationTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    if (::access(kActivate, X_OK) != 0)
      GTEST_SKIP() << kActivate << " (package systemd) is not installed";
    ::mkdir(home_.c_str(), 0700);
  }
};

TEST_F(SocketActivationTest, BatondServesOnSystemdsSocketAndLeavesIt) {
  // With BATON_HOME, the runtime folder is the home (util/state_paths.h).
  std::string socket = home_ + "/batond.sock";
  // The launcher passes batond only the variables named with -E, as a
  // unit passes only its Environment=; it execs batond on the first
  // connection.
  RunningProcess activated({kActivate, "-E", "BATON_HOME=" + home_, "-l",
                            socket, binary_, "daemon", "run"},
                           {});
  // Once systemd's socket is there, no CLI starts a batond of its own.
  auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (!IsSocket(socket) && std::chrono::steady_clock::now() < deadline)
    ::usleep(10'000);
  ASSERT_TRUE(IsSocket(socket));
  auto ran = Baton({"run", "--wait", "--", "echo", "served"});
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  // The batond that served is the activated one, not one the CLI started.
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  ASSERT_GT(daemon_pid, 0);
  std::string environ =
      ReadAll("/proc/" + std::to_string(daemon_pid) + "/environ");
  EXPECT_NE(environ.find(std::string("LISTEN_FDS=1") + '\0'),
            std::string::npos);
  // Stopped, it leaves systemd's socket in place for the next start.
  EXPECT_EQ(Baton({"daemon", "stop"}).exit_code, 0);
  EXPECT_EQ(activated.Finish(std::chrono::milliseconds(20'000)), 0);
  EXPECT_TRUE(IsSocket(socket));
}

TEST_F(SocketActivationTest, ASocketForAnotherFolderIsRefusedWithTheFix) {
  std::string other = home_ + "/other.sock";
  RunningProcess activated({kActivate, "-E", "BATON_HOME=" + home_, "-l", other,
                            binary_, "daemon", "run"},
                           {});
  // The first connection starts batond, which refuses the socket. The
  // launcher binds before it listens: a connect in between is refused,
  // so it is tried again (seen once in a loaded run).
  auto deadline = std::chrono::steady_clock::now() + seconds(20);
  auto connection = ConnectUnix(other);
  while (!connection && std::chrono::steady_clock::now() < deadline) {
    ::usleep(10'000);
    connection = ConnectUnix(other);
  }
  ASSERT_TRUE(connection) << connection.error().message;
  EXPECT_EQ(activated.Finish(std::chrono::milliseconds(20'000)), 1);
  std::string log = ReadAll(home_ + "/batond.log");
  EXPECT_NE(log.find("systemd passed a socket at " + other), std::string::npos)
      << log;
  EXPECT_NE(log.find("baton daemon install-service"), std::string::npos);
}

TEST_F(SocketActivationTest, InstallServiceWritesUnitsThatPinThisStateFolder) {
  std::string config = home_ + "/config";
  auto dry = Baton({"daemon", "install-service", "--dry-run"},
                   {{"XDG_CONFIG_HOME", config}});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("(--dry-run: nothing written)"), std::string::npos);
  EXPECT_NE(::access(config.c_str(), F_OK), 0) << "dry run wrote " << config;

  auto written = Baton({"daemon", "install-service", "--no-enable"},
                       {{"XDG_CONFIG_HOME", config}});
  ASSERT_EQ(written.exit_code, 0) << written.out << written.err;
  std::string socket_unit = ReadAll(config + "/systemd/user/batond.socket");
  std::string service_unit = ReadAll(config + "/systemd/user/batond.service");
  EXPECT_NE(socket_unit.find("ListenStream=" + home_ + "/batond.sock\n"),
            std::string::npos)
      << socket_unit;
  EXPECT_NE(socket_unit.find("SocketMode=0600\n"), std::string::npos);
  EXPECT_NE(service_unit.find("ExecStart=" + binary_ + " daemon run\n"),
            std::string::npos)
      << service_unit;
  EXPECT_NE(service_unit.find("Environment=BATON_HOME=" + home_ + "\n"),
            std::string::npos);
  EXPECT_NE(service_unit.find("KillMode=process\n"), std::string::npos);
  // systemd itself finds nothing wrong with them.
  // (--man=no: baton(1) need not be installed; a user manager's runtime
  // folder of its own, which a container has none of.)
  if (::access("/usr/bin/systemd-analyze", X_OK) == 0) {
    std::string runtime = home_ + "/run";
    ::mkdir(runtime.c_str(), 0700);
    auto verified =
        RunProcess({"/usr/bin/systemd-analyze", "verify", "--man=no", "--user",
                    config + "/systemd/user/batond.socket",
                    config + "/systemd/user/batond.service"},
                   {{"XDG_CONFIG_HOME", config}, {"XDG_RUNTIME_DIR", runtime}},
                   std::chrono::milliseconds(30'000));
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  }
}

}  // namespace
}  // namespace baton::testing
