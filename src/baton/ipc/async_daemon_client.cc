#include "baton/ipc/async_daemon_client.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "baton/ipc/unix_socket.h"

namespace baton {

Result<std::unique_ptr<AsyncDaemonClient>> AsyncDaemonClient::Open(
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
  std::unique_ptr<AsyncDaemonClient> connection(
      new AsyncDaemonClient(loop, options.session, std::move(notices)));
  AsyncDaemonClient* self = connection.get();
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

AsyncDaemonClient::AsyncDaemonClient(EventLoop* loop, std::string session,
                                     NoticeSink notices)
    : loop_(loop), session_(std::move(session)), notices_(std::move(notices)) {}

AsyncDaemonClient::~AsyncDaemonClient() {
  Close();
}

void AsyncDaemonClient::Send(std::string line, LineCallback done) {
  int64_t id = next_id_++;
  if (closed()) {
    // Answer from the loop, as a reply would come, so callers never see
    // their callback run inside Call.
    loop_->Schedule(std::chrono::steady_clock::now(), [done] {
      done(MakeError(ErrorCode::kUnavailable,
                     "lost the connection to batond; try again"));
    });
    return;
  }
  pending_.emplace(id, std::move(done));
  channel_->Send(line);
  channel_->Flush();
}

void AsyncDaemonClient::Close() {
  pending_.clear();
  if (channel_)
    channel_->Close();
}

void AsyncDaemonClient::OnLine(std::string_view line) {
  auto reply = DecodeReplyLine(line);
  if (!reply) {
    // A reply we cannot read belongs to some pending call, which would
    // otherwise wait forever: fail them all, as a closed connection does.
    Fail(reply.error());
    return;
  }
  if (notices_) {
    for (auto& notice : reply->notices)
      notices_(std::move(notice));
  }
  reply->notices.clear();
  if (!reply->id)
    return;
  auto it = pending_.find(*reply->id);
  if (it == pending_.end())
    return;
  LineCallback done = std::move(it->second);
  pending_.erase(it);
  done(std::move(*reply));
}

void AsyncDaemonClient::OnClose() {
  Fail(Error{ErrorCode::kUnavailable,
             "batond closed the connection (did it stop or crash? see "
             "batond.log in the state directory); try again"});
}

void AsyncDaemonClient::Fail(const Error& error) {
  if (channel_)
    channel_->Close();
  // A callback may Close or drop us, so take them all out first.
  auto pending = std::exchange(pending_, {});
  for (auto& [id, done] : pending)
    done(std::unexpected(error));
}

}  // namespace baton
