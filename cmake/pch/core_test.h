// Precompiled header of the unit tests of the Qt-free libraries: core.h and GoogleTest
// (cmake/PitlanePch.cmake, issue 45).
#pragma once
#include "core.h"

#include <gtest/gtest.h>
