// What every verb of the CLI shares: the global flags, the connection to
// batond, and one way to call it and print what came back (the reply as
// text or as a JSON document, then the session's notices), so that every
// verb reports errors, notices and exit codes alike (doc/cli.md).
#ifndef BATON_CLI_CONTEXT_H_
#define BATON_CLI_CONTEXT_H_

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "baton/cli/cli.h"
#include "baton/ipc/daemon_client.h"

namespace baton {

struct Context {
  bool json = false;    // --json: one JSON document per line on stdout.
  std::string session;  // --session, else $BATON_SESSION.

  // Connects to batond (starting it with `autostart`, and waiting at most
  // `start_timeout` for it to be ready).
  Result<DaemonClient> Connect(
      bool autostart = true,
      std::chrono::milliseconds start_timeout = kDaemonStartTimeout) const;
};

// Prints the error on stderr (text) or stdout (--json); returns the exit
// code that goes with it (`exit_code` overrides the one its code implies).
int ReportError(const Context& ctx, const Error& error, int exit_code = -1);

// An error as the CLI tells it. A batond that refuses a field it does not
// know is most likely older than this CLI; one older than the wording that
// says so (ipc/codec.cc) gets the versions and the remedy added here.
Error WithVersionSkewHint(Error error);
// batond could not be reached or started: always exit code 2.
int ConnectError(const Context& ctx, const Error& error);

// Writes one JSON document (text) and a newline to stdout.
void PrintJsonLine(std::string_view json_text);
// The notices the client's replies carried, on stderr, one a line.
void PrintNotices(DaemonClient& client);

// Prints `reply`: with --json as its document with the notices, else
// through `print_text(reply)` (which returns the exit code) followed by
// the notices on stderr.
template <class T, class PrintText>
int PrintReply(const Context& ctx, DaemonClient& client, const T& reply,
               PrintText print_text) {
  if (ctx.json) {
    PrintJsonLine(WithNotices(EncodeObject(reply), client.TakeNotices()));
    return kExitOk;
  }
  int code = print_text(reply);
  PrintNotices(client);
  return code;
}

// Connects, sends `request`, lets `adjust` change the reply (what --json
// prints too), and prints it as PrintReply does.
template <class R, class Adjust, class PrintText>
int CallAdjustAndPrint(const Context& ctx, const R& request, Adjust adjust,
                       PrintText print_text) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto reply = client->Call(request);
  if (!reply)
    return ReportError(ctx, reply.error());
  adjust(*reply);
  return PrintReply(ctx, *client, *reply, print_text);
}

// Connects, sends `request`, and prints its reply as PrintReply does.
template <class R, class PrintText>
int CallAndPrint(const Context& ctx, const R& request, PrintText print_text) {
  return CallAdjustAndPrint(
      ctx, request, [](typename R::Reply&) {}, print_text);
}

// Arguments travel as JSON strings: bytes that are not UTF-8 cannot, and
// replacing them would run something else. A clear error instead.
Status CheckArgumentText(std::string_view what, std::string_view text);

// A duration flag's value ("30s", "5m"), at most the longest the protocol
// takes (366 days): longer is a clear error, never a wrap.
Result<std::chrono::milliseconds> ParseDurationFlag(std::string_view flag,
                                                    std::string_view text);

// The words joined by spaces ("fix the test" from three arguments).
std::string JoinWords(const std::vector<std::string>& words);
// This process's working directory ("/" if it cannot be read).
std::string CurrentDir();

}  // namespace baton

#endif  // BATON_CLI_CONTEXT_H_
