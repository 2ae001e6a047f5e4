// The `conflicts` request: the conflict radar's current overlaps that the
// session sees (doc/conflicts.md). Answered from what the radar's last
// rounds found, at once: no git runs for it.
#include "baton/daemon/daemon.h"

namespace baton {

void Daemon::Handle(Connection&, const ConflictsRequest& request,
                    Session session, Reply reply) {
  if (!request.task.empty()) {
    // An unknown id, or another session's task, is refused as `get` does.
    if (auto task = registry_->Get(request.task, session); !task)
      return reply(std::unexpected(task.error()));
  }
  reply(ConflictsReply{.overlaps = radar_->Overlaps(session, request.task),
                       .watched = radar_->Watched(),
                       .rounds = radar_->rounds()});
}

}  // namespace baton
