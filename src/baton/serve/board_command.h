// `baton board` (doc/board.md): prints the board's login URL and opens it
// in the user's browser, starting `baton serve` in the background when
// none runs for this state folder.
#ifndef BATON_SERVE_BOARD_COMMAND_H_
#define BATON_SERVE_BOARD_COMMAND_H_

namespace baton::serve {

// `baton board ARGS` (argv after "board"). Returns the exit code.
int RunBoardMain(int argc, char** argv);

}  // namespace baton::serve

#endif  // BATON_SERVE_BOARD_COMMAND_H_
