// The `conflicts` tool: the conflict radar's current overlaps between live
// agent workers in worktrees of one repository (doc/conflicts.md): which
// two tasks changed the same files, and whether a trial merge of their
// changes conflicts. The protocol's `conflicts` request; batond answers
// from its last rounds, no git runs for it.
#include <fmt/format.h>

#include "baton/ipc/task_text.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

struct ConflictsArguments {
  std::string task_id;
  template <class V>
  void Fields(V& v) {
    v("task_id", task_id,
      {.max_bytes = kMaxNameBytes,
       .doc = "Only the overlaps of this task; default: all those of this "
              "session's tasks",
       .example = "\"agent-3\""});
  }
};

void HandleConflicts(const ToolCallPtr& call) {
  auto args = ParseArguments<ConflictsArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  call->Daemon(ConflictsRequest{.task = args->task_id},
               [call](Result<ConflictsReply> reply) {
                 if (!reply) {
                   return call->Finish(
                       ToolResult::Error(DaemonErrorText(reply.error())));
                 }
                 std::string text;
                 for (const OverlapInfo& overlap : reply->overlaps)
                   text += OverlapText(overlap) + "\n";
                 if (reply->overlaps.empty()) {
                   text = fmt::format(
                       "no overlaps ({} live worktree tasks watched; the "
                       "radar watches repositories with two or more)\n",
                       reply->watched);
                 }
                 // The fields as ConflictsReply lists them, read back.
                 Json structured = {{"overlaps", Json::array()},
                                    {"watched", reply->watched}};
                 if (auto parsed = ParseJson(EncodeObject(*reply)))
                   structured = std::move(parsed->value);
                 call->Finish({std::move(text), std::move(structured), false});
               });
}

}  // namespace

ToolDefinition ConflictsToolDefinition() {
  ToolDefinition tool;
  tool.name = "conflicts";
  tool.title = "List overlaps between workers' changes";
  tool.description =
      "While two or more of your agent workers run in git worktrees of the "
      "same repository (delegate with worktree: true), baton compares their "
      "changes (committed or not) every few seconds, without touching the "
      "worktrees. This lists the current overlaps: the two tasks, the files "
      "both changed, and whether a trial merge of their changes conflicts "
      "(kind conflict) or git merges them (kind same_file). You are also "
      "told of each new overlap once, in the notices of your next call.";
  tool.input_schema = ArgumentSchema<ConflictsArguments>();
  Json strings = {{"type", "array"}, {"items", {{"type", "string"}}}};
  Json entry = {
      {"type", "object"},
      {"properties",
       {{"tasks", strings},
        {"repo", {{"type", "string"}}},
        {"kind", {{"type", "string"}, {"enum", {"conflict", "same_file"}}}},
        {"files", strings},
        {"conflict_files", strings},
        {"since_ms", {{"type", "integer"}}},
        {"checked_ms", {{"type", "integer"}}}}},
      {"required", {"tasks", "repo", "kind", "files"}}};
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"overlaps", {{"type", "array"}, {"items", std::move(entry)}}},
        {"watched", {{"type", "integer"}}},
        {"rounds", {{"type", "integer"}}}}},
      {"required", {"overlaps", "watched"}}};
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", true},
                      {"destructiveHint", false},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleConflicts;
  return tool;
}

}  // namespace baton::mcp
