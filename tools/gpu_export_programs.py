#!/usr/bin/env python3
"""Exports conv_probe on CUDA for tools/gpu_check.sh, with this machine's torch:

  gpu_export_programs.py OUT_DIR

- OUT_DIR/conv_probe.cuda.exported.pt2: torch.export.save of conv_probe with its weights and
  example input on cuda:0, batch dynamic 1..1024 (exported with an example batch of 2);
- OUT_DIR/conv_probe.cuda.pt2: torch._inductor.aoti_compile_and_package of that program (a
  package compiled for cuda), in a process of its own.

The program is loaded back and compared with the eager model on cuda within 1e-3 (max abs diff)
before it takes its name; the package is not (see compile_package). Prints one JSON line per file with the seconds it took.
"""
import json
import os
import sys
import time

import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import build  # noqa: E402


def main(out_dir):
    if not torch.cuda.is_available():
        raise SystemExit("gpu_export_programs.py: torch.cuda.is_available() is False")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model, shapes, _ = build("conv_probe")
    model = model.eval().cuda()
    example = tuple(torch.randn(2, *s, device="cuda") for s in shapes)
    batch = torch.export.Dim("batch", min=1, max=1024)
    t0 = time.time()
    ep = torch.export.export(model, example, dynamic_shapes=tuple({0: batch} for _ in shapes))
    exported = os.path.join(out_dir, "conv_probe.cuda.exported.pt2")
    tmp = os.path.join(out_dir, "conv_probe.cuda.exported.tmp.pt2")
    torch.export.save(ep, tmp)
    back = torch.export.load(tmp).module()
    with torch.no_grad():
        diff = (back(*example) - model(*example)).abs().max().item()
    if diff > 1e-3:
        raise SystemExit("conv_probe.cuda.exported.pt2 differs from the eager model by %g" % diff)
    os.replace(tmp, exported)
    print(json.dumps({"file": exported, "seconds": round(time.time() - t0, 1), "max_abs_diff": diff}), flush=True)


def compile_package(out_dir):
    """The package, in a process of its own (python -X faulthandler: a crash says where)."""
    torch.manual_seed(0)
    model, shapes, _ = build("conv_probe")
    model = model.eval().cuda()
    example = tuple(torch.randn(2, *s, device="cuda") for s in shapes)
    ep = torch.export.load(os.path.join(out_dir, "conv_probe.cuda.exported.pt2"))
    t0 = time.time()
    package = os.path.join(out_dir, "conv_probe.cuda.pt2")
    torch._inductor.aoti_compile_and_package(ep, package_path=package + ".tmp.pt2")
    # Not loaded back here: torch 2.11's aoti_load_package segfaulted in _load_aoti on the H100
    # machine (2026-11-28, python -X faulthandler); the worker's scenario is the check.
    diff = None
    os.replace(package + ".tmp.pt2", package)
    print(json.dumps({"file": package, "seconds": round(time.time() - t0, 1), "max_abs_diff": diff}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--package":
        compile_package(sys.argv[2])
    elif len(sys.argv) == 2:
        main(sys.argv[1])
        import subprocess
        rc = subprocess.call([sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--package", sys.argv[1]])
        sys.exit(rc)
    else:
        raise SystemExit(__doc__)
