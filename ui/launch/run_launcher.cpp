// RunLauncher; see run_launcher.h.
#include "launch/run_launcher.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include <algorithm>

namespace depthlab::ui {

RunLauncher::RunLauncher(QString databasePath, QString cliPath, QObject* parent)
    : QObject(parent), m_db(std::move(databasePath)),
      m_cli(cliPath.isEmpty() ? defaultCliPath() : std::move(cliPath)) {}

RunLauncher::~RunLauncher() {
  m_queue.clear();
  for (auto& [process, group] : m_running) {
    process->disconnect(this);
    if (m_detach) {
      // The training process keeps running: it is not a child we wait for.
      process->setParent(nullptr);
    } else {
      process->terminate();  // SIGTERM: the trainer checkpoints and marks runs stopped
      process->waitForFinished(30000);
    }
  }
  m_running.clear();
}

void RunLauncher::setMaxParallel(int n) {
  m_maxParallel = std::max(1, n);
  startNext();
}

QString RunLauncher::defaultCliPath() {
  QString local = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("depthlab-cli"));
  if (QFileInfo::exists(local)) return local;
  QString onPath = QStandardPaths::findExecutable(QStringLiteral("depthlab-cli"));
  return onPath.isEmpty() ? local : onPath;
}

qint64 RunLauncher::runningPid() const {
  return m_running.empty() ? 0 : m_running.front().first->processId();
}

QStringList RunLauncher::enqueueGroups(const std::vector<experiment::ExperimentConfig>& groups) {
  QStringList names;
  for (const auto& c : groups) {
    const QString file = m_configs.filePath(QStringLiteral("group-%1-%2.json")
                                                .arg(QDateTime::currentMSecsSinceEpoch())
                                                .arg(m_queue.size()));
    experiment::saveConfigFile(c, file.toStdString());
    m_queue.emplace_back(QString::fromStdString(c.name), file);
    names << QString::fromStdString(c.name);
  }
  startNext();
  return names;
}

QStringList RunLauncher::enqueue(const experiment::ExperimentConfig& config, int seeds) {
  QStringList names;
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
  for (int i = 0; i < std::max(seeds, 1); ++i) {
    auto c = config;
    c.run.seed = config.run.seed + i;
    if (c.name.empty()) {
      c.name = (c.preset.empty() ? std::string("custom") : c.preset) + "-" + stamp.toStdString();
    }
    if (seeds > 1) c.name += "-s" + std::to_string(c.run.seed);
    const QString file = m_configs.filePath(QStringLiteral("group-%1-%2.json")
                                                .arg(QDateTime::currentMSecsSinceEpoch())
                                                .arg(m_queue.size() + static_cast<size_t>(i)));
    experiment::saveConfigFile(c, file.toStdString());
    m_queue.emplace_back(QString::fromStdString(c.name), file);
    names << QString::fromStdString(c.name);
  }
  startNext();
  return names;
}

void RunLauncher::startNext() {
  while (static_cast<int>(m_running.size()) < m_maxParallel && !m_queue.empty()) {
    auto [group, file] = m_queue.front();
    m_queue.pop_front();
    auto* process = new QProcess(this);
    m_running.emplace_back(process, group);
    process->setProcessChannelMode(QProcess::MergedChannels);
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("OMP_WAIT_POLICY"), QStringLiteral("PASSIVE"));
    process->setProcessEnvironment(env);
    auto done = [this, process, group](int code, const QString& tail) {
      m_running.erase(std::remove_if(m_running.begin(), m_running.end(),
                                     [process](const auto& r) { return r.first == process; }),
                      m_running.end());
      process->deleteLater();
      Q_EMIT groupFinished(group, code, tail);
      startNext();
    };
    connect(process, &QProcess::finished, this, [process, done](int code, QProcess::ExitStatus status) {
      done(status == QProcess::CrashExit ? -1 : code,
           QString::fromLocal8Bit(process->readAll()).right(2000));
    });
    connect(process, &QProcess::errorOccurred, this, [this, process, done](QProcess::ProcessError e) {
      if (e == QProcess::FailedToStart) done(-1, tr("cannot start %1: %2").arg(m_cli, process->errorString()));
    });
    process->start(m_cli, {QStringLiteral("--db"), m_db, QStringLiteral("train"),
                           QStringLiteral("--config"), file, QStringLiteral("--quiet")});
    Q_EMIT groupStarted(group);
  }
}

}  // namespace depthlab::ui
