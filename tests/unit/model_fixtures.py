"""Fixtures for test_model_file: zip archives and damaged copies of a bundled model, each with
what an independent reader (Python's zipfile, zlib, hashlib) says about it, in expected.json.

usage: model_fixtures.py MODEL.pt OUT_DIR
"""
import hashlib
import json
import os
import struct
import sys
import zipfile
import zlib

model, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
expected = {}
original = open(model, "rb").read()


def write(name, data, **facts):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    facts["sha256"] = hashlib.sha256(data).hexdigest()
    facts["bytes"] = len(data)
    expected[name] = facts


def rezip(contents, name=None, **facts):
    """A new archive of (name, bytes, method) written by zipfile."""
    path = os.path.join(out, name)
    with zipfile.ZipFile(path, "w") as z:
        for n, data, method in contents:
            z.writestr(zipfile.ZipInfo(n), data, compress_type=method)
    write(name, open(path, "rb").read(), **facts)


def model_entries(skip=()):
    with zipfile.ZipFile(model) as z:
        return [(i.filename, z.read(i.filename), i.compress_type)
                for i in z.infolist() if i.filename not in skip]


with zipfile.ZipFile(model) as z:
    infos = z.infolist()
root = infos[0].filename.split("/")[0] + "/"
write("original.pt", original, code="", entries=len(infos))

# A TorchScript-shaped archive written by zipfile (stored and deflated entries).
pickle = b"\x80\x02}q\x00."
made = [(f"m/data.pkl", pickle, zipfile.ZIP_STORED),
        ("m/constants.pkl", b"\x80\x02).", zipfile.ZIP_STORED),
        ("m/version", b"3\n", zipfile.ZIP_STORED),
        ("m/code/__torch__.py", b"def forward(self):\n    pass\n" * 40, zipfile.ZIP_DEFLATED),
        ("m/data/0", os.urandom(4096), zipfile.ZIP_STORED),
        ("m/data/1", bytes(range(256)) * 8, zipfile.ZIP_DEFLATED)]
rezip(made, "made.pt", code="", entries=len(made),
      crcs={n: zlib.crc32(d) for n, d, _ in made})

rezip([("a.txt", b"hello " * 100, zipfile.ZIP_DEFLATED), ("b.bin", b"x", zipfile.ZIP_STORED)],
      "plain.zip", code="model_not_torchscript", says="not inside a top-level folder")
write("not_zip.pt", bytes((i * 7) % 251 for i in range(1000)), code="model_not_torchscript",
      says="not a zip archive")
write("empty.pt", b"", code="model_not_torchscript", says="not a zip archive")

# One flipped byte in the middle of the largest tensor: the CRC zlib computes, the one recorded.
big = max((i for i in infos if "/data/" in i.filename), key=lambda i: i.file_size)
with zipfile.ZipFile(model) as z:
    data = bytearray(z.read(big.filename))
lh = big.header_offset
start = lh + 30 + struct.unpack("<H", original[lh + 26:lh + 28])[0] + \
    struct.unpack("<H", original[lh + 28:lh + 30])[0]
