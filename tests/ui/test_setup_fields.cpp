// The set-up panel's editors come from the config table (ui/setup/setup_fields.h): each field
// the form shows has the widget of its type with the table's range (or a narrower one the form
// states) and, for a closed set, exactly the table's choices; editing one changes the config
// the panel produces; the options section shows every options field (QK-norm, DyT alphas); a
// named scheme set checks exactly its schemes.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include <nlohmann/json.hpp>

#include <set>
#include <variant>

#include "experiment/config_fields.h"
#include "experiment/presets.h"
#include "model/scheme_sets.h"
#include "setup/setup_fields.h"
#include "setup/setup_panel.h"

using namespace depthlab;

namespace {

bool isInt(const experiment::ConfigField& f) {
  experiment::ExperimentConfig c;
  return std::holds_alternative<int*>(f.ref(c));
}

QStringList itemsOf(const QComboBox* combo) {
  QStringList out;
  for (int i = 0; i < combo->count(); ++i) out << combo->itemText(i);
  return out;
}

QStringList choicesOf(const experiment::ConfigField& f) {
  QStringList out;
  for (const auto& v : f.choices.values) out << QString::fromStdString(v);
  return out;
}

}  // namespace

TEST(SetupFields, EveryShownFieldHasTheEditorOfItsTypeWithTheTablesRange) {
  ui::SetupPanel panel;
  int shown = 0;
  for (const auto& f : experiment::configFields()) {
    auto* editor = panel.findChild<QWidget*>(QString::fromStdString(f.path()));
    if (!editor) continue;
    ++shown;
    SCOPED_TRACE(f.path());
    EXPECT_EQ(editor->toolTip().section(QStringLiteral("\n(changed"), 0, 0),
              QString::fromUtf8(f.help));
    const auto [lo, hi] = ui::editorRange(f);
    const bool hinted = ui::setupHint(f.path()).lo > -1e299;
    if (f.range) {  // the form offers no value outside the table's range
      EXPECT_GE(lo, f.range->lo);
      EXPECT_LE(hi, f.range->hi);
      if (f.range->loOpen && isInt(f)) {
        EXPECT_GT(lo, f.range->lo);
      }
      if (!hinted && f.range->lo > -1e299 && !f.range->loOpen) {
        EXPECT_EQ(lo, f.range->lo);
      }
    }
    experiment::ExperimentConfig probe;
    std::visit(
        [&, w = editor](auto* member) {
          using T = std::remove_pointer_t<decltype(member)>;
          if constexpr (std::is_same_v<T, bool>) {
            auto* box = qobject_cast<QCheckBox*>(w);
            ASSERT_NE(box, nullptr);
            EXPECT_EQ(box->text(), QString::fromUtf8(f.label));
          } else if constexpr (std::is_same_v<T, int>) {
            auto* spin = qobject_cast<QSpinBox*>(w);
            ASSERT_NE(spin, nullptr);
            EXPECT_EQ(spin->minimum(), static_cast<int>(lo));
            EXPECT_LE(spin->maximum(), static_cast<int>(hi));  // the ranks' top follows the device
            if (f.path() != "run.processes") {
              EXPECT_EQ(spin->maximum(), static_cast<int>(hi));
            }
          } else if constexpr (std::is_same_v<T, double>) {
            if (ui::setupHint(f.path()).text) {  // typed, read with the table's range
              EXPECT_NE(qobject_cast<QLineEdit*>(w), nullptr);
              return;
            }
            auto* spin = qobject_cast<QDoubleSpinBox*>(w);
            ASSERT_NE(spin, nullptr);
            EXPECT_DOUBLE_EQ(spin->minimum(), lo);
            EXPECT_DOUBLE_EQ(spin->maximum(), hi);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            EXPECT_NE(qobject_cast<QLineEdit*>(w), nullptr);  // more digits than a spin box holds
          } else if (!f.choices.values.empty()) {
            auto* combo = qobject_cast<QComboBox*>(w);
            ASSERT_NE(combo, nullptr);
            EXPECT_EQ(itemsOf(combo), choicesOf(f));  // exactly the table's choices, in order
            EXPECT_FALSE(combo->isEditable());
          } else {  // free text: a line edit, or the hand-made tokenizer and device lists
            EXPECT_TRUE(qobject_cast<QLineEdit*>(w) || qobject_cast<QComboBox*>(w));
          }
        },
        f.ref(probe));
  }
  EXPECT_GE(shown, 35);
  // Every options field appears, the new ones included, in the options section.
  for (const auto& f : experiment::configFields()) {
    if (std::string(f.section) != "options") continue;
    EXPECT_NE(panel.findChild<QWidget*>(QString::fromStdString(f.path())), nullptr) << f.path();
  }
  EXPECT_NE(panel.findChild<QCheckBox*>(QStringLiteral("options.qkNorm")), nullptr);
  EXPECT_NE(panel.findChild<QDoubleSpinBox*>(QStringLiteral("options.dytAlphaAttn")), nullptr);
  EXPECT_NE(panel.findChild<QDoubleSpinBox*>(QStringLiteral("options.dytAlphaOther")), nullptr);
}

