// Linked into every test binary of a sanitizer build (cmake/sanitizers.cmake):
// the test binaries fork children that run with stderr on /dev/null (the
// supervisor started detached, batond's helpers), so their reports go into
// the build's sanitizer-reports/ folder, where the ctest fixture
// sanitizer_reports finds them; so do the test process's own (its test
// fails by its exit code as well).
#include <sanitizer/common_interface_defs.h>

namespace {

struct ReportPath {
  ReportPath() { __sanitizer_set_report_path(BATON_SANITIZER_LOG_DIR "/test"); }
};
const ReportPath kReportPath;

}  // namespace
