// The board's page files (src/baton/serve/board/: one HTML page, its CSS
// and its JavaScript), built into the binary by cmake/embed_files.cmake, so
// that `baton serve` needs nothing at run time: no CDN, no files beside
// it, no Node.
#ifndef BATON_SERVE_BOARD_ASSETS_H_
#define BATON_SERVE_BOARD_ASSETS_H_

#include <span>
#include <string_view>

namespace baton::serve {

struct BoardAsset {
  std::string_view name;          // "/index.html", "/board.js", ...
  std::string_view content_type;  // With its charset.
  std::string_view body;
};

std::span<const BoardAsset> BoardAssets();

}  // namespace baton::serve

#endif  // BATON_SERVE_BOARD_ASSETS_H_
