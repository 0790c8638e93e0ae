// What the status bar says when a launched group's process ends: what became of its runs
// (finished, stopped, diverged, crashed), read from the store, not assumed from a clean exit:
// a group the user stopped ends with exit code 0 too, and had been reported "finished".
#pragma once

#include <QString>

#include <vector>

#include "store/store_types.h"

namespace depthlab::ui {

/// "Group g finished", "Group g stopped", "Group g ended: 1 finished, 1 stopped", or, for a
/// non-zero exit code, "Group g ended with an error: <last line of errorTail>". `runs` may
/// hold other groups' runs; only those of `group` count.
QString groupEndMessage(const QString& group, const std::vector<store::RunInfo>& runs, int exitCode,
                        const QString& errorTail);

}  // namespace depthlab::ui
