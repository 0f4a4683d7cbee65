"""Writes a TorchScript model that calls an operator only this Python process has: the custom
operator pitlane_test::mystery, registered here with torch.library. Saved with the pinned torch,
it loads in no libtorch without that registration: what a model saved by a newer PyTorch (an
operator added since) looks like to the worker ("Unknown builtin op").
Usage: unknown_op_model.py OUT.pt"""
import sys

import torch


@torch.library.custom_op("pitlane_test::mystery", mutates_args=())
def mystery(x: torch.Tensor) -> torch.Tensor:
    return x * 3


class UsesMystery(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.pitlane_test.mystery(x) + 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    torch.jit.script(UsesMystery()).save(sys.argv[1])
