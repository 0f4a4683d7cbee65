// Precompiled header of the GUI tests (tests/gui, one executable each; cmake/PitlanePch.cmake):
// widgets.h and Qt Test.
#pragma once
#include "widgets.h"

#include <QtTest>
