"""Rank 0 makes one all_reduce more than the others: it waits forever."""
import torch
import torch.distributed as dist

from shardcheck.capture import capture_step


def step(x):
    y = x * 2
    dist.all_reduce(y)
    if dist.get_rank() == 0 and dist.get_world_size() > 1:
        dist.all_reduce(y)
    return y


dist.init_process_group("gloo")
capture_step(step, torch.ones(4))
