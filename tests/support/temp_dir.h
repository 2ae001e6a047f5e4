// A fresh folder under /tmp for one test, removed with its contents when
// the test ends.
#ifndef BATON_TESTS_SUPPORT_TEMP_DIR_H_
#define BATON_TESTS_SUPPORT_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace baton::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/baton-test.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // `path()/name`, made as a folder.
  std::string MakeDir(const std::string& name) const {
    std::string dir = path_ + "/" + name;
    std::filesystem::create_directory(dir);
    return dir;
  }

 private:
  std::string path_;
};

}  // namespace baton::testing

#endif  // BATON_TESTS_SUPPORT_TEMP_DIR_H_
