"""Rank 1 aborts after its capture is written (as torch 1.13's gloo
process group sometimes does at interpreter exit when rank 0's store is
gone: "terminate called without an active exception"): the capture is
complete, so the bundle is written and the exit is reported, not raised.
A crash before the capture is written stays an error (crash.py)."""
import os

import torch
import torch.distributed as dist

from shardcheck.capture import capture_step


def step(x):
    y = x * 2
    dist.all_reduce(y)
    return y / dist.get_world_size()


dist.init_process_group("gloo")
capture_step(step, torch.ones(4))
dist.barrier()
if dist.get_rank() == 1:
    os.abort()
