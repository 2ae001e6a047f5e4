#include "baton/cli/mcp_config.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

// toml++ as batond's config reader uses it (daemon/agent_profiles.cc):
// header-only, errors as values.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "baton/util/detached_process.h"
#include "baton/util/file_util.h"
#include "baton/util/state_paths.h"
#include "baton/util/toml_precheck.h"

namespace baton {
namespace {

using OrderedJson = nlohmann::ordered_json;

// The file's text, "" when it does not exist.
Result<std::string> ReadIfExists(const std::string& path, bool* existed) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      *existed = false;
      return std::string();
    }
    return std::unexpected(ErrnoError("stat " + path, errno));
  }
  *existed = true;
  return ReadFile(path);
}

OrderedJson EntryJson(const McpEntry& entry) {
  OrderedJson json = OrderedJson::object();
  if (entry.with_type)
    json["type"] = "stdio";
  json["command"] = entry.command;
  json["args"] = entry.args;
  if (!entry.env.empty())
    json["env"] = entry.env;
  return json;
}

// The variables of an entry's "env" that baton writes: the rest of "env"
// is the user's (or the client's: Claude Code writes "env": {}).
constexpr std::string_view kOwnEnv[] = {"BATON_HOME"};

// An entry's value of `name` in its "env", or null.
OrderedJson EnvValue(const OrderedJson& entry, std::string_view name) {
  auto env = entry.find("env");
  if (env == entry.end() || !env->is_object())
    return nullptr;
  auto value = env->find(std::string(name));
  return value == env->end() ? OrderedJson(nullptr) : *value;
}

// Whether `have` has every key of `wanted` with the same value, and the
// same BATON_HOME (none is none: another state folder, another server).
bool SameJsonEntry(const OrderedJson& have, const OrderedJson& wanted) {
  for (auto& [key, value] : wanted.items()) {
    if (key == "env")
      continue;
    auto found = have.find(key);
    if (found == have.end() || *found != value)
      return false;
  }
  for (std::string_view name : kOwnEnv) {
    if (EnvValue(have, name) != EnvValue(wanted, name))
      return false;
  }
  return true;
}

// `wanted` written over `slot`, keeping the keys and variables baton does
// not write.
void WriteJsonEntry(OrderedJson& slot, const OrderedJson& wanted) {
  for (auto& [key, value] : wanted.items()) {
    if (key != "env")
      slot[key] = value;
  }
  for (std::string_view name : kOwnEnv) {
    OrderedJson value = EnvValue(wanted, name);
    if (!value.is_null()) {
      if (!slot["env"].is_object())
        slot["env"] = OrderedJson::object();
      slot["env"][std::string(name)] = value;
    } else if (auto env = slot.find("env");
               env != slot.end() && env->is_object()) {
      env->erase(std::string(name));
    }
  }
}

std::string Dump(const OrderedJson& json) {
  // replace: a string that is not UTF-8 cannot make dump throw.
  return json.dump(2, ' ', false, OrderedJson::error_handler_t::replace);
}

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string TomlString(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string CodexTable(const McpEntry& entry) {
  std::string args;
  for (const std::string& arg : entry.args)
    args += (args.empty() ? "" : ", ") + TomlString(arg);
  std::string table =
      fmt::format("[mcp_servers.{}]\ncommand = {}\nargs = [{}]\n", kServerName,
                  TomlString(entry.command), args);
  if (!entry.env.empty()) {
    std::string env;
    for (const auto& [name, value] : entry.env)
      env += (env.empty() ? "" : ", ") + TomlString(name) + " = " +
             TomlString(value);
    table += "env = { " + env + " }\n";
  }
  return table;
}

// The table header's dotted name ("mcp_servers.baton.env") of a line that
// is one ("[mcp_servers.baton.env]  # x"), spaces around dots removed;
// nullopt for any other line. Array-of-tables headers count as headers.
std::optional<std::string> HeaderName(std::string_view line) {
  size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos || line[start] != '[')
    return std::nullopt;
  size_t end = line.find(']', start);
  if (end == std::string_view::npos)
    return std::nullopt;
  std::string name;
  for (char c : line.substr(start + 1, end - start - 1)) {
    if (c != ' ' && c != '\t' && c != '[')
      name += c;
  }
  return name;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos)
      nl = text.size();
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return lines;
}

