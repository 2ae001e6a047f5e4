// fault_inject: an LD_PRELOAD library that makes file writes fail as a full
// or failing disk would, so that tests can check how baton's processes cope
// (doc/protocol.md, "When state cannot be saved") without a real full disk.
// It fails only the calls that name a file whose path matches a pattern, and
// only while a control file exists: a test opens a "disk full window" by
// creating the control file and closes it by removing the file, while the
// process under test runs on.
//
// Environment, read once at the first intercepted call:
//   BATON_FAULT_CONTROL  Path of the control file. Faults are injected only
//                        while it exists. Unset: the library does nothing.
//   BATON_FAULT_PATH     fnmatch(3) pattern (no flags, so '*' also matches
//                        '/') for the paths of the files to fail, e.g.
//                        "*/baton.db*" for a database and its WAL. Default
//                        "*". A descriptor's path is read from
//                        /proc/self/fd/N, so sockets and pipes never match
//                        a pattern that starts with '/' or "*/".
//   BATON_FAULT_ERRNO    The error: ENOSPC (default), EIO, EDQUOT, EFBIG,
//                        EROFS, or a number.
//   BATON_FAULT_OPS      Comma-separated operations to fail (default
//                        "write,sync,alloc"):
//                          write     write, pwrite(64), writev, pwritev(64)
//                          sync      fsync, fdatasync
//                          alloc     fallocate(64), posix_fallocate(64)
//                          truncate  ftruncate(64)
//                          create    open/openat/creat(64) with O_CREAT of a
//                                    file that does not exist yet
//   BATON_FAULT_LOG      Optional file to which one line per injected
//                        failure is appended ("<pid> <op> <path>"), so a
//                        test can check that the window was hit.
//
// Not intercepted: writes through glibc's internal calls (fopen/fwrite
// stdio, which uses internal symbols), mmap'ed writes, and statically linked
// binaries. Thread-safe: the configuration is read under pthread_once and
// never changes afterwards.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
  kOpWrite = 1,
  kOpSync = 2,
  kOpAlloc = 4,
  kOpTruncate = 8,
  kOpCreate = 16,
};

typedef ssize_t (*WriteFn)(int, const void*, size_t);
typedef ssize_t (*PwriteFn)(int, const void*, size_t, off_t);
typedef ssize_t (*Pwrite64Fn)(int, const void*, size_t, off64_t);
typedef ssize_t (*WritevFn)(int, const struct iovec*, int);
typedef ssize_t (*PwritevFn)(int, const struct iovec*, int, off_t);
typedef ssize_t (*Pwritev64Fn)(int, const struct iovec*, int, off64_t);
typedef int (*SyncFn)(int);
typedef int (*FallocateFn)(int, int, off_t, off_t);
typedef int (*Fallocate64Fn)(int, int, off64_t, off64_t);
typedef int (*PosixFallocateFn)(int, off_t, off_t);
typedef int (*PosixFallocate64Fn)(int, off64_t, off64_t);
typedef int (*FtruncateFn)(int, off_t);
typedef int (*Ftruncate64Fn)(int, off64_t);
typedef int (*OpenFn)(const char*, int, ...);
typedef int (*OpenatFn)(int, const char*, int, ...);
typedef int (*CreatFn)(const char*, mode_t);

static struct {
  const char* control;  // NULL: inactive.
  const char* pattern;
  const char* log;
  int error;
  int ops;
  WriteFn write;
  PwriteFn pwrite;
  Pwrite64Fn pwrite64;
  WritevFn writev;
  PwritevFn pwritev;
  Pwritev64Fn pwritev64;
  SyncFn fsync;
  SyncFn fdatasync;
  FallocateFn fallocate;
  Fallocate64Fn fallocate64;
  PosixFallocateFn posix_fallocate;
  PosixFallocate64Fn posix_fallocate64;
  FtruncateFn ftruncate;
  Ftruncate64Fn ftruncate64;
  OpenFn open;
  OpenFn open64;
  OpenatFn openat;
  OpenatFn openat64;
  CreatFn creat;
  CreatFn creat64;
} g;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int ParseErrno(const char* text) {
  static const struct {
    const char* name;
    int value;
  } kNames[] = {{"ENOSPC", ENOSPC}, {"EIO", EIO},     {"EDQUOT", EDQUOT},
                {"EFBIG", EFBIG},   {"EROFS", EROFS}, {"EACCES", EACCES}};
  if (text == NULL || *text == '\0')
    return ENOSPC;
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
    if (strcmp(text, kNames[i].name) == 0)
      return kNames[i].value;
  }
  int value = atoi(text);
  return value > 0 ? value : ENOSPC;
}

