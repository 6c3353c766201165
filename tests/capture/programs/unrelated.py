"""Each rank draws its own noise from a rank-dependent seed: the input
`noise` matches no layout of the one-process run's.  With
--relation unrelated-relation.json the user states one (here: that rank 0
holds it), and the bundle is written with that relation."""
import torch
import torch.distributed as dist

from shardcheck.capture import capture_step


def step(x, noise):
    y = x + noise
    dist.all_reduce(y)
    return y


dist.init_process_group("gloo")
r = dist.get_rank()
x = torch.ones(4)
noise = torch.randn(4, generator=torch.Generator().manual_seed(100 + 10 * dist.get_world_size() + r))
capture_step(step, x, noise)
