"""Training on several processes (``torchrun``): ranks, the gradient all-reduce and rank 0's decisions shared.

With one process (no ``WORLD_SIZE`` above 1) every helper here is a no-op, so the loop reads the same either way.
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist

from .elmo import resolve_device


def init(device: str) -> tuple[int, int, torch.device]:
    """(rank, world size, device); starts a process group when launched by torchrun with more than one rank."""
    device = resolve_device(device)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    rank = dist.get_rank() if world > 1 else 0
    if device.startswith("cuda"):
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        return rank, world, torch.device("cuda", local)
    return rank, world, torch.device(device)


def average_gradients(params: list[torch.nn.Parameter], world: int) -> None:
    """One all-reduce over all gradients flattened together (a parameter without gradient counts as zero)."""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world
    offset = 0
    for p in params:
        p.grad = flat[offset : offset + p.numel()].view_as(p).clone()
        offset += p.numel()


def agree(flags: list[bool], world: int) -> list[bool]:
    """Rank 0's decisions (stop, checkpoint), which depend on its clock, made the same on every rank."""
    if world == 1:
        return flags
    tensor = torch.tensor([float(f) for f in flags])
    dist.broadcast(tensor, src=0)
    return [bool(v) for v in tensor.tolist()]


def barrier(world: int) -> None:
    if world > 1:
        dist.barrier()


def finish() -> None:
    """End the process group, if one was started."""
    if dist.is_initialized():
        dist.destroy_process_group()
