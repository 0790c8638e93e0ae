// See reproduce_text.h.
#include "launch/reproduce_text.h"

#include <QObject>

#include <algorithm>

#include "experiment/run_cost.h"

namespace depthlab::ui {

namespace {

QString html(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString ids(const std::vector<int64_t>& runIds) {
  QStringList out;
  for (int64_t id : runIds) out << QString::number(id);
  return out.join(QStringLiteral(", "));
}

// "llama-130m · 20,000 updates (2,000 warm-up) · lr 0.001 · 512 × 256-token sequences an update"
QString settingsLine(const experiment::PaperRecipe& r) {
  int seqLen = 0;
  try {
    seqLen = r.config(0).model.seqLen;
  } catch (const std::exception&) {}
  QString line = QStringLiteral("%1 · %2 updates (%3 warm-up) · peak lr %4 · %5 sequences")
                     .arg(html(r.preset), html(experiment::formatThousands(r.steps)),
                          html(experiment::formatThousands(r.warmupSteps)), QString::number(r.lr))
                     .arg(r.globalBatch);
  if (seqLen > 0) line += QStringLiteral(" × %1 tokens").arg(seqLen);
  line += QStringLiteral(" an update");
  line += r.paperSize ? QStringLiteral(" · paper size: meant for a GPU")
                      : QStringLiteral(" · small: runs on a CPU");
  return line;
}

// "pre_ln, lns; scaled init: pre_ln": a recipe without paper numbers.
QString schemesLine(const experiment::PaperRecipe& r) {
  QStringList arms;
  for (const auto& arm : r.arms) {
    QStringList schemes;
    for (const auto& s : arm.schemes) schemes << html(s);
    arms << (arm.label.empty() ? QString() : html(arm.label) + QStringLiteral(": ")) +
                schemes.join(QStringLiteral(", "));
  }
  return QStringLiteral(
             "<p><b>Schemes:</b> %1</p><p><i>No perplexity in the paper to compare: a "
             "figure or check recipe.</i></p>")
      .arg(arms.join(QStringLiteral("; ")));
}

QString schemesTable(const experiment::PaperRecipe& r) {
  if (r.paper.empty()) return schemesLine(r);
  QString rows;
  for (const auto& arm : r.arms) {
    for (const auto& scheme : arm.schemes) {
      const auto ppl = r.paperPerplexity(scheme, arm.label);
      rows += QStringLiteral("<tr><td>%1</td><td>%2</td><td align=\"right\">%3</td></tr>")
                  .arg(html(scheme), arm.label.empty() ? QString() : html(arm.label),
                       ppl ? QString::number(*ppl, 'f', 2) : QStringLiteral("—"));
    }
  }
  const bool anyArm =
      std::any_of(r.arms.begin(), r.arms.end(), [](const auto& a) { return !a.label.empty(); });
  const QString head = QStringLiteral(
                           "<tr><th align=\"left\">scheme</th><th align=\"left\">%1</th>"
                           "<th align=\"right\">paper PPL</th></tr>")
                           .arg(anyArm ? QStringLiteral("arm") : QString());
  const QString note = QStringLiteral(
                           "The paper's validation perplexity on C4; reproductions on "
                           "the official code land within about ±%1.")
                           .arg(r.band);
  return QStringLiteral("<table cellspacing=\"0\" cellpadding=\"3\">%1%2</table><p><i>%3</i></p>")
      .arg(head, rows, note);
}

}  // namespace

QStringList recipeSchemes(const experiment::PaperRecipe& recipe) {
  QStringList out;
  for (const auto& arm : recipe.arms) {
    for (const auto& s : arm.schemes) {
      const QString q = QString::fromStdString(s);
      if (!out.contains(q)) out << q;
    }
  }
  return out;
}

QString recipeDetailsHtml(const experiment::PaperRecipe& r) {
  QString out = QStringLiteral("<p><b>%1</b></p>").arg(html(r.title));
  out += QStringLiteral("<p><b>Source:</b> %1</p>").arg(html(r.source));
  out += QStringLiteral("<p><b>Settings:</b> %1</p>").arg(settingsLine(r));
  out += schemesTable(r);
  out += QStringLiteral(
      "<p><b>Where the paper and the official code disagree, and what this recipe "
      "follows:</b></p><ul>");
  for (const auto& c : r.choices) out += QStringLiteral("<li>%1</li>").arg(html(c));
  out += QStringLiteral("</ul>");
  return out;
}

QString planCostText(const experiment::ReproductionPlan& plan) {
  QStringList lines;
  for (const auto& l : plan.costLines) lines << QString::fromStdString(l);
  std::vector<int64_t> done;
  for (const auto& a : plan.arms) done.insert(done.end(), a.done.begin(), a.done.end());
  if (!done.empty()) lines << QObject::tr("already finished here: run(s) %1").arg(ids(done));
  if (plan.nothingToDo()) {
    lines << QObject::tr("Nothing left to train: Launch writes the report and the figures again.");
  } else {
    lines << QObject::tr(
        "The command reads the corpus when it starts and refuses one smaller than "
        "the recipe reads, unless forced.");
  }
  return lines.join(QLatin1Char('\n'));
}

QString commandLine(const QString& program, const QStringList& arguments) {
  QStringList words{program};
  for (const auto& a : arguments) {
    const bool plain = !a.isEmpty() && std::none_of(a.begin(), a.end(), [](QChar c) {
      return c.isSpace() || c == QLatin1Char('\'') || c == QLatin1Char('"') ||
             c == QLatin1Char('$');
    });
    words << (plain ? a
                    : QLatin1Char('\'') +
                          QString(a).replace(QLatin1Char('\''), QStringLiteral("'\\''")) +
                          QLatin1Char('\''));
  }
  return words.join(QLatin1Char(' '));
}

}  // namespace depthlab::ui
