// Test helpers: a temporary folder removed at the end of the test, and small file utilities.
#pragma once

#include <string>

namespace depthlab::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return m_path; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }

 private:
  std::string m_path;
};

std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& bytes);
/// Runs a shell command, returns its exit code and (in `output`) stdout+stderr.
int runCommand(const std::string& command, std::string* output = nullptr);

}  // namespace depthlab::test
