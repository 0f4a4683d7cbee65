"""A damaged copy of an AOTInductor package for test_model_integrity: every entry moved under
TOP/ (a folder name no other package has, so a test can look for it in /tmp), and the package's
compiled .so damaged by MODE: "header" zeroes its ELF magic (the dynamic loader refuses it:
"invalid ELF header"), "truncate" cuts it to its first 1024 bytes (dlopen maps past the end of
the file and the process dies of SIGBUS). The zip itself stays sound (Python's zipfile writes
each entry's CRC-32 for the bytes it holds): Pitlane's model check passes it, and only loading
it fails. Prints the damaged entry's name.

usage: damaged_package.py PACKAGE.pt2 OUT.pt2 TOP header|truncate
"""
import sys
import zipfile

src, out, top, mode = sys.argv[1:5]
damaged = None
with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as o:
    for info in z.infolist():
        data = z.read(info.filename)
        name = top + "/" + info.filename.split("/", 1)[1]
        if name.endswith(".so") and damaged is None:
            data = b"\0\0\0\0" + data[4:] if mode == "header" else data[:1024]
            damaged = name
        o.writestr(zipfile.ZipInfo(name, date_time=info.date_time), data)
if damaged is None:
    sys.exit("no .so entry in " + src)
print(damaged)
