// DistContext; see process_group.h. Compiled with USE_C10D_GLOO (and USE_C10D_NCCL when the
// CUDA LibTorch and nccl.h are there), which the c10d headers need to declare their classes.
#include "distributed/process_group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if DEPTHLAB_WITH_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <torch/version.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace depthlab::distributed {

namespace {

using Ms = std::chrono::milliseconds;
Ms toMs(double seconds) { return Ms(static_cast<int64_t>(seconds * 1000.0)); }

// The class the Gloo and NCCL groups derive from: ProcessGroup in LibTorch 1.x, Backend in 2.x.
#if TORCH_VERSION_MAJOR >= 2
using GroupBase = c10d::Backend;
#else
using GroupBase = c10d::ProcessGroup;
#endif

bool isLoopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

}  // namespace

bool ncclAvailable() {
#if DEPTHLAB_WITH_NCCL
  return true;
#else
  return false;
#endif
}

std::string chooseBackend(const std::string& requested, torch::Device device) {
  if (requested == "gloo") return "gloo";
  if (requested == "nccl") {
    if (!device.is_cuda()) {
      throw std::runtime_error("--backend nccl needs a CUDA device (NCCL reduces GPU memory); "
                               "use gloo on the CPU");
    }
    if (!ncclAvailable()) {
      throw std::runtime_error("this build has no NCCL (Debian's LibTorch is CPU only; the "
                               "torch2 configuration with a CUDA torch has it); use --backend gloo");
    }
    return "nccl";
  }
  if (requested != "auto" && !requested.empty()) {
    throw std::runtime_error("unknown backend '" + requested + "' (auto, gloo or nccl)");
  }
  return device.is_cuda() && ncclAvailable() ? "nccl" : "gloo";
}

struct DistContext::Impl {
  c10::intrusive_ptr<c10d::Store> store;  // the TCPStore, under the prefix "depthlab/": a
                                          // torchrun agent's store holds keys of its own
  c10::intrusive_ptr<GroupBase> group;  // ProcessGroupGloo or ProcessGroupNCCL
};

struct DistContext::Pending::Impl {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;
};

DistContext::Pending::Pending() = default;
DistContext::Pending::Pending(Pending&&) noexcept = default;
DistContext::Pending& DistContext::Pending::operator=(Pending&&) noexcept = default;
DistContext::Pending::~Pending() = default;

void DistContext::Pending::wait() {
  if (!m_impl || !m_impl->work) return;
  try {
    m_impl->work->wait();
  } catch (const std::exception& e) {
    auto what = m_impl->what;
    m_impl.reset();
    throw CommError(what + " failed: " + e.what());
  }
  m_impl.reset();
}

bool saysAddressInUse(const std::string& message) {
  std::string m = message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  return m.find("address already in use") != std::string::npos ||
         m.find("eaddrinuse") != std::string::npos || m.find("errno: 98") != std::string::npos;
}

std::unique_ptr<DistContext> DistContext::create(const LaunchEnv& env, const std::string& backend,
                                                 torch::Device device, double timeoutSeconds) {
  std::unique_ptr<DistContext> d(new DistContext());
  d->m_env = env;
  d->m_backend = backend;
  d->m_device = device;
  d->m_timeout = timeoutSeconds;
  d->m_impl = std::make_unique<Impl>();
  const std::string where = env.masterAddr + ":" + std::to_string(env.masterPort);
  // A rendezvous that never answers (a TCPStore of another PyTorch version speaks another
  // protocol, and LibTorch's client then waits without a timeout) must not hang the rank:
  // past the timeout and a margin, the process ends with a message.
  struct Watchdog {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread t;
    Watchdog(double seconds, std::string what) {
      t = std::thread([this, seconds, what = std::move(what)] {
        std::unique_lock<std::mutex> lock(m);
        if (!cv.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done; })) {
          std::fprintf(stderr, "depthlab-cli: %s\n", what.c_str());
          std::fflush(stderr);
          std::_Exit(1);
        }
      });
    }
    ~Watchdog() {
      {
        std::lock_guard<std::mutex> lock(m);
        done = true;
      }
      cv.notify_all();
      t.join();
    }
  } watchdog(timeoutSeconds + 30,
             "rank " + std::to_string(env.rank) + " of " + std::to_string(env.worldSize) +
                 ": the rendezvous at " + where + " did not complete within " +
                 std::to_string(static_cast<int>(timeoutSeconds + 30)) +
                 " s (are all ranks started? under torchrun: is it the torchrun of the PyTorch "
                 "this build links, " +
                 std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "?)");
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(env.masterPort);
    so.isServer = env.rank == 0 && !env.agentStore;  // torchrun's agent may serve it already
    so.numWorkers = static_cast<size_t>(env.worldSize);
    so.waitWorkers = true;
    so.timeout = toMs(timeoutSeconds);
    auto tcp = c10::make_intrusive<c10d::TCPStore>(env.masterAddr, so);
    d->m_impl->store = c10::make_intrusive<c10d::PrefixStore>("depthlab/", tcp);
  } catch (const std::exception& e) {
    const std::string why = "rank " + std::to_string(env.rank) + " of " +
                            std::to_string(env.worldSize) + " could not " +
                            (env.rank == 0 ? "serve" : "reach") + " the rendezvous at " + where +
                            " (MASTER_ADDR:MASTER_PORT): " + e.what();
    if (env.rank == 0 && !env.agentStore && saysAddressInUse(e.what())) throw PortTakenError(why);
    throw CommError(why);
  }
  try {
    if (backend == "nccl") {
#if DEPTHLAB_WITH_NCCL
      c10::cuda::set_device(device.index());
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = toMs(timeoutSeconds);
      d->m_impl->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(d->m_impl->store, env.rank,
                                                                    env.worldSize, o);
#else
      throw std::runtime_error("this build has no NCCL");
#endif
    } else {
      auto o = c10d::ProcessGroupGloo::Options::create(toMs(timeoutSeconds));
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else if (isLoopback(env.masterAddr)) {
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      d->m_impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(d->m_impl->store, env.rank,
                                                                    env.worldSize, o);
    }
  } catch (const CommError&) {
    throw;
  } catch (const std::exception& e) {
    throw CommError("rank " + std::to_string(env.rank) + " could not create the " + backend +
                    " process group of " + std::to_string(env.worldSize) + " ranks: " + e.what());
  }
  return d;
}