// Whether `node` (mcp_servers.baton) is exactly `entry`.
bool SameCodexEntry(const toml::node_view<const toml::node>& node,
                    const McpEntry& entry) {
  const toml::table* table = node.as_table();
  if (!table || table->size() != (entry.env.empty() ? 2u : 3u))
    return false;
  if (!entry.env.empty()) {
    const toml::table* env = (*table)["env"].as_table();
    if (!env || env->size() != entry.env.size())
      return false;
    for (const auto& [name, value] : entry.env) {
      auto have = (*env)[name].value<std::string>();
      if (!have || *have != value)
        return false;
    }
  }
  auto command = (*table)["command"].value<std::string>();
  const toml::array* args = (*table)["args"].as_array();
  if (!command || *command != entry.command || !args ||
      args->size() != entry.args.size()) {
    return false;
  }
  for (size_t i = 0; i < args->size(); ++i) {
    auto arg = (*args)[i].value<std::string>();
    if (!arg || *arg != entry.args[i])
      return false;
  }
  return true;
}

Result<toml::table> ParseToml(const std::string& text,
                              const std::string& path) {
  if (auto hazard = PrecheckTomlText(text)) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{}:{}:{}: not valid TOML here ({}); fix it, or move it "
                    "away; nothing was changed",
                    path, hazard->line, hazard->column, hazard->description));
  }
  toml::parse_result parsed = toml::parse(text, path);
  if (!parsed) {
    const toml::parse_error& error = parsed.error();
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{}:{}:{}: not valid TOML ({}); fix it, or move it "
                    "away; nothing was changed",
                    path, error.source().begin.line,
                    error.source().begin.column, error.description()));
  }
  return std::move(parsed).table();
}

}  // namespace

Result<McpEntry> OurMcpEntry() {
  McpEntry entry{.command = SelfExecutable(), .args = {"mcp"}};
  if (const char* home = std::getenv("BATON_HOME"); home && *home) {
    auto paths = StatePaths::FromEnvironment("");
    if (!paths)
      return std::unexpected(paths.error());
    entry.env["BATON_HOME"] = paths->home;
  }
  return entry;
}

Result<ConfigEdit> EditJsonConfig(const std::string& path,
                                  std::string_view container,
                                  const std::optional<McpEntry>& entry) {
  ConfigEdit edit{.path = path};
  auto text = ReadIfExists(path, &edit.existed);
  if (!text)
    return std::unexpected(text.error());
  OrderedJson root = OrderedJson::object();
  bool blank = text->find_first_not_of(" \t\r\n") == std::string::npos;
  if (!blank) {
    root = OrderedJson::parse(*text, nullptr, /*allow_exceptions=*/false,
                              /*ignore_comments=*/true);
  }
  if (root.is_discarded() || !root.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} is not a JSON object; fix it, or move "
                                 "it away; nothing was changed",
                                 path));
  }
  std::string name = fmt::format("{}.{}", container, kServerName);
  auto servers = root.find(std::string(container));
  if (servers != root.end() && !servers->is_object()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: \"{}\" is not an object; fix it by "
                                 "hand; nothing was changed",
                                 path, container));
  }
  bool present = servers != root.end() && servers->contains(kServerName);
  if (!entry) {
    if (!present) {
      edit.summary = fmt::format("no {} in {}: nothing to remove", name, path);
      return edit;
    }
    servers->erase(std::string(kServerName));
    edit.summary = fmt::format("removed {} from {}", name, path);
  } else {
    OrderedJson wanted = EntryJson(*entry);
    OrderedJson& slot = root[std::string(container)][std::string(kServerName)];
    // The same server when it starts the same command: keys the user (or
    // the client: Claude Code adds "env") added beside them are kept.
    if (present && slot.is_object() && SameJsonEntry(slot, wanted)) {
      edit.summary =
          fmt::format("{} in {} already starts {} mcp: nothing to change", name,
                      path, entry->command);
      return edit;
    }
    edit.summary =
        fmt::format("{} {} in {}: {}", present ? "replaced" : "added", name,
                    path, wanted.dump());
    if (!slot.is_object())
      slot = OrderedJson::object();
    WriteJsonEntry(slot, wanted);
  }
  edit.changed = true;
  edit.text = Dump(root) + "\n";
  return edit;
}

