#include "baton/ipc/protocol_doc.h"

#include <fmt/format.h>

#include "baton/ipc/codec.h"

namespace baton {
namespace {

// "`name` (type, required): doc; ..." for a cell.
std::string FieldList(const std::vector<FieldDoc>& fields) {
  if (fields.empty())
    return "—";
  std::string out;
  for (const FieldDoc& field : fields) {
    if (!out.empty())
      out += "<br>";
    // The type names of enums already quote their values.
    out += fmt::format("`{}` ({}{})", field.name, field.type,
                       field.required ? ", required" : "");
    if (!field.doc.empty())
      out += ": " + MarkdownCell(field.doc);
  }
  return out;
}

template <class R>
void AddRow(std::string& out) {
  out += fmt::format("| `{}` | {} | {} | {} |\n", R::kOp, MarkdownCell(R::kDoc),
                     FieldList(DocumentFields<R>()),
                     FieldList(DocumentFields<typename R::Reply>()));
}

template <size_t I = 0>
void AddRows(std::string& out) {
  if constexpr (I < std::variant_size_v<Request>) {
    AddRow<std::variant_alternative_t<I, Request>>(out);
    AddRows<I + 1>(out);
  }
}

std::string FieldTable(const std::vector<FieldDoc>& fields) {
  std::string out = "| field | type | meaning |\n|---|---|---|\n";
  for (const FieldDoc& field : fields) {
    out += fmt::format("| `{}` | {} | {} |\n", field.name, field.type,
                       MarkdownCell(field.doc));
  }
  return out;
}

}  // namespace

std::string MarkdownCell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string ProtocolReference() {
  std::string out =
      "## Requests\n\n"
      "Each request's fields sit beside `id`, `op` and `session`; its "
      "reply's fields are in `result`. A field this batond does not know "
      "is refused (`invalid_argument`, naming it), as is a field of the "
      "wrong type, size or range.\n\n"
      "| op | what it does | fields | reply |\n|---|---|---|---|\n";
  AddRows(out);
  out +=
      "\n## The task object\n\n"
      "Replies carry tasks in this form (`task`, `tasks`, `ended`, the "
      "notices' `task`). A wait's `still_running` has the first eight "
      "fields only (or just the ids).\n\n";
  out += FieldTable(DocumentFields<TaskWire>());
  out += "\nAn open question (`questions`):\n\n";
  out += FieldTable(DocumentFields<OpenQuestion>());
  out += "\nEach of its `items`:\n\n";
  out += FieldTable(DocumentFields<QuestionItem>());
  out += fmt::format(
      "\n## Limits of a request\n\n"
      "Past a limit, the request is refused with `invalid_argument` and a "
      "message naming the field; nothing is changed.\n\n"
      "| what | at most |\n|---|---|\n"
      "| one argument, a shell line, a check, an environment entry | {} "
      "bytes (Linux's MAX_ARG_STRLEN) |\n"
      "| a command's arguments together | {} bytes, {} arguments |\n"
      "| a task's environment together (`base_env`, `env`) | {} bytes, {} "
      "entries |\n"
      "| a brief, a message, an answer | {} bytes |\n"
      "| a label | {} bytes |\n"
      "| a kill reason | {} bytes |\n"
      "| a path (`cwd`) | {} bytes |\n"
      "| a task id, a session, an agent or model name | {} bytes |\n"
      "| checks of one task | {} |\n"
      "| task ids in one `wait` or `kill` | {} |\n"
      "| answers in one `answer` | {} |\n"
      "| a deadline, a wait, a grace period | {} ms (366 days) |\n"
      "| objects and lists inside each other | 64 levels |\n",
      kMaxArgBytes, kMaxArgvBytes, kMaxArgs, kMaxEnvBytes, kMaxEnvEntries,
      kMaxTextBytes, kMaxLabelBytes, kMaxReasonBytes, kMaxPathBytes,
      kMaxNameBytes, kMaxChecks, kMaxTaskIds, kMaxAnswers, kMaxTimeoutMs);
  return out;
}

}  // namespace baton
