#!/usr/bin/env python3
"""Export torch.export programs (<name>.exported.pt2, torch.export.save archives) of Pitlane's
models with the pinned torch wheel (issue 40: the worker runs them through libtorch's NativeRT,
or compiles them into an AOTInductor package first).

Usage: .venv/bin/python tools/export_programs.py OUT_DIR NAME [NAME ...]

NAME is one of:
  <model>          -> OUT_DIR/<model>.exported.pt2, batch dynamic 1..1024
  <model>.static   -> OUT_DIR/<model>.static.exported.pt2, batch static 1
where <model> is a name of export_models.py's build() or tiny_lm (defined here: a test model
with int64 token ids). Each program holds the same network with the same weights as
export_models.py's <model>.pt and export_packages.py's <model>.pt2 (torch.manual_seed(0)
immediately before build(model)), so comparing formats compares formats, not weights.

Dynamic programs are exported with an example batch of 2 (a batch of 1 would specialize the
dimension to 1), but the example inputs saved in the archive (data/sample_inputs, the input a
preset that gives none runs, and whose batch is its default batch_size) have batch 1: a user
who runs `pitlane-cli run x.exported.pt2` gets a batch of 1, as with every bundled model
(knobs.batch_size defaults to 1) and as with the static variant, so the dynamic and static
programs of a model are compared on the same input by default. Batch 1 of a dynamic program is
also the case the 0/1 specialization of export could break; it is checked below.
models/model.json still records the traced batch (2) as the size hint of the symbolic batch
dimension; Pitlane's spec layer takes the default batch_size from data/sample_inputs itself
(spec::detail::sampleInputSizes reads the sizes from its pickle), so the default is batch 1.

Before a program takes its name it is loaded back with torch.export.load: its saved example
inputs must have batch 1 and the dtypes asked for; its output (.module()) must match the
TorchScript of the same seeded model within 1e-3 (max abs diff) on its example inputs and, when
dynamic, on a batch of 3; and libtorch's NativeRT (torch._C._nativert.PyModelRunner, the runner
the worker uses, model name "model") must load it and give the same output on the example
inputs. Writes are atomic (a temporary file, then os.replace).
"""
import json
import os
import shutil
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ in the source tree from the import below
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import build  # noqa: E402

MAX_BATCH = 1024
TOLERANCE = 1e-3
STATIC_SUFFIX = ".static"


