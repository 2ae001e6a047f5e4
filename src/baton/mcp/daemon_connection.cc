#include "baton/mcp/daemon_connection.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "baton/ipc/protocol.h"
#include "baton/ipc/unix_socket.h"

namespace baton::mcp {

using nlohmann::json;

Result<std::unique_ptr<DaemonConnection>> DaemonConnection::Open(
    EventLoop* loop, const DaemonClient::Options& options, NoticeSink notices) {
  auto client = DaemonClient::Connect(options);
  if (!client)
    return std::unexpected(client.error());
  // DaemonClient owns its fd and has read nothing yet; a duplicate of the
  // socket outlives it and carries the connection onto the loop.
  UniqueFd fd(::fcntl(client->fd(), F_DUPFD_CLOEXEC, 0));
  if (!fd)
    return std::unexpected(ErrnoError("dup of the batond socket", errno));
  if (auto ok = SetNonBlocking(fd.get(), true); !ok)
    return std::unexpected(ok.error());
  std::unique_ptr<DaemonConnection> connection(
      new DaemonConnection(loop, options.session, std::move(notices)));
  DaemonConnection* self = connection.get();
  connection->channel_ = std::make_unique<LineChannel>(
      loop, std::move(fd),
      [self](std::string_view line) { self->OnLine(line); },
      [self] { self->OnClose(); });
  if (connection->channel_->closed()) {
    return MakeError(ErrorCode::kIo,
                     "cannot watch the batond socket in the event loop");
  }
  return connection;
}

DaemonConnection::DaemonConnection(EventLoop* loop, std::string session,
                                   NoticeSink notices)
    : loop_(loop), session_(std::move(session)), notices_(std::move(notices)) {}

DaemonConnection::~DaemonConnection() {
  Close();
}

void DaemonConnection::Call(std::string_view op, json args,
                            ReplyCallback done) {
  if (closed()) {
    // Answer from the loop, as a reply would come, so callers never see
    // their callback run inside Call.
    loop_->Schedule(std::chrono::steady_clock::now(), [done] {
      done(MakeError(ErrorCode::kUnavailable,
                     "lost the connection to batond; try again"));
    });
    return;
  }
  int64_t id = next_id_++;
  args["id"] = id;
  args["op"] = op;
  if (!session_.empty())
    args["session"] = session_;
  pending_.emplace(id, std::move(done));
  channel_->Send(args.dump(-1, ' ', false, json::error_handler_t::replace));
  channel_->Flush();
}

void DaemonConnection::Close() {
  pending_.clear();
  if (channel_)
    channel_->Close();
}

void DaemonConnection::OnLine(std::string_view line) {
  json reply = json::parse(line.begin(), line.end(), nullptr, false);
  if (reply.is_discarded() || !reply.is_object())
    return;  // Not ours to answer; the daemon never sends this.
  if (auto notices = reply.find("notices");
      notices != reply.end() && notices->is_array() && notices_) {
    for (const auto& notice : *notices)
      notices_(notice);
  }
  auto id = reply.find("id");
  if (id == reply.end() || !id->is_number_integer())
    return;
  auto it = pending_.find(id->get<int64_t>());
  if (it == pending_.end())
    return;
  ReplyCallback done = std::move(it->second);
  pending_.erase(it);
  if (reply.value("ok", false)) {
    auto result = reply.find("result");
    done(result != reply.end() ? *result : json::object());
  } else {
    done(std::unexpected(ErrorFromJson(reply.value("error", json()))));
  }
}

void DaemonConnection::OnClose() {
  // Fail what is pending; a callback may Close or drop us, so take them
  // all out first.
  auto pending = std::exchange(pending_, {});
  for (auto& [id, done] : pending) {
    done(MakeError(ErrorCode::kUnavailable,
                   "batond closed the connection (did it stop or crash? see "
                   "batond.log in the state directory); try again"));
  }
}

}  // namespace baton::mcp
