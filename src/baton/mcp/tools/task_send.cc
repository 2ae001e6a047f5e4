// The `task_send` tool: a message to a running agent task, either steering
// the running turn or as a follow-up after it; says how it was delivered.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

void HandleTaskSend(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  if (auto known = CheckKnownArguments(args, {"task_id", "message", "mode"});
      !known) {
    return call->Finish(ToolResult::Error(known.error().message));
  }
  auto id = RequiredString(args, "task_id", "\"agent-1\"");
  if (!id)
    return call->Finish(ToolResult::Error(id.error().message));
  auto message = RequiredString(args, "message", "\"Also update the docs\"");
  if (!message)
    return call->Finish(ToolResult::Error(message.error().message));
  auto mode = OptionalString(args, "mode");
  if (!mode)
    return call->Finish(ToolResult::Error(mode.error().message));
  if (mode->empty())
    *mode = "followup";
  if (*mode != "followup" && *mode != "steer") {
    return call->Finish(ToolResult::Error(fmt::format(
        "argument 'mode' must be \"followup\" (after the current turn) or "
        "\"steer\" (into the running turn) (got \"{}\")",
        *mode)));
  }
  SendRequest request{
      .task = *id,
      .message = *message,
      .mode = *mode == "steer" ? SendMode::kSteer : SendMode::kFollowup};
  call->Daemon(
      request, [call, id = *id, mode = *mode](Result<SendReply> reply) {
        if (!reply) {
          return call->Finish(ToolResult::Error(
              DaemonErrorText(reply.error()) +
              " (nothing was sent; an ended agent task can be continued "
              "with delegate and resume_from)"));
        }
        std::string text = fmt::format(
            "{} ({}): {}\nYou will be told when it ends or asks; "
            "task_output with wait: true returns then.\n",
            id, mode, reply->delivery);
        call->Finish(
            {std::move(text),
             {{"task_id", id}, {"mode", mode}, {"delivery", reply->delivery}},
             false});
      });
}

}  // namespace

ToolDefinition TaskSendToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_send";
  tool.title = "Send a message to an agent task";
  tool.description =
      "Direct a running agent task (from delegate): mode \"steer\" puts the "
      "message into its running turn (where its CLI supports that; else it "
      "is queued, and the answer says so), \"followup\" (default) sends it "
      "as the next turn once the current one ends. Answers how it was "
      "delivered. To answer a question use task_answer; to continue an "
      "ended task, delegate with resume_from.";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {
           {"task_id",
            {{"type", "string"},
             {"description", "The agent task id, e.g. agent-1"}}},
           {"message",
            {{"type", "string"}, {"description", "What to tell the agent"}}},
           {"mode",
            {{"type", "string"},
             {"enum", {"followup", "steer"}},
             {"default", "followup"},
             {"description",
              "steer: into the running turn; followup: after it"}}},
       }},
      {"required", {"task_id", "message"}},
      {"additionalProperties", false},
  };
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {
           {"task_id", {{"type", "string"}}},
           {"mode", {{"type", "string"}, {"enum", {"followup", "steer"}}}},
           {"delivery",
            {{"type", "string"},
             {"description",
              "how it was delivered, e.g. \"steered\" or \"queued until "
              "the current turn ends\""}}},
       }},
      {"required", {"task_id", "mode", "delivery"}},
  };
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", false},
                      {"idempotentHint", false},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskSend;
  return tool;
}

}  // namespace baton::mcp
