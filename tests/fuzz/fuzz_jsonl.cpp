// libFuzzer target: JSON Lines records (the "text" scanner and the UTF-8 check). Any input
// must give one of the four outcomes, never a crash or an over-read; what comes out as Ok text
// is valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "data/jsonl_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::string out;
  if (depthlab::data::extractJsonlText(line, out) == depthlab::data::JsonlText::Ok &&
      !depthlab::data::isValidUtf8(out)) {
    std::abort();  // an Ok text must be well-formed UTF-8
  }
  (void)depthlab::data::isValidUtf8(line);
  return 0;
}
