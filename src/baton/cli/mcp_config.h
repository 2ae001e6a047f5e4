// The edit of an MCP client's config file that `baton mcp install` and
// `uninstall` make (doc/install.md, "Wiring baton into an agent"): the
// entry named baton set or removed, in a JSON file (Claude Code, Gemini
// CLI, Cursor, VS Code) or in Codex's TOML, every other entry and the rest
// of the file kept, and a backup of what was there. Computing an edit
// writes nothing (what --dry-run shows); ApplyConfigEdit writes it.
#ifndef BATON_CLI_MCP_CONFIG_H_
#define BATON_CLI_MCP_CONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/util/result.h"

namespace baton {

// The server entry: how the client starts `baton mcp`.
struct McpEntry {
  std::string command;            // The baton binary, an absolute path.
  std::vector<std::string> args;  // {"mcp"}.
  // The server's environment beyond the client's: BATON_HOME when the
  // installing shell has it, so the server uses the CLI's state folder.
  std::map<std::string, std::string> env;
  bool with_type = false;  // Also "type": "stdio" (VS Code needs it;
                           // Claude Code writes it).
};

inline constexpr std::string_view kServerName = "baton";

struct ConfigEdit {
  std::string path;
  bool existed = false;  // The file was there before.
  bool changed = false;  // False: it already says what was asked.
  // What happened, for people: "added mcpServers.baton", "removed
  // [mcp_servers.baton]", "mcpServers.baton is already ...".
  std::string summary;
  std::string text;  // The new content (when changed).
};

// The edit of the JSON file at `path` (absent: an empty object): under the
// object `container` ("mcpServers"; VS Code: "servers"), the entry baton
// set to `entry`, or removed without one. Other keys keep their order.
// Fails, naming the file, when it is not a JSON object (comments are
// allowed) or `container` is not an object.
// baton's entry as this process would install it: this binary, "mcp", and
// BATON_HOME when set (so that the server uses this CLI's state folder).
// `baton mcp install` writes it; `baton doctor` compares with it.
Result<McpEntry> OurMcpEntry();

Result<ConfigEdit> EditJsonConfig(const std::string& path,
                                  std::string_view container,
                                  const std::optional<McpEntry>& entry);

// The same for Codex's config.toml: the table [mcp_servers.baton] (and its
// subtables) replaced by, or appended as, `entry`'s, or removed; the rest
// of the text, comments included, is kept as it was. Fails when the file
// is not valid TOML, or baton's entry is written in another form than its
// own [mcp_servers.baton] table (an inline table: edit it by hand).
Result<ConfigEdit> EditCodexConfig(const std::string& path,
                                   const std::optional<McpEntry>& entry);

// Writes a changed edit: the old content to `<file>.baton.bak` first (when
// there was a file; the backup of the last change), then the new content
// atomically, with the old file's mode (new files: 0644), through a
// symlink to its target. Creates missing parent folders. Returns the
// backup's path ("" when there was no file).
Result<std::string> ApplyConfigEdit(const ConfigEdit& edit);

}  // namespace baton

#endif  // BATON_CLI_MCP_CONFIG_H_
