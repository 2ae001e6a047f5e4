#include "baton/daemon/preflight.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton {
namespace {

// The PATH the task will see: an override, the client's, or ours; the
// fallback where the environment it gets has none, as the spawn's search.
std::string TaskPath(const TaskSpec& spec) {
  if (auto it = spec.env_overrides.find("PATH");
      it != spec.env_overrides.end()) {
    return it->second;
  }
  for (const auto& entry : spec.base_env) {
    if (entry.starts_with("PATH="))
      return entry.substr(5);
  }
  if (!spec.base_env.empty())
    return kFallbackPath;
  const char* path = std::getenv("PATH");
  return path ? path : kFallbackPath;
}

// The program a shell line starts with, when the line plainly starts with
// one: a word of ordinary characters, not an assignment, a reserved word or
// a builtin. Anything else (a variable, a quote, a glob, a function the line
// defines) is the shell's to judge: nullopt.
std::optional<std::string> FirstProgramOf(std::string_view line) {
  static const std::set<std::string_view> kShellWords = {
      "!",        "{",       "}",     "[[",       "case",     "do",
      "done",     "elif",    "else",  "esac",     "fi",       "for",
      "function", "if",      "in",    "select",   "then",     "time",
      "until",    "while",   ".",     ":",        "[",        "alias",
      "bg",       "break",   "cd",    "command",  "continue", "echo",
      "eval",     "exec",    "exit",  "export",   "false",    "fc",
      "fg",       "getopts", "hash",  "jobs",     "kill",     "local",
      "printf",   "pwd",     "read",  "readonly", "return",   "set",
      "shift",    "source",  "test",  "times",    "trap",     "true",
      "type",     "ulimit",  "umask", "unalias",  "unset",    "wait"};
  size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos)
    return std::nullopt;
  size_t end = line.find_first_of(" \t\n;&|", start);
  std::string_view word = line.substr(start, end - start);
  if (word.empty() || kShellWords.contains(word))
    return std::nullopt;
  for (char c : word) {
    bool plain = std::isalnum(static_cast<unsigned char>(c)) ||
                 std::string_view("_./+-:@%,").find(c) != std::string::npos;
    if (!plain)
      return std::nullopt;
  }
  // A function the line defines, `f() { ...; }` or `f () ...`.
  size_t next = line.find_first_not_of(" \t", start + word.size());
  if (next != std::string_view::npos && line[next] == '(')
    return std::nullopt;
  return std::string(word);
}

// Refuses `program` (argv[0], or a shell line's first program) when it
// cannot be run: the same check and words for either form.
Status CheckProgram(const TaskSpec& spec, const std::string& program,
                    ProgramCache* cache, std::string_view shell_line) {
  if (program.find('/') != std::string::npos) {
    std::string full = program[0] == '/' ? program : spec.cwd + "/" + program;
    if (!IsExecutableFile(full)) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format(
              "{} is not an executable file; check the "
              "path{}",
              full, shell_line.empty() ? "" : " (the shell line was not run)"));
    }
    return {};
  }
  if (ResolveProgram(program, {"PATH=" + TaskPath(spec)}, spec.cwd, cache))
    return {};
  if (spec.agent) {
    // A delegate names an agent, not a command line: say which agent's CLI
    // is missing, on every front end alike.
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("agent {}: its CLI `{}` is not installed (not found on "
                    "PATH); install it, or name another agent (CLI: baton "
                    "agents lists them)",
                    spec.agent->profile, program));
  }
  if (!shell_line.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("command not found: {} (the shell line's "
                                 "first program; searched PATH); check the "
                                 "name or give a full path. The line was not "
                                 "run",
                                 program));
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("command not found: {} (searched PATH); check "
                               "the name, give a full path, or run a shell "
                               "line as one argument: baton run -- '{} ...'",
                               program, program));
}

}  // namespace

