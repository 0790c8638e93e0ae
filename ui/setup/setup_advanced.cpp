// The set-up panel's "Advanced" section: an editor for every config field that the sections
// above do not place (weight decay, gradient clipping, bf16, betas, probe cadences, ...), made
// from the config table like theirs (setup_fields.h), by section in the table's order, under a
// button that shows them. Editing one is editing the config: validation, the changed-from-preset
// marks, Start and saved configs treat them as every other field. Holds no field list of its own.
#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

#include "setup/setup_panel.h"

namespace depthlab::ui {

QGroupBox* SetupPanel::makeAdvancedBox() {
  auto* box = new QGroupBox;
  box->setObjectName(QStringLiteral("advancedBox"));
  auto* layout = new QVBoxLayout(box);
  auto* toggle = new QToolButton;
  toggle->setObjectName(QStringLiteral("advancedToggle"));
  toggle->setCheckable(true);
  toggle->setArrowType(Qt::RightArrow);
  toggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  toggle->setAutoRaise(true);
  auto* fields = new QWidget;
  fields->setObjectName(QStringLiteral("advancedFields"));
  auto* inner = new QVBoxLayout(fields);
  inner->setContentsMargins(0, 0, 0, 0);
  int count = 0;
  for (const auto& section : experiment::configSections()) {
    QFormLayout* form = nullptr;
    for (const auto& f : experiment::configFields()) {
      if (f.section != section || m_fields.editor(f.path())) continue;
      if (!form) {
        inner->addWidget(
            new QLabel(QStringLiteral("<b>%1</b>").arg(QString::fromStdString(section))));
        form = new QFormLayout;
        inner->addLayout(form);
      }
      QWidget* editor = m_fields.make(f.path());
      // A check box carries its label as its text; the others get it beside them, with the
      // path, so a field is found by the name a config file or --set uses.
      const QString label = QStringLiteral("%1 (%2)").arg(QString::fromUtf8(f.label),
                                                          QString::fromStdString(f.path()));
      if (qobject_cast<QCheckBox*>(editor))
        form->addRow(editor);
      else
        form->addRow(label, editor);
      ++count;
    }
  }
  toggle->setText(tr("Advanced: %n more field(s) of the config", nullptr, count));
  toggle->setToolTip(tr("Every field of the experiment config the sections above do not show"));
  fields->setVisible(false);
  connect(toggle, &QToolButton::toggled, this, [toggle, fields](bool open) {
    fields->setVisible(open);
    toggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
  });
  layout->addWidget(toggle);
  layout->addWidget(fields);
  box->setVisible(count > 0);
  return box;
}

}  // namespace depthlab::ui
