#include "pitlane/spec/model_file.h"

#include "sha256.h"
#include "zip_layout.h"
#include "pitlane/protocol/json_limits.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <new>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

namespace pitlane::spec {

using detail::FileReader;
using detail::ModelFileError;
using detail::ZipEntry;
using json = nlohmann::json;

namespace {

// Deflated entries of a TorchScript archive are its code and debug info: kilobytes. A declared
// size beyond this is refused before anything is inflated (a zip bomb costs nothing to check).
constexpr std::uint64_t kMaxInflatedBytes = 256ull << 20;
constexpr std::size_t kChunk = 1 << 20;

[[noreturn]] void damaged(const std::string& reason) { throw ModelFileError(kModelDamaged, reason); }
[[noreturn]] void notTorchScript(const std::string& reason) {
    throw ModelFileError(kModelNotTorchScript, reason);
}

std::string entryName(const ZipEntry& e) { return "entry " + detail::printableName(e.name); }

std::string hex32(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", unsigned(v));
    return buf;
}

// One entry's bytes as they stream past: CRC-32 of the (inflated) data, its length, its first
// and last byte (a pickle starts with PROTO 0x80 and ends with STOP '.').
class EntryCheck {
public:
    explicit EntryCheck(const ZipEntry& e) : e_(e) {
        if (e.method == 8 && inflateInit2(&z_, -MAX_WBITS) != Z_OK)
            damaged(entryName(e) + ": zlib could not start inflating");
        inflating_ = e.method == 8;
    }
    ~EntryCheck() {
        if (inflating_) inflateEnd(&z_);
    }
    EntryCheck(const EntryCheck&) = delete;
    EntryCheck& operator=(const EntryCheck&) = delete;

    void feed(const unsigned char* p, std::size_t n) {
        if (!inflating_) return take(p, n);
        z_.next_in = const_cast<unsigned char*>(p);
        z_.avail_in = unsigned(n);
        while (z_.avail_in > 0) {
            if (ended_)
                damaged(entryName(e_) + ": its deflate stream ends before its data does");
            unsigned char out[1 << 16];
            z_.next_out = out;
            z_.avail_out = sizeof out;
            const int rc = inflate(&z_, Z_NO_FLUSH);
            if (rc != Z_OK && rc != Z_STREAM_END)
                damaged(entryName(e_) + ": bad deflate data (" +
                        (z_.msg ? std::string(z_.msg) : "zlib error " + std::to_string(rc)) + ")");
            ended_ = rc == Z_STREAM_END;
            take(out, sizeof out - z_.avail_out);
        }
    }

    // After the entry's last byte: the counts and the CRC against the central directory.
    void finish() {
        if (inflating_ && !ended_) drain();
        if (length_ != e_.size)
            damaged(entryName(e_) + ": " + std::to_string(length_) + " bytes of data, recorded " +
                    std::to_string(e_.size));
        if (crc_ != e_.crc)
            damaged(entryName(e_) + ": CRC-32 " + hex32(std::uint32_t(crc_)) + ", recorded " +
                    hex32(e_.crc));
    }
    int first() const { return first_; }
    int last() const { return last_; }

private:
    void take(const unsigned char* p, std::size_t n) {
        if (n == 0) return;
        length_ += n;
        if (length_ > e_.size)
            damaged(entryName(e_) + ": inflates to more than its recorded " +
                    std::to_string(e_.size) + " bytes");
        if (first_ < 0) first_ = p[0];
        last_ = p[n - 1];
        crc_ = crc32_z(crc_, p, n);
    }
    // A deflate stream that has consumed all its input but not said it ended is truncated.
    void drain() {
        unsigned char out[1 << 16];
        z_.next_in = nullptr, z_.avail_in = 0;
        z_.next_out = out, z_.avail_out = sizeof out;
        const int rc = inflate(&z_, Z_FINISH);
        take(out, sizeof out - z_.avail_out);
        if (rc != Z_STREAM_END) damaged(entryName(e_) + ": its deflate stream is cut short");
        ended_ = true;
    }