static int ParseOps(const char* text) {
  if (text == NULL || *text == '\0')
    return kOpWrite | kOpSync | kOpAlloc;
  static const struct {
    const char* name;
    int bit;
  } kOps[] = {{"write", kOpWrite},
              {"sync", kOpSync},
              {"alloc", kOpAlloc},
              {"truncate", kOpTruncate},
              {"create", kOpCreate}};
  int ops = 0;
  for (size_t i = 0; i < sizeof kOps / sizeof kOps[0]; ++i) {
    size_t n = strlen(kOps[i].name);
    for (const char* p = text; (p = strstr(p, kOps[i].name)) != NULL; p += n) {
      bool starts = p == text || p[-1] == ',';
      bool ends = p[n] == '\0' || p[n] == ',';
      if (starts && ends)
        ops |= kOps[i].bit;
    }
  }
  return ops;
}

static void Init(void) {
#define BATON_FAULT_REAL(name) g.name = dlsym(RTLD_NEXT, #name)
  BATON_FAULT_REAL(write);
  BATON_FAULT_REAL(pwrite);
  BATON_FAULT_REAL(pwrite64);
  BATON_FAULT_REAL(writev);
  BATON_FAULT_REAL(pwritev);
  BATON_FAULT_REAL(pwritev64);
  BATON_FAULT_REAL(fsync);
  BATON_FAULT_REAL(fdatasync);
  BATON_FAULT_REAL(fallocate);
  BATON_FAULT_REAL(fallocate64);
  BATON_FAULT_REAL(posix_fallocate);
  BATON_FAULT_REAL(posix_fallocate64);
  BATON_FAULT_REAL(ftruncate);
  BATON_FAULT_REAL(ftruncate64);
  BATON_FAULT_REAL(open);
  BATON_FAULT_REAL(open64);
  BATON_FAULT_REAL(openat);
  BATON_FAULT_REAL(openat64);
  BATON_FAULT_REAL(creat);
  BATON_FAULT_REAL(creat64);
#undef BATON_FAULT_REAL
  const char* control = getenv("BATON_FAULT_CONTROL");
  if (control != NULL && *control != '\0')
    g.control = strdup(control);
  const char* pattern = getenv("BATON_FAULT_PATH");
  g.pattern = strdup(pattern != NULL && *pattern != '\0' ? pattern : "*");
  const char* log = getenv("BATON_FAULT_LOG");
  if (log != NULL && *log != '\0')
    g.log = strdup(log);
  g.error = ParseErrno(getenv("BATON_FAULT_ERRNO"));
  g.ops = ParseOps(getenv("BATON_FAULT_OPS"));
}

static void Note(const char* op, const char* path) {
  if (g.log == NULL || g.open == NULL || g.write == NULL)
    return;
  int fd = g.open(g.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  char line[PATH_MAX + 64];
  int n = snprintf(line, sizeof line, "%d %s %s\n", (int)getpid(), op, path);
  if (n > 0) {
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    (void)!g.write(fd, line, len);
  }
  close(fd);
}

// Every wrapper calls this first: the real functions are looked up once.
static void Ensure(void) {
  pthread_once(&g_once, Init);
}

__attribute__((constructor)) static void Load(void) {
  Ensure();
}

// Whether `path` is to fail now for an operation of kind `op`.
static bool FailPath(int op, const char* path, const char* op_name) {
  if (g.control == NULL || (g.ops & op) == 0)
    return false;
  if (access(g.control, F_OK) != 0)
    return false;
  if (fnmatch(g.pattern, path, 0) != 0)
    return false;
  Note(op_name, path);
  return true;
}

// The same for the file open as `fd`.
static bool FailFd(int op, int fd, const char* op_name) {
  Ensure();
  if (g.control == NULL || (g.ops & op) == 0)
    return false;
  if (access(g.control, F_OK) != 0)
    return false;
  char link[64];
  char path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0)
    return false;
  path[n] = '\0';
  return FailPath(op, path, op_name);
}

// The absolute form of `path`, relative to `dirfd`, for matching.
static void Absolute(int dirfd, const char* path, char* out, size_t size) {
  if (path[0] == '/') {
    snprintf(out, size, "%s", path);
    return;
  }
  char dir[PATH_MAX] = "";
  if (dirfd == AT_FDCWD) {
    if (getcwd(dir, sizeof dir) == NULL)
      dir[0] = '\0';
  } else {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, dir, sizeof dir - 1);
    dir[n > 0 ? n : 0] = '\0';
  }
  // A path too long to hold is matched as no path at all.
  int written = snprintf(out, size, "%s/%s", dir, path);
  if (written < 0 || (size_t)written >= size)
    out[0] = '\0';
}

