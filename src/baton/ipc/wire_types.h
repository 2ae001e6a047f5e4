// The types that batond's client protocol's requests and replies share
// (ipc/messages.h holds those): the limits of its fields, the task as
// clients see it (with its open questions), notices, and the enums on the
// wire. Split from messages.h to keep each file readable; messages.h
// includes it, and is what the rest of baton includes.
#ifndef BATON_IPC_WIRE_TYPES_H_
#define BATON_IPC_WIRE_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/json_fields.h"

namespace baton {

// ---- limits (doc/protocol.md, "Limits") ----------------------------------

// One argument, or a shell line (passed as one argument to sh -c): Linux
// refuses longer ones at exec (MAX_ARG_STRLEN).
inline constexpr size_t kMaxArgBytes = 128 << 10;
// A command's arguments together, and a task's environment together: well
// under what exec takes (ARG_MAX, 2 MiB with the default stack).
inline constexpr size_t kMaxArgvBytes = 1 << 20;
inline constexpr size_t kMaxEnvBytes = 1 << 20;
inline constexpr size_t kMaxArgs = 8192;
inline constexpr size_t kMaxEnvEntries = 8192;
// A brief, a follow-up message, an answer.
inline constexpr size_t kMaxTextBytes = 1 << 20;
// A kill's reason (a label's bound, kMaxLabelBytes, is core/task.h's).
inline constexpr size_t kMaxReasonBytes = 1024;
inline constexpr size_t kMaxPathBytes = 4096;
inline constexpr size_t kMaxNameBytes = 256;  // Sessions, ids, profiles.
inline constexpr size_t kMaxChecks = 64;
inline constexpr size_t kMaxTaskIds = 100'000;  // One wait or kill.
inline constexpr size_t kMaxAnswers = 64;
// The longest deadline or wait: a year and a day. Longer ones are refused,
// never wrapped.
inline constexpr int64_t kMaxTimeoutMs = 366LL * 24 * 3600 * 1000;

// ---- the task as clients see it ------------------------------------------

// An agent worker's question that is still open (doc/agents.md): batond
// decides which are open, so every client shows the same ones.
struct QuestionOption {
  std::string label;
  std::string description;
  template <class V>
  void Fields(V& v) {
    v("label", label);
    v("description", description, {.omit_when_empty = true});
  }
};
struct QuestionItem {
  std::string prompt;
  std::string header;
  std::vector<QuestionOption> options;
  bool multi_select = false;
  template <class V>
  void Fields(V& v) {
    v("prompt", prompt);
    v("header", header, {.omit_when_empty = true});
    v("options", options, {.doc = "answered by number (from 1) or label"});
    v("multi_select", multi_select);
  }
};
struct OpenQuestion {
  int64_t seq = 0;  // The question event's seq.
  std::vector<QuestionItem> items;
  std::string at;  // When it was asked: its event's ISO 8601 UTC time.
  template <class V>
  void Fields(V& v) {
    v("seq", seq);
    v("at", at,
      {.omit_when_empty = true, .doc = "when it was asked (ISO 8601 UTC)"});
    v("items", items, {.doc = "one answer per item"});
  }
};

// A task record with what batond adds for clients: its output's size, when
// known, and an agent's open questions. On the wire it is the task object
// of doc/protocol.md (TaskWire in ipc/codec.h).
struct TaskView {
  TaskRecord task;
  std::optional<uint64_t> output_bytes;
  std::vector<OpenQuestion> questions;
  // What holds it to its limits (only in a `get`; doc/limits.md).
  std::string limits_held_by;
  // The secrets masked in its output so far, per kind (only in a `get`;
  // doc/redaction.md).
  std::vector<RedactionCount> redactions;
};
Status DecodeValue(const Json& in, TaskView& out, const FieldRules& rules,
                   std::string_view path);
void EncodeValue(std::string& out, const TaskView& value);

// The short form of a task that a wait still waits on (id, kind, status,
// detail, label, command, exit_code, signal), or only its id.
struct TaskBrief {
  TaskRecord task;
  bool id_only = false;
};
Status DecodeValue(const Json& in, TaskBrief& out, const FieldRules& rules,
                   std::string_view path);
void EncodeValue(std::string& out, const TaskBrief& value);

// Two live workers' changes in worktrees of one repository, as the
// conflict radar last saw them (doc/conflicts.md).
enum class OverlapKind { kSameFile, kConflict };
struct OverlapInfo {
  std::vector<std::string> tasks;  // Two ids, the older task first.
  std::string repo;
  OverlapKind kind = OverlapKind::kSameFile;
  std::vector<std::string> files;           // Both changed, from the top.
  std::vector<std::string> conflict_files;  // Of those, git's conflicts.
  int64_t since_ms = 0;                     // First seen (of this kind).
  int64_t checked_ms = 0;                   // Last round that saw it.
  template <class V>
  void Fields(V& v) {
    v("tasks", tasks,
      {.required = true, .doc = "the two tasks, the older first"});
    v("repo", repo, {.doc = "the repository their worktrees belong to"});
    v("kind", kind,
      {.doc = "`conflict`: a trial merge of their changes conflicts; "
              "`same_file`: they changed the same files, and git merges "
              "them cleanly"});
    v("files", files,
      {.doc = "the files both changed (committed or not), from the "
              "repository's top"});
    v("conflict_files", conflict_files,
      {.omit_when_empty = true,
       .doc = "with `conflict`: the files the trial merge conflicts in"});
    v("since_ms", since_ms, {.doc = "when it was first seen, of this kind"});
    v("checked_ms", checked_ms, {.doc = "when the radar last checked it"});
  }
};

// A notice: a task of the session that ended (or asks) unseen, or whose
// changes overlap another worker's (`overlap`).
struct Notice {
  TaskView task;
  std::string text;
  std::optional<OverlapInfo> overlap;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true});
    v("text", text, {.doc = "one line for people"});
    v("overlap", overlap,
      {.omit_when_empty = true,
       .doc = "the conflict radar's notice: `task` is the session's task, "
              "this the overlap (as `conflicts` lists it)"});
  }
};

// ---- enums on the wire ---------------------------------------------------

template <>
struct JsonEnum<ReadMode> {
  static constexpr std::pair<ReadMode, std::string_view> kNames[] = {
      {ReadMode::kAll, "all"},
      {ReadMode::kNew, "new"},
      {ReadMode::kOffset, "offset"}};
};
template <>
struct JsonEnum<OverlapKind> {
  static constexpr std::pair<OverlapKind, std::string_view> kNames[] = {
      {OverlapKind::kSameFile, "same_file"},
      {OverlapKind::kConflict, "conflict"}};
};
template <>
struct JsonEnum<SendMode> {
  static constexpr std::pair<SendMode, std::string_view> kNames[] = {
      {SendMode::kFollowup, "followup"}, {SendMode::kSteer, "steer"}};
};
template <>
struct JsonEnum<KillOutcome> {
  static constexpr std::pair<KillOutcome, std::string_view> kNames[] = {
      {KillOutcome::kRequested, "requested"},
      {KillOutcome::kAlreadyTerminal, "already-terminal"}};
};
// How a wait reply lists the tasks still running.
enum class StillRunningForm { kBrief, kIds, kNone };
template <>
struct JsonEnum<StillRunningForm> {
  static constexpr std::pair<StillRunningForm, std::string_view> kNames[] = {
      {StillRunningForm::kBrief, "brief"},
      {StillRunningForm::kIds, "ids"},
      {StillRunningForm::kNone, "none"}};
};

}  // namespace baton

#endif  // BATON_IPC_WIRE_TYPES_H_
