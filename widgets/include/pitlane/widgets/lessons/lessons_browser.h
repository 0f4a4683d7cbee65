#pragma once
// The Lessons browser: every lesson preset of the bundled presets folder (lesson_*.json) with its
// title, model, whether it needs CUDA, and its status on this machine from the run history (the
// latest run of the preset's name that carries a lesson judgement; "not run" when none), each
// with Open (load it into the setup) and Run (load and start it), asked of the window by signals.
// The selected lesson's mechanism, claim and verdict here stand side by side. refresh() re-reads
// the folder and the history (the window calls it when a run is stored).
#include "pitlane/store/run_store.h"

#include <QList>
#include <QWidget>

#include <nlohmann/json.hpp>

class QAbstractButton;
class QSplitter;
class QTableWidget;
class QTextBrowser;

namespace pitlane::widgets {

class WrappingLabel;

// One lesson preset file, as far as the browser reads it (plain JSON: a preset the spec rejects
// is still listed, and Open says why).
struct LessonPreset {
    QString path;   // absolute
    QString name;   // the preset's "name": runs are found in the history by it
    QString title;  // lesson.title, else the file name
    QString text, claim, expect, model;
    bool needsCuda = false;  // lesson.needs == "cuda"
    QString error;           // why the file is not a readable lesson preset ("" when it is)
    nlohmann::json lesson;
};

// The lesson presets (lesson_*.json) of `dir`, by file name.
QList<LessonPreset> scanLessonPresets(const QString& dir);
// The latest run named `name` that carries a lesson judgement in `runs` (listRuns: newest
// first); nullptr when there is none.
const store::RunInfo* latestLessonRun(const QList<store::RunInfo>& runs, const QString& name);

class LessonsBrowser : public QWidget {
    Q_OBJECT
public:
    enum Column { Status, Title, Model, Needs, LastRun, Actions, ColumnCount };

    explicit LessonsBrowser(QWidget* parent = nullptr);

    void setPresetsDir(const QString& dir);  // re-reads the folder
    QString presetsDir() const { return dir_; }
    // The history to read statuses from (not owned; nullptr: none, every lesson "not run").
    void setStore(const store::RunStore* store);
    // Re-reads the folder and the history, keeping the selection.
    void refresh();
    // While a run goes, Open and Run wait.
    void setRunning(bool running);
    // What the workers said about CUDA (a CUDA lesson on a machine without it says so).
    void setCuda(bool known, bool available);

    int lessonCount() const { return int(lessons_.size()); }
    const LessonPreset& lessonAt(int row) const { return lessons_[row]; }
    // The lesson's status on this machine (results::kReproduced ...); "" when never judged here.
    QString statusOf(int row) const;
    const store::RunInfo* lastRunOf(int row) const;
    int selectedLesson() const;  // -1 when none
    void selectLesson(int row);
    void selectPath(const QString& path);  // the row of that lesson preset
    QTableWidget* table() const { return table_; }
    QAbstractButton* openButton(int row) const;
    QAbstractButton* runButton(int row) const;
    // What the three detail columns show (plain text): mechanism, claim, verdict here.
    QString detailsText() const;

protected:
    void showEvent(QShowEvent* event) override;

signals:
    void openRequested(const QString& presetPath);
    void runRequested(const QString& presetPath);

private:
    void fillRow(int row);
    QWidget* actionsCell(int row);
    void showDetails();
    QString verdictHtml(int row) const;
    void updateButtons();

    QString dir_;
    const store::RunStore* store_ = nullptr;
    QList<LessonPreset> lessons_;
    QList<store::RunInfo> runs_;
    QList<int> last_;  // parallel to lessons_: index into runs_, -1 when never judged here
    bool running_ = false, cudaKnown_ = false, cudaAvailable_ = false;
    QTableWidget* table_;
    QSplitter* split_ = nullptr;
    bool sized_ = false;  // the list's share of the width is set when first shown
    WrappingLabel* heading_;
    QTextBrowser *mechanism_, *claim_, *verdict_;
};

}  // namespace pitlane::widgets
