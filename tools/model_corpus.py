#!/usr/bin/python3
"""Writes a corpus of damaged and hostile copies of a TorchScript model (docs/RELIABILITY.md,
"Damaged models"): seeded and deterministic, one preset per file, and corpus.json listing each
file's kind and what was done to it. Run with Debian's /usr/bin/python3 (zipfile, no torch needed).

usage: model_corpus.py --model MODEL.pt --input-shape 256 --out DIR [--count 320] [--seed 12]

Kinds (round robin, so every kind gets count / kinds files):
  flip_header    one bit flipped in a local header, the central directory or the end records
  flip_data      one bit flipped in an entry's data (tensor, pickle or deflated code)
  overwrite      1-64 random bytes written at a random offset
  truncate       the file cut at a random length
  remove_entry   the archive rewritten (sound zip) without one entry
  rename_entry   one entry renamed: consistently (rewritten) or in the central directory only
  not_model      random bytes, an empty file, a plain zip, a zip with the layout but no code/
  pickle         data.pkl (or constants.pkl) replaced by a pickle that calls os.system,
                 builtins.eval, subprocess.call... (each would create MARKER-<name> if run)
  bomb           a deflated entry inflating to 300 MiB, a declared size of 2^40, a stored entry
                 larger than the file, 70 000 entries
  splice         bytes appended or prepended, an entry's data duplicated (names twice)
"""
import argparse
import json
import os
import random
import struct
import zipfile


def entries_of(raw_path):
    with zipfile.ZipFile(raw_path) as z:
        return [(i, z.read(i.filename)) for i in z.infolist()]


def write_zip(path, items, **kw):
    with zipfile.ZipFile(path, "w", **kw) as z:
        for name, body, method in items:
            z.writestr(zipfile.ZipInfo(name), body, compress_type=method)
    return open(path, "rb").read()


def data_span(raw, info):
    """Offset and length of an entry's data in the original file."""
    lh = info.header_offset
    start = lh + 30 + sum(struct.unpack("<HH", raw[lh + 26:lh + 30]))
    return start, info.compress_size


def structure_offsets(raw, infos, cd_start):
    """Byte spans of the zip's structure: each local header, the central directory and the end
    records."""
    return [(i.header_offset, data_span(raw, i)[0]) for i in infos] + [(cd_start, len(raw))]


def flip_header(rng, raw, infos, ctx):
    lo, hi = rng.choice(structure_offsets(raw, infos, ctx["cd_start"]))
    at = rng.randrange(lo, hi)
    out = bytearray(raw)
    bit = rng.randrange(8)
    out[at] ^= 1 << bit
    return bytes(out), f"bit {bit} of byte {at} (header bytes {lo}-{hi})"


def flip_data(rng, raw, infos, ctx):
    info = rng.choice([i for i in infos if i.compress_size > 0])
    start, n = data_span(raw, info)
    at = start + rng.randrange(n)
    out = bytearray(raw)
    bit = rng.randrange(8)
    out[at] ^= 1 << bit
    return bytes(out), f"bit {bit} of byte {at}, in {info.filename}"


def overwrite(rng, raw, infos, ctx):
    n = rng.randint(1, 64)
    at = rng.randrange(len(raw) - n)
    out = bytearray(raw)
    out[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
    return bytes(out), f"{n} random bytes at {at}"


def truncate(rng, raw, infos, ctx):
    n = rng.randrange(len(raw))
    return raw[:n], f"cut to {n} of {len(raw)} bytes"


def remove_entry(rng, raw, infos, ctx):
    victim = rng.choice(infos).filename
    items = [(i.filename, b, i.compress_type) for i, b in ctx["entries"] if i.filename != victim]
    return write_zip(ctx["tmp"], items), f"rewritten without {victim}"


def rename_entry(rng, raw, infos, ctx):
    victim = rng.choice(infos)
    new = victim.filename[:-1] + chr(ord("a") + rng.randrange(26))
    if rng.random() < 0.5:
        items = [(new if i.filename == victim.filename else i.filename, b, i.compress_type)
                 for i, b in ctx["entries"]]
        return write_zip(ctx["tmp"], items), f"{victim.filename} renamed {new} (rewritten)"
    cd = raw.rfind(victim.filename.encode() + b"PK")
    if cd < 0:
        cd = raw.rfind(victim.filename.encode())
    out = bytearray(raw)
    out[cd + len(victim.filename) - 1] = ord(new[-1])
    return bytes(out), f"{victim.filename} renamed {new} in the central directory only"


def not_model(rng, raw, infos, ctx):
    root = infos[0].filename.split("/")[0]
    choice = rng.randrange(5)
    if choice == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 5000))), "random bytes"
    if choice == 1:
        return b"", "empty file"
    if choice == 2:
        return write_zip(ctx["tmp"], [("readme.txt", b"hello\n" * 50, zipfile.ZIP_DEFLATED)]), \
            "a plain zip"
    if choice == 3:
        items = [(i.filename, b, i.compress_type) for i, b in ctx["entries"]
                 if "/code/" not in i.filename]
        return write_zip(ctx["tmp"], items), "the archive without code/"
    items = [(f"{root}/data.pkl", b"\x80\x02}q\x00.", zipfile.ZIP_STORED),
             (f"{root}/version", b"3\n", zipfile.ZIP_STORED)]
    return write_zip(ctx["tmp"], items), "data.pkl and version only"


