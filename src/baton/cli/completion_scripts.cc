// The completion scripts of bash, zsh and fish (help_docs.h). Each holds
// the command line as data (every command path with its options, the
// options that take a value, its subcommands, whether it takes task ids),
// and one small walker: the words before the cursor give the command path
// (skipping options and their values); the word at the cursor is then an
// option, a subcommand, a task id (`baton ls --quiet`, which reads the
// session from --session or $BATON_SESSION as the command would), or left
// to the shell's own completion (files; after `--`, a command).
#include <fmt/format.h>

#include <functional>

#include "baton/cli/help_docs.h"

namespace baton {
namespace {

// Every command, top first, depth first (the order of the tree).
void Flatten(const CommandDoc& command, std::vector<const CommandDoc*>& out) {
  out.push_back(&command);
  for (const CommandDoc& sub : command.subcommands)
    Flatten(sub, out);
}

bool TakesIds(const CommandDoc& command) {
  for (const ArgumentDoc& argument : command.arguments) {
    if (argument.task_id)
      return true;
  }
  return false;
}

// Joins what `item` gives for each element, separated by `sep`.
template <class T, class F>
std::string Join(const std::vector<T>& items, std::string_view sep, F item) {
  std::string out;
  for (const T& each : items) {
    std::string text = item(each);
    if (text.empty())
      continue;
    if (!out.empty())
      out += sep;
    out += text;
  }
  return out;
}

std::string OptionNames(const CommandDoc& command, bool valued_only) {
  std::vector<std::string> names;
  for (const OptionDoc& option : command.options) {
    if (valued_only && option.value.empty())
      continue;
    names.insert(names.end(), option.names.begin(), option.names.end());
  }
  if (!valued_only)
    names.push_back("--help");
  return Join(names, " ", [](const std::string& n) { return n; });
}

// Text in single quotes for sh-like shells: ' becomes '\''.
std::string ShQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// Text in single quotes for fish: \ and ' are escaped with a backslash.
std::string FishQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "'";
}

// bash: the spec of each command path (@SPEC@: case arms setting opts,
// valued, subs and ids), then the walker.
constexpr std::string_view kBashTemplate =
    R"SH(# bash completion for baton, written by `baton completion bash` from the
# command line's definitions (do not edit; run it again).
_baton_spec() {
  case $1 in
@SPEC@  esac
}
_baton() {
  local cur=${COMP_WORDS[COMP_CWORD]} path='' session='' word i
  local opts valued subs ids
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    _baton_spec "$path"
    if [[ $word == -- ]]; then
      # What follows is the task's command: a command name, then files.
      if ((i + 1 == COMP_CWORD)); then
        COMPREPLY=($(compgen -c -- "$cur"))
      fi
      return 0
    fi
    if [[ $word == --session ]]; then
      session=${COMP_WORDS[i + 1]}
      ((i++))
      continue
    fi
    if [[ " $valued " == *" $word "* ]]; then
      ((i++))
      continue
    fi
    [[ $word == -* ]] && continue
    if [[ " $subs " == *" $word "* ]]; then
      path=${path:+$path }$word
    fi
  done
  # The word at the cursor is an option's value: the shell's default.
  ((i > COMP_CWORD)) && return 0
  _baton_spec "$path"
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ -n $subs ]]; then
    compopt +o default 2>/dev/null
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  elif [[ $ids == 1 ]]; then
    compopt +o default 2>/dev/null
    COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" ${session:+--session "$session"} \
      ls --quiet 2>/dev/null)" -- "$cur"))
  fi
  return 0
}
complete -o default -F _baton baton
)SH";

// zsh: the same spec and walker, with descriptions for _describe.
constexpr std::string_view kZshTemplate = R"SH(#compdef baton
# zsh completion for baton, written by `baton completion zsh` from the
# command line's definitions (do not edit; run it again).
_baton_spec() {
  case $1 in
@SPEC@  esac
}
_baton() {
  local path_='' word i ids
  local -a opts valued subs task_ids session
  for (( i = 2; i < CURRENT; i++ )); do
    word=${words[i]}
    _baton_spec "$path_"
    if [[ $word == -- ]]; then
      # What follows is the task's command: complete it as its own line.
      words=("${(@)words[i+1,-1]}")
      (( CURRENT -= i ))
      _normal
      return
    fi
    if [[ $word == --session ]]; then
      session=(--session ${words[i+1]})
      (( i++ ))
      continue
    fi
    if (( ${valued[(Ie)$word]} )); then
      (( i++ ))
      continue
    fi
    [[ $word == -* ]] && continue
    if (( ${subs[(I)${(b)word}:*]} )); then
      path_=${path_:+$path_ }$word
    fi
  done
  # The word at the cursor is an option's value: the default completion.
  if (( i > CURRENT )); then
    _default
    return
  fi
  _baton_spec "$path_"
  if [[ ${words[CURRENT]} == -* ]]; then
    _describe -t options option opts
  elif (( $#subs )); then
    _describe -t commands command subs
  elif (( ids )); then
    task_ids=(${(f)"$(${words[1]} $session ls --quiet 2>/dev/null)"})
    _describe -t tasks 'task id' task_ids
  else
    _default
  fi
}
_baton "$@"
)SH";

// fish: the options that take a value and the command paths (for the
// walker), then one `complete` line per option, subcommand and id list.
constexpr std::string_view kFishTemplate =
    R"SH(# fish completion for baton, written by `baton completion fish` from the
# command line's definitions (do not edit; run it again).
set -g __baton_valued @VALUED@
set -g __baton_paths @PATHS@

# The command path before the cursor ("daemon stop"), or -- after the
# task's command began.
function __baton_path
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path
    set -l skip 0
    for token in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        if test "$token" = --
            echo --
            return
        end
        if contains -- $token $__baton_valued
            set skip 1
            continue
        end
        if string match -q -- '-*' $token
            continue
        end
        set -l candidate $token
        if test -n "$path"
            set candidate "$path $token"
        end
        if contains -- $candidate $__baton_paths
            set -a path $token
        end
    end
    echo "$path"
end

function __baton_at
    set -l path (__baton_path)
    test "$path" = "$argv[1]"
end

# The session's task ids, from the same baton with the same --session.
function __baton_ids
    set -l tokens (commandline -opc)
    set -l session
    if set -l i (contains -i -- --session $tokens)
        set session --session $tokens[(math $i + 1)]
    end
    $tokens[1] $session ls --quiet 2>/dev/null
end

@LINES@
)SH";

