// ReproduceDialog: the window's "Reproduce the paper…": choose one of the paper recipes
// (experiment/paper_recipes: its title, source, schemes and the paper's perplexities, and the
// choices it makes where the paper and the official code disagree), where to run it (corpus,
// tokenizer, device, which schemes, force) and see what it will cost here (the plan's cost
// lines, experiment/reproduction) as the choices change, or in red why it may not start (a
// paper-size recipe on a CPU without force), Launch disabled then. Launch hands the
// `depthlab-cli reproduce` arguments to the window (launchRequested) and closes; it runs
// nothing itself, and it plans without reading the corpus (the command checks its size when
// it starts).
#pragma once

#include <QDialog>
#include <QString>
#include <QStringList>

#include <vector>

#include "store/run_store.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTextBrowser;
class QTimer;
class QWidget;

namespace depthlab::ui {

/// What the user chose; schemes: the ticked ones of the recipe's (all of them: every scheme).
struct ReproduceChoices {
  QString recipe;
  QString corpus;     // a .jsonl file or a folder (none: refused, see reproduceCorpusProblem)
  QString tokenizer;  // "" = the recipe's
  QString device = QStringLiteral("cpu");
  QStringList schemes;
  bool allSchemes = true;
  bool force = false;
};

/// The depthlab-cli arguments after `--db DB` that run `c`: reproduce NAME [--corpus PATH]
/// [--tokenizer T] --device D [--schemes a,b] [--force] (no --schemes when all are ticked).
QStringList reproduceArguments(const ReproduceChoices& c);

/// Why `corpus` cannot feed a recipe, from its name alone: none given (the lab's default corpus
/// is one text file), not there, one plain text file (the recipes read one document a row, and a
/// text file is one document); "" when it may.
QString reproduceCorpusProblem(const QString& corpus);

/// Why `c` may not be launched as given, without planning: the corpus (above), a tokenizer model
/// that is not there, no scheme ticked; "" when nothing is wrong.
QString reproduceInputProblem(const ReproduceChoices& c);

class ReproduceDialog : public QDialog {
  Q_OBJECT
 public:
  /// `store`: the window's (read to plan: which runs of the recipe exist, the calibration);
  /// `corpus`, `tokenizer`: what to start from ("": none, the recipe's).
  ReproduceDialog(store::RunStore& store, const QString& corpus, const QString& tokenizer = {},
                  QWidget* parent = nullptr);

  ReproduceChoices choices() const;
  QStringList arguments() const { return reproduceArguments(choices()); }
  /// Selects a recipe by name (false when there is none).
  bool selectRecipe(const QString& name);
  /// Plans again now (the dialog also does on every change, typing debounced).
  void replan();
  /// The plan's refusal or the input problem shown in red ("" when Launch is enabled).
  QString refusal() const { return m_refusal; }
  /// The cost text shown (the plan's cost lines).
  QString costText() const;

 Q_SIGNALS:
  /// Launch: run `depthlab-cli --db DB` + `arguments` for `recipe` in the background.
  void launchRequested(const QString& recipe, const QStringList& arguments);

 private:
  QWidget* makeRecipeArea();
  QWidget* makeChoicesBox();
  QWidget* makeCostBox();
  void showRecipe(int index);
  void launch();

  store::RunStore& m_store;
  QListWidget* m_recipes = nullptr;
  QTextBrowser* m_details = nullptr;
  QLineEdit* m_corpus = nullptr;
  QLineEdit* m_tokenizer = nullptr;
  QComboBox* m_device = nullptr;
  QWidget* m_schemeBox = nullptr;
  std::vector<QCheckBox*> m_schemes;
  QCheckBox* m_force = nullptr;
  QLabel* m_cost = nullptr;
  QLabel* m_refusalLabel = nullptr;
  QLabel* m_command = nullptr;
  QPushButton* m_launch = nullptr;
  QTimer* m_typing = nullptr;
  QString m_refusal;
};

}  // namespace depthlab::ui
