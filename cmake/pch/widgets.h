// Precompiled header of the window's libraries (pitlane_widgets, pitlane_window, pitlane)
// (cmake/PitlanePch.cmake, issue 45): qcustomplot.h includes most of QtCore, QtGui, QtWidgets and
// QtPrintSupport, ~8 s of parsing in each of the 23 translation units that include it.
#pragma once
#include "qt_core.h"

#include <QtWidgets>
#include <qcustomplot.h>