    const ZipEntry& e_;
    z_stream z_{};
    bool inflating_ = false, ended_ = false;
    std::uint64_t length_ = 0;
    uLong crc_ = crc32_z(0, nullptr, 0);
    int first_ = -1, last_ = -1;
};

struct Streamed {
    std::string sha256;
    std::map<std::string, std::pair<int, int>> ends;  // entry -> first and last byte
};

// One sequential pass: the SHA-256 of every byte, each entry's data to its EntryCheck.
Streamed streamFile(const FileReader& f, std::vector<ZipEntry> entries) {
    std::sort(entries.begin(), entries.end(),
              [](const ZipEntry& a, const ZipEntry& b) { return a.data < b.data; });
    Streamed out;
    detail::Sha256 sha;
    std::vector<unsigned char> buf(kChunk);
    std::size_t next = 0;
    std::unique_ptr<EntryCheck> current;
    for (std::uint64_t pos = 0; pos < f.size();) {
        const std::size_t n = std::size_t(std::min<std::uint64_t>(kChunk, f.size() - pos));
        f.readAt(pos, buf.data(), n, "the file");
        sha.update(buf.data(), n);
        const std::uint64_t chunkEnd = pos + n;
        while (next < entries.size() && entries[next].data < chunkEnd) {
            const ZipEntry& e = entries[next];
            if (!current) current = std::make_unique<EntryCheck>(e);
            const std::uint64_t from = std::max(e.data, pos);
            const std::uint64_t to = std::min(e.data + e.compressed, chunkEnd);
            if (to > from) current->feed(buf.data() + (from - pos), std::size_t(to - from));
            if (e.data + e.compressed > chunkEnd) break;
            current->finish();
            out.ends[e.name] = {current->first(), current->last()};
            current.reset();
            ++next;
        }
        pos = chunkEnd;
    }
    for (; next < entries.size(); ++next) {  // empty entries at the very end of the data
        EntryCheck empty(entries[next]);
        empty.finish();
        out.ends[entries[next].name] = {-1, -1};
    }
    out.sha256 = sha.hexDigest();
    return out;
}

void refuseBombs(const std::vector<ZipEntry>& entries) {
    std::uint64_t inflated = 0;
    for (const auto& e : entries) {
        if (e.method != 8) continue;
        if (e.size > kMaxInflatedBytes - std::min(inflated, kMaxInflatedBytes))
            damaged(entryName(e) + ": declares " + std::to_string(e.size) +
                    " bytes once inflated (from " + std::to_string(e.compressed) +
                    "); the compressed entries of a model may hold at most " +
                    std::to_string(kMaxInflatedBytes >> 20) + " MiB in all");
        inflated += e.size;
    }
}

bool isNumber(const std::string& s) {
    return !s.empty() && s.size() <= 18 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// torch.jit.save numbers tensor storages 0..N-1 under data/: a gap is an entry lost.
void checkStorageNumbers(const std::string& root, const std::vector<ZipEntry>& entries) {
    std::vector<std::uint64_t> keys;
    const std::string dir = root + "data/";
    for (const auto& e : entries) {
        if (e.name.compare(0, dir.size(), dir) != 0) continue;
        const std::string key = e.name.substr(dir.size());
        if (!isNumber(key))
            damaged(entryName(e) + ": tensor data named other than by a number");
        keys.push_back(std::stoull(key));
    }
    std::sort(keys.begin(), keys.end());
    for (std::size_t i = 0; i < keys.size(); ++i)
        if (keys[i] != i)
            damaged("entry " + detail::printableName(dir) + std::to_string(i) +
                    " is missing (torch.jit.save numbers tensor data from 0, and " +
                    detail::printableName(dir) + std::to_string(keys.back()) + " is there)");
}

// The top-level folder every entry of a torch archive sits in (TorchScript and .pt2 alike).
std::string archiveRoot(const std::vector<ZipEntry>& entries, const char* what) {
    if (entries.empty()) notTorchScript(std::string("a zip archive with no entries, not a ") + what + " (a model)");
    const std::string& first = entries.front().name;
    const auto slash = first.find('/');
    if (slash == std::string::npos || slash == 0)
        notTorchScript(std::string("not a ") + what + ": entry " + detail::printableName(first) +
                       " is not inside a top-level folder");
    return first.substr(0, slash + 1);
}

bool startsWith(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A torch.export.save archive (an ExportedProgram) holds models/<name>.json and no
// data/aotinductor/ (an AOTInductor package has archive_format too, and its compiled model).
bool isExported(const std::vector<ZipEntry>& entries) {
    if (entries.empty()) return false;
    const auto slash = entries.front().name.find('/');
    if (slash == std::string::npos) return false;
    const std::string root = entries.front().name.substr(0, slash + 1);
    bool model = false;
    for (const auto& e : entries) {
        if (startsWith(e.name, root + "data/aotinductor/")) return false;
        const std::string models = root + "models/";
        model = model || (startsWith(e.name, models) && endsWith(e.name, ".json") &&
                          e.name.find('/', models.size()) == std::string::npos);
    }
    return model;
}

// An AOTInductor package (torch._inductor.aoti_compile_and_package) is a zip like a TorchScript
// archive, told apart by its archive_format record ("pt2") or its data/aotinductor/ folder.
bool isPackage(const std::vector<ZipEntry>& entries) {
    if (entries.empty()) return false;
    const auto slash = entries.front().name.find('/');
    if (slash == std::string::npos) return false;
    const std::string root = entries.front().name.substr(0, slash + 1);
    return std::any_of(entries.begin(), entries.end(), [&](const ZipEntry& e) {
        return e.name == root + "archive_format" || startsWith(e.name, root + "data/aotinductor/");
    });
}

// What AOTIModelPackageLoader needs (its default model name is "model"): every entry under one
// folder, and data/aotinductor/model/ holding the compiled .so (or the .cpp it would compile).
std::string checkPackageNames(const std::vector<ZipEntry>& entries) {
    const std::string root = archiveRoot(entries, "an AOTInductor package");
    const std::string model = root + "data/aotinductor/model/";
    bool runnable = false;
    for (const auto& e : entries) {
        if (!startsWith(e.name, root))
            notTorchScript("not an AOTInductor package: " + entryName(e) + " is outside the folder " +
                           detail::printableName(root) + " of the others");
        runnable = runnable || (startsWith(e.name, model) && (endsWith(e.name, ".so") || endsWith(e.name, ".cpp")));
    }
    if (!runnable)
        notTorchScript("an AOTInductor package with nothing to run: no compiled model (.so) or its "
                       "source (.cpp) under " + detail::printableName(model) +
                       " (write it with torch._inductor.aoti_compile_and_package)");
    return root;
}

// What NativeRT reads (ModelRunnerHandle(path, "model")): every entry under one folder,
// models/model.json (the graph), and the weights its config names under data/weights/.
std::string checkExportedNames(const std::vector<ZipEntry>& entries) {
    const std::string root = archiveRoot(entries, "torch.export archive");
    bool graph = false;
    for (const auto& e : entries) {
        if (!startsWith(e.name, root))
            notTorchScript("not a torch.export archive: " + entryName(e) + " is outside the folder " +
                           detail::printableName(root) + " of the others");
        graph = graph || e.name == root + "models/model.json";
    }
    if (!graph)
        notTorchScript("a torch.export archive without " + detail::printableName(root) +
                       "models/model.json: NativeRT runs the program named \"model\" (save it with "
                       "torch.export.save(ep, path), one program per archive)");
    return root;
}

// libtorch's reader takes the first entry's folder as the archive's root and requires version;
// torch.jit.load then reads constants.pkl, data.pkl and code/.
std::string checkTorchScriptNames(const std::vector<ZipEntry>& entries) {
    const std::string root = archiveRoot(entries, "TorchScript archive");
    bool code = false;
    for (const auto& e : entries) {
        if (e.name.compare(0, root.size(), root) != 0)
            notTorchScript("not a TorchScript archive: " + entryName(e) + " is outside the folder " +
                           detail::printableName(root) + " of the others");
        code = code || e.name.compare(0, root.size() + 5, root + "code/") == 0;
    }
    const auto has = [&](const std::string& n) {
        return std::any_of(entries.begin(), entries.end(),
                           [&](const ZipEntry& e) { return e.name == root + n; });
    };
    for (const char* need : {"data.pkl", "constants.pkl"})
        if (!has(need))
            notTorchScript("not a TorchScript archive: no entry " +
                           detail::printableName(root) + need);
    if (!has("version") && !has(".data/version"))
        notTorchScript("not a TorchScript archive: no entry " + detail::printableName(root) +
                       "version");
    if (!code)
        notTorchScript("not a TorchScript archive: no code/ folder under " +
                       detail::printableName(root));
    checkStorageNumbers(root, entries);
    return root;
}

void checkPickles(const std::string& root, const Streamed& s) {
    for (const char* name : {"data.pkl", "constants.pkl"}) {
        const auto [first, last] = s.ends.at(root + name);
        if (first != 0x80 || last != '.')
            damaged("entry " + detail::printableName(root) + name +
                    " is not a pickle (it must begin with 0x80 and end with '.')");
    }
}

ModelFileCheck checkOpenFile(int fd, ModelFileCheck r) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw ModelFileError(kModelMissing, "not a regular file");
    r.bytes = std::uint64_t(st.st_size);
    const FileReader file(fd, r.bytes);
    const detail::ZipLayout layout = detail::readZipLayout(file);
    r.entries = int(layout.entries.size());
    const bool exported = isExported(layout.entries);
    const bool package = !exported && isPackage(layout.entries);
    const std::string root = exported  ? checkExportedNames(layout.entries)
                             : package ? checkPackageNames(layout.entries)
                                       : checkTorchScriptNames(layout.entries);
    refuseBombs(layout.entries);
    const Streamed streamed = streamFile(file, layout.entries);
    if (!package && !exported) checkPickles(root, streamed);
    r.format = exported ? kFormatExported : package ? kFormatAoti : kFormatTorchScript;
    r.sha256 = streamed.sha256;
    r.ok = true;
    return r;
}

}  // namespace

ModelFileCheck checkModelFile(const std::string& path) {
    ModelFileCheck r;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        r.code = kModelMissing;
        r.message = "model file " + path + ": cannot be opened (" + std::strerror(errno) + ")";
        return r;
    }
    try {
        r = checkOpenFile(fd, r);
    } catch (const ModelFileError& e) {
        r.ok = false;
        r.code = e.code();
        r.message = "model file " + path + ": " + e.what();
    } catch (const std::bad_alloc&) {
        r.ok = false;
        r.code = kModelDamaged;
        r.message = "model file " + path + ": not enough memory to check it";
    }
    ::close(fd);
    return r;
}

namespace {

// A small entry's bytes (a metadata record): stored or deflated, at most kMaxRecord once
// inflated; "" when it is bigger, damaged or not one of those methods.
constexpr std::uint64_t kMaxRecord = 1 << 20;
constexpr std::uint64_t kMaxGraph = 64ull << 20;
std::string readEntry(const FileReader& file, const ZipEntry& e, std::uint64_t limit) {
    if (e.size > limit || e.compressed > limit) return {};
    std::string raw(std::size_t(e.compressed), '\0');
    file.readAt(e.data, raw.data(), raw.size(), entryName(e));
    if (e.method == 0) return raw;
    if (e.method != 8) return {};
    std::string out(std::size_t(e.size), '\0');
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return {};
    z.next_in = reinterpret_cast<Bytef*>(raw.data());
    z.avail_in = uInt(raw.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    const int rc = inflate(&z, Z_FINISH);
    inflateEnd(&z);
    return rc == Z_STREAM_END && z.avail_out == 0 ? out : std::string();
}
std::string readSmallEntry(const FileReader& file, const ZipEntry& e) { return readEntry(file, e, kMaxRecord); }

ModelFormat readFormatOpenFile(int fd) {
    ModelFormat f;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw ModelFileError(kModelMissing, "not a regular file");
    const FileReader file(fd, std::uint64_t(st.st_size));
    const detail::ZipLayout layout = detail::readZipLayout(file);
    if (isExported(layout.entries)) {
        const std::string root = archiveRoot(layout.entries, "torch.export archive");
        f.format = kFormatExported;
        for (const auto& e : layout.entries)
            if (e.name == root + "models/model.json") {
                // Larger than a metadata record: a graph of a few thousand nodes.
                const json j = protocol::parseJsonBounded(readEntry(file, e, kMaxGraph));
                if (j.is_object()) {
                    auto meta = detail::exportedMetadata(j);
                    f.metadata.insert(meta.begin(), meta.end());
                }
            }
        // The example inputs' own batch (what the worker feeds by default) beats the graph's
        // hint: an archive whose ep.example_inputs were replaced after export keeps its hint.
        for (const auto& e : layout.entries)
            if (e.name == root + "data/sample_inputs/model.pt") {
                const auto sizes = detail::sampleInputSizes(readEntry(file, e, kMaxGraph));
                if (!sizes.empty() && !sizes.front().empty()) f.metadata["sample_batch"] = std::to_string(sizes.front().front());
            }
        if (f.metadata.count("sample_batch") && f.metadata.count("example_batch"))
            f.metadata["example_batch"] = f.metadata["sample_batch"];
        return f;
    }
    if (!isPackage(layout.entries)) {
        const std::string root = archiveRoot(layout.entries, "TorchScript archive");
        f.format = kFormatTorchScript;
        for (const auto& e : layout.entries)
            if (e.name == root + "version" || e.name == root + ".data/version") {
                std::string v = readSmallEntry(file, e);
                while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.pop_back();
                if (v.size() <= 16 && !v.empty() && std::all_of(v.begin(), v.end(), ::isdigit)) f.torchscript_version = v;
            }
        return f;
    }
    const std::string root = archiveRoot(layout.entries, "an AOTInductor package");
    f.format = kFormatAoti;
    const std::string prefix = root + "data/aotinductor/";
    const ZipEntry* meta = nullptr;
    for (const auto& e : layout.entries) {
        if (!startsWith(e.name, prefix)) continue;
        const std::string rest = e.name.substr(prefix.size());
        if (f.package_model.empty() && rest.find('/') != std::string::npos) f.package_model = rest.substr(0, rest.find('/'));
        // AOTInductor writes <hash>.wrapper_metadata.json (the model's) and kernel ones.
        if (endsWith(e.name, "_metadata.json") && (!meta || endsWith(e.name, "wrapper_metadata.json")))
            if (!meta || !endsWith(meta->name, "wrapper_metadata.json")) meta = &e;
    }
    // The OpenMP thread count Inductor wrote into the package's own kernels (what the worker reads
    // back as applied.package.kernel_threads): "N" when a region has num_threads(N) written in,
    // "dynamic" when its regions ask OpenMP at run time, "none" without a parallel region; absent
    // when the package ships no kernel source (or one too large to read here).
    {
        int fixed = 0;
        bool parallel = false, sources = false;
        for (const auto& e : layout.entries) {
            if (!startsWith(e.name, prefix) || !endsWith(e.name, ".cpp")) continue;
            const std::string text = readEntry(file, e, kMaxGraph);
            if (text.empty()) continue;
            sources = true;
            for (auto at = text.find("#pragma omp parallel"); at != std::string::npos;
                 at = text.find("#pragma omp parallel", at + 1)) {
                parallel = true;
                const std::string line = text.substr(at, text.find('\n', at) - at);
                const auto n = line.find("num_threads(");
                if (n == std::string::npos) continue;
                const std::string arg = line.substr(n + 12, line.find(')', n) - n - 12);
                if (!arg.empty() && arg.size() < 6 && std::all_of(arg.begin(), arg.end(), ::isdigit))
                    fixed = std::max(fixed, std::stoi(arg));
            }
        }
        if (sources) f.metadata["kernel_threads"] = fixed > 0 ? std::to_string(fixed) : parallel ? "dynamic" : "none";
    }
    if (meta) {
        // Depth-bounded: the package is the model's author's, not ours.
        const json j = protocol::parseJsonBounded(readSmallEntry(file, *meta));
        if (j.is_object())
            for (const auto& [k, v] : j.items())
                if (v.is_string()) f.metadata[k] = v.get<std::string>();
    }
    return f;
}

}  // namespace

ModelFormat readModelFormat(const std::string& path) {
    ModelFormat f;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        f.code = kModelMissing;
        f.message = "model file " + path + ": cannot be opened (" + std::strerror(errno) + ")";
        return f;
    }
    try {
        f = readFormatOpenFile(fd);
    } catch (const ModelFileError& e) {
        f = ModelFormat{};
        f.code = e.code();
        f.message = "model file " + path + ": " + e.what();
    } catch (const std::bad_alloc&) {
        f = ModelFormat{};
        f.code = kModelDamaged;
        f.message = "model file " + path + ": not enough memory to read it";
    }
    ::close(fd);
    return f;
}

}  // namespace pitlane::spec
