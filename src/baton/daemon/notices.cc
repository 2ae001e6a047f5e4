// The notices a reply carries (doc/protocol.md, "Notices"): the registry's
// (tasks of the session that ended unseen, or ask), then the conflict
// radar's (doc/conflicts.md): its overlaps are news of the same kind, to
// the same owner, on the same channel, so every front end that shows
// notices shows them, and none needs a channel of its own.
#include "baton/core/sessions.h"
#include "baton/daemon/daemon.h"
#include "baton/ipc/task_text.h"

namespace baton {
namespace {

// A notice's text: how the task ended (or that it asks), then, indented,
// its checks' evidence (part of the end, doc/tasks.md) or its open
// question with numbered options.
std::string NoticeLines(const TaskView& view) {
  std::string text = NoticeText(view.task);
  std::string more;
  if (view.task.evidence)
    more = EvidenceText(*view.task.evidence, "  ", 3);
  if (view.task.status == TaskStatus::kWaiting)
    more += QuestionItemsText(view.questions, "  ");
  if (!more.empty()) {
    more.pop_back();  // Its last newline.
    text += "\n" + more;
  }
  return text;
}

}  // namespace

std::string Daemon::NoticesJson(Session session, bool& reports_ends) {
  std::vector<Notice> typed;
  auto notices = registry_->TakeNotices(session);
  reports_ends = !notices.empty();
  typed.reserve(notices.size());
  for (auto& task : notices) {
    TaskView view = View(std::move(task));
    std::string text = NoticeLines(view);
    typed.push_back({std::move(view), std::move(text)});
  }
  for (auto& notice : radar_->TakeNotices(session)) {
    // The task as it is now; a person's look at an ended one, which tells
    // its owner nothing.
    const TaskRecord* live = registry_->FindLive(notice.task);
    auto task = live ? Result<TaskRecord>(*live)
                     : registry_->Get(notice.task.ToString(),
                                      std::string(kPersonSession));
    if (!task)
      continue;  // Removed meanwhile: its overlap went with it.
    typed.push_back({View(std::move(*task)), std::move(notice.text),
                     std::move(notice.overlap)});
  }
  std::string json;
  if (!typed.empty())
    EncodeValue(json, typed);
  return json;
}

}  // namespace baton