// Whether an open of `path` with `flags` creates a file that is to fail.
static bool FailCreate(int dirfd, const char* path, int flags) {
  Ensure();
  if ((flags & O_CREAT) == 0 || path == NULL)
    return false;
  if (g.control == NULL || (g.ops & kOpCreate) == 0)
    return false;
  struct stat st;
  if (fstatat(dirfd, path, &st, 0) == 0)
    return false;  // Opening an existing file allocates nothing.
  char absolute[PATH_MAX];
  Absolute(dirfd, path, absolute, sizeof absolute);
  return FailPath(kOpCreate, absolute, "create");
}

#define BATON_FAULT_FD(op, fd, name)  \
  do {                                \
    if (FailFd((op), (fd), (name))) { \
      errno = g.error;                \
      return -1;                      \
    }                                 \
  } while (0)

ssize_t write(int fd, const void* buf, size_t count) {
  BATON_FAULT_FD(kOpWrite, fd, "write");
  return g.write(fd, buf, count);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  BATON_FAULT_FD(kOpWrite, fd, "pwrite");
  return g.pwrite(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off64_t offset) {
  BATON_FAULT_FD(kOpWrite, fd, "pwrite64");
  return g.pwrite64(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  BATON_FAULT_FD(kOpWrite, fd, "writev");
  return g.writev(fd, iov, iovcnt);
}

ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  BATON_FAULT_FD(kOpWrite, fd, "pwritev");
  return g.pwritev(fd, iov, iovcnt, offset);
}

ssize_t pwritev64(int fd, const struct iovec* iov, int iovcnt, off64_t offset) {
  BATON_FAULT_FD(kOpWrite, fd, "pwritev64");
  return g.pwritev64(fd, iov, iovcnt, offset);
}

int fsync(int fd) {
  BATON_FAULT_FD(kOpSync, fd, "fsync");
  return g.fsync(fd);
}

int fdatasync(int fd) {
  BATON_FAULT_FD(kOpSync, fd, "fdatasync");
  return g.fdatasync(fd);
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
  BATON_FAULT_FD(kOpAlloc, fd, "fallocate");
  return g.fallocate(fd, mode, offset, len);
}

int fallocate64(int fd, int mode, off64_t offset, off64_t len) {
  BATON_FAULT_FD(kOpAlloc, fd, "fallocate64");
  return g.fallocate64(fd, mode, offset, len);
}

// posix_fallocate returns the error instead of setting errno.
int posix_fallocate(int fd, off_t offset, off_t len) {
  Ensure();
  if (FailFd(kOpAlloc, fd, "posix_fallocate"))
    return g.error;
  return g.posix_fallocate(fd, offset, len);
}

int posix_fallocate64(int fd, off64_t offset, off64_t len) {
  if (FailFd(kOpAlloc, fd, "posix_fallocate64"))
    return g.error;
  return g.posix_fallocate64(fd, offset, len);
}

int ftruncate(int fd, off_t length) {
  BATON_FAULT_FD(kOpTruncate, fd, "ftruncate");
  return g.ftruncate(fd, length);
}

int ftruncate64(int fd, off64_t length) {
  BATON_FAULT_FD(kOpTruncate, fd, "ftruncate64");
  return g.ftruncate64(fd, length);
}

// The mode argument exists only with O_CREAT or O_TMPFILE.
static mode_t ModeArg(int flags, va_list args) {
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE)
    return (mode_t)va_arg(args, int);
  return 0;
}

#define BATON_FAULT_CREATE(dirfd, path, flags)  \
  do {                                          \
    if (FailCreate((dirfd), (path), (flags))) { \
      errno = g.error;                          \
      return -1;                                \
    }                                           \
  } while (0)

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = ModeArg(flags, args);
  va_end(args);
  BATON_FAULT_CREATE(AT_FDCWD, path, flags);
  return g.open(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = ModeArg(flags, args);
  va_end(args);
  BATON_FAULT_CREATE(AT_FDCWD, path, flags);
  return g.open64(path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = ModeArg(flags, args);
  va_end(args);
  BATON_FAULT_CREATE(dirfd, path, flags);
  return g.openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = ModeArg(flags, args);
  va_end(args);
  BATON_FAULT_CREATE(dirfd, path, flags);
  return g.openat64(dirfd, path, flags, mode);
}

int creat(const char* path, mode_t mode) {
  BATON_FAULT_CREATE(AT_FDCWD, path, O_CREAT);
  return g.creat(path, mode);
}

int creat64(const char* path, mode_t mode) {
  BATON_FAULT_CREATE(AT_FDCWD, path, O_CREAT);
  return g.creat64(path, mode);
}
