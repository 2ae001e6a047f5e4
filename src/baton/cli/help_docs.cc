#include "baton/cli/help_docs.h"

#include <cstdio>

#include "baton/util/file_util.h"
#include "baton/util/version.h"

namespace baton {
namespace {

// Text for roff: a backslash is \e, and a line that would start with a
// control character (. or ') starts with \& instead.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\''))
      out += "\\&";
    if (c == '\\')
      out += "\\e";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

// An option or command name in roff: its hyphens are \- (a minus sign,
// which man pages must use so that a search or a copy finds "--all").
std::string RoffName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '-')
      out += "\\-";
    else
      out += Roff(std::string_view(&c, 1));
  }
  return out;
}

std::string OptionsText(const CommandDoc& command) {
  std::string out;
  for (const OptionDoc& option : command.options) {
    out += ".TP\n";
    for (size_t i = 0; i < option.names.size(); ++i) {
      out += (i ? ", " : "") + std::string("\\fB") + RoffName(option.names[i]) +
             "\\fR";
    }
    if (!option.value.empty())
      out += " \\fI" + RoffName(option.value) + "\\fR";
    out += "\n" + Roff(option.description) + "\n";
  }
  for (const ArgumentDoc& argument : command.arguments) {
    out += ".TP\n\\fI" + RoffName(argument.name) + "\\fR" +
           (argument.many ? "..." : "") + "\n" + Roff(argument.description) +
           (argument.required ? "" : " (optional)") + "\n";
  }
  return out;
}

void CommandSection(const CommandDoc& command, std::string& out) {
  out += ".SS \"baton " + RoffName(command.path) + "\"\n";
  out += Roff(command.description) + ".\n";
  out += ".PP\n.B " + RoffName(UsageLine(command)) + "\n";
  out += OptionsText(command);
  for (const CommandDoc& sub : command.subcommands)
    CommandSection(sub, out);
}

// What the definitions do not hold: the environment, the exit codes and
// the files (doc/cli.md and doc/state-dir.md say the same in more words).
constexpr std::string_view kManTail = R"(.SH ENVIRONMENT
.TP
.B BATON_SESSION
The owner session when \fB\-\-session\fR is not given. A session's tasks are
visible to and controllable from that session only.
.TP
.B BATON_HOME
Puts all state (database, sockets, logs, task output) under this folder.
.TP
.B XDG_STATE_HOME
Without \fBBATON_HOME\fR, state goes to \fI$XDG_STATE_HOME/baton\fR
(default \fI~/.local/state/baton\fR).
.TP
.B XDG_RUNTIME_DIR
Without \fBBATON_HOME\fR, the sockets go to \fI$XDG_RUNTIME_DIR/baton\fR.
.TP
.B BATON_LEASE
How long a detached session's tasks live (default 5m), read by batond.
.SH EXIT STATUS
.TP
.B 0
Success; for \fBwait\fR, every reported task completed with exit code 0.
.TP
.B 1
The operation was refused (unknown id, another session's task, bad
argument), or for \fBwait\fR, a reported task failed, was killed or was
interrupted.
.TP
.B 2
Usage error (unknown flag or command), or batond cannot be reached or
started.
.TP
.B 124
\fBwait \-\-timeout\fR ran out first.
.TP
.I N
\fBrun \-\-wait\fR: the command's own exit code (128+N for signal N).
.SH FILES
.TP
.I ~/.config/baton/config.toml
Agent profiles (\fBbaton agents\fR lists them and names the file read):
\fI$BATON_CONFIG\fR when set, else \fI$BATON_HOME/config.toml\fR when
\fBBATON_HOME\fR is set, else \fI$XDG_CONFIG_HOME/baton/config.toml\fR,
else this one.
.TP
.I ~/.local/state/baton/
The database, batond's and the supervisor's logs, and each task's folder
with its output.
.SH EXAMPLES
.nf
baton run \-\- make test            # start it; prints its id, shell\-1
baton run \-\-wait \-\- ./build.sh    # watch it; exit with its code
baton wait shell\-1 shell\-2        # return at the first end
baton output \-f shell\-1           # follow its output
baton rerun shell\-1                # the same again, as a new task
baton edit shell\-2 \-\-priority 5    # a queued task, before it starts
baton delegate \-\-worktree 'fix the flaky parser test'
baton board                       # the live board in a browser
.fi
.SH SEE ALSO
\fBbaton completion\fR prints the completion script of bash, zsh or fish.
The documents in the source: doc/cli.md, doc/mcp.md, doc/protocol.md,
doc/state-dir.md, doc/install.md.
)";

}  // namespace

std::string ManPage(const CommandDoc& baton) {
  std::string out =
      ".\\\" baton(1), written by `baton internal-docs` from the command "
      "line's\n.\\\" definitions: edit those (src/baton/cli), not this.\n";
  out += ".TH BATON 1 \"\" \"baton " + std::string(kBatonVersion) +
         "\" \"User Commands\"\n";
  out +=
      ".SH NAME\nbaton \\- background tasks for coding agents and "
      "people\n";
  out +=
      ".SH SYNOPSIS\n.B baton\n[\\fIOPTIONS\\fR] \\fICOMMAND\\fR "
      "[\\fIARGS\\fR...]\n";
  out +=
      ".SH DESCRIPTION\nA coding agent, or a person, starts shell commands and "
      "agent "
      "CLIs in the background, waits for whichever ends first, reads their "
      "output, and kills what stopped mattering. Tasks outlive batond, the "
      "daemon that every command talks to; it starts on first use. Every "
      "command prints JSON with \\fB\\-\\-json\\fR.\n";
  out += ".SH OPTIONS\n" + OptionsText(baton);
  out += ".SH COMMANDS\n";
  for (const CommandDoc& command : baton.subcommands)
    CommandSection(command, out);
  out += kManTail;
  return out;
}

int WriteGeneratedDocs(const std::string& dir) {
  CommandDoc baton = DescribeBaton();
  std::vector<std::pair<std::string, std::string>> files = {
      {"man1/baton.1", ManPage(baton)}};
  for (auto [shell, name] :
       {std::pair{"bash", "baton.bash"}, std::pair{"zsh", "_baton"},
        std::pair{"fish", "baton.fish"}}) {
    auto script = CompletionScript(baton, shell);
    if (!script) {
      std::fprintf(stderr, "baton: error: %s\n",
                   script.error().message.c_str());
      return 1;
    }
    files.emplace_back(std::string("completions/") + name, *script);
  }
  for (const std::string& sub : {dir, dir + "/man1", dir + "/completions"}) {
    if (auto made = MakeDir(sub); !made) {
      std::fprintf(stderr, "baton: error: %s\n", made.error().message.c_str());
      return 1;
    }
  }
  for (const auto& [name, text] : files) {
    if (auto written = WriteFileAtomic(dir + "/" + name, text); !written) {
      std::fprintf(stderr, "baton: error: %s\n",
                   written.error().message.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace baton
