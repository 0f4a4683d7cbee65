// Why an AOTInductor package did not load (engine::explainPackageFailure, issue 42): a malformed
// package is said to be malformed, naming the entry; the libtorch or CPU version is blamed only
// on the evidence of a mismatch. The reasons are the texts libtorch 2.11's loader and glibc's
// dynamic loader give (the malformed one as a real damaged package gave it: integration test
// ModelIntegrity.ADamagedPackageSaysItIsMalformedAndLeavesNoExtractionFolder).
#include "pitlane/engine/package_failure.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using pitlane::engine::explainPackageFailure;

const std::map<std::string, std::string> kMeta = {
    {"torch_version", "2.11.0+cu130"}, {"AOTI_DEVICE_KEY", "cpu"}, {"AOTI_CPU_ISA", "AVX512 AVX512_VNNI"}};
const std::string kFlags = "fpu sse2 avx2 fma f16c avx512f avx512dq avx512vl avx512bw avx512_vnni";
const std::string kSo = ".m.tmp/data/aotinductor/model/cabc.wrapper.so";
const std::string kVersionBlame = "runs only with the libtorch";

TEST(PackageFailure, ADamagedLibraryIsMalformedNamingTheEntryNotTheVersion) {
    for (const std::string folder : {"./pl2Ab12Cd", "/tmp/Xy34Zw"}) {
        const auto f = explainPackageFailure("Error in dlopen: " + folder + "/" + kSo + ": file too short", folder,
                                             kMeta, "2.11.0", kFlags);
        EXPECT_EQ(f.cause, "malformed");
        EXPECT_EQ(f.entry, kSo);
        EXPECT_NE(f.message.find("the package is malformed: entry " + kSo + ": not a shared library the dynamic "
                                 "loader can load (file too short)"),
                  std::string::npos)
            << f.message;
        EXPECT_NE(f.message.find("not a version mismatch"), std::string::npos) << f.message;
        EXPECT_EQ(f.message.find(folder), std::string::npos) << f.message;
        EXPECT_EQ(f.message.find(kVersionBlame), std::string::npos) << f.message;
    }
}

TEST(PackageFailure, MetadataThatDoesNotParseIsMalformed) {
    const auto f = explainPackageFailure(
        "[json.exception.parse_error.101] parse error at line 1, column 1: syntax error while parsing value",
        "./pl2Ab12Cd", kMeta, "2.11.0", kFlags);
    EXPECT_EQ(f.cause, "malformed");
    EXPECT_NE(f.message.find("the package is malformed: [json.exception.parse_error.101]"), std::string::npos) << f.message;
    EXPECT_EQ(f.message.find(kVersionBlame), std::string::npos) << f.message;
}

TEST(PackageFailure, AMissingSymbolOrCxxRuntimeIsAVersionMismatch) {
    const std::string folder = "./pl2Ab12Cd";
    for (const std::string& said : std::vector<std::string>{"undefined symbol: _ZN5torch3aot14AOTIModelPackageLoaderC1Ev",
                                   "version `GLIBCXX_3.4.32' not found (required by " + folder + "/" + kSo + ")"}) {
        const auto f = explainPackageFailure("Error in dlopen: " + folder + "/" + kSo + ": " + said, folder, kMeta,
                                             "2.11.0", kFlags);
        EXPECT_EQ(f.cause, "version_mismatch") << said;
        EXPECT_EQ(f.entry, kSo);
        EXPECT_NE(f.message.find(said.substr(0, 20)), std::string::npos) << f.message;
        EXPECT_NE(f.message.find(kVersionBlame), std::string::npos) << f.message;
        EXPECT_NE(f.message.find("this worker's libtorch is 2.11.0"), std::string::npos) << f.message;
        EXPECT_EQ(f.message.find("malformed"), std::string::npos) << f.message;
    }
}

TEST(PackageFailure, AnotherTorchOrMissingCpuFeaturesAreBlamedOnlyWhenTheyDiffer) {
    const std::string reason = "std::bad_function_call";  // says nothing of what
    auto f = explainPackageFailure(reason, "", kMeta, "2.11.0", kFlags);
    EXPECT_EQ(f.cause, "other");
    EXPECT_EQ(f.message.find(kVersionBlame), std::string::npos) << f.message;
    EXPECT_NE(f.message.find("not a version mismatch"), std::string::npos) << f.message;

    f = explainPackageFailure(reason, "", kMeta, "2.12.0", kFlags);
    EXPECT_EQ(f.cause, "version_mismatch");
    EXPECT_NE(f.message.find("compiled by torch 2.11.0+cu130 and this worker's libtorch is 2.12.0"), std::string::npos)
        << f.message;

    f = explainPackageFailure(reason, "", kMeta, "2.11.0", "fpu sse2 avx2 fma f16c");
    EXPECT_EQ(f.cause, "version_mismatch");
    EXPECT_NE(f.message.find("CPU features this CPU lacks: AVX512 (avx512f), AVX512_VNNI (avx512_vnni)"),
              std::string::npos)
        << f.message;

    // A malformed entry of a package from another torch: malformed, the version said besides.
    f = explainPackageFailure("Error in dlopen: ./pl2Ab12Cd/" + kSo + ": invalid ELF header", "./pl2Ab12Cd", kMeta,
                              "2.12.0", kFlags);
    EXPECT_EQ(f.cause, "malformed");
    EXPECT_NE(f.message.find("besides, it was compiled by torch 2.11.0+cu130"), std::string::npos) << f.message;
}

TEST(PackageFailure, AFolderThatCannotBeMadeIsTheExtractionNotThePackage) {
    const auto f = explainPackageFailure("Failed to create temporary directory: Permission denied", "", kMeta,
                                         "2.11.0", kFlags);
    EXPECT_EQ(f.cause, "extraction");
    EXPECT_NE(f.message.find("could not be extracted"), std::string::npos) << f.message;
    EXPECT_EQ(f.message.find("malformed"), std::string::npos) << f.message;
    EXPECT_EQ(f.message.find(kVersionBlame), std::string::npos) << f.message;
}

}  // namespace
