#include "baton/cli/mcp_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baton/util/file_util.h"
#include "tests/support/temp_dir.h"

namespace baton {
namespace {

const McpEntry kEntry{.command = "/usr/bin/baton", .args = {"mcp"}};

void Write(const std::string& path, const std::string& text) {
  ASSERT_TRUE(WriteFileAtomic(path, text).has_value());
}

TEST(McpJsonConfig, AddsBesideOtherEntriesAndKeysInTheirOrder) {
  testing::TempDir dir;
  std::string path = dir.path() + "/mcp.json";
  Write(path,
        "// a comment\n{\"zeta\": 1, \"mcpServers\": {\"other\": "
        "{\"command\": \"x\"}}, \"alpha\": true}");
  auto edit = EditJsonConfig(path, "mcpServers", kEntry);
  ASSERT_TRUE(edit.has_value()) << edit.error().message;
  EXPECT_TRUE(edit->changed);
  EXPECT_TRUE(edit->summary.starts_with("added mcpServers.baton"))
      << edit->summary;
  EXPECT_EQ(edit->text,
            "{\n  \"zeta\": 1,\n  \"mcpServers\": {\n    \"other\": {\n"
            "      \"command\": \"x\"\n    },\n    \"baton\": {\n"
            "      \"command\": \"/usr/bin/baton\",\n      \"args\": [\n"
            "        \"mcp\"\n      ]\n    }\n  },\n  \"alpha\": true\n}\n");
  // Computing writes nothing.
  EXPECT_EQ(ReadFile(path).value(),
            "// a comment\n{\"zeta\": 1, \"mcpServers\": {\"other\": "
            "{\"command\": \"x\"}}, \"alpha\": true}");
}

TEST(McpJsonConfig, SameCommandIsNoChangeAndKeepsTheClientsOwnKeys) {
  testing::TempDir dir;
  std::string path = dir.path() + "/c.json";
  McpEntry typed = kEntry;
  typed.with_type = true;
  Write(
      path,
      R"({"mcpServers": {"baton": {"type": "stdio", "command": "/usr/bin/baton", "args": ["mcp"], "env": {}}}})");
  auto same = EditJsonConfig(path, "mcpServers", typed);
  ASSERT_TRUE(same.has_value());
  EXPECT_FALSE(same->changed);

  McpEntry moved = typed;
  moved.command = "/opt/baton";
  auto replaced = EditJsonConfig(path, "mcpServers", moved);
  ASSERT_TRUE(replaced.has_value());
  EXPECT_TRUE(replaced->summary.starts_with("replaced")) << replaced->summary;
  EXPECT_NE(replaced->text.find("\"env\": {}"), std::string::npos);
  EXPECT_NE(replaced->text.find("/opt/baton"), std::string::npos);
}

// BATON_HOME goes with the entry: another state folder is another server;
// the user's own variables beside it are kept.
TEST(McpJsonConfig, BatonHomeIsPartOfTheEntryAndTheUsersEnvIsKept) {
  testing::TempDir dir;
  std::string path = dir.path() + "/c.json";
  Write(
      path,
      R"({"mcpServers": {"baton": {"command": "/usr/bin/baton", "args": ["mcp"], "env": {"MINE": "1"}}}})");
  McpEntry homed = kEntry;
  homed.env["BATON_HOME"] = "/srv/baton";
  auto added = EditJsonConfig(path, "mcpServers", homed);
  ASSERT_TRUE(added.has_value()) << added.error().message;
  EXPECT_TRUE(added->summary.starts_with("replaced")) << added->summary;
  EXPECT_NE(added->text.find(R"("MINE": "1")"), std::string::npos)
      << added->text;
  EXPECT_NE(added->text.find(R"("BATON_HOME": "/srv/baton")"),
            std::string::npos)
      << added->text;
  Write(path, added->text);
  EXPECT_FALSE(EditJsonConfig(path, "mcpServers", homed)->changed);
  auto unhomed = EditJsonConfig(path, "mcpServers", kEntry);
  ASSERT_TRUE(unhomed.has_value());
  EXPECT_TRUE(unhomed->changed);
  EXPECT_EQ(unhomed->text.find("BATON_HOME"), std::string::npos)
      << unhomed->text;
  EXPECT_NE(unhomed->text.find(R"("MINE": "1")"), std::string::npos);
}

TEST(McpCodexConfig, BatonHomeIsAnEnvTableOfTheEntry) {
  testing::TempDir dir;
  std::string path = dir.path() + "/config.toml";
  Write(path, "");
  McpEntry homed = kEntry;
  homed.env["BATON_HOME"] = "/srv/baton";
  auto edit = EditCodexConfig(path, homed);
  ASSERT_TRUE(edit.has_value()) << edit.error().message;
  EXPECT_EQ(edit->text,
            "[mcp_servers.baton]\ncommand = \"/usr/bin/baton\"\nargs = "
            "[\"mcp\"]\nenv = { \"BATON_HOME\" = \"/srv/baton\" }\n");
  Write(path, edit->text);
  EXPECT_FALSE(EditCodexConfig(path, homed)->changed);
  EXPECT_TRUE(EditCodexConfig(path, kEntry)->changed);
}

TEST(McpJsonConfig, RemovesOnlyBaton) {
  testing::TempDir dir;
  std::string path = dir.path() + "/c.json";
  Write(path, R"({"servers": {"a": {}, "baton": {"command": "b"}}})");
  auto edit = EditJsonConfig(path, "servers", std::nullopt);
  ASSERT_TRUE(edit.has_value());
  EXPECT_EQ(edit->text, "{\n  \"servers\": {\n    \"a\": {}\n  }\n}\n");
  Write(path, R"({"servers": {"a": {}}})");
  auto none = EditJsonConfig(path, "servers", std::nullopt);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->changed);
}

TEST(McpJsonConfig, RefusesWhatIsNotAnObject) {
  testing::TempDir dir;
  std::string path = dir.path() + "/c.json";
  for (const char* text :
       {"[1]", "{\"mcpServers\": [", "{\"mcpServers\": 3}"}) {
    Write(path, text);
    auto edit = EditJsonConfig(path, "mcpServers", kEntry);
    ASSERT_FALSE(edit.has_value()) << text;
    EXPECT_NE(edit.error().message.find("nothing was changed"),
              std::string::npos);
  }
  // A file that is not there is an empty object.
  auto fresh = EditJsonConfig(dir.path() + "/new.json", "mcpServers", kEntry);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_FALSE(fresh->existed);
  EXPECT_TRUE(fresh->changed);
}

TEST(McpCodexConfig, AppendsKeepingCommentsThenRemovesBackToTheText) {
  testing::TempDir dir;
  std::string path = dir.path() + "/config.toml";
  std::string original =
      "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
  Write(path, original);
  auto edit = EditCodexConfig(path, kEntry);
  ASSERT_TRUE(edit.has_value()) << edit.error().message;
  EXPECT_EQ(edit->text, original +
                            "\n[mcp_servers.baton]\ncommand = "
                            "\"/usr/bin/baton\"\nargs = [\"mcp\"]\n");
  Write(path, edit->text);
  auto again = EditCodexConfig(path, kEntry);
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->changed);
  auto removed = EditCodexConfig(path, std::nullopt);
  ASSERT_TRUE(removed.has_value());
  EXPECT_EQ(removed->text, original);
}

