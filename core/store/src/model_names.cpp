#include "pitlane/store/model_names.h"

#include <QFileInfo>

namespace pitlane::store {

QString listedModels(const RunInfo& run, int width) {
    // RunInfo::armModels are file names already, each model once, in the arms' order.
    if (run.armModels.isEmpty()) return QFileInfo(run.model).fileName();
    const QString all = run.armModels.join(QStringLiteral(", "));
    if (run.armModels.size() == 1 || width <= 0 || all.size() <= width) return all;
    return QStringLiteral("%1 models").arg(run.armModels.size());
}

}  // namespace pitlane::store
