// GroupDashboard's loading and redrawing: a refresh hands the group's changed runs to the
// store poller's loader thread (or loads them here: a store of the caller's),
// a snapshot that arrives is shown, and the redraw it asks for goes in stages, one event each,
// so the GUI thread is never held for a whole dashboard while runs stream. See group_dashboard.h.
#include <QLabel>
#include <QSlider>

#include "dashboard/dashboard_plot_items.h"
#include "dashboard/group_dashboard.h"

#include "store/metric_catalogue.h"
#include "plot/plot_helpers.h"
#include "plot/run_labels.h"
#include "store_poller.h"

namespace depthlab::ui {

using dashboard::schemeOf;

void GroupDashboard::refresh(store::RunStore& store, const std::vector<int64_t>& changed) {
  StorePoller* poller = StorePoller::owning(store);
  if (poller) {  // the window's store: read on its loader thread, the first load too
    m_poller = poller;
    if (m_data->runs().empty() && !m_loading) m_status->setText(tr("Reading the group's runs\u2026"));
    if (!m_loading) {
      startLoad(changed);
    } else if (changed.empty()) {
      m_pendingAll = true;
    } else {
      m_pending.insert(m_pending.end(), changed.begin(), changed.end());
    }
    return;
  }
  // A store of the caller's (a test, the bench): here.
  applySnapshot(loadGroup(store, m_group, m_data, changed));
}

void GroupDashboard::startLoad(const std::vector<int64_t>& changed) {
  QPointer<GroupDashboard> self(this);
  m_loading = m_poller && m_poller->loadAsync(m_group, m_data, changed, this, [self](GroupSnapshot s) {
    if (!self) return;
    self->m_loading = false;
    self->applySnapshot(std::move(s), /*staged=*/true);
    if (self->m_pendingAll || !self->m_pending.empty()) {  // polls during the load
      std::vector<int64_t> next;
      if (!self->m_pendingAll) next.swap(self->m_pending);
      self->m_pending.clear();
      self->m_pendingAll = false;
      self->startLoad(next);
    }
  });
  if (!m_loading && m_poller) applySnapshot(loadGroup(m_poller->store(), m_group, m_data, changed));
}

void GroupDashboard::applySnapshot(GroupSnapshot snapshot, bool staged) {
  if (!snapshot || snapshot == m_data) return;  // nothing of this group changed
  m_data = std::move(snapshot);
  std::vector<QString> schemes;
  std::vector<store::RunInfo> infos;
  for (const auto& r : m_data->runs()) {
    schemes.push_back(schemeOf(r));
    infos.push_back(r.info);
  }
  std::map<QString, QString> labels;
  const QStringList names = runLabels(infos);
  for (size_t i = 0; i < schemes.size(); ++i) labels[schemes[i]] = names[static_cast<int>(i)];
  std::set<QString> partial;  // metrics only some schemes write, where a run has them
  for (const auto& r : m_data->runs()) {
    for (const auto& [metric, series] : r.layers) {
      if (metrics::someSchemesOnly(metric) && !series.steps.empty()) {
        partial.insert(QString::fromStdString(metric) + QLatin1Char(':') + schemeOf(r));
      }
    }
  }
  if (schemes != m_schemes || labels != m_labels || partial != m_partialPanels) {
    m_schemes = schemes;  // new runs, a run renamed, or a run's first rows of such a metric
    m_labels = labels;
    m_partialPanels = partial;
    rebuildPanels();
  }
  m_steps = m_data->probeSteps();
  {
    QSignalBlocker block(m_scrubber);
    m_scrubber->setRange(0, std::max(0, static_cast<int>(m_steps.size()) - 1));
    if (m_followLatest && !m_steps.empty()) {
      m_scrubber->setValue(static_cast<int>(m_steps.size()) - 1);
      m_cursor = m_steps.back();
      m_cursorLabel->setText(tr("step %1").arg(m_cursor));
    }
  }
  if (staged) scheduleRedraw();
  else redraw();
}

void GroupDashboard::redraw() {
  m_stage = -1;  // a staged redraw under way has nothing left to do
  for (int stage = 0, n = redrawStages(); stage < n; ++stage) redrawStage(stage);
}

// After a snapshot, the redraw goes in stages, one event each (redrawStages): the GUI thread
// returns to its event loop between them, so no event holds it for a whole dashboard's rebuild
// while runs stream.
void GroupDashboard::scheduleRedraw() {
  const bool idle = m_stage < 0;
  m_stage = 0;  // a newer snapshot restarts the stages
  if (idle) QMetaObject::invokeMethod(this, &GroupDashboard::nextRedrawStage, Qt::QueuedConnection);
}

void GroupDashboard::nextRedrawStage() {
  if (m_stage < 0) return;
  redrawStage(m_stage);
  m_stage = m_stage + 1 < redrawStages() ? m_stage + 1 : -1;
  if (m_stage >= 0) QMetaObject::invokeMethod(this, &GroupDashboard::nextRedrawStage, Qt::QueuedConnection);
}

int GroupDashboard::redrawStages() const {
  return 4 + static_cast<int>(dashboard::panelsOfKind(dashboard::PanelKind::LayerHeatmap).size());
}

void GroupDashboard::redrawStage(int stage) {
  const auto heatmaps = dashboard::panelsOfKind(dashboard::PanelKind::LayerHeatmap);
  const int heatmapStages = static_cast<int>(heatmaps.size());
  if (stage == 0) {
    QStringList status;
    for (const auto& r : m_data->runs()) status << r.statusLine(labelOf(schemeOf(r)), m_data->etaSeconds(r));
    m_status->setText(status.join(QLatin1Char('\n')));
    m_decimationNotes.clear();
    drawProgress();
    drawLoss();
  } else if (stage == 1) {
    if (m_data->progress().imported) drawSnapshotProfiles();
    else drawLayerCurves();
  } else if (stage < 2 + heatmapStages) {
    drawLayerHeatmaps(heatmaps[static_cast<size_t>(stage - 2)]);
  } else if (stage == 2 + heatmapStages) {
    drawCursorBars();
  } else {
    drawCursorMatrices();
    drawDiagnosis();
    for (auto& [name, p] : m_plots) updateZoomBadge(p);
    m_decimation->setText(m_decimationNotes.join(QStringLiteral("; ")));
  }
}

}  // namespace depthlab::ui
