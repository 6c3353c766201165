#!/usr/bin/env python3
"""gen.py — writes the planted-bug variants of this directory from
models/vocab-parallel-ce/vocab-parallel-ce-tp2-fwdbwd.json (python3 gen.py;
deterministic, stdlib only).

Each variant edits one node of the rank graphs of the correct TP=2
forward+backward bundle (GPT-2's ends: vocabulary-parallel embedding, LM
head, Megatron's _VocabParallelCrossEntropy), one bug each, in
TrainVerify's categories (missing collective, wrong scaling, wrong offset,
wrong data):

  pick-offset          rank 1 shifts the labels of its pick by 31, not 32
  no-sumexp-allreduce  each rank takes the log of its own sum of exponentials
  no-max-allreduce     each rank shifts the logits by its own max
  no-pick-allreduce    each rank subtracts only its own picked logit
  bwd-scatter-labels   rank 1's backward scatters with rank 0's labels
  bwd-scale            rank 0's backward divides by 4 instead of N = 8
  bwd-local-sum        rank 0's backward divides by its own sum of exponentials
  bwd-emb-nomask       rank 0's embedding backward keeps other ranks' rows

Every variant must fail (tests/models/verdicts.json names the node: the
first unmapped spec node, which for these is the deferred _log_softmax or
the node where the bug's value is first read; the report's "stopped at"
line names where the walk ended).
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
BASE = os.path.join(ROOT, "models", "vocab-parallel-ce", "vocab-parallel-ce-tp2-fwdbwd.json")


def node(b, name):
    for n in b["impl"]["nodes"]:
        if n["name"] == name:
            return n
    raise KeyError(name)


def set_args(name, args):
    def edit(b):
        node(b, name)["args"] = args
    return edit


def edits(*fs):
    def edit(b):
        for f in fs:
            f(b)
    return edit


VARIANTS = {
    "pick-offset": ("rank 1 shifts the labels of its pick by 31 instead of 32",
                    set_args("sub_5", ["view_5", 31])),
    "no-sumexp-allreduce": ("no all-reduce of the sums of exponentials",
                            edits(set_args("log", ["sum_1"]), set_args("log_1", ["sum_2"]))),
    "no-max-allreduce": ("no all-reduce of the max: each rank shifts by its own max",
                         edits(set_args("unsqueeze_2", ["amax", -1]),
                               set_args("unsqueeze_3", ["amax_1", -1]))),
    "no-pick-allreduce": ("no all-reduce of the picked logits",
                          edits(set_args("sub_6", ["log", "masked_fill_5"]),
                                set_args("sub_7", ["log_1", "masked_fill_7"]))),
    "bwd-scatter-labels": ("rank 1's backward scatters with rank 0's labels",
                           set_args("scatter_add", ["new_zeros", -1, "unsqueeze_4", "unsqueeze_8"])),
    "bwd-scale": ("rank 0's backward divides by 4 instead of N = 8",
                  set_args("div_2", ["expand_1", 4])),
    "bwd-local-sum": ("rank 0's backward divides by its own sum of exponentials",
                      set_args("div_3", ["div_2", "sum_1"])),
    "bwd-emb-nomask": ("rank 0's embedding backward does not zero other ranks' rows",
                       set_args("embedding_dense_backward_1",
                                ["view_10", "masked_fill", 32, -1, False])),
}


def main():
    with open(BASE) as f:
        base = json.load(f)
    for name, (what, edit) in VARIANTS.items():
        b = copy.deepcopy(base)
        edit(b)
        b["name"] = "vocab-parallel-ce-tp2-fwdbwd-" + name
        b["description"] = "BUG ON PURPOSE: " + what + ". " + base.get("description", "")
        with open(os.path.join(HERE, b["name"] + ".json"), "w") as f:
            json.dump(b, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
