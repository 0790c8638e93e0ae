// RunLauncher; see run_launcher.h.
#include "launch/run_launcher.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace depthlab::ui {

RunLauncher::RunLauncher(QString databasePath, QString cliPath, QObject* parent)
    : QObject(parent), m_db(std::move(databasePath)),
      m_cli(cliPath.isEmpty() ? defaultCliPath() : std::move(cliPath)) {}

RunLauncher::~RunLauncher() {
  m_queue.clear();
  if (m_process) {
    m_process->disconnect(this);
    if (m_detach) {
      // The training process keeps running: it is not a child we wait for.
      m_process->setParent(nullptr);
      m_process = nullptr;
    } else {
      m_process->terminate();  // SIGTERM: the trainer checkpoints and marks runs stopped
      m_process->waitForFinished(30000);
    }
  }
}

QString RunLauncher::defaultCliPath() {
  QString local = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("depthlab-cli"));
  if (QFileInfo::exists(local)) return local;
  QString onPath = QStandardPaths::findExecutable(QStringLiteral("depthlab-cli"));
  return onPath.isEmpty() ? local : onPath;
}

qint64 RunLauncher::runningPid() const { return m_process ? m_process->processId() : 0; }

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
  if (!m_process) startNext();
  return names;
}

void RunLauncher::startNext() {
  if (m_process || m_queue.empty()) return;
  auto [group, file] = m_queue.front();
  m_queue.pop_front();
  m_currentGroup = group;
  m_process = new QProcess(this);
  m_process->setProcessChannelMode(QProcess::MergedChannels);
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("OMP_WAIT_POLICY"), QStringLiteral("PASSIVE"));
  m_process->setProcessEnvironment(env);
  connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    QString tail = QString::fromLocal8Bit(m_process->readAll()).right(2000);
    const QString group = m_currentGroup;
    m_process->deleteLater();
    m_process = nullptr;
    Q_EMIT groupFinished(group, status == QProcess::CrashExit ? -1 : code, tail);
    startNext();
  });
  connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    const QString group = m_currentGroup;
    QString why = m_process->errorString();
    m_process->deleteLater();
    m_process = nullptr;
    Q_EMIT groupFinished(group, -1, tr("cannot start %1: %2").arg(m_cli, why));
    startNext();
  });
  m_process->start(m_cli, {QStringLiteral("--db"), m_db, QStringLiteral("train"),
                           QStringLiteral("--config"), file, QStringLiteral("--quiet")});
  Q_EMIT groupStarted(group);
}

}  // namespace depthlab::ui
