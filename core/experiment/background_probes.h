// The probes due during training, run beside it: at a due step the live model's weights are
// copied into a snapshot decoder (one per member, made once), and the schedule runs on the
// snapshot on a worker thread with one intra-op thread while training goes on; the rows land
// in the member's pending batch, with the step they were due at, at a later step. Where no
// core is spare (training uses every core, a GPU, data-parallel ranks) the probes run inline
// on the live model, as they always did. Does not run the final probes (the loop runs them
// inline, with nothing left to overlap) or decide cadence (ProbeSchedule does).
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "experiment/probe_schedule.h"
#include "model/decoder.h"
#include "store/store_types.h"

namespace depthlab::experiment {

/// Whether probes can run beside training: a CPU model and a core the training threads leave
/// free (`trainingThreads` intra-op threads of `cores`), and one process training.
bool probesFitBeside(torch::Device device, int trainingThreads, int cores, int worldSize);

class BackgroundProbes {
 public:
  BackgroundProbes(const ProbeSchedule& schedule, size_t members, bool background);
  /// Waits for the probes in flight (their rows are dropped: call settle() to keep them).
  ~BackgroundProbes();
  BackgroundProbes(const BackgroundProbes&) = delete;
  BackgroundProbes& operator=(const BackgroundProbes&) = delete;

  bool background() const { return m_background; }
  /// The probes due after `step` updates of member `member`. Inline: they run now and their
  /// rows go to `out`. Beside training: the member's previous probes are waited for if still
  /// running, their rows and any other finished ones go to `out`, the weights are copied and
  /// the probes queued. Returns the seconds the calling (training) thread was held.
  double runDue(size_t member, model::Decoder& model, int64_t step, store::WriteBatch& out);
  /// Waits for `member`'s probes in flight and moves their rows to `out` (before a checkpoint,
  /// so the store holds every probe up to it). Returns the seconds waited.
  double settle(size_t member, store::WriteBatch& out);
  /// Seconds of probes run on the worker so far (beside training, not holding it).
  double besideSeconds() const;
  /// True while probes are queued or running beside training.
  bool busy() const;

 private:
  enum class State { Idle, Queued, Running, Done };
  struct Slot {
    model::Decoder snapshot{nullptr};
    State state = State::Idle;
    int64_t step = 0;
    std::set<std::string> which;
    store::WriteBatch rows;
    std::exception_ptr failure;
    bool inFlight() const { return state == State::Queued || state == State::Running; }
  };
  void copyWeights(Slot& slot, model::Decoder& live);
  void work();
  // Moves a finished slot's rows to `out` (lock held); rethrows its failure.
  void take(Slot& slot, store::WriteBatch& out);

  const ProbeSchedule& m_schedule;
  const bool m_background;
  std::vector<Slot> m_slots;
  std::deque<size_t> m_queue;
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  bool m_stopping = false;
  double m_besideSeconds = 0;
  int m_callerThreads = 1;
  std::thread m_worker;
};

}  // namespace depthlab::experiment
