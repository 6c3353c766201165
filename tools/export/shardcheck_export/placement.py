"""placement.py -- where a tensor of the sequential model lives on the ranks.

A placement does two things that must agree: it cuts a full tensor into the
per-rank tensors (to run the distributed code on numbers), and it writes
the relation expressions that rebuild the full tensor from the per-rank
names (for the bundle).  The exporter checks on numbers that evaluating the
expressions over the pieces gives back the full tensor.

  Replicate()          every rank holds the whole tensor
  Shard(dim)           rank i holds chunk i of n equal chunks along dim
  Shard(dim, blocks=k) dim is k equal blocks (a fused q|k|v weight), each
                       sharded: rank i holds chunk i of every block, in order
  Shard(dim, replicas=k) dim is n/k equal chunks, each held by k ranks in a
                       row: rank i holds chunk i // k (the key/value heads of
                       grouped-query attention when the TP degree exceeds
                       their number); one relation per replica j, the cat of
                       ranks j, k + j, 2k + j, ...; forward only
  Partial()            (outputs only) the tensor is the sum of the ranks'
  Slice(dim, start, end) (outputs only) every rank's tensor holds the whole
                       tensor as its part start:end along dim (a result
                       gathered where it should have been reduced, and the
                       rows the author expects it in)
"""

import torch


class Placement:
    def shards(self, full, n):
        raise NotImplementedError

    def exprs(self, names, shape):
        raise NotImplementedError

    def grad_placement(self):
        """Placement of the gradient flowing into a tensor placed like this."""
        return self


class Replicate(Placement):
    def shards(self, full, n):
        return [full.clone() for _ in range(n)]

    def exprs(self, names, shape):
        return list(names)

    def __repr__(self):
        return "Replicate()"


class Shard(Placement):
    def __init__(self, dim, blocks=1, replicas=1):
        if blocks != 1 and replicas != 1:
            raise ValueError("Shard(): blocks and replicas do not combine")
        self.dim, self.blocks, self.replicas = dim, blocks, replicas

    def _check(self, shape, n):
        d = self.dim % len(shape)
        if n % self.replicas:
            raise ValueError(f"{self}: {n} ranks are not groups of {self.replicas} replicas")
        if shape[d] % (n // self.replicas * self.blocks):
            raise ValueError(f"{self}: size {shape[d]} of dim {d} does not split "
                             f"into {n // self.replicas} chunks x {self.blocks} blocks")
        return d

    def grad_placement(self):
        if self.replicas != 1:
            raise ValueError(f"{self}: the gradient of a replicated shard is not a placement "
                             "(forward only)")
        return self

    def shards(self, full, n):
        d = self._check(full.shape, n)
        if self.replicas != 1:
            k = self.replicas
            chunks = torch.chunk(full, n // k, d)
            return [chunks[r // k].clone() for r in range(n)]
        if self.blocks == 1:
            return [c.clone() for c in torch.chunk(full, n, d)]
        blocks = torch.chunk(full, self.blocks, d)
        per = [torch.chunk(b, n, d) for b in blocks]
        return [torch.cat([per[b][r] for b in range(self.blocks)], d).clone()
                for r in range(n)]

    def exprs(self, names, shape):
        n = len(names)
        if n == 1:
            return [names[0]]
        d = self._check(shape, n)
        if self.replicas != 1:
            k = self.replicas
            if n == k:
                return list(names)
            return [f"cat({', '.join(names[c * k + j] for c in range(n // k))}, dim={self.dim})"
                    for j in range(k)]
        if self.blocks == 1:
            return [f"cat({', '.join(names)}, dim={self.dim})"]
        local = shape[d] // (n * self.blocks)
        parts = [f"slice({names[r]}, dim={self.dim}, start={b * local}, "
                 f"end={(b + 1) * local})"
                 for b in range(self.blocks) for r in range(n)]
        return [f"cat({', '.join(parts)}, dim={self.dim})"]

    def __repr__(self):
        extra = f", blocks={self.blocks}" if self.blocks != 1 else ""
        extra += f", replicas={self.replicas}" if self.replicas != 1 else ""
        return f"Shard({self.dim}{extra})"


class Partial(Placement):
    def shards(self, full, n):
        raise ValueError("Partial() describes outputs only; an input cannot be "
                         "cut into partial sums")

    def exprs(self, names, shape):
        if len(names) == 1:
            return [names[0]]
        return [f"sum({', '.join(names)})"]

    def grad_placement(self):
        return Replicate()

    def __repr__(self):
        return "Partial()"


class Slice(Placement):
    def __init__(self, dim, start, end):
        self.dim, self.start, self.end = int(dim), int(start), int(end)

    def shards(self, full, n):
        raise ValueError("Slice() describes outputs only; give an input its placement "
                         "with Replicate() or Shard()")

    def exprs(self, names, shape):
        return [f"slice({nm}, dim={self.dim}, start={self.start}, end={self.end})"
                for nm in names]

    def grad_placement(self):
        raise ValueError("Slice() describes forward outputs only (no tangent placement)")

    def __repr__(self):
        return f"Slice({self.dim}, {self.start}, {self.end})"
