// The tree of agents a session directs (doc/agents.md, "Questions of a tree
// of agents"): a worker's sub-workers, linked by TaskSpec::parent, whose
// questions are their ancestors' owners' too.
#include "baton/core/sessions.h"
#include "baton/core/task_registry.h"

namespace baton {
namespace {

// Deeper than any tree of workers a person would run; a bound on a walk
// through records a client's environment named.
constexpr int kMaxTreeDepth = 16;

}  // namespace

std::vector<std::string> TaskRegistry::ChainFor(const TaskRecord& task,
                                                const std::string& session) {
  std::vector<std::string> chain{task.id.ToString()};
  bool person = IsPersonSession(session);
  if (!person && SeesOwner(session, task.spec.owner))
    return chain;
  TaskRecord at = task;
  for (int depth = 0; depth < kMaxTreeDepth && !at.spec.parent.empty();
       ++depth) {
    auto id = TaskId::Parse(at.spec.parent);
    if (!id)
      break;
    auto parent = Lookup(*id);
    if (!parent)
      break;
    chain.insert(chain.begin(), parent->id.ToString());
    if (!person && !parent->spec.owner.empty() &&
        parent->spec.owner == session) {
      return chain;
    }
    at = std::move(*parent);
  }
  if (person)
    return chain;
  return {};
}

Result<TaskRecord> TaskRegistry::GetInTree(std::string_view id,
                                           const std::string& session) {
  auto task = Get(id, session);
  if (task || task.error().code != ErrorCode::kPermissionDenied)
    return task;
  auto parsed = TaskId::Parse(id);
  if (!parsed)
    return task;
  auto found = Lookup(*parsed);
  if (!found || ChainFor(*found, session).empty())
    return task;  // Not of this session's tree: the owner's refusal.
  return found;
}

}  // namespace baton