class TinyLM(nn.Module):
    """Test model: a decoder-only (GPT-like) language model over int64 token ids [batch, seq]:
    token + position embeddings, 2 pre-norm blocks of causal self-attention (through
    F.scaled_dot_product_attention, is_causal) and an MLP, a final LayerNorm and a linear head
    to logits [batch, seq, vocab]."""

    def __init__(self, vocab=1000, seq=32, d_model=64, heads=4, layers=2, ff=256):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq, d_model)
        self.ln1 = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(layers)])
        self.qkv = nn.ModuleList([nn.Linear(d_model, 3 * d_model) for _ in range(layers)])
        self.proj = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(layers)])
        self.ln2 = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(layers)])
        self.mlp = nn.ModuleList([
            nn.Sequential(nn.Linear(d_model, ff), nn.GELU(), nn.Linear(ff, d_model))
            for _ in range(layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        b, s = ids.size(0), ids.size(1)
        positions = torch.arange(s, device=ids.device)
        x = self.tok(ids) + self.pos(positions)
        for ln1, qkv, proj, ln2, mlp in zip(self.ln1, self.qkv, self.proj, self.ln2, self.mlp):
            d = x.size(2)
            q, k, v = qkv(ln1(x)).chunk(3, dim=-1)
            q = q.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
            k = k.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
            v = v.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + proj(y.transpose(1, 2).reshape(b, s, d))
            x = x + mlp(ln2(x))
        return self.head(self.norm(x))


def build_program_model(name):
    """(model, [input spec]) of a model name: build() of export_models.py, or tiny_lm."""
    torch.manual_seed(0)  # right before build: the same weights as <name>.pt and <name>.pt2
    if name == "tiny_lm":
        return TinyLM(), [{"shape": [32], "dtype": "int64", "low": 0, "high": 1000}]
    model, shapes, _ = build(name)
    return model, [{"shape": s, "dtype": "float32"} for s in shapes]


def make_inputs(specs, batch, seed):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for s in specs:
        if s["dtype"] == "int64":
            out.append(torch.randint(s["low"], s["high"], (batch, *s["shape"]), generator=gen))
        else:
            out.append(torch.randn(batch, *s["shape"], generator=gen))
    return tuple(out)


def first_tensor(out):
    while isinstance(out, (list, tuple)):  # a runner returns its output spec: one tensor here
        if len(out) != 1:
            raise SystemExit(f"export_programs.py: expected one output tensor, got {len(out)}")
        out = out[0]
    return out


def max_diff(actual, expected):
    actual = first_tensor(actual)
    if actual.shape != expected.shape:
        return float("inf")
    return (actual - expected).abs().max().item()


def check(path, name, scripted, specs, static):
    """Load the archive back and check it (see the module docstring); returns the max diff."""
    ep = torch.export.load(path)
    args, kwargs = ep.example_inputs
    if kwargs or len(args) != len(specs):
        raise SystemExit(f"export_programs.py: {name}: saved example inputs are {args}, {kwargs}")
    for a, s in zip(args, specs):
        if a.shape[0] != 1 or list(a.shape[1:]) != s["shape"] or str(a.dtype) != "torch." + s["dtype"]:
            raise SystemExit(f"export_programs.py: {name}: saved example input {a.shape} {a.dtype}")
    module = ep.module()
    diffs = []
    with torch.no_grad():
        for batch_args in [args] + ([] if static else [make_inputs(specs, 3, 1234)]):
            expected = scripted(*batch_args)
            diffs.append(max_diff(module(*batch_args), expected))
        runner = torch._C._nativert.PyModelRunner(path, "model")
        diffs.append(max_diff(runner.run(*args), scripted(*args)))
    diff = max(diffs)
    if not diff <= TOLERANCE:  # also catches NaN
        raise SystemExit(f"export_programs.py: {name}: program differs from TorchScript: {diffs}")
    return diff


def export(name, out_dir):
    static = name.endswith(STATIC_SUFFIX)
    model_name = name[: -len(STATIC_SUFFIX)] if static else name
    model, specs = build_program_model(model_name)
    model.eval()

    if static:
        example = make_inputs(specs, 1, 0)
        dynamic_shapes = None
    else:
        example = make_inputs(specs, 2, 0)  # batch 2: a batch of 1 would specialize
        batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
        dynamic_shapes = tuple({0: batch} for _ in specs)

    t0 = time.monotonic()
    ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
    # What a user runs by default (no input given): batch 1 (see the module docstring).
    ep.example_inputs = (make_inputs(specs, 1, 0), {})
    t1 = time.monotonic()
    out = os.path.join(out_dir, name + ".exported.pt2")
    # The archive's top folder is named after the file: write it under its own name in a
    # temporary folder beside the output, then move it (atomic: an interrupted build never
    # leaves a half program).
    tmp_dir = tempfile.mkdtemp(prefix="." + name + ".", dir=out_dir)
    tmp = os.path.join(tmp_dir, name + ".exported.pt2")
    try:
        torch.export.save(ep, tmp)
        scripted = torch.jit.script(model)
        diff = check(tmp, name, scripted, specs, static)
        size_mb = os.path.getsize(tmp) / 1e6
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    print(f"exported {name}: export {t1 - t0:.1f} s, checks {time.monotonic() - t1:.1f} s, "
          f"{size_mb:.1f} MB, batch {'static 1' if static else f'dynamic 1-{MAX_BATCH}'}, "
          f"example {json.dumps([[1, *s['shape']] for s in specs])}, "
          f"max abs diff {diff:.3g} -> {out}", flush=True)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for name in sys.argv[2:]:
        export(name, out_dir)


if __name__ == "__main__":
    main()