DistContext::~DistContext() = default;

std::string DistContext::describe() const {
  return "rank " + std::to_string(rank()) + " of " + std::to_string(worldSize()) + " (" +
         m_backend + ")";
}

DistContext::Pending DistContext::allreduceSumAsync(torch::Tensor t) {
  Pending p;
  p.m_impl = std::make_unique<Pending::Impl>();
  p.m_impl->what = "all-reduce on " + describe();
  std::vector<at::Tensor> ts{t};
  try {
    p.m_impl->work = m_impl->group->allreduce(ts);
  } catch (const std::exception& e) {
    throw CommError(p.m_impl->what + " failed: " + e.what());
  }
  return p;
}

void DistContext::allreduceSum(torch::Tensor t) { allreduceSumAsync(std::move(t)).wait(); }

bool DistContext::anyRank(bool flag) {
  auto t = torch::full({1}, flag ? 1.0f : 0.0f, torch::TensorOptions().device(m_device));
  allreduceSum(t);
  return t.item<float>() > 0.5f;
}

void DistContext::broadcast(std::vector<torch::Tensor> tensors, int root) {
  const std::string what = "broadcast from rank " + std::to_string(root) + " on " + describe();
  for (auto& t : tensors) {
    std::vector<at::Tensor> one{t};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    try {
      m_impl->group->broadcast(one, o)->wait();
    } catch (const std::exception& e) {
      throw CommError(what + " failed: " + e.what());
    }
  }
}

std::string DistContext::broadcastBytes(const std::string& bytes, int root) {
  auto size = torch::full({1}, static_cast<int64_t>(bytes.size()),
                          torch::TensorOptions().dtype(torch::kInt64).device(m_device));
  broadcast({size}, root);
  const int64_t n = size.to(torch::kCPU).item<int64_t>();
  std::string out(static_cast<size_t>(n), '\0');
  constexpr int64_t kChunk = 64ll << 20;
  for (int64_t at = 0; at < n; at += kChunk) {
    const int64_t len = std::min(kChunk, n - at);
    torch::Tensor host = torch::empty({len}, torch::kUInt8);
    if (rank() == root) std::memcpy(host.data_ptr(), bytes.data() + at, static_cast<size_t>(len));
    torch::Tensor t = host.to(m_device);
    broadcast({t}, root);
    host = t.to(torch::kCPU);
    std::memcpy(out.data() + at, host.data_ptr(), static_cast<size_t>(len));
  }
  return out;
}

void DistContext::setValue(const std::string& key, const std::string& value) {
  try {
    m_impl->store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
  } catch (const std::exception& e) {
    throw CommError("the rendezvous store failed on " + describe() + ": " + e.what());
  }
}

std::string DistContext::waitValue(const std::string& key, const std::string& what) {
  // The group's timeout bounds the wait too: a rank 0 alive but stuck no longer holds the
  // others forever.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(m_timeout);
  try {
    while (!m_impl->store->check({key})) {
      if (std::chrono::steady_clock::now() > deadline) {
        throw CommError(describe() + " waited " + std::to_string(static_cast<int>(m_timeout)) +
                        " s for " + what + " (the group's timeout, --dist-timeout) and gave up");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    auto v = m_impl->store->get(key);
    return std::string(v.begin(), v.end());
  } catch (const CommError&) {
    throw;
  } catch (const std::exception& e) {
    throw CommError(describe() + " stopped waiting for " + what +
                    ": rank 0 is gone or unreachable (" + e.what() + ")");
  }
}

void DistContext::barrier() {
  auto t = torch::zeros({1}, torch::TensorOptions().device(m_device));
  allreduceSum(t);
}

}  // namespace depthlab::distributed
