// See background_probes.h.
#include "experiment/background_probes.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

#include "experiment/train_loop.h"
#include "train/thread_share.h"

namespace depthlab::experiment {

namespace {

// A decoder of the same shape and scheme holding a copy of `live`'s weights. Making modules
// draws from torch's default generator; its state is put back so that training continues
// exactly as it would have without the snapshot.
model::Decoder snapshotOf(model::Decoder& live) {
  std::map<std::string, torch::Tensor> params;
  for (const auto& p : live->named_parameters()) params[p.key()] = p.value();
  auto generator = at::detail::getDefaultCPUGenerator();
  const auto state = generator.get_state();
  model::Decoder copy(live->config(), live->options(), live->scheme(),
                      [&](const std::string& name, const torch::Tensor&) {
                        const auto it = params.find(name);
                        if (it == params.end()) {
                          throw std::logic_error("probe snapshot: no parameter " + name);
                        }
                        return it->second.detach().clone();
                      });
  generator.set_state(state);
  copy->eval();
  return copy;
}

}  // namespace

bool probesFitBeside(torch::Device device, int trainingThreads, int cores, int worldSize) {
  return device.is_cpu() && worldSize <= 1 && trainingThreads < cores;
}

BackgroundProbes::BackgroundProbes(const ProbeSchedule& schedule, size_t members, bool background)
    : m_schedule(schedule), m_background(background), m_slots(members) {
  // The worker's set_num_threads(1) also sets ATen's process-wide default, which a thread
  // adopts at its first parallel op: settle the training thread's count before that.
  m_callerThreads = train::settledThreadCount();
}

BackgroundProbes::~BackgroundProbes() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
    m_queue.clear();
  }
  m_changed.notify_all();
  if (m_worker.joinable()) {
    m_worker.join();
    torch::set_num_threads(m_callerThreads);  // the process-wide default back
  }
}

void BackgroundProbes::copyWeights(Slot& slot, model::Decoder& live) {
  if (!slot.snapshot) {
    slot.snapshot = snapshotOf(live);
    return;
  }
  torch::NoGradGuard ng;
  auto to = slot.snapshot->parameters();
  const auto from = live->parameters();
  if (to.size() != from.size()) throw std::logic_error("probe snapshot: parameter count changed");
  for (size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i]);
}

double BackgroundProbes::runDue(size_t member, model::Decoder& model, int64_t step,
                                store::WriteBatch& out) {
  const auto which = m_schedule.dueAt(step, /*final=*/false);
  if (!m_background) return which.empty() ? 0 : m_schedule.run(model, step, which, out);
  const auto t0 = Clock::now();
  Slot& slot = m_slots.at(member);
  std::unique_lock<std::mutex> lock(m_mutex);
  if (which.empty()) {
    if (slot.state == State::Done) take(slot, out);
    return 0;
  }
  m_changed.wait(lock, [&] { return !slot.inFlight(); });
  if (slot.state == State::Done) take(slot, out);
  lock.unlock();
  copyWeights(slot, model);  // the worker does not touch an idle slot
  lock.lock();
  slot.step = step;
  slot.which = which;
  slot.state = State::Queued;
  m_queue.push_back(member);
  if (!m_worker.joinable()) m_worker = std::thread([this] { work(); });
  lock.unlock();
  m_changed.notify_all();
  return since(t0);
}

double BackgroundProbes::settle(size_t member, store::WriteBatch& out) {
  if (!m_background) return 0;
  std::unique_lock<std::mutex> lock(m_mutex);
  Slot& slot = m_slots.at(member);
  double waited = 0;
  if (slot.inFlight()) {
    const auto t0 = Clock::now();
    m_changed.wait(lock, [&] { return !slot.inFlight(); });
    waited = since(t0);
  }
  if (slot.state == State::Done) take(slot, out);
  return waited;
}

double BackgroundProbes::besideSeconds() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_besideSeconds;
}

bool BackgroundProbes::busy() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return std::any_of(m_slots.begin(), m_slots.end(), [](const Slot& s) { return s.inFlight(); });
}

void BackgroundProbes::take(Slot& slot, store::WriteBatch& out) {
  slot.state = State::Idle;
  if (slot.failure) {
    auto failure = slot.failure;
    slot.failure = nullptr;
    std::rethrow_exception(failure);
  }
  out.append(std::move(slot.rows));
}

void BackgroundProbes::work() {
  train::useOneIntraOpThread();  // this thread's share: the core training leaves free
  std::unique_lock<std::mutex> lock(m_mutex);
  while (true) {
    m_changed.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
    if (m_stopping) return;
    Slot& slot = m_slots[m_queue.front()];
    m_queue.pop_front();
    slot.state = State::Running;
    lock.unlock();
    store::WriteBatch rows;
    std::exception_ptr failure;
    double seconds = 0;
    try {
      seconds = m_schedule.run(slot.snapshot, slot.step, slot.which, rows);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    slot.rows = std::move(rows);
    slot.failure = failure;
    slot.state = State::Done;
    m_besideSeconds += seconds;
    m_changed.notify_all();
  }
}

}  // namespace depthlab::experiment