TEST(McpCodexConfig, ReplacesItsTableAndSubtablesOnly) {
  testing::TempDir dir;
  std::string path = dir.path() + "/config.toml";
  Write(path,
        "[mcp_servers.baton]\ncommand = \"old\"\n[mcp_servers.baton.env]\n"
        "A = \"1\"\n[profiles.x]\nmodel = \"m\"\n");
  McpEntry quoted{.command = "/a \"b\"\\c", .args = {"mcp"}};
  auto edit = EditCodexConfig(path, quoted);
  ASSERT_TRUE(edit.has_value()) << edit.error().message;
  EXPECT_EQ(edit->text,
            "[profiles.x]\nmodel = \"m\"\n\n[mcp_servers.baton]\ncommand = "
            "\"/a \\\"b\\\"\\\\c\"\nargs = [\"mcp\"]\n");
}

TEST(McpCodexConfig, RefusesBadTomlAndAnInlineEntry) {
  testing::TempDir dir;
  std::string path = dir.path() + "/config.toml";
  Write(path, "model = \n");
  auto bad = EditCodexConfig(path, kEntry);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("not valid TOML"), std::string::npos);
  // Refused before toml++ reads it (util/toml_precheck.h).
  Write(path, "mod\xC3\xA9l = 1\n");
  auto hazard = EditCodexConfig(path, kEntry);
  ASSERT_FALSE(hazard.has_value());
  EXPECT_NE(hazard.error().message.find(":1:4: not valid TOML here"),
            std::string::npos)
      << hazard.error().message;
  Write(path, "[mcp_servers]\nbaton = { command = \"x\" }\n");
  auto inline_entry = EditCodexConfig(path, kEntry);
  ASSERT_FALSE(inline_entry.has_value());
  EXPECT_NE(inline_entry.error().message.find("by hand"), std::string::npos);
}

TEST(McpConfigApply, BacksUpKeepsTheModeAndWritesThroughASymlink) {
  testing::TempDir dir;
  std::string real = dir.path() + "/dotfiles.json";
  std::string link = dir.path() + "/mcp.json";
  Write(real, "{\"a\": 1}");
  ASSERT_EQ(::chmod(real.c_str(), 0600), 0);
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  auto edit = EditJsonConfig(link, "mcpServers", kEntry);
  ASSERT_TRUE(edit.has_value());
  auto backup = ApplyConfigEdit(*edit);
  ASSERT_TRUE(backup.has_value()) << backup.error().message;
  EXPECT_EQ(*backup, real + ".baton.bak");
  EXPECT_EQ(ReadFile(*backup).value(), "{\"a\": 1}");
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the symlink is kept";
  ASSERT_EQ(::stat(real.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(ReadFile(real).value(), edit->text);

  // A new file, in folders that are not there yet.
  auto fresh = EditJsonConfig(dir.path() + "/a/b/mcp.json", "servers", kEntry);
  ASSERT_TRUE(fresh.has_value());
  auto none = ApplyConfigEdit(*fresh);
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_EQ(*none, "");
  EXPECT_EQ(ReadFile(dir.path() + "/a/b/mcp.json").value(), fresh->text);
}

}  // namespace
}  // namespace baton
