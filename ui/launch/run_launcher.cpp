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

namespace {
QStringList schemesOf(const experiment::ExperimentConfig& c) {
  QStringList out;
  for (const auto& s : c.schemes) out << QString::fromStdString(s);
  return out;
}
}  // namespace

QStringList RunLauncher::enqueueGroups(const std::vector<experiment::ExperimentConfig>& groups) {
  QStringList names;
  for (const auto& c : groups) {
    const QString file = m_configs.filePath(QStringLiteral("group-%1-%2.json")
                                                .arg(QDateTime::currentMSecsSinceEpoch())
                                                .arg(m_queue.size()));
    experiment::saveConfigFile(c, file.toStdString());
    const QString group = QString::fromStdString(c.name);
    m_queue.push_back({group, {QStringLiteral("train"), QStringLiteral("--config"), file, QStringLiteral("--quiet")}, schemesOf(c)});
    m_pending[group] = {group, schemesOf(c), false, tr("queued"), 0};
    names << group;
  }
  startNext();
  return names;
}

void RunLauncher::enqueueResume(int64_t runId, const QString& group, int64_t toStep) {
  enqueueResume(std::vector<int64_t>{runId}, group, toStep);
}

void RunLauncher::enqueueResume(const std::vector<int64_t>& runIds, const QString& group,
                                int64_t toStep) {
  QStringList ids;
  for (int64_t id : runIds) ids << QString::number(id);
  QStringList args = {QStringLiteral("resume"), ids.join(QLatin1Char(','))};
  if (toStep > 0) args << QStringLiteral("--steps") << QString::number(toStep);
  m_queue.push_back({group, args, {}});
  startNext();
}

std::vector<PendingLaunch> RunLauncher::pending() const {
  std::vector<PendingLaunch> out;
  for (const auto& [group, p] : m_pending) {
    PendingLaunch copy = p;
    auto it = m_startedAt.find(group);
    if (copy.started && it != m_startedAt.end()) copy.seconds = static_cast<double>(it->second.elapsed()) / 1000.0;
    out.push_back(copy);
  }
  return out;
}

void RunLauncher::forgetPending(const QString& group) { m_pending.erase(group); }

int RunLauncher::queuePosition(const QString& group) const {
  for (size_t i = 0; i < m_queue.size(); ++i) {
    if (m_queue[i].group == group) return static_cast<int>(i) + 1;
  }
  return 0;
}

QStringList RunLauncher::activeGroupNames() const {
  QStringList out;
  for (const auto& q : m_queue) out << q.group;
  for (const auto& r : m_running) out << r.second;
  return out;
}

QStringList RunLauncher::enqueue(const experiment::ExperimentConfig& config, int seeds) {
  std::vector<experiment::ExperimentConfig> groups;
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
  for (int i = 0; i < std::max(seeds, 1); ++i) {
    auto c = config;
    c.run.seed = config.run.seed + i;
    if (c.name.empty()) {
      c.name = (c.preset.empty() ? std::string("custom") : c.preset) + "-" + stamp.toStdString();
    }
    if (seeds > 1) c.name += "-s" + std::to_string(c.run.seed);
    groups.push_back(std::move(c));
  }
  return enqueueGroups(groups);
}

void RunLauncher::startNext() {
  while (static_cast<int>(m_running.size()) < m_maxParallel && !m_queue.empty()) {
    const Queued next = m_queue.front();
    const QString group = next.group;
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
      m_output.erase(process);
      m_partial.erase(process);
      m_pending.erase(group);  // its runs are in the store now, or it failed before them
      process->deleteLater();
      Q_EMIT groupFinished(group, code, tail);
      startNext();
    };
    // Phases as they come ("phase    3.1 s  reading corpus ..."); the tail for errors.
    connect(process, &QProcess::readyRead, this, [this, process, group] {
      const QByteArray chunk = process->readAll();
      QByteArray& tail = m_output[process];
      tail = (tail + chunk).right(4096);  // for the error message if it fails
      QByteArray& partial = m_partial[process];
      partial += chunk;
      int nl;
      while ((nl = partial.indexOf('\n')) >= 0) {  // complete lines only
        const QString line = QString::fromLocal8Bit(partial.left(nl)).trimmed();
        partial.remove(0, nl + 1);
        if (!line.startsWith(QLatin1String("phase "))) continue;
        const QString what = line.section(QStringLiteral(" s  "), 1).trimmed();
        if (auto it = m_pending.find(group); it != m_pending.end()) it->second.phase = what;
        Q_EMIT groupPhase(group, what);
      }
    });
    connect(process, &QProcess::finished, this, [this, process, done](int code, QProcess::ExitStatus status) {
      const QByteArray tail = m_output[process] + process->readAll();
      done(status == QProcess::CrashExit ? -1 : code, QString::fromLocal8Bit(tail).right(2000));
    });
    connect(process, &QProcess::errorOccurred, this, [this, process, done](QProcess::ProcessError e) {
      if (e == QProcess::FailedToStart) done(-1, tr("cannot start %1: %2").arg(m_cli, process->errorString()));
    });
    process->start(m_cli, QStringList{QStringLiteral("--db"), m_db} + next.arguments);
    m_startedAt[group].start();
    if (auto it = m_pending.find(group); it != m_pending.end()) {
      it->second.started = true;
      it->second.phase = tr("starting");
    }
    Q_EMIT groupStarted(group);
  }
}

}  // namespace depthlab::ui
