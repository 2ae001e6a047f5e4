// The SQLite schema as numbered migrations, and the check that refuses a
// database this build cannot use. PRAGMA user_version holds the schema
// version; doc/schema.md describes the tables and the rules for changing them.
#ifndef BATON_STORE_MIGRATIONS_H_
#define BATON_STORE_MIGRATIONS_H_

#include <span>
#include <string_view>

#include "baton/store/sqlite_handle.h"
#include "baton/util/result.h"

namespace baton {

// The schema version this build writes and understands.
inline constexpr int kSchemaVersion = 10;

// PRAGMA application_id of a baton database: "BATN".
inline constexpr int kApplicationId = 0x4241544E;

// The status lists the partial indexes of schema 1 are defined with. SQLite
// uses a partial index only when the query repeats its condition, so queries
// must use these verbatim.
inline constexpr std::string_view kLiveStatuses =
    "('queued', 'running', 'waiting', 'stopping')";
inline constexpr std::string_view kTerminalStatuses =
    "('completed', 'failed', 'killed', 'interrupted')";

struct Migration {
  int version;           // user_version once applied; 1, 2, ... in order.
  std::string_view sql;  // Never edited once released: add a new one.
};

std::span<const Migration> Migrations();

// Reads the schema version of `db` without writing anything. Fails with
// kIncompatible when the database was written by a newer baton or is not a
// baton database, kCorrupt when it is not a database at all.
[[nodiscard]] Result<int> CheckSchemaVersion(Db& db);

// Applies every migration newer than `from`, each in its own transaction
// together with its user_version bump, so a crash leaves a whole version.
[[nodiscard]] Status Migrate(Db& db, int from);

}  // namespace baton

#endif  // BATON_STORE_MIGRATIONS_H_
