#pragma once
// The File ▸ Recent files menu: newest first, at most kMax entries, persisted in QSettings,
// entries whose file disappeared are dropped when the menu is rebuilt.
#include <QObject>
#include <QStringList>

class QMenu;

namespace pitlane::app {

// The folder the file dialogs start in: the one of the last file opened, saved or exported
// (QSettings files/lastFolder).
QString lastFolder();
void rememberFolder(const QString& path);

class RecentFiles : public QObject {
    Q_OBJECT
public:
    static constexpr int kMax = 10;
    explicit RecentFiles(QMenu* menu, QObject* parent = nullptr);
    void add(const QString& path);
    QStringList files() const { return files_; }

signals:
    void chosen(const QString& path);

private:
    void rebuild();
    void save() const;
    QMenu* menu_;
    QStringList files_;
};

}  // namespace pitlane::app
