// RunLauncher: runs experiments as separate `depthlab-cli train` (and `resume`) processes, one
// paired group (one seed) at a time on CPU, so a crash or an out-of-memory abort stays in its
// process and the window follows every run through the store. Until a group's runs exist in
// the store it is a pending launch here (queued, or starting with the phase its process reports:
// reading the corpus, the tokenizer, building models, the first step). Stopping asks through
// the store (the trainer checkpoints and marks the run stopped); a process that dies is marked
// crashed by the store's reaper.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <QElapsedTimer>

#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::ui {

/// A launch whose runs are not in the store yet.
struct PendingLaunch {
  QString group;
  QStringList schemes;
  bool started = false;    // its process runs (else queued)
  QString phase;           // the last phase its process reported
  double seconds = 0;      // since the process started
};

class RunLauncher : public QObject {
  Q_OBJECT
 public:
  RunLauncher(QString databasePath, QString cliPath, QObject* parent = nullptr);
  ~RunLauncher() override;

  /// Queues one group per seed (seed, seed+1, ...). Returns the group names.
  QStringList enqueue(const experiment::ExperimentConfig& config, int seeds);
  /// Queues paired groups as they are (a sweep grid). Returns their names.
  QStringList enqueueGroups(const std::vector<experiment::ExperimentConfig>& groups);
  /// Queues `depthlab-cli resume <id>` for a stopped or crashed run, with `--steps toStep`
  /// when given (a run trained further than planned).
  void enqueueResume(int64_t runId, const QString& group, int64_t toStep = 0);
  /// One `depthlab-cli resume a,b,...` for runs of one group: those stopped together train side
  /// by side in that one process, as they did; the others one after the other.
  void enqueueResume(const std::vector<int64_t>& runIds, const QString& group, int64_t toStep = 0);
  /// Launches queued or starting whose runs are not in the store yet (the window drops those
  /// whose group has appeared there: forgetPending).
  std::vector<PendingLaunch> pending() const;
  void forgetPending(const QString& group);
  /// Group names queued or running (taken for new launches).
  QStringList activeGroupNames() const;
  /// Groups trained at once (1 on CPU; more on a GPU with memory to spare).
  void setMaxParallel(int n);
  int queued() const { return static_cast<int>(m_queue.size()); }
  /// A queued group's place in line (1: starts next); 0 when it is not queued.
  int queuePosition(const QString& group) const;
  bool busy() const { return !m_running.empty(); }
  /// Pid of the oldest running training process (0 when idle).
  qint64 runningPid() const;
  /// Leaves the running process alone when the launcher is destroyed (keep in background).
  void detachOnExit() { m_detach = true; }
  /// Drops the queue.
  void clearQueue() { m_queue.clear(); }
  /// The cli path used when none is given: next to the running executable, else PATH.
  static QString defaultCliPath();

 Q_SIGNALS:
  void groupStarted(const QString& group);
  /// A start-up phase reported by the group's process ("reading corpus ...", "first step ...").
  void groupPhase(const QString& group, const QString& phase);
  void groupFinished(const QString& group, int exitCode, const QString& errorTail);

 private:
  void startNext();

  struct Queued {
    QString group;
    QStringList arguments;  // after --db <db>
    QStringList schemes;
  };
  QString m_db, m_cli;
  QTemporaryDir m_configs;
  std::deque<Queued> m_queue;
  std::vector<std::pair<QProcess*, QString>> m_running;  // process, group
  std::map<QString, PendingLaunch> m_pending;           // by group
  std::map<QString, QElapsedTimer> m_startedAt;
  std::map<QProcess*, QByteArray> m_output;             // tail of each process's output
  std::map<QProcess*, QByteArray> m_partial;            // its unfinished last line
  int m_maxParallel = 1;
  bool m_detach = false;
};

}  // namespace depthlab::ui
