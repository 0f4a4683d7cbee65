#include "ui_thread_fills.h"

#include <QCoreApplication>
#include <QThread>
#include <QThreadPool>
#include <QtGlobal>

#include <dlfcn.h>

#if QT_VERSION < QT_VERSION_CHECK(6, 6, 0)
// Linked into the executable, this definition comes first in the dynamic linker's lookup: Qt Gui's
// calls reach it, Qt Core's own calls stay inside Qt Core.
QThreadPool* QThreadPool::globalInstance() {
    using Instance = QThreadPool* (*)();
    static const auto qtInstance =
        reinterpret_cast<Instance>(::dlsym(RTLD_NEXT, "_ZN11QThreadPool14globalInstanceEv"));
    const QCoreApplication* app = QCoreApplication::instance();
    if (app && QThread::currentThread() == app->thread()) return nullptr;
    return qtInstance ? qtInstance() : nullptr;
}
#endif

namespace pitlane::app {

bool keepFillsOnTheUiThread() {
#if QT_VERSION < QT_VERSION_CHECK(6, 6, 0)
    return ::dlsym(RTLD_DEFAULT, "_ZN11QThreadPool14globalInstanceEv") ==
           reinterpret_cast<void*>(&QThreadPool::globalInstance);
#else
    if (!qEnvironmentVariableIsSet("QT_NO_GUI_THREADPOOL")) qputenv("QT_NO_GUI_THREADPOOL", "1");
    return true;
#endif
}

}  // namespace pitlane::app
