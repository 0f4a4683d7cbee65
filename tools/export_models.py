#!/usr/bin/env python3
"""Export Pitlane's bundled TorchScript models with the pinned torch wheel (.venv, issue 25).

Each model gets <name>.pt plus a sidecar <name>.json describing its input signature (shapes
exclude the batch dimension). Weights are random but seeded, so every build exports the same
numbers. Run: .venv/bin/python tools/export_models.py OUT_DIR [NAME ...]
"""
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMModel(nn.Module):
    """Sequence classifier: LSTM over [seq, features], linear head on the last step."""

    def __init__(self, features=64, hidden=128, layers=2, classes=10):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1, :])


class TransformerModel(nn.Module):
    """nn.TransformerEncoder over [seq, d_model] (takes the fused fast path in eval + no grad)."""

    def __init__(self, d_model=128, heads=4, layers=2, ff=256):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.encoder(x))


class MLP(nn.Module):
    def __init__(self, features=256, hidden=512, classes=10):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(features, hidden), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class AllocProbe(nn.Module):
    """Test model: each forward allocates exactly 4 MiB of float32 (1 Mi elements) on top of a
    tiny input, so the counting allocator's numbers can be checked against a known load."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        big = x.new_ones(1024 * 1024)  # depends on x: not constant-folded by TorchScript
        return x + big.sum()


class TinyProbe(nn.Module):
    """Test model: one tiny element-wise op (a few microseconds per forward), to stream tens of
    thousands of samples per second through the protocol, the runner and the window."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0


class MemHog(nn.Module):
    """Test model: each forward allocates 768 MiB of float32 and touches one page of it (a
    memory_limit_mb of 512 refuses the allocation: out_of_memory; with 4096 it runs, fast: the
    untouched pages are never faulted in)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        big = x.new_empty(192 * 1024 * 1024)  # depends on x: not constant-folded
        big[0] = 1.0
        return x + big[0]


class ConvProbe(nn.Module):
    """Test model without torchvision: two convolutions, batch-norm and a linear head over a
    small NCHW image, for the CUDA checks (cuDNN flags, channels_last, autocast, CUDA graphs) on
    a GPU machine whose Python has torch but no torchvision (tools/gpu_check.sh)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


class AttentionProbe(nn.Module):
    """Test model: one causal self-attention block through F.scaled_dot_product_attention, the
    operator PyTorch 2.0 added (and nn.MultiheadAttention / TransformerEncoderLayer use): a model
    saved by a current PyTorch that libtorch 1.13 refused ("Unknown builtin op")."""

    def __init__(self, d_model=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        k = k.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        v = v.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, s, d))


def build(name):
    if name in ("resnet18", "mobilenet_v3_small"):
        import torchvision.models as tvm  # only these two need torchvision
        if name == "resnet18":
            return tvm.resnet18(weights=None), [[3, 224, 224]], "torchvision ResNet-18, random weights"
        return (tvm.mobilenet_v3_small(weights=None), [[3, 224, 224]],
                "torchvision MobileNetV3-Small, random weights")
    if name == "transformer":
        return TransformerModel(), [[32, 128]], "2-layer nn.TransformerEncoder, d_model 128, seq 32"
    if name == "lstm":
        return LSTMModel(), [[32, 64]], "2-layer LSTM, 64 features, hidden 128, seq 32"
    if name == "mlp":
        return MLP(), [[256]], "3-layer MLP 256-512-512-10"
    if name == "tiny_probe":
        return TinyProbe(), [[4]], "test model: x * 2, a few microseconds per forward"
    if name == "mem_hog":
        return MemHog(), [[4]], "test model: allocates 768 MiB per forward"
    if name == "conv_probe":
        return ConvProbe(), [[3, 64, 64]], "test model: conv-bn-relu-conv-relu-pool-linear, 3x64x64"
    if name == "attention_probe":
        return (AttentionProbe(), [[16, 64]],
                "test model: causal self-attention through scaled_dot_product_attention, seq 16, d 64")
    if name == "alloc_probe":
        return AllocProbe(), [[4]], "test model: allocates 4 MiB per forward"
    raise SystemExit(f"export_models.py: unknown model {name!r}")


NAMES = ["resnet18", "mobilenet_v3_small", "transformer", "lstm", "mlp"]


def export(name, out_dir):
    torch.manual_seed(0)
    model, shapes, description = build(name)
    model.eval()
    scripted = torch.jit.script(model)
    pt = os.path.join(out_dir, name + ".pt")
    tmp = pt + ".tmp"
    scripted.save(tmp)
    os.replace(tmp, pt)  # atomic: an interrupted build never leaves a half model
    params = sum(p.numel() for p in model.parameters())
    sidecar = {
        "name": name,
        "description": description,
        "input": [{"shape": s, "dtype": "float32"} for s in shapes],
        "parameters": params,
        "exported_with": {"torch": torch.__version__},
    }
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(sidecar, f, indent=2)
        f.write("\n")
    print(f"exported {name}: {params} parameters -> {pt}")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for name in sys.argv[2:] or NAMES:
        export(name, out_dir)


if __name__ == "__main__":
    main()
