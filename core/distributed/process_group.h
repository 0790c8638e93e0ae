// DistContext: this process's place in a data-parallel group, on PyTorch's c10d: a TCPStore
// at MASTER_ADDR:MASTER_PORT (rank 0 serves it) and a process group over it, Gloo for CPU
// tensors or NCCL for CUDA ones. The collectives the trainer and the run loop need (all-reduce,
// broadcast, "does any rank want to stop", a file's bytes from rank 0), each failing with a
// CommError that names the operation, the rank and the cause instead of hanging: every
// collective and every wait for rank 0 ends at the timeout, and a peer that dies ends it at once.
// The c10d headers stay inside process_group.cpp.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/launch_env.h"

namespace depthlab::distributed {

class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Rank 0 could not serve the rendezvous because another process holds MASTER_PORT (the
/// `--nproc` launcher then tries again on another port when it chose the port itself).
class PortTakenError : public CommError {
 public:
  using CommError::CommError;
};

/// True when `message` (a TCPStore's bind error, classic or libuv) says the address is in use.
bool saysAddressInUse(const std::string& message);

/// "gloo" or "nccl" for `requested` ("auto", "gloo" or "nccl") on `device`; throws with the
/// reason when NCCL is asked for but cannot be used (a CPU device, a build without NCCL).
std::string chooseBackend(const std::string& requested, torch::Device device);
/// True when this build can create NCCL process groups (the CUDA LibTorch with nccl.h).
bool ncclAvailable();

class DistContext {
 public:
  /// Connects to the group (rank 0 starts the TCPStore and waits up to `timeoutSeconds` for the
  /// others). `device` is this rank's device (cuda:LOCAL_RANK for NCCL).
  static std::unique_ptr<DistContext> create(const LaunchEnv& env, const std::string& backend,
                                             torch::Device device, double timeoutSeconds);
  ~DistContext();

  int rank() const { return m_env.rank; }
  int worldSize() const { return m_env.worldSize; }
  const LaunchEnv& env() const { return m_env; }
  const std::string& backend() const { return m_backend; }
  torch::Device device() const { return m_device; }
  /// "rank 1 of 2 (gloo)".
  std::string describe() const;

  /// An all-reduce in flight; wait() throws CommError.
  class Pending {
   public:
    Pending();
    Pending(Pending&&) noexcept;
    Pending& operator=(Pending&&) noexcept;
    ~Pending();
    void wait();
    struct Impl;
   private:
    friend class DistContext;
    std::unique_ptr<Impl> m_impl;
  };
  /// Sums `t` over the ranks, in place, asynchronously.
  Pending allreduceSumAsync(torch::Tensor t);
  void allreduceSum(torch::Tensor t);
  /// True when `flag` is set on any rank (one small all-reduce).
  bool anyRank(bool flag);
  /// Every tensor gets `root`'s values, in place.
  void broadcast(std::vector<torch::Tensor> tensors, int root = 0);
  /// `root`'s bytes, on every rank (sent through the process group in chunks).
  std::string broadcastBytes(const std::string& bytes, int root = 0);
  /// Key-value pairs through the TCPStore (small values: configs, paths).
  void setValue(const std::string& key, const std::string& value);
  /// Waits for `key`, checking about 5 times a second that rank 0 still serves the store; a
  /// vanished rank 0, or a wait past the group's timeout, throws CommError. `what` says what is
  /// awaited, for that message.
  std::string waitValue(const std::string& key, const std::string& what);
  void barrier();

 private:
  DistContext() = default;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  LaunchEnv m_env;
  std::string m_backend;
  torch::Device m_device = torch::kCPU;
  double m_timeout = 1800;
};

}  // namespace depthlab::distributed
