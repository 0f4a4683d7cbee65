#!/usr/bin/python3
"""Lists C++ functions longer than a limit (default 80 lines) and files longer than 500 lines.

A rough brace matcher, good enough for this codebase's style: a function starts at a line that
ends a signature with "{" at namespace depth (outside classes, or a member defined inline in a
class) and ends at its matching "}". Lambdas count towards the function that holds them.
Usage: tools/function_lengths.py [--max-fn 80] [--max-file 500] DIR...
"""
import argparse
import os
import re
import sys

SIG = re.compile(r"^[\w:<>,~*&\s\[\]\"]*\b([\w:~]+|operator\S+)\s*\([^;]*\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>]+)?\s*(:.*)?\{\s*$")


def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def functions(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out = []
    depth = 0
    start = None
    start_depth = 0
    name = None
    pending = ""
    in_comment = False
    for i, raw in enumerate(lines):
        line = raw
        if in_comment:
            if "*/" in line:
                line = line.split("*/", 1)[1]
                in_comment = False
            else:
                continue
        if "/*" in line and "*/" not in line:
            line = line.split("/*", 1)[0]
            in_comment = True
        code = strip(line)
        if start is None:
            candidate = (pending + " " + code.strip()).strip()
            if code.strip().endswith("{") and not re.match(r"^\s*(namespace|class|struct|enum|union|extern)\b", candidate) \
                    and not re.search(r"\b(if|for|while|switch|catch|do|else)\b\s*\(?", candidate.split("(")[0] if "(" in candidate else candidate) \
                    and "(" in candidate and "=" not in candidate.split("(")[0]:
                m = re.search(r"([\w:~]+)\s*\(", candidate)
                name = m.group(1) if m else "?"
                start = i
                start_depth = depth
            pending = candidate if code.strip() and not code.strip().endswith((";", "{", "}")) else ""
            if len(pending) > 400:
                pending = ""
        depth += code.count("{") - code.count("}")
        if start is not None and depth <= start_depth:
            out.append((name, start + 1, i - start + 1))
            start = None
            pending = ""
    return out, len(lines) - (1 if lines and lines[-1] == "" else 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-fn", type=int, default=80)
    ap.add_argument("--max-file", type=int, default=500)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    bad = 0
    for d in a.dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith((".cpp", ".h")):
                    continue
                p = os.path.join(root, f)
                fns, n = functions(p)
                if n > a.max_file:
                    print(f"{p}: {n} lines (file)")
                    bad += 1
                for name, line, length in fns:
                    if length > a.max_fn:
                        print(f"{p}:{line}: {name} {length} lines")
                        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
