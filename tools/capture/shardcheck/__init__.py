"""shardcheck -- check your own torch.distributed program (docs/capture.md).

    from shardcheck.capture import capture_step
"""
