"""Copies of a bundled model for test_model_integrity, and what Python's zipfile, zlib and
hashlib say about each (facts.json):
  intact.pt   the model as it is
  damaged.pt  one byte of its largest tensor flipped (the zip's CRC-32 no longer matches)
  pickle.pt   a sound archive whose data.pkl calls os.system (GLOBAL posix system) to create
              MARKER: libtorch's unpickler must refuse it, nothing may run it

usage: model_copies.py MODEL.pt OUT_DIR MARKER
"""
import hashlib
import json
import os
import struct
import sys
import zipfile
import zlib

model, out, marker = sys.argv[1:4]
raw = open(model, "rb").read()
facts = {}
open(os.path.join(out, "intact.pt"), "wb").write(raw)
facts["intact_sha256"] = hashlib.sha256(raw).hexdigest()

with zipfile.ZipFile(model) as z:
    infos = z.infolist()
    big = max((i for i in infos if "/data/" in i.filename), key=lambda i: i.file_size)
    data = bytearray(z.read(big.filename))
    entries = [(i, z.read(i.filename)) for i in infos]
start = big.header_offset + 30 + sum(struct.unpack("<HH", raw[big.header_offset + 26:big.header_offset + 30]))
damaged = bytearray(raw)
damaged[start + len(data) // 3] ^= 0x01
data[len(data) // 3] ^= 0x01
open(os.path.join(out, "damaged.pt"), "wb").write(damaged)
facts["damaged_entry"] = big.filename
facts["damaged_crc"] = "0x%08x" % zlib.crc32(data)
facts["recorded_crc"] = "0x%08x" % big.CRC

cmd = ("touch " + marker).encode()
evil = b"\x80\x02cposix\nsystem\nq\x00X" + struct.pack("<I", len(cmd)) + cmd + b"q\x01\x85q\x02Rq\x03."
with zipfile.ZipFile(os.path.join(out, "pickle.pt"), "w") as z:
    for info, body in entries:
        if info.filename.endswith("/data.pkl"):
            body = evil
        z.writestr(zipfile.ZipInfo(info.filename), body, compress_type=info.compress_type)
json.dump(facts, open(os.path.join(out, "facts.json"), "w"), indent=1)