Result<ConfigEdit> EditCodexConfig(const std::string& path,
                                   const std::optional<McpEntry>& entry) {
  ConfigEdit edit{.path = path};
  auto text = ReadIfExists(path, &edit.existed);
  if (!text)
    return std::unexpected(text.error());
  auto table = ParseToml(*text, path);
  if (!table)
    return std::unexpected(table.error());
  const toml::table& root = *table;
  auto existing = root["mcp_servers"][kServerName];
  std::string name = fmt::format("[mcp_servers.{}]", kServerName);
  if (entry && existing && SameCodexEntry(existing, *entry)) {
    edit.summary = fmt::format(
        "{} in {} already starts {} mcp: nothing to "
        "change",
        name, path, entry->command);
    return edit;
  }
  if (!entry && !existing) {
    edit.summary = fmt::format("no {} in {}: nothing to remove", name, path);
    return edit;
  }
  // The lines of baton's table and its subtables: from its header to the
  // next header of another table.
  std::string own = fmt::format("mcp_servers.{}", kServerName);
  std::vector<std::string> lines = SplitLines(*text);
  std::string kept;
  bool inside = false, found = false;
  for (const std::string& line : lines) {
    if (auto header = HeaderName(line)) {
      inside = *header == own || header->starts_with(own + ".");
      found = found || inside;
    }
    if (!inside)
      kept += line + "\n";
  }
  if (existing && !found) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: baton's entry is not written as its own {} table "
                    "(an inline table?); remove it by hand, then run this "
                    "again; nothing was changed",
                    path, name));
  }
  if (entry) {
    if (!kept.empty() && !kept.ends_with("\n\n"))
      kept += "\n";
    kept += CodexTable(*entry);
    edit.summary = fmt::format("{} {} in {}: command = {}, args = [\"mcp\"]",
                               existing ? "replaced" : "added", name, path,
                               TomlString(entry->command));
  } else {
    // The blank line that set baton's table apart goes with it.
    while (kept.ends_with("\n\n"))
      kept.pop_back();
    edit.summary = fmt::format("removed {} from {}", name, path);
  }
  // What is written must read back as asked.
  auto check = ParseToml(kept, path);
  if (!check) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("the edit of {} would not be valid TOML "
                                 "({}); nothing was changed",
                                 path, check.error().message));
  }
  const toml::table& checked = *check;
  auto written = checked["mcp_servers"][kServerName];
  if (entry ? !SameCodexEntry(written, *entry) : bool(written)) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("the edit of {} would not read back as "
                                 "asked; edit it by hand; nothing was "
                                 "changed",
                                 path));
  }
  edit.changed = true;
  edit.text = std::move(kept);
  return edit;
}

Result<std::string> ApplyConfigEdit(const ConfigEdit& edit) {
  // Through a symlink (a dotfiles folder) to the file it names.
  std::string target = edit.path;
  char resolved[PATH_MAX];
  if (edit.existed && ::realpath(edit.path.c_str(), resolved))
    target = resolved;
  std::error_code ec;
  std::filesystem::create_directories(
      std::filesystem::path(target).parent_path(), ec);
  if (ec) {
    return MakeError(ErrorCode::kIo, fmt::format("create the folder of {}: {}",
                                                 target, ec.message()));
  }
  mode_t mode = 0644;
  std::string backup;
  if (edit.existed) {
    struct stat st;
    if (::stat(target.c_str(), &st) == 0)
      mode = st.st_mode & 07777;
    auto old = ReadFile(target);
    if (!old)
      return std::unexpected(old.error());
    backup = target + ".baton.bak";
    if (auto saved = WriteFileAtomic(backup, *old); !saved)
      return std::unexpected(saved.error());
    ::chmod(backup.c_str(), mode);
  }
  if (auto written = WriteFileAtomic(target, edit.text); !written)
    return std::unexpected(written.error());
  if (::chmod(target.c_str(), mode) != 0)
    return std::unexpected(ErrnoError("chmod " + target, errno));
  return backup;
}

}  // namespace baton
