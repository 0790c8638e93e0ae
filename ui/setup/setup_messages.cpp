// See setup_messages.h.
#include "setup/setup_messages.h"

#include <QFormLayout>
#include <QLabel>
#include <QRegularExpression>
#include <QSpinBox>

#include <algorithm>
#include <vector>

namespace depthlab::ui {

QString fieldLabel(const QWidget* panel, const QString& key) {
  const auto* editor = panel->findChild<QWidget*>(key);
  if (!editor || !editor->parentWidget()) return QString();
  // The form the editor is a row of: the section's own layout, or one nested in it.
  for (auto* form : editor->parentWidget()->findChildren<QFormLayout*>()) {
    if (auto* label = qobject_cast<QLabel*>(form->labelForField(const_cast<QWidget*>(editor)))) {
      return label->text().remove(QLatin1Char('&'));
    }
  }
  return QString();
}

QString withFieldLabels(const QString& message, const QWidget* panel) {
  std::vector<QString> keys;
  for (const auto* w : panel->findChildren<QWidget*>()) {
    if (w->objectName().contains(QLatin1Char('.'))) keys.push_back(w->objectName());
  }
  // Longer keys first: "model.nKvHeads" before a key it might start with.
  std::sort(keys.begin(), keys.end(), [](const QString& a, const QString& b) { return a.size() > b.size(); });
  QString out = message;
  for (const auto& key : keys) {
    if (!out.contains(key)) continue;
    const QString label = fieldLabel(panel, key);
    if (label.isEmpty()) continue;
    out.replace(QRegularExpression(QStringLiteral("(?<![\\w.])%1(?![\\w])").arg(QRegularExpression::escape(key))), label);
  }
  return out;
}

QString typedOutOfRange(const QSpinBox* box, const QString& label) {
  bool ok = false;
  const int v = box->cleanText().trimmed().toInt(&ok);
  if (!ok) return QString();
  if (v < box->minimum()) return QObject::tr("%1: %2 is below the smallest, %3").arg(label).arg(v).arg(box->minimum());
  if (v > box->maximum()) return QObject::tr("%1: %2 is above the largest, %3").arg(label).arg(v).arg(box->maximum());
  return QString();
}

}  // namespace depthlab::ui