// `text` with each marker replaced by its value.
std::string Fill(
    std::string_view text,
    const std::vector<std::pair<std::string_view, std::string>>& values) {
  std::string out(text);
  for (const auto& [marker, value] : values) {
    size_t at = out.find(marker);
    if (at != std::string::npos)
      out.replace(at, marker.size(), value);
  }
  return out;
}

std::string Same(const std::string& text) {
  return text;
}

std::string BashScript(const std::vector<const CommandDoc*>& commands) {
  std::string spec;
  for (const CommandDoc* command : commands) {
    spec += fmt::format(
        "    {}) opts={}; valued={}; subs={}; ids={} ;;\n",
        ShQuote(command->path), ShQuote(OptionNames(*command, false)),
        ShQuote(OptionNames(*command, true)),
        ShQuote(Join(command->subcommands, " ",
                     [](const CommandDoc& sub) { return sub.name; })),
        TakesIds(*command) ? 1 : 0);
  }
  return Fill(kBashTemplate, {{"@SPEC@", spec}});
}

std::string ZshDescribed(
    const std::vector<std::pair<std::string, std::string>>& items) {
  return Join(items, " ", [](const std::pair<std::string, std::string>& item) {
    return ShQuote(item.first + ":" + item.second);
  });
}

std::string ZshScript(const std::vector<const CommandDoc*>& commands) {
  std::string spec;
  for (const CommandDoc* command : commands) {
    std::vector<std::pair<std::string, std::string>> opts, subs;
    for (const OptionDoc& option : command->options) {
      for (const std::string& name : option.names)
        opts.emplace_back(name, option.description);
    }
    opts.emplace_back("--help", "Print this help message and exit");
    for (const CommandDoc& sub : command->subcommands)
      subs.emplace_back(sub.name, sub.description);
    spec += fmt::format(
        "    {})\n      opts=({})\n      valued=({})\n      subs=({})\n"
        "      ids={} ;;\n",
        ShQuote(command->path), ZshDescribed(opts), OptionNames(*command, true),
        ZshDescribed(subs), TakesIds(*command) ? 1 : 0);
  }
  return Fill(kZshTemplate, {{"@SPEC@", spec}});
}

std::string FishScript(const std::vector<const CommandDoc*>& commands) {
  std::vector<std::string> valued, paths, lines;
  for (const CommandDoc* command : commands) {
    if (!command->path.empty())
      paths.push_back(FishQuote(command->path));
    std::string at = FishQuote("__baton_at " + ShQuote(command->path));
    for (const OptionDoc& option : command->options) {
      std::string line = "complete -c baton -n " + at;
      for (const std::string& name : option.names) {
        bool is_long = name.starts_with("--");
        line += (is_long ? " -l " : " -s ") + name.substr(is_long ? 2 : 1);
        if (!option.value.empty())
          valued.push_back(name);
      }
      if (!option.value.empty())
        line += " -r";
      lines.push_back(line + " -d " + FishQuote(option.description));
    }
    for (const CommandDoc& sub : command->subcommands) {
      lines.push_back("complete -c baton -f -n " + at + " -a " +
                      FishQuote(sub.name) + " -d " +
                      FishQuote(sub.description));
    }
    if (TakesIds(*command)) {
      lines.push_back("complete -c baton -f -n " + at +
                      " -a '(__baton_ids)' -d 'task id'");
    }
  }
  return Fill(kFishTemplate, {{"@VALUED@", Join(valued, " ", Same)},
                              {"@PATHS@", Join(paths, " ", Same)},
                              {"@LINES@", Join(lines, "\n", Same)}});
}

}  // namespace

Result<std::string> CompletionScript(const CommandDoc& baton,
                                     std::string_view shell) {
  std::vector<const CommandDoc*> commands;
  Flatten(baton, commands);
  if (shell == "bash")
    return BashScript(commands);
  if (shell == "zsh")
    return ZshScript(commands);
  if (shell == "fish")
    return FishScript(commands);
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("no completion for the shell '{}'; baton "
                               "completes bash, zsh and fish",
                               shell));
}

}  // namespace baton
