#include "baton/mcp/tool_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "baton/ipc/protocol_doc.h"
#include "baton/mcp/mcp_server.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

// A schema's type as a reader says it: "string", "integer or null",
// "array of string", "object".
std::string TypeText(const Json& schema) {
  if (!schema.is_object())
    return "any";
  std::string type = StringAt(schema, "type");
  for (const Json& one : ArrayAt(schema, "type")) {
    if (const auto* name = one.get_ptr<const std::string*>())
      type += (type.empty() ? "" : " or ") + *name;
  }
  if (type == "array") {
    if (auto items = schema.find("items"); items != schema.end())
      type += " of " + TypeText(*items);
  }
  return type.empty() ? "any" : type;
}

// What a property's schema says beyond its type: its description, enum,
// bounds, default, and an object's own fields by name.
std::string PropertyText(const Json& schema) {
  std::vector<std::string> parts;
  if (std::string said = StringAt(schema, "description"); !said.empty())
    parts.push_back(said);
  if (auto it = schema.find("enum"); it != schema.end())
    parts.push_back("one of " + it->dump());
  if (auto it = schema.find("minimum"); it != schema.end())
    parts.push_back(">= " + it->dump());
  if (auto it = schema.find("maximum"); it != schema.end())
    parts.push_back("<= " + it->dump());
  if (auto it = schema.find("default"); it != schema.end())
    parts.push_back("default " + it->dump());
  const Json& own = ObjectAt(schema, "properties");
  const Json& fields =
      own.empty() ? ObjectAt(ObjectAt(schema, "items"), "properties") : own;
  if (!fields.empty()) {
    std::string names;
    for (const auto& [name, _] : fields.items())
      names += (names.empty() ? "" : ", ") + ("`" + name + "`");
    parts.push_back("fields: " + names);
  }
  return MarkdownCell(fmt::format("{}", fmt::join(parts, "; ")));
}

std::string PropertiesTable(const Json& schema) {
  const Json& properties = ObjectAt(schema, "properties");
  if (properties.empty())
    return "none\n";
  const Json& required = ArrayAt(schema, "required");
  std::string out = "| name | type | |\n|---|---|---|\n";
  for (const auto& [name, property] : properties.items()) {
    bool needed =
        std::find(required.begin(), required.end(), name) != required.end();
    out +=
        fmt::format("| `{}`{} | {} | {} |\n", name, needed ? " (required)" : "",
                    TypeText(property), PropertyText(property));
  }
  return out;
}

std::string AnnotationsText(const Json& annotations) {
  auto flag = [&](const char* name, bool fallback) {
    return BoolAt(annotations, name, fallback);
  };
  std::vector<std::string> words;
  bool read_only = flag("readOnlyHint", false);
  words.push_back(read_only ? "read-only" : "not read-only");
  if (!read_only)
    words.push_back(flag("destructiveHint", true) ? "destructive"
                                                  : "not destructive");
  words.push_back(flag("idempotentHint", false) ? "idempotent"
                                                : "not idempotent");
  words.push_back(flag("openWorldHint", true) ? "open world" : "closed world");
  return fmt::format("{}", fmt::join(words, ", "));
}

// `text` as a Markdown quote, its words wrapped to lines of about `width`.
std::string QuoteLines(std::string_view text, size_t width) {
  std::string out;
  std::string line = ">";
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view word = text.substr(start, end - start);
    if (line.size() > 1 && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = ">";
    }
    if (!word.empty())
      line += " " + std::string(word);
    start = end + 1;
  }
  return out + line + "\n";
}

}  // namespace

std::string ToolReference() {
  std::string out;
  for (const ToolDefinition& tool : AllTools()) {
    out += fmt::format("### `{}`: {}\n\n{}\n\n", tool.name, tool.title,
                       tool.description);
    out += fmt::format("Annotations: {}.\n\nArguments:\n\n",
                       AnnotationsText(tool.annotations));
    out += PropertiesTable(tool.input_schema);
    out += "\n`structuredContent` (besides `notices`):\n\n";
    out += PropertiesTable(tool.output_schema);
    out += "\n";
  }
  out += "### Instructions (the initialize result's `instructions`)\n\n";
  out += QuoteLines(kInstructions, 76);
  return out;
}

}  // namespace baton::mcp
