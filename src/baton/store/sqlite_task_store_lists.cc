// SqliteTaskStore's lists: the live and unnoticed tasks batond loads at
// start, a session's list and count, the owners a session sees, and the
// pages of ended tasks (doc/schema.md, "Pages of ended tasks"). Pending
// tasks are merged from memory (Merge). Split from sqlite_task_store.cc.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "baton/core/sessions.h"
#include "baton/store/migrations.h"
#include "baton/store/sqlite_task_store.h"
#include "baton/store/task_rows.h"

namespace baton {
namespace {

bool IsVisible(const TaskRecord& task, const ListQuery& query) {
  if (!SeesOwner(query.owner, task.spec.owner))
    return false;
  return IsTerminal(task.status) ? query.include_terminal : query.include_live;
}

bool IsLive(const TaskRecord& task, const ListQuery&) {
  return !IsTerminal(task.status);
}

bool IsUnnoticed(const TaskRecord& task, const ListQuery&) {
  return IsTerminal(task.status) && !task.spec.owner.empty() &&
         !task.end_seen && !task.notice_delivered;
}

// The SQL condition for a query's live/terminal flags ("" for both).
std::string StatusFilter(const ListQuery& query) {
  if (query.include_live && query.include_terminal)
    return "";
  return fmt::format(" AND status IN {}",
                     query.include_live ? kLiveStatuses : kTerminalStatuses);
}

}  // namespace

Result<std::vector<TaskRecord>> SqliteTaskStore::LoadLiveTasks() {
  auto rows =
      QueryRows(fmt::format("SELECT {} FROM tasks WHERE status IN {} AND {} "
                            "ORDER BY seq",
                            kTaskColumns, kLiveStatuses, kNotPending),
                [&](Statement& s) { s.BindText(2, PendingSeqsJson()); });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  return Merge(std::move(*rows), {}, IsLive, /*newest_first=*/false, 0);
}

Result<std::vector<TaskRecord>> SqliteTaskStore::LoadUnnoticedTasks() {
  auto rows = QueryRows(
      fmt::format("SELECT {} FROM tasks WHERE owner <> '' AND end_seen = 0 "
                  "AND notice_delivered = 0 AND status IN {} AND {} "
                  "ORDER BY seq",
                  kTaskColumns, kTerminalStatuses, kNotPending),
      [&](Statement& s) { s.BindText(2, PendingSeqsJson()); });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  return Merge(std::move(*rows), {}, IsUnnoticed, /*newest_first=*/false, 0);
}

Result<std::vector<TaskRecord>> SqliteTaskStore::ListTasks(
    const ListQuery& query) {
  if (!query.include_live && !query.include_terminal)
    return {};
  // Two branches, each walking an index backwards in seq order, which SQLite
  // merges and stops after the limit ("owner IN (?1, '')" would sort every
  // visible task first). The second branch is empty for an unowned query.
  // Live tasks are few, so a live-only list walks tasks_live rather than a
  // session's whole history. A person's session sees every owner: one walk.
  std::string sql =
      IsPersonSession(query.owner)
          ? fmt::format(
                "SELECT {0} FROM tasks {1} WHERE ?1 <> ''{2} AND {3} "
                "ORDER BY seq DESC LIMIT ?3",
                kTaskColumns,
                query.include_terminal ? "" : "INDEXED BY tasks_live",
                StatusFilter(query), kNotPending)
          : fmt::format(
                "SELECT {0} FROM tasks {1} WHERE owner = ?1{2} AND {3} "
                "UNION ALL "
                "SELECT {0} FROM tasks {1} WHERE owner = '' AND ?1 <> ''{2} "
                "AND {3} ORDER BY seq DESC LIMIT ?3",
                kTaskColumns,
                query.include_terminal ? "" : "INDEXED BY tasks_live",
                StatusFilter(query), kNotPending);
  auto rows = QueryRows(sql, [&](Statement& s) {
    s.BindText(1, query.owner);
    s.BindText(2, PendingSeqsJson());
    s.BindInt(3, query.limit == 0 ? -1 : static_cast<int64_t>(query.limit));
  });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  return Merge(std::move(*rows), query, IsVisible, /*newest_first=*/true,
               query.limit);
}

Result<size_t> SqliteTaskStore::CountTasks(const ListQuery& query) {
  if (!query.include_live && !query.include_terminal)
    return 0;
  // tasks_by_owner holds owner, seq and status: counting reads no table row.
  std::string sql = fmt::format(
      "SELECT count(*) FROM tasks {} WHERE {}{} AND {}",
      query.include_terminal ? "" : "INDEXED BY tasks_live",
      IsPersonSession(query.owner) ? "?1 <> ''" : "owner IN (?1, '')",
      StatusFilter(query), kNotPending);
  auto counted = CountRows(
      sql,
      [&](Statement& s) {
        s.BindText(1, query.owner);
        s.BindText(2, PendingSeqsJson());
      },
      "counting tasks");
  if (!counted)
    return std::unexpected(std::move(counted.error()));
  size_t count = *counted;
  for (const auto& [id, pending] : pending_tasks_) {
    if (IsVisible(pending.record, query))
      ++count;
  }
  return count;
}

namespace {

// The ended tasks of the owners ?1 (a JSON list: those the caller sees,
// narrowed by the filter's owner) that `filter` lets through, the pending
// ones left out (?2, when `pending` says there are any), in tasks_ended:
// the SQL twin of TaskFilter::Matches and IsVisible. Only the filters that
// are set are in the text (bound as ?5 to ?8), so that without any the
// query reads the index alone.
std::string EndedMatching(const TaskFilter& filter, bool pending) {
  std::string sql =
      "FROM tasks INDEXED BY tasks_ended "
      "WHERE status IN ('completed', 'failed', 'killed', 'interrupted') "
      "AND owner IN (SELECT value FROM json_each(?1))";
  if (pending)
    sql += " AND seq NOT IN (SELECT value FROM json_each(?2))";
  if (!filter.kind.empty())
    sql += " AND kind = ?5";
  if (!filter.status.empty())
    sql += " AND status = ?6";
  if (!filter.label.empty())
    sql += " AND label = ?7";
  if (!filter.search.empty()) {
    sql +=
        " AND (instr(lower(id), ?8) OR instr(lower(label), ?8) "
        "OR instr(lower(coalesce(shell_command, '')), ?8) "
        "OR EXISTS (SELECT 1 FROM json_each(argv) "
        "WHERE instr(lower(value), ?8)) "
        "OR instr(lower(coalesce(json_extract(extra, '$.agent.brief'), '')), "
        "?8))";
  }
  return sql;
}

// How many ended tasks of the owners ?1 have status ?6 and ended at or
// after ?3, pending ones left out as above: a range of tasks_ended_by_owner
// per owner, counted without reading a row.
std::string EndedCounting(bool pending) {
  std::string sql =
      "SELECT count(*) FROM tasks INDEXED BY tasks_ended_by_owner "
      "WHERE owner IN (SELECT value FROM json_each(?1)) "
      "AND status IN ('completed', 'failed', 'killed', 'interrupted') "
      "AND status = ?6 AND ended_ms >= ?3";
  if (pending)
    sql += " AND seq NOT IN (SELECT value FROM json_each(?2))";
  return sql;
}

// The order of tasks_ended, descending; seq last makes it total.
bool EndsLater(int64_t a_seq, const TaskRecord& a, int64_t b_seq,
               const TaskRecord& b) {
  auto key = [](int64_t seq, const TaskRecord& t) {
    return std::make_tuple(t.ended_ms, TaskStatusName(t.status),
                           std::string_view(t.spec.owner), seq);
  };
  return key(b_seq, b) < key(a_seq, a);
}

}  // namespace

Result<std::vector<std::string>> SqliteTaskStore::VisibleOwners(
    const std::string& session) {
  std::set<std::string> owners;
  for (const auto& [id, row] : pending_tasks_) {
    const std::string& owner = row.record.spec.owner;
    if (!owner.empty() && SeesOwner(session, owner))
      owners.insert(owner);
  }
  // The first owner in tasks_by_owner that `condition` (on ?1 = `bound`)
  // lets through, if any: one seek.
  auto first_owner =
      [&](std::string_view condition,
          const std::string& bound) -> Result<std::optional<std::string>> {
    std::optional<std::string> owner;
    auto found = ForEachRow(
        fmt::format("SELECT owner FROM tasks INDEXED BY tasks_by_owner "
                    "WHERE {} ORDER BY owner LIMIT 1",
                    condition),
        [&](Statement& s) { s.BindText(1, bound); },
        [&](const Statement& s) -> Status {
          owner = s.ColumnText(0);
          return {};
        },
        "listing sessions");
    if (!found)
      return std::unexpected(std::move(found.error()));
    return owner;
  };
  if (!IsPersonSession(session)) {
    // A client's session sees one session's tasks: its own, if it has any.
    if (!session.empty()) {
      auto own = first_owner("owner = ?1", session);
      if (!own)
        return std::unexpected(std::move(own.error()));
      if (*own)
        owners.insert(std::move(**own));
    }
    return std::vector<std::string>(owners.begin(), owners.end());
  }
  // A person sees every session: one seek per session, to the next owner
  // after the last, rather than a walk of the history.
  for (std::string after;;) {
    auto next = first_owner("owner > ?1", after);
    if (!next)
      return std::unexpected(std::move(next.error()));
    if (!*next)
      break;
    after = std::move(**next);
    owners.insert(after);
  }
  return std::vector<std::string>(owners.begin(), owners.end());
}

Result<EndedPage> SqliteTaskStore::PageEnded(const EndedQuery& query) {
  EndedPage page;
  const TaskFilter& filter = query.filter;
  // The same pending set for the page, its total and the counts; without
  // any (the usual case), no row is tested against it.
  const bool has_pending = !pending_tasks_.empty();
  const std::string pending_seqs = has_pending ? PendingSeqsJson() : "";
  const std::string matching = EndedMatching(filter, has_pending);
  // The sessions whose tasks the caller sees ("" too), and those the
  // filter lets through.
  auto owners = VisibleOwners(query.owner);
  if (!owners)
    return std::unexpected(std::move(owners.error()));
  page.owners = *owners;
  nlohmann::json visible_owners(*owners);
  visible_owners.push_back("");
  nlohmann::json filtered_owners = nlohmann::json::array();
  if (!filter.owner)
    filtered_owners = visible_owners;
  else if (SeesOwner(query.owner, *filter.owner))
    filtered_owners.push_back(*filter.owner);
  const std::string visible_json = ToJson(visible_owners);
  const std::string filtered_json = ToJson(filtered_owners);
  auto bind_filter = [&](Statement& s) {
    s.BindText(1, filtered_json);
    if (has_pending)
      s.BindText(2, pending_seqs);
    const std::pair<int, const std::string*> filters[] = {{5, &filter.kind},
                                                          {6, &filter.status},
                                                          {7, &filter.label},
                                                          {8, &filter.search}};
    for (const auto& [index, value] : filters) {
      if (!value->empty())
        s.BindText(index, *value);
    }
  };
  // Pending tasks are merged from memory. They are few (one loop
  // iteration's writes), so with any of them on the page the page is read
  // from the start and cut after the merge; else SQLite skips to it.
  std::vector<Row> pending;
  ListQuery visible{.owner = query.owner};
  for (const auto& [id, row] : pending_tasks_) {
    const TaskRecord& task = row.record;
    if (!IsTerminal(task.status) || !IsVisible(task, visible))
      continue;
    if (task.ended_ms >= query.counted_since_ms)
      ++page.ended_since[std::string(TaskStatusName(task.status))];
    if (filter.Matches(task))
      pending.push_back(row);
  }
  size_t skip = pending.empty() ? query.offset : 0;
  auto rows = QueryRows(
      fmt::format("SELECT {} {} ORDER BY ended_ms DESC, status DESC, "
                  "owner DESC, seq DESC LIMIT ?3 OFFSET ?4",
                  kTaskColumns, matching),
      [&](Statement& s) {
        bind_filter(s);
        s.BindInt(3, static_cast<int64_t>(query.offset - skip + query.limit));
        s.BindInt(4, static_cast<int64_t>(skip));
      });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  if (!pending.empty()) {
    rows->insert(rows->end(), pending.begin(), pending.end());
    std::sort(rows->begin(), rows->end(), [](const Row& a, const Row& b) {
      return EndsLater(a.seq, a.record, b.seq, b.record);
    });
    rows->erase(rows->begin(),
                rows->begin() + std::min(query.offset, rows->size()));
    if (rows->size() > query.limit)
      rows->resize(query.limit);
  }
  page.tasks.reserve(rows->size());
  for (Row& row : *rows)
    page.tasks.push_back(std::move(row.record));

  // The counts of the day, per status; without kind, label or search, the
  // total is the sum of the same counts over every end.
  const bool narrowed =
      !filter.kind.empty() || !filter.label.empty() || !filter.search.empty();
  const std::string counting = EndedCounting(has_pending);
  page.total = pending.size();
  auto count_since = [&](const std::string& owners_json,
                         const std::string& name, int64_t since_ms) {
    return CountRows(
        counting,
        [&](Statement& s) {
          s.BindText(1, owners_json);
          if (has_pending)
            s.BindText(2, pending_seqs);
          s.BindInt(3, since_ms);
          s.BindText(6, name);
        },
        "counting ended tasks");
  };
  for (TaskStatus status : {TaskStatus::kCompleted, TaskStatus::kFailed,
                            TaskStatus::kKilled, TaskStatus::kInterrupted}) {
    const std::string name(TaskStatusName(status));
    auto since = count_since(visible_json, name, query.counted_since_ms);
    if (!since)
      return std::unexpected(std::move(since.error()));
    if (*since > 0)
      page.ended_since[name] += *since;
    if (narrowed || (!filter.status.empty() && filter.status != name))
      continue;
    auto ever =
        count_since(filtered_json, name, std::numeric_limits<int64_t>::min());
    if (!ever)
      return std::unexpected(std::move(ever.error()));
    page.total += *ever;
  }
  if (narrowed) {
    auto counted = CountRows(fmt::format("SELECT count(*) {}", matching),
                             bind_filter, "counting ended tasks");
    if (!counted)
      return std::unexpected(std::move(counted.error()));
    page.total += *counted;
  }
  // A task's label never changes: the stored labels and the pending ones
  // together are every label.
  std::set<std::string> labels;
  auto counted = ForEachRow(
      "SELECT DISTINCT label FROM tasks INDEXED BY tasks_labels "
      "WHERE owner IN (SELECT value FROM json_each(?1)) AND label > ''",
      [&](Statement& s) { s.BindText(1, visible_json); },
      [&](const Statement& s) -> Status {
        labels.insert(s.ColumnText(0));
        return {};
      },
      "listing labels");
  if (!counted)
    return std::unexpected(std::move(counted.error()));
  for (const auto& [id, row] : pending_tasks_) {
    if (!row.record.spec.label.empty() && IsVisible(row.record, visible))
      labels.insert(row.record.spec.label);
  }
  page.labels.assign(labels.begin(), labels.end());
  return page;
}

}  // namespace baton