bool ShellLineMayNotParse(std::string_view line) {
  static const std::set<std::string_view> kCompoundWords = {
      "if",   "then", "elif", "else",  "fi",    "do", "done",
      "case", "esac", "for",  "while", "until", "{",  "}"};
  static const std::set<std::string_view> kControl = {";", "&", "|", "&&",
                                                      "||"};
  static const std::set<std::string_view> kRedirect = {">",  ">>", "<", ">&",
                                                       "<&", ">|", "<>"};
  if (line.find("<<") != std::string_view::npos)
    return true;
  char quote = 0;  // The quote we are in: ', " or `; 0 outside.
  int parens = 0;
  std::string word, op;
  bool command_has_word = false;  // Since the last control operator.
  bool needs_word = false;        // After a redirection, `|`, `&&`, `||`.
  // Ends the word or the operator being read; true when it raises a doubt.
  auto end_token = [&] {
    bool doubt = false;
    if (!word.empty()) {
      doubt = kCompoundWords.contains(word);
      command_has_word = true;
      needs_word = false;
    } else if (!op.empty()) {
      if (kControl.contains(op)) {
        doubt = !command_has_word || needs_word;  // `; a`, `a | | b`.
        command_has_word = false;
        needs_word = op != ";" && op != "&";
      } else {
        doubt = !kRedirect.contains(op) || needs_word;  // `a > | b`.
        needs_word = true;
      }
    }
    word.clear();
    op.clear();
    return doubt;
  };
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      continue;
    }
    if (quote != 0) {
      if (c == '\\')
        ++i;  // \" and \` do not close.
      else if (c == quote)
        quote = 0;
      continue;
    }
    bool is_op = std::string_view(";&|<>").find(c) != std::string_view::npos;
    bool breaks = c == ' ' || c == '\t' || c == '\n' || c == '(' || c == ')';
    // A word ends at an operator, an operator at a word.
    if ((breaks || is_op != !op.empty()) && end_token())
      return true;
    if (c == '(' || c == ')') {
      parens += c == '(' ? 1 : -1;
      command_has_word = true;  // A subshell or $(...) is a command's part.
      needs_word = false;
    } else if (is_op) {
      op.push_back(c);
    } else if (!breaks) {
      if (c == '\\')
        ++i;  // The next character is part of the word, as it is.
      else if (c == '\'' || c == '"' || c == '`')
        quote = c;
      word.push_back(c);
    }
  }
  return end_token() || quote != 0 || parens != 0 || needs_word;
}

Status PreflightTask(const TaskSpec& spec, ProgramCache* cache) {
  struct stat st {};
  if (::stat(spec.cwd.c_str(), &st) != 0) {
    int err = errno;
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("working directory {} cannot be used ({}); "
                                 "give an existing directory as cwd",
                                 spec.cwd, std::strerror(err)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("working directory {} is not a directory; "
                                 "give a directory as cwd",
                                 spec.cwd));
  }
  if (::access(spec.cwd.c_str(), X_OK) != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("cannot enter working directory {} "
                                 "(permission denied); choose another cwd",
                                 spec.cwd));
  }
  if (spec.shell_command) {
    // On a cluster's node the line may rely on what the batch shell sets
    // up (`module load`): only the cluster can judge it.
    if (spec.remote)
      return {};
    auto first = FirstProgramOf(*spec.shell_command);
    return first ? CheckProgram(spec, *first, cache, *spec.shell_command)
                 : Status{};
  }
  return CheckProgram(spec, spec.argv[0], cache, "");
}

bool NeedsShellSyntaxCheck(const TaskSpec& spec) {
  return spec.shell_command && !spec.remote &&
         ShellLineMayNotParse(*spec.shell_command);
}

void PreflightTask(TaskSpec spec, ProgramCache* cache, CommandRunner* runner,
                   PreflightDone done) {
  auto finish = [cache](TaskSpec checked, const PreflightDone& told) {
    if (auto ok = PreflightTask(checked, cache); !ok)
      return told(std::unexpected(ok.error()));
    told(std::move(checked));
  };
  if (!NeedsShellSyntaxCheck(spec))
    return finish(std::move(spec), done);
  // The shell the task would run with, off the loop and with a deadline. A
  // shell that cannot be asked in time lets the line through: the run then
  // says what the shell thinks.
  constexpr std::chrono::milliseconds kSyntaxCheckTimeout{2000};
  std::vector<std::string> argv = {"sh", "-n", "-c", *spec.shell_command};
  std::string cwd = spec.cwd;
  runner->Run(
      std::move(argv), {"PATH=" + std::string(kFallbackPath)},
      kSyntaxCheckTimeout,
      [spec = std::move(spec), done = std::move(done),
       finish](CommandResult result) mutable {
        if (result.end == CommandResult::End::kExited && result.code == 2) {
          std::string said = result.err;
          while (!said.empty() && (said.back() == '\n' || said.back() == ' '))
            said.pop_back();
          return done(MakeError(
              ErrorCode::kInvalidArgument,
              fmt::format("the shell line does not parse ({}); fix its "
                          "syntax (check it with sh -n -c LINE). The line "
                          "was not run",
                          said)));
        }
        finish(std::move(spec), done);
      },
      cwd);
}

}  // namespace baton