TEST(SetupFields, EditingAGeneratedEditorChangesTheConfig) {
  ui::SetupPanel panel;
  int edited = 0;
  for (const auto& f : experiment::configFields()) {
    auto* w = panel.findChild<QWidget*>(QString::fromStdString(f.path()));
    if (!w) continue;
    SCOPED_TRACE(f.path());
    auto before = panel.config();
    const auto beforeJson = experiment::toJson(before);
    if (auto* box = qobject_cast<QCheckBox*>(w)) {
      box->setChecked(!box->isChecked());
      EXPECT_EQ(*std::get<bool*>(f.ref(before)), !box->isChecked());
    } else if (auto* spin = qobject_cast<QSpinBox*>(w)) {
      spin->setValue(spin->value() == spin->maximum() ? spin->minimum() : spin->maximum());
    } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w)) {
      dspin->setValue(dspin->value() == dspin->maximum() ? dspin->minimum() : dspin->maximum());
    } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
      if (combo->count() < 2) continue;  // a machine with one device
      combo->setCurrentIndex(combo->currentIndex() == 0 ? 1 : 0);
    } else if (auto* edit = qobject_cast<QLineEdit*>(w)) {
      experiment::ExperimentConfig probe;
      const auto ref = f.ref(probe);
      // A number inside the table's range (RoPE's base must exceed 1, an epsilon be small).
      const bool aboveOne = f.range && f.range->lo >= 1;
      edit->setText(std::holds_alternative<int64_t*>(ref) ? QStringLiteral("123456789012")
                    : std::holds_alternative<double*>(ref)
                        ? (aboveOne ? QStringLiteral("250000") : QStringLiteral("2.5e-7"))
                        : QStringLiteral("/tmp/x.txt"));
    } else {
      ADD_FAILURE() << "an editor of no known kind";
      continue;
    }
    ++edited;
    auto after = panel.config();
    // The field changed, and no other.
    auto j = experiment::toJson(after);
    EXPECT_NE(j[f.section][f.key], beforeJson[f.section][f.key]);
    j[f.section][f.key] = beforeJson[f.section][f.key];
    EXPECT_EQ(j, beforeJson);
    // And the form shows a config it produced as it was.
    panel.setConfig(after);
    EXPECT_EQ(experiment::toJson(panel.config()), experiment::toJson(after));
  }
  EXPECT_GE(edited, 30);
  EXPECT_EQ(panel.config().run.seed, 123456789012);          // past 2^31: the whole seed
  EXPECT_EQ(panel.config().options.lnsLearnableLr, 2.5e-7);  // no rounding to a box's decimals
}

