// Fuzzes the supervisor's line protocol (supervisor/protocol.h) in both
// directions, and the replay of its journal (supervisor/journal.h). Each
// line of the input is decoded as batond's request to the supervisor and as
// the supervisor's event to batond: neither throws; a refusal says why,
// with kInvalidArgument or kNotFound (an op that side does not know); and a
// message that decoded encodes as one JSON line that decodes to the same
// op and encodes the same again, so what one side acts on is what the
// other can say. The whole input is also a journal written during this
// boot (its first line the header) that Journal::Open replays: every task
// it leaves open is among the known ones, and the journal it rewrites
// replays to the same open tasks.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <variant>

#include "baton/supervisor/journal.h"
#include "baton/supervisor/protocol.h"
#include "baton/util/file_util.h"
#include "fuzz/fuzz_checks.h"

namespace {

constexpr char kBootId[] = "fuzz-boot";

template <class Variant>
void CheckDecoded(const baton::Result<Variant>& decoded,
                  baton::Result<Variant> (*decode)(std::string_view)) {
  if (!decoded) {
    FUZZ_CHECK(!decoded.error().message.empty(), "a refused line says why");
    FUZZ_CHECK(decoded.error().code == baton::ErrorCode::kInvalidArgument ||
                   decoded.error().code == baton::ErrorCode::kNotFound,
               "a refused line is malformed or of an unknown op");
    return;
  }
  auto encode = [](const auto& message) {
    return baton::EncodeMessage(message);
  };
  std::string line = std::visit(encode, *decoded);
  FUZZ_CHECK(baton::fuzz::IsOneJsonLine(line), "a message encodes as a line");
  auto again = decode(line);
  FUZZ_CHECK(again.has_value(), "an encoded message decodes again");
  FUZZ_CHECK(again->index() == decoded->index(), "a message keeps its op");
  FUZZ_CHECK(std::visit(encode, *again) == line,
             "a message encodes the same after a round trip");
}

bool SameTask(const baton::JournalTask& a, const baton::JournalTask& b) {
  return a.task == b.task && a.started == b.started && a.pid == b.pid &&
         a.start_ticks == b.start_ticks && a.started_ms == b.started_ms &&
         a.exit_file == b.exit_file && a.log == b.log &&
         a.deadline_ms == b.deadline_ms && a.grace_ms == b.grace_ms &&
         a.cause == b.cause && a.stopped_ms == b.stopped_ms &&
         a.stop_grace_ms == b.stop_grace_ms;
}

// A folder of its own for the run (the journal and Open's temp file),
// removed at exit (a crash leaves it: its input is in the artifacts); in
// memory where it can be, since each input is written, renamed and read
// twice.
std::filesystem::path TempBase() {
  std::error_code error;
  if (std::filesystem::is_directory("/dev/shm", error))
    return "/dev/shm";
  return std::filesystem::temp_directory_path();
}

struct TempFolder {
  std::string path = (TempBase() / "baton-fuzz-XXXXXX").string();
  TempFolder() {
    FUZZ_CHECK(::mkdtemp(path.data()) != nullptr, "a temp folder");
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
};

const std::string& JournalPath() {
  static TempFolder folder;
  static const std::string path = folder.path + "/supervisor.journal";
  return path;
}

void CheckJournal(std::string_view text) {
  const std::string& path = JournalPath();
  FUZZ_CHECK(baton::WriteFileAtomic(path, std::string(text)).has_value(),
             "the journal is written");
  auto opened = baton::Journal::Open(path, kBootId);
  FUZZ_CHECK(opened.has_value(), "a journal of any content opens");
  const baton::JournalState& state = opened->second;
  for (const auto& [task, entry] : state.open) {
    FUZZ_CHECK(!task.empty() && entry.task == task,
               "an open task is named by its key");
    FUZZ_CHECK(state.known.Contains(task), "an open task is known");
  }
  auto reopened = baton::Journal::Open(path, kBootId);
  FUZZ_CHECK(reopened.has_value(), "a rewritten journal opens");
  const auto& again = reopened->second.open;
  FUZZ_CHECK(again.size() == state.open.size(),
             "the rewrite keeps every open task");
  for (const auto& [task, entry] : state.open) {
    auto kept = again.find(task);
    FUZZ_CHECK(kept != again.end() && SameTask(kept->second, entry),
               "the rewrite keeps what the journal said of a task");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos)
      end = input.size();
    std::string_view line = input.substr(start, end - start);
    CheckDecoded(baton::ParseSupervisorRequest(line),
                 &baton::ParseSupervisorRequest);
    CheckDecoded(baton::ParseSupervisorEvent(line),
                 &baton::ParseSupervisorEvent);
    start = end + 1;
  }
  CheckJournal(input);
  return 0;
}
