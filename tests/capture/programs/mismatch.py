"""The distributed run names a parameter the one-process run does not have:
the two runs capture different programs."""
import torch
import torch.distributed as dist

from shardcheck.capture import capture_step

dist.init_process_group("gloo")
n = dist.get_world_size()
model = torch.nn.Linear(4, 4) if n == 1 else torch.nn.Sequential(torch.nn.Linear(4, 4))
capture_step(lambda m, x: m(x).sum(), model, torch.ones(2, 4))
