"""Which torch device to compute on: the one rule behind every ``--device`` option and ``device=`` argument."""

from __future__ import annotations

import argparse
import re

import torch

DEVICE_HELP = "cpu, cuda, cuda:N, or auto: cuda when torch sees a GPU, else cpu"


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; anything but cpu, cuda[:N] or auto is refused, and
    so is cuda on a machine where torch sees no GPU."""
    if not isinstance(device, str) or not re.fullmatch(r"cpu|auto|cuda(:\d+)?", device):
        raise ValueError(f"unknown device {device!r}; use cpu, cuda (or cuda:N) or auto")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but torch sees no GPU; use --device cpu (or auto)")
    return device


def add_device_option(parser: argparse.ArgumentParser, default: str = "auto") -> None:
    """``--device``, spelled and explained the same way by every command line."""
    parser.add_argument("--device", default=default, help=f"{DEVICE_HELP} (default: %(default)s)")
