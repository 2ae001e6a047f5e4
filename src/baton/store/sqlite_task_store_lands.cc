// SqliteTaskStore's merge queue (core/land.h, doc/land.md): entries put in
// the batch, written with it as JSON rows by id, read back unfinished and
// the last finished ones. Split from sqlite_task_store.cc, which holds
// everything else.
#include <fmt/format.h>

#include <algorithm>

#include "baton/store/sqlite_task_store.h"

namespace baton {

Status SqliteTaskStore::PutLand(const LandEntry& entry) {
  StartWrite();
  if (!land_journal_.contains(entry.id)) {
    auto pending = pending_lands_.find(entry.id);
    land_journal_[entry.id] = pending == pending_lands_.end()
                                  ? std::nullopt
                                  : std::optional<LandEntry>(pending->second);
  }
  pending_lands_[entry.id] = entry;
  return {};
}

Result<std::vector<LandEntry>> SqliteTaskStore::LoadLands(size_t finished) {
  std::map<int64_t, LandEntry> entries;
  auto read = [&](const Statement& s) -> Status {
    auto json = ParseJson(s.ColumnText(0));
    if (!json)
      return std::unexpected(json.error());
    auto entry = DecodeObject<LandEntry>(json->value, "land entry", false);
    if (!entry) {
      return MakeError(ErrorCode::kCorrupt,
                       fmt::format("land entry {} is not readable: {}",
                                   s.ColumnInt(1), entry.error().message));
    }
    entries[entry->id] = std::move(*entry);
    return {};
  };
  auto unfinished = ForEachRow(
      "SELECT entry, id FROM lands WHERE state IN ('queued', 'testing') "
      "ORDER BY id",
      [](Statement&) {}, read, "reading the merge queue");
  if (!unfinished)
    return std::unexpected(std::move(unfinished.error()));
  auto recent = ForEachRow(
      "SELECT entry, id FROM lands WHERE state NOT IN ('queued', 'testing') "
      "ORDER BY id DESC LIMIT ?1",
      [&](Statement& s) { s.BindInt(1, static_cast<int64_t>(finished)); }, read,
      "reading the merge queue");
  if (!recent)
    return std::unexpected(std::move(recent.error()));
  for (const auto& [id, entry] : pending_lands_)
    entries[id] = entry;
  std::vector<LandEntry> all;
  for (auto& [id, entry] : entries)
    all.push_back(std::move(entry));
  return all;
}

Status SqliteTaskStore::WriteLands() {
  if (pending_lands_.empty())
    return {};
  auto stmt = db_.Prepare(
      "INSERT INTO lands (id, state, entry) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (id) DO UPDATE SET state = excluded.state, "
      "entry = excluded.entry");
  if (!stmt)
    return std::unexpected(std::move(stmt.error()));
  for (const auto& [id, entry] : pending_lands_) {
    Statement& s = **stmt;
    s.BindInt(1, id);
    s.BindText(2, EnumName(entry.state));
    s.BindText(3, EncodeObject(entry));
    if (auto done = s.Run(); !done)
      return done;
    s.Reset();
  }
  return {};
}

}  // namespace baton
