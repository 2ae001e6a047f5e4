// Thin RAII wrappers over the SQLite C API: a connection with a statement
// cache, statements with bind/step/column helpers, and a transaction that
// rolls back unless committed. Knows nothing of tasks or of the schema.
#ifndef BATON_STORE_SQLITE_HANDLE_H_
#define BATON_STORE_SQLITE_HANDLE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "baton/util/result.h"

namespace baton {

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct SqliteFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using SqlitePtr = std::unique_ptr<sqlite3, SqliteCloser>;
using StatementPtr = std::unique_ptr<sqlite3_stmt, SqliteFinalizer>;

// The error for result code `rc` of an operation on `db` (which may be null),
// as "context: sqlite's message". Codes: READONLY/PERM/AUTH ->
// kPermissionDenied, BUSY/LOCKED -> kUnavailable, FULL/IOERR/CANTOPEN -> kIo
// (or the errno's code), the rest -> kInternal. SQLITE_NOTADB/CORRUPT ->
// kCorrupt with only sqlite's words ("file is not a database"), for the
// caller to name the file as the user knows it (sqlite3_db_filename has
// symlinks resolved) and to give the remedy.
Error SqliteError(sqlite3* db, int rc, std::string_view context);

// How much work queries did, whatever the machine's speed: the steps of
// SQLite's virtual machine, and how many of them stepped through a table in
// a full scan (no index narrowed it).
struct QueryWork {
  int64_t steps = 0;
  int64_t scan_steps = 0;

  QueryWork& operator+=(const QueryWork& other) {
    steps += other.steps;
    scan_steps += other.scan_steps;
    return *this;
  }
};

// One prepared statement. Bind errors (out of range, too big) are remembered
// and reported by the next Step(), so call sites bind without checking.
class Statement {
 public:
  explicit Statement(StatementPtr stmt) : stmt_(std::move(stmt)) {}

  // Parameters are 1-based, as in SQLite.
  void BindInt(int index, int64_t value);
  void BindText(int index, std::string_view value);
  void BindNull(int index);
  void BindOptionalInt(int index, std::optional<int64_t> value);

  // Returns true when a row is ready, false when the statement is done.
  [[nodiscard]] Result<bool> Step();
  // Steps until done, for statements that return no rows.
  [[nodiscard]] Status Run();
  // Makes the statement ready for its next use and drops its bindings.
  void Reset();
  // The work SQLite did for this statement since the last call.
  QueryWork TakeWork();

  // Columns are 0-based, as in SQLite.
  bool ColumnIsNull(int column) const;
  int64_t ColumnInt(int column) const;
  std::string ColumnText(int column) const;
  std::optional<int64_t> ColumnOptionalInt(int column) const;

 private:
  StatementPtr stmt_;
  int bind_error_ = SQLITE_OK;  // First failed bind since the last Reset().
};

// Borrows a cached statement for one use and resets it on scope exit, so an
// idle statement never pins a WAL read snapshot (which would stop
// checkpoints) or leaves bindings behind for the next user.
class StatementRef {
 public:
  explicit StatementRef(Statement& statement) : statement_(&statement) {}
  StatementRef(StatementRef&& other) noexcept
      : statement_(std::exchange(other.statement_, nullptr)) {}
  StatementRef& operator=(StatementRef&&) = delete;
  ~StatementRef() {
    if (statement_ != nullptr)
      statement_->Reset();
  }

  Statement* operator->() const { return statement_; }
  Statement& operator*() const { return *statement_; }

 private:
  Statement* statement_;
};

// A connection. Move-only; not thread-safe.
class Db {
 public:
  // Opens `path` for reading and writing, creating it if absent, with
  // extended result codes on. SQLite silently falls back to read-only when
  // the file is not writable: check read_only(). Error messages do not
  // repeat the path.
  [[nodiscard]] static Result<Db> Open(const std::string& path);

  Db(Db&&) = default;
  Db& operator=(Db&&) = default;

  // Runs one or more statements that return no rows.
  [[nodiscard]] Status Exec(const std::string& sql, std::string_view context);
  // The statement for `sql`, prepared on first use and cached for the life
  // of the connection.
  [[nodiscard]] Result<StatementRef> Prepare(const std::string& sql);
  // The first column of the first row of `sql` as an integer (0 if no row).
  [[nodiscard]] Result<int64_t> QueryInt(const std::string& sql);

  bool read_only() const { return sqlite3_db_readonly(db_.get(), "main") == 1; }
  sqlite3* get() const { return db_.get(); }
  const std::string& path() const { return path_; }

 private:
  Db(std::string path, SqlitePtr db)
      : path_(std::move(path)), db_(std::move(db)) {}

  std::string path_;
  SqlitePtr db_;
  // Declared after db_ so that statements are finalized before the close.
  // Node-based, so StatementRefs stay valid while others are added.
  std::unordered_map<std::string, Statement> statements_;
};

// A write transaction. Begun IMMEDIATE so that a locked database fails here,
// after busy_timeout, rather than half-way through the writes. Rolls back in
// its destructor unless Commit() succeeded.
class Transaction {
 public:
  [[nodiscard]] static Result<Transaction> Begin(Db& db);

  Transaction(Transaction&& other) noexcept
      : db_(std::exchange(other.db_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  [[nodiscard]] Status Commit();

 private:
  explicit Transaction(Db& db) : db_(&db) {}

  Db* db_;  // Null once committed (or moved from).
};

}  // namespace baton

#endif  // BATON_STORE_SQLITE_HANDLE_H_
