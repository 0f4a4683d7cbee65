// GoogleTest with a QGuiApplication: writing a PDF in process needs fonts and painting
// (QT_QPA_PLATFORM=offscreen comes from pitlane_add_test).
#include <QGuiApplication>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
    QGuiApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
