#include "zip_layout.h"

#include "pitlane/spec/model_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <unistd.h>

namespace pitlane::spec::detail {

namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50,
                        kEndSig = 0x06054b50, kZip64EndSig = 0x06064b50,
                        kZip64LocatorSig = 0x07064b50, kDescriptorSig = 0x08074b50;
constexpr std::size_t kEndSize = 22, kLocatorSize = 20, kZip64EndSize = 56, kCentralSize = 46,
                      kLocalSize = 30;
constexpr std::uint32_t kMax32 = 0xffffffff;
constexpr std::uint16_t kMax16 = 0xffff;

std::uint16_t le16(const unsigned char* p) { return std::uint16_t(p[0] | p[1] << 8); }
std::uint32_t le32(const unsigned char* p) {
    return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
           std::uint32_t(p[3]) << 24;
}
std::uint64_t le64(const unsigned char* p) {
    return std::uint64_t(le32(p)) | std::uint64_t(le32(p + 4)) << 32;
}

[[noreturn]] void damaged(const std::string& reason) { throw ModelFileError(kModelDamaged, reason); }
[[noreturn]] void notZip(const std::string& reason) {
    throw ModelFileError(kModelNotTorchScript, reason);
}

std::string entryName(const ZipEntry& e) { return "entry " + printableName(e.name); }

struct EndRecords {
    std::uint64_t entries = 0, cdSize = 0, cdOffset = 0;
    std::uint64_t cdEnd = 0;  // where the central directory must end (the first end record)
};

// The end-of-central-directory record: the last one whose comment reaches the end of the file.
std::uint64_t findEnd(const FileReader& f, std::vector<unsigned char>& tail) {
    if (f.size() < kEndSize)
        notZip("not a zip archive (" + std::to_string(f.size()) + " bytes; a zip has at least 22)");
    const std::uint64_t n = std::min<std::uint64_t>(f.size(), kEndSize + kMax16);
    tail.resize(std::size_t(n));
    f.readAt(f.size() - n, tail.data(), tail.size(), "the end of the file");
    bool seen = false;
    for (std::size_t i = tail.size() - kEndSize + 1; i-- > 0;) {
        if (le32(&tail[i]) != kEndSig) continue;
        seen = true;
        if (i + kEndSize + le16(&tail[i + 20]) == tail.size()) return f.size() - n + i;
    }
    unsigned char head[4] = {0, 0, 0, 0};
    f.readAt(0, head, 4, "the first bytes");
    if (seen) damaged("bytes after the zip's end-of-central-directory record (appended to?)");
    if (le32(head) == kLocalSig)
        damaged("no end-of-central-directory record: the zip is truncated");
    notZip("not a zip archive (no end-of-central-directory record, no zip signature)");
}

// The zip64 end record named by the locator just before the end record (PyTorch always writes
// one); its counts must agree with the 16/32-bit fields that are not saturated.
void readZip64(const FileReader& f, std::uint64_t locatorAt, EndRecords& r) {
    unsigned char loc[kLocatorSize];
    f.readAt(locatorAt, loc, sizeof loc, "the zip64 locator");
    const std::uint64_t at = le64(loc + 8);
    if (le32(loc + 4) != 0 || le32(loc + 16) > 1) damaged("multi-disk zip64 archive");
    if (at > locatorAt || locatorAt - at < kZip64EndSize)
        damaged("the zip64 locator points at byte " + std::to_string(at) +
                ", not before itself (byte " + std::to_string(locatorAt) + ")");
    unsigned char z[kZip64EndSize];
    f.readAt(at, z, sizeof z, "the zip64 end record");
    if (le32(z) != kZip64EndSig) damaged("no zip64 end record where the locator points");
    if (le64(z + 4) != locatorAt - at - 12)
        damaged("the zip64 end record's size field (" + std::to_string(le64(z + 4)) +
                ") does not reach the locator");
    if (le32(z + 16) != 0 || le32(z + 20) != 0) damaged("multi-disk zip64 archive");
    const auto agree = [](std::uint64_t narrow, std::uint64_t sentinel, std::uint64_t wide) {
        return narrow == sentinel || narrow == wide;
    };
    if (le64(z + 24) != le64(z + 32) || !agree(r.entries, kMax16, le64(z + 32)) ||
        !agree(r.cdSize, kMax32, le64(z + 40)) || !agree(r.cdOffset, kMax32, le64(z + 48)))
        damaged("the zip64 end record disagrees with the end-of-central-directory record");
    r.entries = le64(z + 32), r.cdSize = le64(z + 40), r.cdOffset = le64(z + 48);
    r.cdEnd = at;
}

EndRecords readEnd(const FileReader& f) {
    std::vector<unsigned char> tail;
    const std::uint64_t at = findEnd(f, tail);
    const unsigned char* e = &tail[std::size_t(at - (f.size() - tail.size()))];
    EndRecords r;
    if (le16(e + 4) != 0 || le16(e + 6) != 0) damaged("multi-disk zip archive");
    if (le16(e + 8) != le16(e + 10)) damaged("the end record's two entry counts differ");
    r.entries = le16(e + 10), r.cdSize = le32(e + 12), r.cdOffset = le32(e + 16), r.cdEnd = at;
    unsigned char sig[4] = {0, 0, 0, 0};
    if (at >= kLocatorSize) f.readAt(at - kLocatorSize, sig, 4, "the zip64 locator");
    if (le32(sig) == kZip64LocatorSig)
        readZip64(f, at - kLocatorSize, r);
    else if (r.entries == kMax16 || r.cdSize == kMax32 || r.cdOffset == kMax32)
        damaged("the end record has zip64 values but there is no zip64 locator");
    if (r.cdOffset > r.cdEnd || r.cdSize != r.cdEnd - r.cdOffset)
        damaged("the central directory (" + std::to_string(r.cdSize) + " bytes at " +
                std::to_string(r.cdOffset) + ") does not end where the end records begin (byte " +
                std::to_string(r.cdEnd) + ")");
    if (r.entries > r.cdSize / kCentralSize)
        damaged("the end record counts " + std::to_string(r.entries) +
                " entries; the central directory has room for " +
                std::to_string(r.cdSize / kCentralSize));
    return r;
}

// Fields saturated at 0xffffffff in a header come from its zip64 extra field, in this order.
void zip64Sizes(const unsigned char* extra, std::size_t n, ZipEntry& e, bool withOffset,
                const std::string& where) {
    const bool wantSize = e.size == kMax32, wantComp = e.compressed == kMax32,
               wantOffset = withOffset && e.header == kMax32;
    if (!wantSize && !wantComp && !wantOffset) return;
    for (std::size_t i = 0; i + 4 <= n;) {
        const std::uint16_t id = le16(extra + i), len = le16(extra + i + 2);
        if (i + 4 + len > n) break;
        if (id == 1) {
            const std::size_t need = 8 * (wantSize + wantComp + wantOffset);
            if (len < need) damaged(where + ": zip64 extra field too short");
            const unsigned char* p = extra + i + 4;
            if (wantSize) e.size = le64(p), p += 8;
            if (wantComp) e.compressed = le64(p), p += 8;
            if (wantOffset) e.header = le64(p);
            return;
        }
        i += 4 + std::size_t(len);
    }
    damaged(where + ": sizes marked zip64 but no zip64 extra field");
}

// One central directory record at `p` (within `n` bytes); returns its length.
std::size_t centralEntry(const unsigned char* p, std::size_t n, std::size_t index, ZipEntry& e) {
    const std::string where = "central directory record " + std::to_string(index);
    if (n < kCentralSize || le32(p) != kCentralSig) damaged(where + ": no record signature");
    const std::size_t nameLen = le16(p + 28), extraLen = le16(p + 30), commentLen = le16(p + 32);
    if (kCentralSize + nameLen + extraLen + commentLen > n)
        damaged(where + ": its name and extra fields run past the central directory");
    e.flags = le16(p + 8), e.method = le16(p + 10), e.crc = le32(p + 16);
    e.compressed = le32(p + 20), e.size = le32(p + 24), e.header = le32(p + 42);
    e.name.assign(reinterpret_cast<const char*>(p + kCentralSize), nameLen);
    const std::string entry = entryName(e);
    if (le16(p + 34) != 0 && le16(p + 34) != kMax16) damaged(entry + ": on another disk");
    zip64Sizes(p + kCentralSize + nameLen, extraLen, e, true, entry);
    if (e.name.empty() || e.name.find('\0') != std::string::npos)
        damaged(where + ": empty name or a NUL byte in it");
    // A name that climbs out of the folder it is extracted into (AOTInductor packages are
    // extracted to a temporary folder): torch never writes one.
    if (e.name.front() == '/' || e.name.find('\\') != std::string::npos || e.name == ".." ||
        e.name.rfind("../", 0) == 0 || e.name.find("/../") != std::string::npos ||
        (e.name.size() >= 3 && e.name.compare(e.name.size() - 3, 3, "/..") == 0))
        damaged(entry + ": a path that leaves the archive's folder (a leading /, a \"..\" part or a "
                        "backslash); torch never writes one");
    if (e.flags & 1) damaged(entry + ": encrypted");
    if (e.method != 0 && e.method != 8)
        damaged(entry + ": compression method " + std::to_string(e.method) +
                " (libtorch reads stored and deflated entries only)");
    if (e.method == 0 && e.compressed != e.size)
        damaged(entry + ": stored, but its sizes differ (" + std::to_string(e.compressed) +
                " and " + std::to_string(e.size) + ")");
    return kCentralSize + nameLen + extraLen + commentLen;
}

std::vector<ZipEntry> readCentral(const FileReader& f, const EndRecords& r) {
    std::vector<unsigned char> cd(std::size_t(r.cdSize));  // within the file: checked by readEnd
    f.readAt(r.cdOffset, cd.data(), cd.size(), "the central directory");
    std::vector<ZipEntry> entries(std::size_t(r.entries));
    std::size_t pos = 0;
    for (std::size_t i = 0; i < entries.size(); ++i)
        pos += centralEntry(cd.data() + pos, cd.size() - pos, i, entries[i]);
    if (pos != cd.size())
        damaged("the central directory has " + std::to_string(cd.size() - pos) +
                " bytes after its last record (the end record counts " +
                std::to_string(entries.size()) + " entries)");
    std::map<std::string, std::size_t> names;
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (!names.emplace(entries[i].name, i).second)
            damaged(entryName(entries[i]) + ": the name appears twice in the central directory");
    return entries;
}

// The data descriptor after an entry's data (flag bit 3: PyTorch writes one for every entry):
// its CRC and sizes must be the central directory's. Returns its length.
std::uint64_t descriptor(const FileReader& f, const ZipEntry& e, std::uint64_t at,
                         std::uint64_t limit, bool wide) {
    unsigned char d[24] = {};
    const std::size_t n = std::size_t(std::min<std::uint64_t>(sizeof d, limit - at));
    f.readAt(at, d, n, entryName(e) + "'s data descriptor");
    const std::size_t sig = n >= 4 && le32(d) == kDescriptorSig ? 4 : 0;
    const std::size_t len = sig + (wide ? 20 : 12);
    if (len > n) damaged(entryName(e) + ": its data descriptor runs into the central directory");
    const std::uint64_t comp = wide ? le64(d + sig + 4) : le32(d + sig + 4);
    const std::uint64_t size = wide ? le64(d + sig + 12) : le32(d + sig + 8);
    if (le32(d + sig) != e.crc || comp != e.compressed || size != e.size)
        damaged(entryName(e) + ": its data descriptor disagrees with the central directory");
    return len;
}

// The local header must name the same entry with the same method and, unless a data descriptor
// follows, the same CRC and sizes; the data must lie before the central directory.
void localHeader(const FileReader& f, ZipEntry& e, std::uint64_t cdOffset) {
    const std::string entry = entryName(e);
    if (e.header > cdOffset || cdOffset - e.header < kLocalSize)
        damaged(entry + ": its local header offset " + std::to_string(e.header) +
                " is not before the central directory (byte " + std::to_string(cdOffset) + ")");
    unsigned char h[kLocalSize];
    f.readAt(e.header, h, sizeof h, entry + "'s local header");
    if (le32(h) != kLocalSig) damaged(entry + ": no local header at byte " + std::to_string(e.header));
    const std::size_t nameLen = le16(h + 26), extraLen = le16(h + 28);
    if (kLocalSize + nameLen + extraLen > cdOffset - e.header)
        damaged(entry + ": its local header runs into the central directory");
    std::vector<unsigned char> var(nameLen + extraLen);  // at most 128 KiB
    f.readAt(e.header + kLocalSize, var.data(), var.size(), entry + "'s local header");
    if (std::string(reinterpret_cast<const char*>(var.data()), nameLen) != e.name)
        damaged(entry + ": the local header names it \"" +
                printableName(std::string(reinterpret_cast<const char*>(var.data()), nameLen)) +
                "\"");
    if (le16(h + 8) != e.method || ((le16(h + 6) ^ e.flags) & 9))
        damaged(entry + ": the local header's method or flags differ from the central directory's");
    ZipEntry local = e;
    local.crc = le32(h + 14), local.compressed = le32(h + 18), local.size = le32(h + 22);
    zip64Sizes(var.data() + nameLen, extraLen, local, false, entry + " (local header)");
    e.data = e.header + kLocalSize + nameLen + extraLen;
    if (e.compressed > cdOffset - e.data)
        damaged(entry + ": its " + std::to_string(e.compressed) + " bytes of data at byte " +
                std::to_string(e.data) + " run past the central directory (byte " +
                std::to_string(cdOffset) + ")");
    e.end = e.data + e.compressed;
    const auto zeroOr = [](std::uint64_t v, std::uint64_t cd) { return v == 0 || v == cd; };
    if ((e.flags & 8) && !(zeroOr(local.crc, e.crc) && zeroOr(local.compressed, e.compressed) &&
                           zeroOr(local.size, e.size)))
        damaged(entry + ": the local header's CRC or sizes are neither 0 (a data descriptor "
                        "follows) nor the central directory's");
    if (e.flags & 8)
        e.end += descriptor(f, e, e.end, cdOffset, local.compressed == kMax32 ||
                                                       e.compressed >= kMax32 || e.size >= kMax32);
    else if (local.crc != e.crc || local.compressed != e.compressed || local.size != e.size)
        damaged(entry + ": the local header's CRC or sizes differ from the central directory's");
}

}  // namespace

