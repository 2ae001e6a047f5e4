#include "baton/cli/command_tree.h"

#include "baton/cli/verbs.h"

namespace baton {
namespace {

CommandDoc Describe(const CLI::App& app, const std::string& path) {
  CommandDoc doc;
  doc.name = app.get_name();
  doc.path = path;
  doc.description = app.get_description();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt == app.get_help_ptr() || opt == app.get_help_all_ptr())
      continue;
    if (opt->nonpositional()) {
      OptionDoc option;
      for (const std::string& name : opt->get_lnames())
        option.names.push_back("--" + name);
      for (const std::string& name : opt->get_snames())
        option.names.push_back("-" + name);
      // A flag takes no value (CLI11 gives it a type size of 0).
      if (opt->get_type_size_max() > 0)
        option.value = opt->get_type_name();
      option.description = opt->get_description();
      doc.options.push_back(std::move(option));
    } else {
      ArgumentDoc argument;
      argument.name = opt->get_name(/*positional=*/true);
      argument.description = opt->get_description();
      argument.required = opt->get_required();
      argument.many = opt->get_items_expected_max() > 1;
      argument.task_id = argument.name == "id" || argument.name == "ids";
      doc.arguments.push_back(std::move(argument));
    }
  }
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App*) { return true; })) {
    std::string sub_path =
        path.empty() ? sub->get_name() : path + " " + sub->get_name();
    doc.subcommands.push_back(Describe(*sub, sub_path));
  }
  return doc;
}

}  // namespace

CommandDoc DescribeCommandLine(const CLI::App& app) {
  return Describe(app, "");
}

CommandDoc DescribeBaton() {
  CLI::App app;
  Context ctx;
  Action action;
  DefineCommandLine(app, ctx, action, nullptr);
  return DescribeCommandLine(app);
}

std::string UsageLine(const CommandDoc& command) {
  std::string line = "baton";
  if (!command.path.empty())
    line += " " + command.path;
  for (const OptionDoc& option : command.options) {
    line += " [" + option.names.front();
    if (!option.value.empty())
      line += " " + option.value;
    line += "]";
  }
  if (!command.subcommands.empty())
    line += " COMMAND";
  for (const ArgumentDoc& argument : command.arguments) {
    std::string word = argument.name + (argument.many ? "..." : "");
    line += " " + (argument.required ? word : "[" + word + "]");
  }
  return line;
}

}  // namespace baton