TEST(SetupFields, ASeedThatIsNoNumberIsAnIssueNamingTheField) {
  ui::SetupPanel panel;
  auto* seed = panel.findChild<QLineEdit*>(QStringLiteral("run.seed"));
  ASSERT_NE(seed, nullptr);
  ASSERT_TRUE(panel.launchEnabled());
  seed->setText(QString());
  EXPECT_FALSE(panel.launchEnabled());
  bool named = false;
  for (const auto& i : panel.issues()) named = named || i.field == "run.seed";
  EXPECT_TRUE(named);
  auto* issues = panel.findChild<QLabel*>(QStringLiteral("issues"));
  ASSERT_NE(issues, nullptr);
  EXPECT_TRUE(issues->text().contains(QStringLiteral("Seed:"))) << issues->text().toStdString();
  EXPECT_EQ(panel.config().run.seed, experiment::presetConfig("cpu-demo")->run.seed);  // kept
  seed->setText(QStringLiteral("7"));
  EXPECT_TRUE(panel.launchEnabled());
  EXPECT_EQ(panel.config().run.seed, 7);
  // A double typed as text is read with the table's range.
  auto* init = panel.findChild<QLineEdit*>(QStringLiteral("options.layerScaleInit"));
  ASSERT_NE(init, nullptr);
  init->setText(QStringLiteral("0"));
  EXPECT_FALSE(panel.launchEnabled());
  EXPECT_TRUE(issues->text().contains(
      QStringLiteral("LayerScale init: ") +
      QString::fromLatin1(experiment::configField("options.layerScaleInit")->range->rule)))
      << issues->text().toStdString();
  init->setText(QStringLiteral("1e-6"));
  EXPECT_TRUE(panel.launchEnabled()) << issues->text().toStdString();
  EXPECT_EQ(panel.config().options.layerScaleInit, 1e-6);
}

TEST(SetupFields, AClosedSetOffersExactlyTheTablesChoices) {
  ui::SetupPanel panel;
  for (const char* path : {"model.norm", "options.lnsPlacement", "optim.optimizer"}) {
    const auto* f = experiment::configField(path);
    ASSERT_NE(f, nullptr);
    auto* combo = panel.findChild<QComboBox*>(QString::fromLatin1(path));
    ASSERT_NE(combo, nullptr) << path;
    EXPECT_EQ(itemsOf(combo), choicesOf(*f)) << path;
    for (int i = 0; i < combo->count(); ++i) {  // each choice reaches the config
      combo->setCurrentIndex(i);
      auto c = panel.config();
      EXPECT_EQ(*std::get<std::string*>(f->ref(c)), f->choices.values[static_cast<size_t>(i)]);
    }
  }
  // A generated editor of a closed set, on its own.
  auto* packing = ui::makeFieldEditor(*experiment::configField("data.packing"));
  auto* combo = qobject_cast<QComboBox*>(packing);
  ASSERT_NE(combo, nullptr);
  EXPECT_EQ(itemsOf(combo), choicesOf(*experiment::configField("data.packing")));
  EXPECT_EQ(combo->objectName(), QStringLiteral("data.packing"));
  delete packing;
}

TEST(SetupFields, ASchemeSetChecksExactlyItsSchemes) {
  ui::SetupPanel panel;
  auto* sets = panel.findChild<QComboBox*>(QStringLiteral("schemeSet"));
  ASSERT_NE(sets, nullptr);
  ASSERT_FALSE(model::schemeSets().empty());
  EXPECT_EQ(sets->count(), static_cast<int>(model::schemeSets().size()) + 1);  // and "your choice"
  for (const auto& set : model::schemeSets()) {
    SCOPED_TRACE(set.id);
    panel.setSchemes({"lns_learnable"});  // something else first
    const int i = sets->findData(QString::fromStdString(set.id));
    ASSERT_GT(i, 0);
    EXPECT_EQ(sets->itemText(i), QString::fromStdString(set.displayName));
    sets->setCurrentIndex(i);  // as the user picks it
    const auto schemes = panel.config().schemes;
    EXPECT_EQ(std::set<std::string>(schemes.begin(), schemes.end()),
              std::set<std::string>(set.schemes.begin(), set.schemes.end()));
    EXPECT_EQ(schemes.size(), set.schemes.size());
  }
  // "All depth fixes": every scheme of model::schemeSets()'s list, none else.
  const auto* all = model::findSchemeSet("all-depth-fixes");
  ASSERT_NE(all, nullptr);
  panel.setSchemes({});
  EXPECT_TRUE(panel.checkSchemeSet("all-depth-fixes"));
  EXPECT_EQ(panel.config().schemes, all->schemes);
  EXPECT_EQ(sets->currentData().toString(), QStringLiteral("all-depth-fixes"));
  // Unchecking one leaves the set: the list says so.
  panel
      .findChild<QCheckBox*>(QStringLiteral("scheme.") +
                             QString::fromStdString(all->schemes.front()))
      ->setChecked(false);
  EXPECT_EQ(sets->currentIndex(), 0);
  EXPECT_FALSE(panel.checkSchemeSet("no-such-set"));
  EXPECT_EQ(panel.config().schemes.size(), all->schemes.size() - 1);
}
