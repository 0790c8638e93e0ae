// See spm_program.h.
#include "util/spm_program.h"

#include "util/helper_program.h"

namespace depthlab::util {

std::string spmEncodeProgram() {
#ifdef DEPTHLAB_SPM_ENCODE_BUILT
  const std::string built = DEPTHLAB_SPM_ENCODE_BUILT;
#else
  const std::string built;
#endif
  return helperProgram("depthlab-spm-encode", "DEPTHLAB_SPM_ENCODE", built);
}

}  // namespace depthlab::util
