// The set-up panel edits every field of the experiment config: the ones its sections do not place
// are in the "Advanced" section, made from the config table (closed until asked), and a value
// set there is the config's (config(), setConfig(), the changed-from-preset marks, validation).
#include <gtest/gtest.h>

#include <QApplication>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QToolButton>

#include <cstdlib>
#include <string>

#include "experiment/config_fields.h"
#include "setup/setup_panel.h"

using namespace depthlab;

TEST(SetupAdvanced, EveryConfigFieldHasAnEditorInTheWindow) {
  ui::SetupPanel panel;
  auto* advanced = panel.findChild<QWidget*>(QStringLiteral("advancedFields"));
  ASSERT_NE(advanced, nullptr);
  int inAdvanced = 0;
  for (const auto& f : experiment::configFields()) {
    auto* editor = panel.findChild<QWidget*>(QString::fromStdString(f.path()));
    ASSERT_NE(editor, nullptr) << f.path() << " has no editor";
    EXPECT_EQ(editor->toolTip(), QString::fromUtf8(f.help)) << f.path();
    inAdvanced += advanced->isAncestorOf(editor) ? 1 : 0;
  }
  // The fields the issue named as missing are among the advanced ones.
  for (const char* path : {"optim.weightDecay", "optim.gradClip", "run.bf16"}) {
    EXPECT_TRUE(advanced->isAncestorOf(panel.findChild<QWidget*>(QString::fromLatin1(path))))
        << path;
  }
  auto* toggle = panel.findChild<QToolButton*>(QStringLiteral("advancedToggle"));
  ASSERT_NE(toggle, nullptr);
  EXPECT_TRUE(toggle->text().contains(QString::number(inAdvanced))) << toggle->text().toStdString();
  panel.show();
  EXPECT_FALSE(advanced->isVisible()) << "closed until asked";
  toggle->click();
  EXPECT_TRUE(advanced->isVisible());
  // For a look by eye: DEPTHLAB_SHOT_DIR=/tmp/x ./test_ui --gtest_filter=SetupAdvanced.*
  if (const char* shots = std::getenv("DEPTHLAB_SHOT_DIR")) {
    panel.resize(480, 900);
    QApplication::processEvents();
    advanced->grab().save(QString::fromLocal8Bit(shots) + QStringLiteral("/setup-advanced.png"));
  }
}

TEST(SetupAdvanced, AValueSetThereIsTheConfigsAndIsCheckedLikeAnyField) {
  ui::SetupPanel panel;
  auto* decay = panel.findChild<QWidget*>(QStringLiteral("optim.weightDecay"));
  auto* bf16 = panel.findChild<QCheckBox*>(QStringLiteral("run.bf16"));
  ASSERT_NE(decay, nullptr);
  ASSERT_NE(bf16, nullptr);
  const double before = panel.config().optim.weightDecay;
  const double wanted = before == 0.05 ? 0.02 : 0.05;
  if (auto* spin = qobject_cast<QDoubleSpinBox*>(decay))
    spin->setValue(wanted);
  else
    qobject_cast<QLineEdit*>(decay)->setText(QString::number(wanted));
  EXPECT_DOUBLE_EQ(panel.config().optim.weightDecay, wanted);
  EXPECT_TRUE(panel.changedFromPreset().contains(QStringLiteral("optim.weightDecay")));

  // setConfig shows a config's values in the advanced editors too.
  auto c = panel.config();
  c.run.bf16 = !bf16->isChecked();
  c.optim.gradClip = 0.5;
  panel.setConfig(c);
  EXPECT_EQ(bf16->isChecked(), c.run.bf16);
  EXPECT_DOUBLE_EQ(panel.config().optim.gradClip, 0.5);

  // Out of the table's range there: the panel's issues name the field.
  auto* clip = panel.findChild<QWidget*>(QStringLiteral("optim.gradClip"));
  if (auto* edit = qobject_cast<QLineEdit*>(clip)) {
    edit->setText(QStringLiteral("-1"));
    bool named = false;
    for (const auto& issue : panel.issues()) named |= issue.field == "optim.gradClip";
    EXPECT_TRUE(named);
  } else {
    // A spin box cannot hold a value outside its range: its minimum is the table's.
    auto* spin = qobject_cast<QDoubleSpinBox*>(clip);
    ASSERT_NE(spin, nullptr);
    EXPECT_GE(spin->minimum(), 0.0);
  }
}
