#include "baton/serve/serve.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "baton/loop/event_loop.h"
#include "baton/serve/board.h"
#include "baton/serve/board_access.h"
#include "baton/serve/http_server.h"
#include "baton/serve/login_code.h"
#include "baton/serve/mcp_endpoint.h"
#include "baton/serve/metrics_text.h"
#include "baton/serve/token.h"
#include "baton/util/detached_process.h"
#include "baton/util/fd_limit.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"
#include "baton/util/state_paths.h"

namespace baton::serve {
namespace {

constexpr char kServeUsage[] =
    "usage: baton serve [--listen HOST:PORT] [--allow-host NAME]... "
    "[--print-token]\n"
    "  Serves MCP over Streamable HTTP at http://HOST:PORT/mcp (default "
    "127.0.0.1:7420;\n"
    "  port 0 picks a free one). Every request needs the header\n"
    "  Authorization: Bearer <token>; --print-token prints the token (made "
    "once,\n"
    "  kept in the state folder). --allow-host adds a name the Host and "
    "Origin\n"
    "  headers may use besides localhost, 127.0.0.1, [::1] and the listen "
    "address.\n"
    "  Register it: claude mcp add --transport http baton URL --header\n"
    "  \"Authorization: Bearer $(baton serve --print-token)\"\n"
    "  The board (a web page of the tasks) is at http://HOST:PORT/; the URL\n"
    "  printed at start logs a browser in (or run baton board).\n";

int FailToServe(const std::string& message) {
  std::fprintf(stderr, "baton serve: error: %s\n", message.c_str());
  return 1;
}

int Serve(const ServeOptions& options, const StatePaths& paths,
          const std::string& token) {
  // Until ready, a failure is also told to whoever started us detached.
  auto fail = [&options](const std::string& message) {
    ReportStartFailure(options.ready_fd, message);
    return FailToServe(message);
  };
  if (auto raised = RaiseFdLimit(); !raised)
    BATON_LOG_WARN("fd limit: {}", raised.error().message);
  EventLoop loop;
  if (!loop.ok())
    return fail("cannot create the event loop");
  HttpServer http(&loop, HttpLimits{});
  auto port = http.Listen(options.listen);
  if (!port)
    return fail(port.error().message);
  HostPolicy policy(options.listen, *port, options.allowed_hosts);
  McpEndpointOptions endpoint_options;
  endpoint_options.server.paths = paths;
  const char* session = std::getenv("BATON_SESSION");
  endpoint_options.server.session = session && *session ? session : "serve";
  if (const char* home = std::getenv("BATON_HOME"))
    endpoint_options.server.baton_home = home;
  // Destroyed before `http`: its exchanges forget their callbacks first.
  McpEndpoint endpoint(&loop, endpoint_options);
  BoardOptions board_options;
  board_options.paths = paths;
  board_options.token = token;
  board_options.cookie_name = BoardCookieName(*port);
  Board board(&loop, board_options);
  http.SetGate([&policy, &token, &board_options](const HttpRequest& request) {
    return ServeGate(policy, token, board_options.cookie_name, request);
  });
  board.AddRoutes(&http);
  http.Route("/mcp", [&endpoint](const HttpRequest& request,
                                 const ExchangePtr& exchange) {
    endpoint.Handle(request, exchange);
  });
  MetricsRoute metrics(&loop, paths);
  http.Route("/metrics", [&metrics](const HttpRequest& request,
                                    const ExchangePtr& exchange) {
    metrics.Handle(request, exchange);
  });
  loop.AddBeforeSleep([&endpoint] { endpoint.ReleaseRetired(); });
  for (int signal : {SIGINT, SIGTERM}) {
    if (auto handled = loop.HandleSignal(signal, [&loop] { loop.Stop(); });
        !handled) {
      return fail(handled.error().message);
    }
  }
  endpoint.Start();

  std::string url =
      fmt::format("http://{}/mcp", Authority(options.listen.host, *port));
  std::string info_path = paths.home + "/serve.json";
  nlohmann::json info = {
      {"url", url},
      {"board",
       fmt::format("http://{}/", Authority(options.listen.host, *port))},
      {"pid", ::getpid()}};
  if (auto written = WriteFileAtomic(info_path, info.dump() + "\n"); !written)
    BATON_LOG_WARN("cannot write {}: {}", info_path, written.error().message);
  if (!IsLoopbackHost(options.listen.host)) {
    BATON_LOG_WARN(
        "listening on {}, which is not loopback: anyone who can reach it "
        "and holds the token can run commands as you",
        Authority(options.listen.host, *port));
  }
  std::string board_url =
      fmt::format("http://{}/", Authority(options.listen.host, *port));
  std::printf("baton serve: MCP at %s\n", url.c_str());
  // A login URL with a code that works once, within 2 minutes: the token
  // itself never shows in a URL (doc/board.md, "Login").
  if (auto code = MintLoginCode(paths.home)) {
    std::printf(
        "baton serve: board at %s?login=%s (works once, within 2 minutes; "
        "baton board prints a new one)\n",
        board_url.c_str(), code->c_str());
  } else {
    std::printf(
        "baton serve: board at %s (no login code: %s; run baton "
        "board)\n",
        board_url.c_str(), code.error().message.c_str());
  }
  std::printf(
      "  every request needs Authorization: Bearer <token> (baton serve "
      "--print-token)\n");
  std::fflush(stdout);
  ReportReady(options.ready_fd);
  BATON_LOG_INFO("serving MCP at {}", url);

  auto ran = loop.Run();
  // serve.json describes this process only.
  if (auto text = ReadFile(info_path);
      text &&
      text->find(fmt::format("\"pid\":{}", ::getpid())) != std::string::npos) {
    ::unlink(info_path.c_str());
  }
  if (!ran)
    return FailToServe("event loop: " + ran.error().message);
  BATON_LOG_INFO("stopped; the sessions' tasks live on under their leases");
  return 0;
}

}  // namespace

std::optional<HttpResponse> ServeGate(const HostPolicy& policy,
                                      const std::string& token,
                                      const std::string& cookie_name,
                                      const HttpRequest& request) {
  const std::string* host = request.Header("Host");
  if (!host || !policy.HostAllowed(*host)) {
    return ErrorResponse(
        403, fmt::format("Forbidden: Host '{}' is not a name of this server "
                         "(use localhost or the listen address, or start "
                         "baton serve with --allow-host NAME)",
                         host ? *host : ""));
  }
  const std::string* origin = request.Header("Origin");
  if (!policy.OriginAllowed(origin)) {
    return ErrorResponse(
        403, fmt::format("Forbidden: Origin '{}' may not use this server "
                         "(only pages of this server's own origin may)",
                         origin ? *origin : ""));
  }
  // /mcp and /metrics take the bearer token (Prometheus sends it as
  // `authorization: credentials_file`, doc/metrics.md); the rest is the
  // board's.
  if (request.path() != "/mcp" && request.path() != "/metrics") {
    if (auto refused = CheckBoardAccess(request, token, cookie_name)) {
      // A browser that opens the board without its cookie gets a page that
      // says how to get in; the API's callers keep the JSON.
      if (refused->status == 401 && WantsSignInPage(request)) {
        return BoardSignInPage(
            "This browser is not signed in to the board (no login cookie "
            "for this server, or an old one).");
      }
      return BoardError(refused->status, Error{ErrorCode::kPermissionDenied,
                                               std::move(refused->message)});
    }
    return std::nullopt;
  }
  if (!BearerTokenMatches(request.Header("Authorization"), token)) {
    return ErrorResponse(401,
                         "Unauthorized: send the header Authorization: "
                         "Bearer <token> (the token: baton serve "
                         "--print-token)")
        .With("WWW-Authenticate", "Bearer realm=\"baton\"");
  }
  return std::nullopt;
}

Result<ServeOptions> ParseServeArgs(const std::vector<std::string>& args) {
  ServeOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](std::string_view flag) -> Result<std::string> {
      std::string prefix = std::string(flag) + "=";
      if (arg.rfind(prefix, 0) == 0)
        return arg.substr(prefix.size());
      if (i + 1 >= args.size()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("{} needs a value", flag));
      }
      return args[++i];
    };
    auto is = [&](std::string_view flag) {
      return arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0;
    };
    if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg == "--print-token") {
      options.print_token = true;
    } else if (is("--ready-fd")) {
      auto text = value("--ready-fd");
      if (!text)
        return std::unexpected(text.error());
      auto [end, error] = std::from_chars(
          text->data(), text->data() + text->size(), options.ready_fd);
      if (text->empty() || error != std::errc() ||
          end != text->data() + text->size() || options.ready_fd < 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "--ready-fd needs a descriptor number");
      }
    } else if (is("--listen")) {
      auto text = value("--listen");
      if (!text)
        return std::unexpected(text.error());
      auto listen = ParseListenAddress(*text);
      if (!listen)
        return std::unexpected(listen.error());
      options.listen = *listen;
    } else if (is("--allow-host")) {
      auto host = value("--allow-host");
      if (!host)
        return std::unexpected(host.error());
      if (host->empty() || host->find_first_of(" /:@\t") != std::string::npos) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("--allow-host {}: give a host name or "
                                     "IPv4 address without port or scheme, "
                                     "e.g. --allow-host mybox.lan",
                                     *host));
      }
      options.allowed_hosts.push_back(*host);
    } else {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("unknown argument '{}' (see baton serve "
                                   "--help)",
                                   arg));
    }
  }
  return options;
}

int RunServeMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto options = ParseServeArgs(args);
  if (!options) {
    std::fprintf(stderr, "baton serve: error: %s\n",
                 options.error().message.c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(kServeUsage, stdout);
    return 0;
  }
  auto fail = [&options](const std::string& message) {
    ReportStartFailure(options->ready_fd, message);
    return FailToServe(message);
  };
  auto paths = StatePaths::FromEnvironment("");
  if (!paths)
    return fail(paths.error().message);
  if (auto prepared = paths->Prepare(); !prepared)
    return fail(prepared.error().message);
  auto token = LoadOrCreateToken(paths->home + "/serve.token");
  if (!token)
    return fail(token.error().message);
  if (options->print_token) {
    std::printf("%s\n", token->c_str());
    return 0;
  }
  // A client that goes away mid-write must not kill us: the write fails.
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<LogSink> sinks;
  sinks.push_back(LogSink::Stderr());
  if (auto file =
          LogSink::File(paths->home + "/serve.log", LogFormat::kUtcNoLevel)) {
    sinks.push_back(std::move(*file));
  }
  SetLogSinks("baton-serve", std::move(sinks));
  int code = Serve(*options, *paths, *token);
  std::vector<LogSink> stderr_only;
  stderr_only.push_back(LogSink::Stderr());
  SetLogSinks("baton-serve", std::move(stderr_only));
  return code;
}

}  // namespace baton::serve
