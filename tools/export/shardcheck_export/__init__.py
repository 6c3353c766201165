"""shardcheck_export -- turn sequential and distributed PyTorch code into a
shardcheck bundle (bundle-format.md).  See docs/exporter.md.

    from shardcheck_export import comm, Export, Input, Param, Replicate, Shard, Partial, Slice
"""

from . import comm
from .placement import Partial, Placement, Replicate, Shard, Slice
from .export import Export, ExportError, Input, Param, build_bundle, bundle_name

__all__ = ["comm", "Export", "ExportError", "Input", "Param", "Placement",
           "Partial", "Replicate", "Shard", "Slice", "build_bundle", "bundle_name"]
