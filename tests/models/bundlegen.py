"""bundlegen.py — what the hand-written bundle generators of tests/models
(*/gen-*.py) share: tensor and node entries, a bundle's fields in the
order they write them, and the writing of a bundle and its bug twin.

A generator imports it from its parent folder:

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import bundlegen

Everything here is deterministic: the bytes a generator writes depend only
on what it passes."""
import json
import os


def tensor(name, shape, rank=None, dtype="f64"):
    """A tensor entry (an input or a node's output); RANK None: the spec's."""
    d = {"name": name, "shape": shape, "dtype": dtype}
    if rank is not None:
        d["rank"] = rank
    return d


def node(name, op, args, outputs):
    """A node entry without keyword arguments; OUTPUTS: tensor entries (None:
    a result not computed)."""
    return {"name": name, "op": op, "args": args, "kwargs": {}, "outputs": outputs}


def graph(inputs, nodes, outputs):
    """A spec or impl graph: input tensors, nodes, output names."""
    return {"inputs": inputs, "nodes": nodes, "outputs": outputs}


def description(doc):
    """The second paragraph of a generator's docstring DOC, on one line (the
    first paragraph names the generator and what it writes)."""
    return doc.split("\n\n")[1].replace("\n", " ")


def bundle(name, doc, spec, impl, input_relation, expect_output_relation):
    """A bundle without symbols or assumptions, described by DOC's second
    paragraph (description)."""
    return {"format": "shardcheck-bundle/1", "name": name, "description": description(doc),
            "symbols": {}, "assume": [], "spec": spec, "impl": impl,
            "input_relation": input_relation,
            "expect_output_relation": expect_output_relation}


def write(generator, *bundles):
    """Write each bundle as NAME.json (its "name") beside the file GENERATOR
    (a generator's __file__): JSON indented by one, a final newline."""
    here = os.path.dirname(os.path.abspath(generator))
    for b in bundles:
        with open(os.path.join(here, b["name"] + ".json"), "w") as f:
            json.dump(b, f, indent=1)
            f.write("\n")
