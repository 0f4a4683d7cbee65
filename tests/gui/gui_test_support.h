#pragma once
// Shared by the GUI tests: a throw-away settings folder, Qt warnings as failures, and preset
// fixtures written to a temporary folder.
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace pitlane::testing {

// Every Qt warning fails the test, except the offscreen platform's notice that it ignores
// window size hints (it says so for every top-level window).
inline void failOnQtWarnings() {
    QTest::failOnWarning(QRegularExpression(
        QStringLiteral("^(?!This plugin does not support propagateSizeHints).*")));
}

inline QString writeJson(const QTemporaryDir& dir, const QString& name, const nlohmann::json& j) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(QByteArray::fromStdString(j.dump(2)));
    return path;
}

inline nlohmann::json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return nullptr;
    return nlohmann::json::parse(f.readAll().toStdString());
}

// A short mlp experiment: two arms that differ in mode and grad, in exactly three processes per
// arm (a stated count: no replicate rounds are added, so sample counts follow `iters`).
inline nlohmann::json mlpPreset(int iters, int blockIters, int warmup = 3) {
    return {
        {"name", "gui test"},
        {"model", "mlp"},
        {"run",
         {{"warmup_iters", warmup},
          {"iters", iters},
          {"block_iters", blockIters},
          {"processes", std::min(3, iters)}}},
        {"arms",
         {{{"name", "A"},
           {"knobs", {{"mode", "train"}, {"grad", "enabled"}, {"intra_op_threads", 1}}}},
          {{"name", "B"},
           {"knobs", {{"mode", "eval"}, {"grad", "inference_mode"}, {"intra_op_threads", 1}}}}}}};
}

}  // namespace pitlane::testing

// main() for GUI tests: settings go to a temporary folder so tests neither read nor change the
// user's (QSettings honours XDG_CONFIG_HOME).
#define PITLANE_GUI_TEST_MAIN(TestClass)                                       \
    int main(int argc, char** argv) {                                          \
        QTemporaryDir config, runtime;                                         \
        qputenv("XDG_CONFIG_HOME", config.path().toLocal8Bit());               \
        qputenv("XDG_RUNTIME_DIR", runtime.path().toLocal8Bit());              \
        QApplication app(argc, argv);                                          \
        QCoreApplication::setOrganizationName(QStringLiteral("pitlane-test")); \
        QCoreApplication::setApplicationName(QStringLiteral(#TestClass));      \
        TestClass t;                                                           \
        return QTest::qExec(&t, argc, argv);                                   \
    }
