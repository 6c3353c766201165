"""Both ranks wait to receive from each other: a deadlock (the one-process
run, which has no peer, does not communicate)."""
import torch
import torch.distributed as dist

from shardcheck.capture import capture_step


def step(x):
    y = x * 2
    if dist.get_world_size() > 1:
        t = torch.empty_like(y)
        dist.recv(t, src=1 - dist.get_rank())
        y = y + t
    return y


dist.init_process_group("gloo")
capture_step(step, torch.ones(4))
