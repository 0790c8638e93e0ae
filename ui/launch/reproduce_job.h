// ReproduceJob: the window's running `depthlab-cli reproduce` (one at a time), started from the
// "Reproduce the paper…" dialog. Hands its progress lines on as messages (for the status bar),
// a failure as the command's last error line, and its report (stdout) when it ends. The runs
// it trains reach the window through the store like any other. Closing the window either stops
// it (SIGTERM: the trainer checkpoints; rerunning the same command resumes) or, with
// detachOnExit, leaves it training.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

namespace depthlab::ui {

class CliJob;

class ReproduceJob : public QObject {
  Q_OBJECT
 public:
  ReproduceJob(QString database, QString cliPath, QObject* parent = nullptr);
  ~ReproduceJob() override;

  /// Starts `depthlab-cli --db DB` + `arguments` for `recipe`; false (and nothing started) while
  /// another reproduction runs.
  bool start(const QString& recipe, const QStringList& arguments);
  bool busy() const { return m_job != nullptr; }
  /// The recipe running ("" when none).
  QString recipe() const { return m_recipe; }
  /// Leaves the running command training when this object is destroyed.
  void detachOnExit() { m_detach = true; }

 Q_SIGNALS:
  void message(const QString& text);
  /// The command failed: a title naming the recipe and the command's last error line.
  void failed(const QString& title, const QString& error);
  /// The command ended well; `report` is what it printed on stdout.
  void finished(const QString& recipe, const QString& report);

 private:
  QString m_db, m_cli, m_recipe;
  CliJob* m_job = nullptr;
  bool m_detach = false;
};

}  // namespace depthlab::ui
