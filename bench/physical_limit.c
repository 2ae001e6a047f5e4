/* The physical-limit reference program of baton's benchmark suite, and the
 * small timing helpers the suite needs (one binary, several modes).
 *
 * Compiled by bench/run at run time: cc -O2 -o DIR/physical_limit physical_limit.c
 *
 * Every time is CLOCK_MONOTONIC in nanoseconds.  Results go to stdout, one
 * number per line; errors to stderr with exit status 1.
 *
 *   spawn-seq N             posix_spawn + waitpid of /bin/true, N times one after
 *                           the other; prints the elapsed ns.
 *   spawn-par N K           the same with K children in flight; prints elapsed ns.
 *   spawn-par-files N K DIR the same, but each child first gets a folder
 *                           DIR/<i> and its stdout in a new file there: the
 *                           floor of a runtime that keeps each task's output
 *                           in a file of its own.
 *   stamp-fifo FIFO OUT     a task: blocks until a byte arrives on FIFO, then, as
 *                           its last act, writes the monotonic time to OUT and
 *                           exits 0.
 *   pidfd-wake GAP_US FIFO OUT
 *                           the physical wake latency: spawns `stamp-fifo FIFO OUT`,
 *                           sleeps GAP_US, triggers it, blocks in poll() on its
 *                           pidfd; prints (time poll returned) - (task's stamp).
 *   wake GAP_US FIFO OUT -- WAITER ARGV...
 *                           spawns the waiter (stdout to /dev/null), sleeps
 *                           GAP_US so that it blocks, triggers the task waiting
 *                           on FIFO, waits for the waiter to exit; prints
 *                           (time waiter was reaped) - (task's stamp), then the
 *                           waiter's exit status on a second line.
 *   pidfd-waiter PID        the least a waiter process can do: blocks in poll()
 *                           on PID's pidfd (PID need not be its child), then
 *                           exits 0.  Run under `wake`, it gives the floor of
 *                           any CLI waiter: one wake-up plus a process exit.
 *   time N -- ARGV...       runs ARGV N times (stdout to /dev/null); prints each
 *                           run's duration; fails if a run exits non-zero.
 *   submit N OUT -- ARGV... runs ARGV N times one after the other, each run's
 *                           stdout appended to OUT; prints the elapsed ns; fails
 *                           if a run exits non-zero.
 *   stamp-span OUT          a task: appends "S <now>" to OUT as its first act and
 *                           "E <now>" as its last, then exits 0 (a queue's
 *                           dispatch gap is the next task's S minus this E).
 *   span-chain N OUT        the physical dispatch: runs `stamp-span OUT` N times,
 *                           each spawned as soon as the one before was reaped.
 *   run-client SOCKET       the least a CLI submission to batond can do: connects
 *                           to SOCKET, sends {"op":"run","argv":["true"],"cwd":"/"}
 *                           and prints batond's reply line; exits 0 if it says
 *                           ok.  Run under `submit`, it gives the floor of any
 *                           `baton run` process: a small C program's exec plus
 *                           the round trip through batond (its commit included).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "physical_limit: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void usage(void) {
  fprintf(stderr, "physical_limit: bad arguments (see the comment at the top of physical_limit.c)\n");
  exit(2);
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* posix_spawn with stdout sent to out_fd (-1: inherit). */
static pid_t spawn(char *const argv[], int out_fd) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (out_fd >= 0) posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    errno = rc;
    die(argv[0]);
  }
  return pid;
}

static int wait_status(pid_t pid) {
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) die("waitpid");
  }
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128 + WTERMSIG(st);
}

static int64_t read_stamp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) die(path);
  long long v = 0;
  if (fscanf(f, "%lld", &v) != 1) {
    fprintf(stderr, "physical_limit: no stamp in %s\n", path);
    exit(1);
  }
  fclose(f);
  return v;
}

static void trigger(const char *fifo) {
  int fd = open(fifo, O_WRONLY | O_CLOEXEC); /* blocks until the task opened it */
  if (fd < 0) die(fifo);
  if (write(fd, "x", 1) != 1) die("write fifo");
  close(fd);
}

static int devnull(void) {
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("/dev/null");
  return fd;
}

