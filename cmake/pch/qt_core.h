// Precompiled header of the QtCore libraries (session, store, report, pitlane-cli) and the
// integration tests' harness (cmake/PitlanePch.cmake, issue 45): core.h and the QtCore classes
// most of them include. Never torch (Qt's `slots` breaks ATen's headers).
#pragma once
#include "core.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QProcess>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QVariant>