void FileReader::readAt(std::uint64_t offset, void* out, std::size_t n,
                        const std::string& what) const {
    if (offset > size_ || n > size_ - offset)
        damaged(what + " (" + std::to_string(n) + " bytes at " + std::to_string(offset) +
                ") lies beyond the end of the file (" + std::to_string(size_) + " bytes)");
    auto* p = static_cast<unsigned char*>(out);
    for (std::size_t done = 0; done < n;) {
        const std::size_t got = readSome(offset + done, p + done, n - done);
        if (got == 0) damaged(what + ": the file ended early (was it truncated while read?)");
        done += got;
    }
}

std::size_t FileReader::readSome(std::uint64_t offset, void* out, std::size_t n) const {
    for (;;) {
        const ssize_t got = ::pread(fd_, out, n, off_t(offset));
        if (got >= 0) return std::size_t(got);
        if (errno != EINTR) damaged(std::string("read error: ") + std::strerror(errno));
    }
}

std::string printableName(const std::string& name) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < name.size() && out.size() < 200; ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += char(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (out.size() >= 200) out += "...";
    return out;
}

ZipLayout readZipLayout(const FileReader& file) {
    const EndRecords end = readEnd(file);
    ZipLayout layout;
    layout.cdOffset = end.cdOffset;
    layout.entries = readCentral(file, end);
    for (auto& e : layout.entries) localHeader(file, e, end.cdOffset);
    std::vector<const ZipEntry*> byOffset;
    for (const auto& e : layout.entries) byOffset.push_back(&e);
    std::sort(byOffset.begin(), byOffset.end(),
              [](const ZipEntry* a, const ZipEntry* b) { return a->header < b->header; });
    for (std::size_t i = 1; i < byOffset.size(); ++i)
        if (byOffset[i]->header < byOffset[i - 1]->end)
            damaged(entryName(*byOffset[i]) + " (at byte " + std::to_string(byOffset[i]->header) +
                    ") overlaps " + entryName(*byOffset[i - 1]) + " (bytes " +
                    std::to_string(byOffset[i - 1]->header) + " to " +
                    std::to_string(byOffset[i - 1]->end) + ")");
    return layout;
}

}  // namespace pitlane::spec::detail
