// The `worktrees` tool: the git worktrees this session's agent workers ran
// in (delegate with worktree: true), as git tells them now, and with clean,
// the removal of those that lose nothing (doc/agents.md, "Worktrees"). The
// protocol's `worktrees` request; batond runs git off its loop.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"
#include "baton/util/environment.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

struct WorktreesArguments {
  std::vector<std::string> task_ids;
  bool clean = false;
  bool force = false;
  template <class V>
  void Fields(V& v) {
    v("task_ids", task_ids,
      {.max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds,
       .doc = "Only these agent tasks' worktrees; default: all of this "
              "session's. With clean, a task named here loses its worktree "
              "even when its branch is not merged (the branch stays)",
       .example = "[\"agent-3\"]"});
    v("clean", clean,
      {.doc = "Remove the worktrees of ended tasks whose branches are merged "
              "into the repository's HEAD (and those branches), and of the "
              "tasks named; never a running task's, never uncommitted work "
              "without force. Default false: only list"});
    v("force", force,
      {.doc = "With clean: also the worktrees of the tasks named that hold "
              "uncommitted changes, committed first on their branches "
              "(nothing is lost; the branches stay)"});
  }
};

void HandleWorktrees(const ToolCallPtr& call) {
  auto args = ParseArguments<WorktreesArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  WorktreesRequest request{.tasks = args->task_ids,
                           .clean = args->clean,
                           .force = args->force,
                           .base_env = ProcessEnvironment()};
  call->Daemon(request, [call](Result<WorktreesReply> reply) {
    if (!reply) {
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error()) +
                                            " (nothing was removed)"));
    }
    std::string text;
    for (const WorktreeInfo& info : reply->worktrees) {
      text += fmt::format("{} [{}] {} {}: {}", info.task, info.status,
                          info.branch, info.path, info.state);
      if (!info.outcome.empty())
        text += fmt::format("; {}", info.outcome);
      if (!info.note.empty())
        text += fmt::format(": {}", info.note);
      text += "\n";
    }
    if (reply->worktrees.empty())
      text = "no worktrees (delegate with worktree: true makes one)\n";
    // The fields as WorktreesReply lists them, read back as a value.
    Json structured = {{"worktrees", Json::array()}};
    if (auto parsed = ParseJson(EncodeObject(*reply)))
      structured = std::move(parsed->value);
    call->Finish({std::move(text), std::move(structured), false});
  });
}

}  // namespace

ToolDefinition WorktreesToolDefinition() {
  ToolDefinition tool;
  tool.name = "worktrees";
  tool.title = "List or clean agents' worktrees";
  tool.description =
      "The git worktrees this session's agent tasks worked in (delegate "
      "with worktree: true), each with its branch and its state as git "
      "tells it now: merged, commits not merged, uncommitted changes, or "
      "its task still running. With clean: true, removes those that lose "
      "nothing (merged, ended, committed) and those of the tasks named in "
      "task_ids (keeping their branches). Never removed: a running task's "
      "worktree (locked while it runs), one whose HEAD holds commits on no "
      "branch, one locked by someone else, and uncommitted work (force "
      "commits it on the branch first).";
  tool.input_schema = ArgumentSchema<WorktreesArguments>();
  // Each entry as the protocol describes it: one list of fields for both.
  Json entry = ArgumentSchema<WorktreeInfo>();
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"worktrees", {{"type", "array"}, {"items", std::move(entry)}}}}},
      {"required", {"worktrees"}}};
  // clean removes folders (never work: it is kept on branches).
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleWorktrees;
  return tool;
}

}  // namespace baton::mcp
