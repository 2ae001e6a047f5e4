#include "baton/store/sqlite_handle.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "baton/util/unique_fd.h"

namespace baton {

namespace {

// The database holds what tasks need to run again, their environments
// among them, secrets included (doc/security.md): only its owner may read
// it, whatever the umask. Creating the file first with mode 0600 is the
// only way to choose its mode (SQLite creates with 0644 & ~umask), and
// SQLite gives the -wal and -shm files the database's mode. A database
// from before, with a wider mode, is narrowed; a file that is not ours is
// left to SQLite, which reports what it cannot do.
void MakeOwnerOnly(const std::string& path) {
  if (path.empty() || path == ":memory:")
    return;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (fd.get() >= 0)
    (void)::fchmod(fd.get(), 0600);  // Not ours: SQLite will say so.
  for (const char* suffix : {"-wal", "-shm"})
    (void)::chmod((path + suffix).c_str(), 0600);  // Absent: nothing to do.
}

}  // namespace

Error SqliteError(sqlite3* db, int rc, std::string_view context) {
  // sqlite3_errmsg describes the last failed call on `db`; fall back to the
  // generic text when it does not (e.g. a bind error reported later).
  int last = db != nullptr ? sqlite3_extended_errcode(db) : rc;
  std::string what =
      db != nullptr && last == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  ErrorCode code = ErrorCode::kInternal;
  int sys_errno = 0;
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      // No context: the caller words this one (see the header).
      return Error{ErrorCode::kCorrupt, std::move(what)};
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      code = ErrorCode::kPermissionDenied;
      break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      code = ErrorCode::kUnavailable;
      break;
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_NOLFS:
    case SQLITE_PROTOCOL:
      code = ErrorCode::kIo;
      // Only these come from a failed system call; elsewhere the errno
      // sqlite remembers may be stale.
      sys_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
      // SQLite reports a full disk as SQLITE_FULL and clears its errno.
      if ((rc & 0xff) == SQLITE_FULL && sys_errno == 0)
        sys_errno = ENOSPC;
      // A write, sync or read the system refused: SQLite keeps the errno
      // only of some (an EIO at the commit's write came back as 0 in
      // tests/integration/fault_injection_test.cc).
      if ((rc & 0xff) == SQLITE_IOERR && sys_errno == 0)
        sys_errno = EIO;
      if (sys_errno == EACCES || sys_errno == EPERM) {
        code = ErrorCode::kPermissionDenied;
      }
      if (sys_errno != 0) {
        what = fmt::format("{} ({})", what, std::strerror(sys_errno));
      }
      break;
    default:
      break;
  }
  std::string message =
      context.empty() ? what : fmt::format("{}: {}", context, what);
  return Error{code, std::move(message), sys_errno};
}

void Statement::BindInt(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_.get(), index, value);
  if (bind_error_ == SQLITE_OK)
    bind_error_ = rc;
}

void Statement::BindText(int index, std::string_view value) {
  int rc = sqlite3_bind_text64(stmt_.get(), index, value.data(), value.size(),
                               SQLITE_TRANSIENT, SQLITE_UTF8);
  if (bind_error_ == SQLITE_OK)
    bind_error_ = rc;
}

void Statement::BindNull(int index) {
  int rc = sqlite3_bind_null(stmt_.get(), index);
  if (bind_error_ == SQLITE_OK)
    bind_error_ = rc;
}

void Statement::BindOptionalInt(int index, std::optional<int64_t> value) {
  if (value) {
    BindInt(index, *value);
  } else {
    BindNull(index);
  }
}

Result<bool> Statement::Step() {
  sqlite3* db = sqlite3_db_handle(stmt_.get());
  if (bind_error_ != SQLITE_OK) {
    return std::unexpected(SqliteError(nullptr, bind_error_, "bind"));
  }
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  return std::unexpected(SqliteError(db, rc, ""));
}