static int mode_stamp_fifo(const char *fifo, const char *out) {
  int fd = open(fifo, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die(fifo);
  char c;
  ssize_t n;
  while ((n = read(fd, &c, 1)) < 0 && errno == EINTR) {
  }
  close(fd);
  int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (o < 0) die(out);
  char buf[32];
  int len = snprintf(buf, sizeof buf, "%lld\n", (long long)now_ns());
  if (write(o, buf, len) != len) die("write stamp");
  close(o);
  _exit(0);
}

/* This program's own path, to run it again as a task. */
static void self_exe(char *buf, size_t size) {
  ssize_t l = readlink("/proc/self/exe", buf, size - 1);
  if (l < 0) die("readlink");
  buf[l] = 0;
}

static void append_stamp(const char *out, char tag) {
  int o = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (o < 0) die(out);
  char buf[40];
  int len = snprintf(buf, sizeof buf, "%c %lld\n", tag, (long long)now_ns());
  if (write(o, buf, len) != len) die("write stamp");
  close(o);
}

static int mode_stamp_span(const char *out) {
  append_stamp(out, 'S');
  append_stamp(out, 'E');
  _exit(0);
}

/* spawn-par and spawn-par-files: N runs of /bin/true, K in flight; with
 * `dir`, each child first gets the folder dir/<i> and its stdout in a new
 * file there.  Prints the elapsed ns. */
static int spawn_par(long n, long k, const char *dir) {
  char *true_argv[] = {"/bin/true", NULL};
  long started = 0, done = 0, running = 0;
  char path[4096];
  int64_t t0 = now_ns();
  while (done < n) {
    while (running < k && started < n) {
      int out = -1;
      if (dir) {
        snprintf(path, sizeof path, "%s/%ld", dir, started);
        if (mkdir(path, 0700) != 0) die(path);
        snprintf(path, sizeof path, "%s/%ld/output.log", dir, started);
        out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (out < 0) die(path);
      }
      spawn(true_argv, out);
      if (out >= 0) close(out);
      started++;
      running++;
    }
    int st;
    pid_t p = wait(&st);
    if (p < 0) {
      if (errno == EINTR) continue;
      die("wait");
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("/bin/true failed");
    running--;
    done++;
  }
  printf("%lld\n", (long long)(now_ns() - t0));
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) usage();
  const char *mode = argv[1];
  char *true_argv[] = {"/bin/true", NULL};

  if (!strcmp(mode, "spawn-seq") && argc == 3) {
    long n = atol(argv[2]);
    int64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
      if (wait_status(spawn(true_argv, -1)) != 0) die("/bin/true failed");
    }
    printf("%lld\n", (long long)(now_ns() - t0));
    return 0;
  }
  if (!strcmp(mode, "spawn-par") && argc == 4) return spawn_par(atol(argv[2]), atol(argv[3]), NULL);
  if (!strcmp(mode, "spawn-par-files") && argc == 5) return spawn_par(atol(argv[2]), atol(argv[3]), argv[4]);
  if (!strcmp(mode, "stamp-fifo") && argc == 4) return mode_stamp_fifo(argv[2], argv[3]);
  if (!strcmp(mode, "stamp-span") && argc == 3) return mode_stamp_span(argv[2]);
  if (!strcmp(mode, "span-chain") && argc == 4) {
    char self[4096];
    self_exe(self, sizeof self);
    char *child[] = {self, "stamp-span", argv[3], NULL};
    long n = atol(argv[2]);
    for (long i = 0; i < n; i++) {
      if (wait_status(spawn(child, -1)) != 0) die("stamp-span failed");
    }
    return 0;
  }
  if (!strcmp(mode, "pidfd-wake") && argc == 5) {
    long gap = atol(argv[2]);
    char *child[] = {"/proc/self/exe", "stamp-fifo", argv[3], argv[4], NULL};
    char self[4096];
    self_exe(self, sizeof self);
    child[0] = self;
    pid_t pid = spawn(child, -1);
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0) die("pidfd_open");
    sleep_us(gap);
    trigger(argv[3]);
    struct pollfd p = {pfd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0) {
      if (errno != EINTR) die("poll");
    }
    int64_t t = now_ns();
    if (wait_status(pid) != 0) die("stamp task failed");
    printf("%lld\n", (long long)(t - read_stamp(argv[4])));
    return 0;
  }
  if (!strcmp(mode, "pidfd-waiter") && argc == 3) {
    int pfd = (int)syscall(SYS_pidfd_open, (pid_t)atol(argv[2]), 0);
    if (pfd < 0) die("pidfd_open");
    struct pollfd p = {pfd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0) {
      if (errno != EINTR) die("poll");
    }
    return 0;
  }
  if (!strcmp(mode, "wake") && argc >= 7 && !strcmp(argv[5], "--")) {
    long gap = atol(argv[2]);
    int dn = devnull();
    pid_t pid = spawn(argv + 6, dn);
    sleep_us(gap);
    trigger(argv[3]);
    int st = wait_status(pid);
    int64_t t = now_ns();
    printf("%lld\n%d\n", (long long)(t - read_stamp(argv[4])), st);
    return 0;
  }
  if (!strcmp(mode, "time") && argc >= 5 && !strcmp(argv[3], "--")) {
    long n = atol(argv[2]);
    int dn = devnull();
    for (long i = 0; i < n; i++) {
      int64_t t0 = now_ns();
      int st = wait_status(spawn(argv + 4, dn));
      int64_t t = now_ns() - t0;
      if (st != 0) {
        fprintf(stderr, "physical_limit: %s exited %d\n", argv[4], st);
        return 1;
      }
      printf("%lld\n", (long long)t);
    }
    return 0;
  }
  if (!strcmp(mode, "submit") && argc >= 6 && !strcmp(argv[4], "--")) {
    long n = atol(argv[2]);
    int out = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out < 0) die(argv[3]);
    int64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
      int st = wait_status(spawn(argv + 5, out));
      if (st != 0) {
        fprintf(stderr, "physical_limit: %s exited %d\n", argv[5], st);
        return 1;
      }
    }
    printf("%lld\n", (long long)(now_ns() - t0));
    return 0;
  }
  if (!strcmp(mode, "run-client") && argc == 3) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(argv[2]) >= sizeof addr.sun_path) usage();
    strcpy(addr.sun_path, argv[2]);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) die(argv[2]);
    static const char request[] = "{\"op\":\"run\",\"argv\":[\"true\"],\"cwd\":\"/\",\"id\":1}\n";
    if (write(fd, request, sizeof request - 1) != (ssize_t)(sizeof request - 1)) die("write");
    char reply[65536];
    size_t len = 0;
    while (len < sizeof reply - 1 && !memchr(reply, '\n', len)) {
      ssize_t n = read(fd, reply + len, sizeof reply - 1 - len);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) die("read");
      len += (size_t)n;
    }
    reply[len] = 0;
    fputs(reply, stdout);
    return strstr(reply, "\"ok\":true") ? 0 : 1;
  }
  usage();
  return 2;
}
