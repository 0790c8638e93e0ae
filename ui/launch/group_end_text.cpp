// See group_end_text.h.
#include "launch/group_end_text.h"

#include <QObject>
#include <QStringList>

#include <map>

namespace depthlab::ui {

QString groupEndMessage(const QString& group, const std::vector<store::RunInfo>& runs, int exitCode,
                        const QString& errorTail) {
  if (exitCode != 0) {
    const QString last = errorTail.trimmed().section(QLatin1Char('\n'), -1);
    return QObject::tr("Group %1 ended with an error: %2").arg(group, last);
  }
  std::map<store::RunStatus, int> counts;
  for (const auto& r : runs) {
    if (QString::fromStdString(r.groupName) == group) ++counts[r.status];
  }
  if (counts.size() == 1) {  // one outcome for every run: "finished", "stopped", ...
    return QObject::tr("Group %1 %2").arg(group, QString::fromLatin1(store::toString(counts.begin()->first)));
  }
  if (counts.empty()) return QObject::tr("Group %1 ended").arg(group);
  QStringList parts;
  for (const auto& [status, n] : counts) parts << QStringLiteral("%1 %2").arg(n).arg(QString::fromLatin1(store::toString(status)));
  return QObject::tr("Group %1 ended: %2").arg(group, parts.join(QStringLiteral(", ")));
}

}  // namespace depthlab::ui
