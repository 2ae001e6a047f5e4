#include "baton/cli/context.h"

#include <gtest/gtest.h>

#include "baton/util/version.h"

namespace baton {
namespace {

TEST(VersionSkewHintTest,
     AnOlderBatondsUnknownFieldGetsTheVersionsAndTheRemedy) {
  // What a batond older than its own hint says of a newer CLI's field.
  Error old{ErrorCode::kInvalidArgument,
            "run request: unknown field 'redact' (known: command, argv)"};
  std::string told = WithVersionSkewHint(old).message;
  EXPECT_EQ(told, std::string(old.message) +
                      "; batond is likely older than this baton (" +
                      kBatonVersion +
                      "): replace it with this one's with 'baton daemon "
                      "upgrade' (tasks keep running)");
  EXPECT_EQ(WithVersionSkewHint(old).code, ErrorCode::kInvalidArgument);
}

TEST(VersionSkewHintTest, OtherErrorsAndANewerBatondsOwnHintStayAsTheyAre) {
  for (const char* message : {"no task shell-9",
                              "run request: unknown field 'x' (known: a); this "
                              "batond is baton 0.1.0: if the client is newer, "
                              "replace batond"}) {
    Error error{ErrorCode::kInvalidArgument, message};
    EXPECT_EQ(WithVersionSkewHint(error).message, message);
  }
}

}  // namespace
}  // namespace baton