QueryWork Statement::TakeWork() {
  return {.steps = sqlite3_stmt_status(stmt_.get(), SQLITE_STMTSTATUS_VM_STEP,
                                       /*resetFlg=*/1),
          .scan_steps = sqlite3_stmt_status(
              stmt_.get(), SQLITE_STMTSTATUS_FULLSCAN_STEP, /*resetFlg=*/1)};
}

Status Statement::Run() {
  for (;;) {
    auto row = Step();
    if (!row)
      return std::unexpected(std::move(row.error()));
    if (!*row)
      return {};
  }
}

void Statement::Reset() {
  // The result of reset repeats the last step's error, already reported.
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_error_ = SQLITE_OK;
}

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

int64_t Statement::ColumnInt(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

std::string Statement::ColumnText(int column) const {
  const auto* text = sqlite3_column_text(stmt_.get(), column);
  if (text == nullptr)
    return {};
  // Bytes, not strlen: the text may hold NULs.
  int size = sqlite3_column_bytes(stmt_.get(), column);
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(size));
}

std::optional<int64_t> Statement::ColumnOptionalInt(int column) const {
  if (ColumnIsNull(column))
    return std::nullopt;
  return ColumnInt(column);
}

Result<Db> Db::Open(const std::string& path) {
  MakeOwnerOnly(path);
  sqlite3* raw = nullptr;
  // NOMUTEX: a connection is used by one thread only (see TaskStore).
  int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      nullptr);
  SqlitePtr db(raw);  // sqlite allocates a handle even when open fails.
  if (rc != SQLITE_OK) {
    // After a failed read-write open SQLite retries read-only, so the errno
    // it keeps is the retry's (ENOENT for a file it could not create). Ask
    // the file system what it was.
    if ((rc & 0xff) == SQLITE_CANTOPEN) {
      std::filesystem::path target(path);
      if (::access(path.c_str(), F_OK) != 0) {
        std::error_code ignored;  // The overload that does not throw.
        target = std::filesystem::absolute(target, ignored).parent_path();
      }
      if (::faccessat(AT_FDCWD, target.c_str(), W_OK, AT_EACCESS) != 0 &&
          errno != ENOENT) {
        return std::unexpected(
            ErrnoError("cannot write " + target.string(), errno));
      }
    }
    return std::unexpected(SqliteError(raw, rc, ""));
  }
  sqlite3_extended_result_codes(raw, 1);
  return Db(path, std::move(db));
}

Status Db::Exec(const std::string& sql, std::string_view context) {
  int rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK)
    return std::unexpected(SqliteError(get(), rc, context));
  return {};
}

Result<StatementRef> Db::Prepare(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v3(db_.get(), sql.c_str(), -1,
                                SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    StatementPtr stmt(raw);
    if (rc != SQLITE_OK) {
      return std::unexpected(SqliteError(get(), rc, "prepare statement"));
    }
    BATON_CHECK(stmt != nullptr);  // Empty SQL is a bug in the caller.
    it = statements_.emplace(sql, Statement(std::move(stmt))).first;
  }
  return StatementRef(it->second);
}

Result<int64_t> Db::QueryInt(const std::string& sql) {
  auto stmt = Prepare(sql);
  if (!stmt)
    return std::unexpected(std::move(stmt.error()));
  auto row = (*stmt)->Step();
  if (!row)
    return std::unexpected(std::move(row.error()));
  return *row ? (*stmt)->ColumnInt(0) : 0;
}

Result<Transaction> Transaction::Begin(Db& db) {
  if (auto begun = db.Exec("BEGIN IMMEDIATE", "begin transaction"); !begun) {
    return std::unexpected(std::move(begun.error()));
  }
  return Transaction(db);
}

Transaction::~Transaction() {
  // A failed COMMIT may or may not have ended the transaction (SQLITE_FULL
  // leaves it open); roll back only what is still open.
  if (db_ != nullptr && sqlite3_get_autocommit(db_->get()) == 0) {
    sqlite3_exec(db_->get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Status Transaction::Commit() {
  BATON_CHECK(db_ != nullptr);
  if (auto committed = db_->Exec("COMMIT", "commit"); !committed) {
    return committed;
  }
  db_ = nullptr;
  return {};
}

}  // namespace baton