def evil_pickle(rng, name, marker):
    cmd = f"touch {marker}".encode()
    arg = b"X" + struct.pack("<I", len(cmd)) + cmd
    forms = [
        (b"cposix\nsystem\n", arg, "GLOBAL posix.system"),
        (b"cos\nsystem\n", arg, "GLOBAL os.system"),
        (b"cbuiltins\neval\n",
         b"X" + struct.pack("<I", len(f"__import__('os').system('touch {marker}')")) +
         f"__import__('os').system('touch {marker}')".encode(), "GLOBAL builtins.eval"),
        (b"csubprocess\ncall\n", arg, "GLOBAL subprocess.call"),
    ]
    glob, argument, what = rng.choice(forms)
    return b"\x80\x02" + glob + b"q\x00" + argument + b"q\x01\x85q\x02Rq\x03.", what


def pickle(rng, raw, infos, ctx):
    target = rng.choice(["data.pkl", "constants.pkl"])
    body, what = evil_pickle(rng, ctx["name"], ctx["marker"])
    items = [(i.filename, body if i.filename.endswith("/" + target) else b, i.compress_type)
             for i, b in ctx["entries"]]
    return write_zip(ctx["tmp"], items), f"{target}: {what}"


def patch_sizes(raw, info, size):
    """A forged uncompressed size for one entry, in its central directory record."""
    cd = raw.rfind(info.filename.encode() + b"PK")
    if cd < 0:
        cd = raw.rfind(info.filename.encode())
    rec = cd - 46
    out = bytearray(raw)
    out[rec + 24:rec + 28] = struct.pack("<I", size & 0xFFFFFFFF)
    return bytes(out)


def bomb(rng, raw, infos, ctx):
    root = infos[0].filename.split("/")[0]
    choice = rng.randrange(4)
    items = [(i.filename, b, i.compress_type) for i, b in ctx["entries"]]
    if choice == 0:
        with zipfile.ZipFile(ctx["tmp"], "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            for n, b, m in items:
                z.writestr(zipfile.ZipInfo(n), b, compress_type=m)
            with z.open(f"{root}/code/__torch__/bomb.py", "w", force_zip64=True) as f:
                zeros = bytes(1 << 20)
                for _ in range(300):
                    f.write(zeros)
        return open(ctx["tmp"], "rb").read(), "a code entry inflating to 300 MiB"
    if choice == 1:
        code = rng.choice([i for i in infos if i.compress_type == zipfile.ZIP_DEFLATED])
        return patch_sizes(raw, code, 0xFFFFFFF0), f"{code.filename} declares 4 GiB"
    if choice == 2:
        big = rng.choice([i for i in infos if i.compress_type == zipfile.ZIP_STORED])
        cd = raw.rfind(big.filename.encode() + b"PK")
        if cd < 0:
            cd = raw.rfind(big.filename.encode())
        out = bytearray(raw)
        out[cd - 46 + 20:cd - 46 + 28] = struct.pack("<II", 0x7FFFFFFF, 0x7FFFFFFF)
        return bytes(out), f"stored {big.filename} declares 2 GiB"
    many = items + [(f"{root}/extra/{k}", b"", zipfile.ZIP_STORED) for k in range(70000)]
    return write_zip(ctx["tmp"], many), "70 000 extra empty entries (zip64 counts)"


def splice(rng, raw, infos, ctx):
    choice = rng.randrange(3)
    if choice == 0:
        return raw + bytes(rng.randrange(256) for _ in range(rng.randint(1, 300))), "bytes appended"
    if choice == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 300))) + raw, \
            "bytes prepended"
    import warnings
    dup = rng.choice(infos)
    items = [(i.filename, b, i.compress_type) for i, b in ctx["entries"]]
    items.append((dup.filename, bytes(len(dict(ctx["entries_by_name"])[dup.filename])),
                  dup.compress_type))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return write_zip(ctx["tmp"], items), f"{dup.filename} twice (the second zeroed)"


KINDS = [flip_header, flip_data, overwrite, truncate, remove_entry, rename_entry, not_model,
         pickle, bomb, splice]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--input-shape", required=True, help="comma-separated, without the batch")
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=320)
    ap.add_argument("--seed", type=int, default=12)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    raw = open(a.model, "rb").read()
    entries = entries_of(a.model)
    infos = [i for i, _ in entries]
    with zipfile.ZipFile(a.model) as z:
        cd_start = z.start_dir
    shape = [int(x) for x in a.input_shape.split(",")]
    manifest = {"model": os.path.abspath(a.model), "seed": a.seed, "files": {}}
    tmp = os.path.join(a.out, ".tmp.zip")
    for k in range(a.count):
        kind = KINDS[k % len(KINDS)]
        rng = random.Random(a.seed * 1000003 + k)
        name = f"{k:04d}_{kind.__name__}"
        marker = os.path.abspath(os.path.join(a.out, f"MARKER-{name}"))
        ctx = {"entries": entries, "entries_by_name": [(i.filename, b) for i, b in entries],
               "tmp": tmp, "name": name, "marker": marker, "cd_start": cd_start}
        data, what = kind(rng, raw, infos, ctx)
        open(os.path.join(a.out, name + ".pt"), "wb").write(data)
        preset = {"name": name, "model": name + ".pt",
                  "input": [{"shape": shape, "dtype": "float32"}],
                  "run": {"warmup_iters": 1, "iters": 3, "block_iters": 3, "processes": 1,
                          "event_timeout_ms": 20000},
                  "arms": [{"name": "A", "knobs": {"intra_op_threads": 1}}]}
        json.dump(preset, open(os.path.join(a.out, name + ".json"), "w"))
        manifest["files"][name] = {"kind": kind.__name__, "what": what, "bytes": len(data)}
    if os.path.exists(tmp):
        os.remove(tmp)
    json.dump(manifest, open(os.path.join(a.out, "corpus.json"), "w"), indent=1)
    print(f"model_corpus: {a.count} files in {a.out}")


if __name__ == "__main__":
    main()
