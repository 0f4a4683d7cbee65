#!/usr/bin/env python3
"""Export AOTInductor packages (<name>.pt2) of Pitlane's models with the pinned torch wheel.

Usage: .venv/bin/python tools/export_packages.py OUT_DIR NAME [NAME ...]

Each package holds the same network with the same weights as export_models.py's <name>.pt
(torch.manual_seed(0) immediately before build(name)), so comparing the two compares formats,
not weights. The batch dimension (dim 0 of every input) is dynamic, 1..1024 (exported with an
example batch of 2: a batch of 1 would specialize). A name ending in "_static" builds the model
without the suffix but exports a static batch of 1, for tests that check a package refuses
another batch size.

The package metadata (torch._inductor.aoti_load_package(path).get_metadata()) carries
pitlane_model, torch_version, batch ("dynamic 1-1024" / "static 1") and input (the sidecar's
input list as a JSON string). Before a package takes its name it is loaded back: its metadata
must read back, its output must match the TorchScript of the same seeded model within 1e-3 (max
abs diff) at batch 1 (and 3 when dynamic), and it must refuse a batch outside its range (2 when
static, 1025 when dynamic). Packages check input shapes only under AOTI_RUNTIME_CHECK_INPUTS=1,
which this script sets and Pitlane must set too. Writes are atomic; inductor's cache goes where
TORCHINDUCTOR_CACHE_DIR says (tools/CMakeLists.txt points it into the build tree).
"""
import contextlib
import json
import os
import sys
import time

# A package checks its inputs' shapes only where this is set when it first runs (without it a
# static package fed another batch silently returns a batch of 1): check them here, the way
# Pitlane must run packages.
os.environ["AOTI_RUNTIME_CHECK_INPUTS"] = "1"

import torch  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree from the import below
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import build  # noqa: E402

MAX_BATCH = 1024
TOLERANCE = 1e-3
STATIC_SUFFIX = "_static"


def compare(package, scripted, shapes, batch):
    """Max abs difference between the package and the TorchScript model on a seeded input."""
    gen = torch.Generator().manual_seed(1234 + batch)
    inputs = tuple(torch.randn(batch, *s, generator=gen) for s in shapes)
    with torch.no_grad():
        expected = scripted(*inputs)
        actual = package(*inputs)
    if isinstance(actual, (list, tuple)):  # the package returns its output spec (one tensor)
        actual = actual[0] if len(actual) == 1 else actual
    return (actual - expected).abs().max().item()


@contextlib.contextmanager
def quiet_stderr():
    """Silence fd 2 (a refused input prints "Error: ..." from C++) for an expected failure."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def refuses(package, shapes, batch):
    """True when the package refuses a batch outside what it was exported for."""
    inputs = tuple(torch.zeros(batch, *s) for s in shapes)
    try:
        with quiet_stderr(), torch.no_grad():
            package(*inputs)
    except RuntimeError:
        return True
    return False


def export(name, out_dir):
    static = name.endswith(STATIC_SUFFIX)
    model_name = name[: -len(STATIC_SUFFIX)] if static else name
    torch.manual_seed(0)
    model, shapes, _ = build(model_name)
    model.eval()

    example_batch = 1 if static else 2
    gen = torch.Generator().manual_seed(0)
    example = tuple(torch.randn(example_batch, *s, generator=gen) for s in shapes)
    if static:
        dynamic_shapes = None
    else:
        batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
        dynamic_shapes = tuple({0: batch} for _ in shapes)
    metadata = {
        "pitlane_model": name,
        "torch_version": torch.__version__,
        "batch": "static 1" if static else f"dynamic 1-{MAX_BATCH}",
        "input": json.dumps([{"shape": s, "dtype": "float32"} for s in shapes]),
    }
    expected_metadata = dict(metadata)  # inductor adds its own keys to the dict it is given

    t0 = time.monotonic()
    ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
    t1 = time.monotonic()
    pt2 = os.path.join(out_dir, name + ".pt2")
    tmp = os.path.join(out_dir, "." + name + ".tmp.pt2")  # inductor insists on a .pt2 suffix
    try:
        torch._inductor.aoti_compile_and_package(
            ep, package_path=tmp, inductor_configs={
                "aot_inductor.metadata": metadata,
                # The export keeps the batch at 1..1024, but inductor's 0/1 specialization makes
                # the package's input check demand >= 2 and refuse batch 1. Check no lower bound
                # (the upper one stays); batch 1 is compared with TorchScript below.
                "aot_inductor.check_lowerbound": False,
                # Inductor writes the compiling machine's thread count into every OpenMP region
                # (num_threads(2) here) unless told to ask at run time: then the worker's
                # intra_op_threads knob reaches the package's own kernels too. The static test
                # package keeps the default, so a fixed count is read back and warned about.
                "cpp.dynamic_threads": not static,
            })
        t2 = time.monotonic()
        # Check the package before it takes the real name: a failed check leaves no .pt2 behind.
        package = torch._inductor.aoti_load_package(tmp)
        seen = package.get_metadata()
        wrong = {k: seen.get(k) for k, v in expected_metadata.items() if seen.get(k) != v}
        if wrong:
            raise SystemExit(f"export_packages.py: {name}: metadata not readable back: {wrong}")
        scripted = torch.jit.script(model)
        diff = max(compare(package, scripted, shapes, b) for b in ((1,) if static else (1, 3)))
        if not diff <= TOLERANCE:  # also catches NaN
            raise SystemExit(
                f"export_packages.py: {name}: package differs from TorchScript by {diff}")
        outside = 2 if static else MAX_BATCH + 1
        if not refuses(package, shapes, outside):
            raise SystemExit(f"export_packages.py: {name}: package accepts batch {outside}")
        size_mb = os.path.getsize(tmp) / 1e6
        os.replace(tmp, pt2)  # atomic: an interrupted build never leaves a half package
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print(f"exported {name}: export {t1 - t0:.1f} s, compile {t2 - t1:.1f} s, "
          f"{size_mb:.1f} MB, max abs diff {diff:.3g} -> {pt2}", flush=True)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[2:]:
        export(name, out_dir)


if __name__ == "__main__":
    main()