flipped = bytearray(original)
flipped[start + len(data) // 2] ^= 0x10
data[len(data) // 2] ^= 0x10
write("flip_data.pt", bytes(flipped), code="model_damaged",
      says=f"entry {big.filename}: CRC-32 0x{zlib.crc32(data):08x}, recorded 0x{big.CRC:08x}")

# A flipped byte in a deflated entry (code/): bad deflate data or a CRC mismatch, named.
code = next(i for i in infos if i.compress_type == zipfile.ZIP_DEFLATED)
lh = code.header_offset
start = lh + 30 + sum(struct.unpack("<HH", original[lh + 26:lh + 30]))
flipped = bytearray(original)
flipped[start + code.compress_size // 2] ^= 0x55
write("flip_deflated.pt", bytes(flipped), code="model_damaged", says=f"entry {code.filename}: ")

write("truncated.pt", original[: len(original) * 6 // 10], code="model_damaged", says="truncated")
write("truncated_tail.pt", original[:-10], code="model_damaged", says="")
write("appended.pt", original + b"trailing bytes", code="model_damaged", says="bytes after")

# Entries removed from a consistent archive (rewritten by zipfile).
rezip(model_entries(skip={root + "data/1"}), "removed_tensor.pt", code="model_damaged",
      says=f"entry {root}data/1 is missing")
rezip(model_entries(skip={root + "data.pkl"}), "removed_data_pkl.pt",
      code="model_not_torchscript", says=f"no entry {root}data.pkl")
rezip([(n.replace(root, "other/") if "constants" in n else n, d, m)
       for n, d, m in model_entries()], "moved_entry.pt", code="model_not_torchscript",
      says="is outside the folder")

# A name changed in the central directory only (same length): the local header disagrees.
z64 = original.rfind(b"PK\x06\x06")
cdo = struct.unpack("<Q", original[z64 + 48:z64 + 56])[0]
cd_name = (root + "data/1").encode()
cd = original.find(cd_name + b"PK", cdo)
assert cd > 0
renamed = bytearray(original)
renamed[cd + len(cd_name) - 1:cd + len(cd_name)] = b"X"
write("renamed_cd.pt", bytes(renamed), code="model_damaged",
      says=f"the local header names it \"{root}data/1\"")

# The end records point the central directory outside the file.
eocd = original.rfind(b"PK\x05\x06")
outside = bytearray(original)
outside[z64 + 48:z64 + 56] = struct.pack("<Q", 1 << 40)
write("cd_outside.pt", bytes(outside), code="model_damaged", says="the zip64 end record disagrees")
outside[eocd + 16:eocd + 20] = struct.pack("<I", 0xFFFFFFFF)
write("cd_outside2.pt", bytes(outside), code="model_damaged",
      says="does not end where the end records begin")

# A local header's CRC field (0: a data descriptor follows) changed: neither 0 nor the CD's.
lh = infos[1].header_offset
local = bytearray(original)
local[lh + 14] ^= 0x01
write("local_crc.pt", bytes(local), code="model_damaged",
      says=f"entry {infos[1].filename}: the local header's CRC or sizes are neither 0")

# A huge compressed-size field in a central directory record.
huge = bytearray(original)
huge[cdo + 20:cdo + 24] = struct.pack("<I", 0xFFFFFFF0)
huge[cdo + 24:cdo + 28] = struct.pack("<I", 0xFFFFFFF0)
write("huge_length.pt", bytes(huge), code="model_damaged", says="run past the central directory")

# A zip bomb: a deflated code entry that really inflates to 300 MiB (its sizes are right).
bomb_path = os.path.join(out, "bomb.pt")
with zipfile.ZipFile(bomb_path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
    for n, d, m in made:
        z.writestr(zipfile.ZipInfo(n), d, compress_type=m)
    with z.open("m/code/bomb.py", "w", force_zip64=True) as f:
        zeros = bytes(1 << 20)
        for _ in range(300):
            f.write(zeros)
write("bomb.pt", open(bomb_path, "rb").read(), code="model_damaged", says="m/code/bomb.py: declares")

# A duplicate name.
dup_path = os.path.join(out, "dup.pt")
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with zipfile.ZipFile(dup_path, "w") as z:
        for n, d, m in made + [made[4]]:
            z.writestr(zipfile.ZipInfo(n), d, compress_type=m)
write("dup.pt", open(dup_path, "rb").read(), code="model_damaged", says="appears twice")

# SHA-256 of prefixes of one byte pattern (block and padding boundaries), for both code paths.
pattern = bytes((i * 7 + 3) % 256 for i in range(100000))
with open(os.path.join(out, "pattern.bin"), "wb") as f:
    f.write(pattern)
json.dump({str(n): hashlib.sha256(pattern[:n]).hexdigest()
           for n in [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4113, 100000]},
          open(os.path.join(out, "prefixes.json"), "w"), indent=1)

json.dump(expected, open(os.path.join(out, "expected.json"), "w"), indent=1)
