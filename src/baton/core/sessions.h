// Who sees which task. A task's owner is the session that started it ("" =
// unowned: every session sees it). One session is no client's own: "*", a
// person's (the board; doc/protocol.md, "A person's session"). It sees
// every session's tasks and acts on them as their owner may, but nothing it
// does counts as their owner's doing: a look tells no owner of an end or a
// question, and a kill leaves the owner's notice of the end due. What it
// starts is unowned; it cannot attach, and has no budget.
#ifndef BATON_CORE_SESSIONS_H_
#define BATON_CORE_SESSIONS_H_

#include <string_view>

namespace baton {

inline constexpr std::string_view kPersonSession = "*";

inline bool IsPersonSession(std::string_view session) {
  return session == kPersonSession;
}

// Whether `session` sees (and may act on) a task owned by `owner`.
inline bool SeesOwner(std::string_view session, std::string_view owner) {
  return owner.empty() || owner == session || IsPersonSession(session);
}

}  // namespace baton

#endif  // BATON_CORE_SESSIONS_H_
