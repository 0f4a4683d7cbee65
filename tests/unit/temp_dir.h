#pragma once
// A scratch directory per test, removed afterwards; small file writers for fixtures.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace pitlane::test {

namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string tag = info ? std::string(info->test_suite_name()) + "-" + info->name()
                               : std::string("scratch");
        for (char& c : tag)
            if (c == '/') c = '_';  // parameterized test names contain '/'
        path_ = fs::temp_directory_path() / ("pitlane-" + tag + "-" + std::to_string(::getpid()));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const fs::path& path() const { return path_; }
    fs::path operator/(const std::string& rel) const { return path_ / rel; }

private:
    fs::path path_;
};

inline void writeFile(const fs::path& p, const std::string& content) {
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary);
    f << content;
}

// A model directory `dir`/models holding a stand-in "mlp" bundle: the preset parser only checks
// that the .pt exists and reads the sidecar (input [256] float32), it never loads TorchScript.
// Returns the directory.
inline std::string writeStandInModels(const TempDir& dir) {
    writeFile(dir / "models/mlp.pt", "not TorchScript; the parser only checks it exists");
    writeFile(dir / "models/mlp.json", R"({"name": "mlp", "input": [{"shape": [256], "dtype": "float32"}]})");
    return (dir / "models").string();
}

}  // namespace pitlane::test
