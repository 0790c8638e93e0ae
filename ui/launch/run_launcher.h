// RunLauncher: runs experiments as separate `depthlab-cli train` processes, one paired group
// (one seed) at a time on CPU, so a crash or an out-of-memory abort stays in its process and
// the window follows every run through the store. Stopping asks through the store (the
// trainer checkpoints and marks the run stopped); a process that dies is marked crashed by
// the store's reaper.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <deque>
#include <memory>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::ui {

class RunLauncher : public QObject {
  Q_OBJECT
 public:
  RunLauncher(QString databasePath, QString cliPath, QObject* parent = nullptr);
  ~RunLauncher() override;

  /// Queues one group per seed (seed, seed+1, ...). Returns the group names.
  QStringList enqueue(const experiment::ExperimentConfig& config, int seeds);
  /// Queues paired groups as they are (a sweep grid). Returns their names.
  QStringList enqueueGroups(const std::vector<experiment::ExperimentConfig>& groups);
  /// Groups trained at once (1 on CPU; more on a GPU with memory to spare).
  void setMaxParallel(int n);
  int queued() const { return static_cast<int>(m_queue.size()); }
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
  void groupFinished(const QString& group, int exitCode, const QString& errorTail);

 private:
  void startNext();

  QString m_db, m_cli;
  QTemporaryDir m_configs;
  std::deque<std::pair<QString, QString>> m_queue;  // (group name, config file)
  std::vector<std::pair<QProcess*, QString>> m_running;  // process, group
  int m_maxParallel = 1;
  bool m_detach = false;
};

}  // namespace depthlab::ui
