#!/usr/bin/env python3
"""lemma-docs.py -- write docs/lemmas.md, the list of the lemma library, from
the lemma files themselves, so that the list cannot drift from the code.

    python3 tools/lemma-docs.py [--lemmas DIR] [-o FILE]   write (default: stdout)
    python3 tools/lemma-docs.py --check FILE               exit 1 if FILE is stale

Every `lemma NAME:` and `op NS.NAME(...)` statement of DIR/*.lemma (default:
lemmas/ next to this tool) gets one line: its name and the comment that
states its identity.  The comment of a statement is the block of `#` lines
directly above it; statements under one comment (a family written
together) share it.  A file's first comment block (its header) introduces
the file's section.  Standard library only.
"""
import argparse
import glob
import os
import re
import sys

STMT = re.compile(r"^(lemma)\s+([A-Za-z_][A-Za-z0-9_]*)\s*:|^(op)\s+([A-Za-z_][A-Za-z0-9_.]*)\s*\(")
FOR = re.compile(r"^\s+for\s+\?[A-Za-z_][A-Za-z0-9_]*\s+in\s+([A-Za-z_][A-Za-z0-9_]*)")

# The size of the library before operator classes (issue 14, the last
# commit with per-operator enumerations): lemma statements.
STATEMENTS_BEFORE_CLASSES = 316
# What `shardcheck lemmas check` counts (every direction of a `<=>`, every
# instance of a class lemma) on the library before operator classes and
# after the second round of issue 14 (branch algebra): measured, not
# computed here (the tool needs the operator table).
CHECKED_BEFORE_CLASSES = 328
CHECKED_AFTER_ALGEBRA = 804
# the online-softmax merge round (online-softmax-merge.lemma): statements
# and checked lemmas before and after it
STATEMENTS_BEFORE_MERGE, CHECKED_BEFORE_MERGE = 438, 1030
STATEMENTS_AFTER_MERGE, CHECKED_AFTER_MERGE = 445, 1037


def sentence(lines, limit=220):
    """The comment block as one line, cut at its first sentence end (a '.'
    followed by a blank) or LIMIT characters, with | escaped for tables."""
    text = " ".join(l.strip() for l in lines if l.strip())
    text = re.sub(r"\s+", " ", text)
    m = re.search(r"(?<![.\d])\.(\s|$)", text)
    if m and m.start() > 20:
        text = text[:m.start() + 1]
    if len(text) > limit:
        text = text[:limit - 3].rstrip() + "..."
    return text.replace("|", "\\|")


def parse(path):
    """(header lines, [(kind, name, comment lines)]) of one lemma file.  The
    header is the first comment block when a blank line ends it; a
    statement without a comment of its own shares the last block above."""
    with open(path, encoding="utf-8") as f:
        raw = f.read().splitlines()
    header, entries, block, last_block = [], [], [], []
    for line in raw:
        if line.startswith("#"):
            block.append(line[1:])
            continue
        if not line.strip():
            if block and not entries and not header:
                header = block
            elif block:
                last_block = block
            block = []
            continue
        fc = FOR.match(line)
        if fc and entries:
            entries[-1] = entries[-1][:2] + (entries[-1][2], fc.group(1))
        m = STMT.match(line)
        if m:
            kind = m.group(1) or m.group(3)
            name = m.group(2) or m.group(4)
            if block:
                last_block = block
            entries.append((kind, name, last_block, None))
        block = []  # a statement line or one of its continuation lines
    return header, entries


def render(lemma_dir):
    files = sorted(glob.glob(os.path.join(lemma_dir, "*.lemma")))
    parsed = [(os.path.basename(p), *parse(p)) for p in files]
    n_lemmas = sum(1 for _, _, es in parsed for k, _, _, _ in es if k == "lemma")
    n_ops = sum(1 for _, _, es in parsed for k, _, _, _ in es if k == "op")
    n_class = sum(1 for _, _, es in parsed for k, _, _, c in es if k == "lemma" and c)
    out = [
        "# The lemma library (lemmas/*.lemma)",
        "",
        "Generated from the lemma files by `tools/lemma-docs.py` (do not edit: run",
        "`python3 tools/lemma-docs.py -o docs/lemmas.md`; the test `lemma-docs` fails",
        "when this page is stale).  Each line is a lemma or an operator declaration",
        "with the first sentence of the comment that states it; the files hold the",
        "full comments and the conditions.  Identities are over the reals.  Every",
        "lemma is checked numerically by `shardcheck lemmas check`",
        "(docs/validation.md); the DSL is described in docs/lemma-dsl.md.",
        "",
        f"{n_lemmas} lemmas and {n_ops} operator declarations in {len(parsed)} files.",
        "",
        "| file | lemmas | declared operators | about |",
        "|---|---:|---:|---|",
    ]
    for name, header, entries in parsed:
        nl = sum(1 for k, _, _, _ in entries if k == "lemma")
        no = sum(1 for k, _, _, _ in entries if k == "op")
        about = sentence(header) if header else ""
        about = re.sub(r"^\S+\.lemma\s*[-—:]+\s*", "", about)
        out.append(f"| [`{name}`](#{name.replace('.', '')}) | {nl} | {no} | {about} |")
    out += [
        "",
        "## Size of the library",
        "",
        f"{n_lemmas} lemma statements, {n_class} of them class lemmas (`for ?f in",
        "CLASS`, docs/lemma-dsl.md \"Operator classes\"), each instantiated for every",
        "operator of its class: the operators of the table and those lemma files",
        "declare later.  Before operator classes the library had",
        f"{STATEMENTS_BEFORE_CLASSES} lemma statements, with per-operator enumerations",
        "(`gelu_cat`, `silu_cat`, ..., `sum_dim_cat_other_keep`, `sum01_cat_same`,",
        "`rope_mul_cat_bcast_left`, ...) that the class lemmas replace while covering",
        "more operators (every unary and binary elementwise operator, their",
        "backward operators, every reduction with a dims list, any dims, keepdim or",
        "not, negative dims, and the row-wise operators).  `shardcheck lemmas check`",
        "lists every instance by name (`ew1_cat[gelu]`).",
        "",
        "Counted by `shardcheck lemmas check` (both directions of a `<=>`, every",
        f"instance of a class lemma): {CHECKED_BEFORE_CLASSES} lemmas before operator classes,",
        f"{CHECKED_AFTER_ALGEBRA} after the second round of the operator-algebra work (batched",
        "products, unit-dim permutes, mask forms, max.dim values, arange splits,",
        "the per-operator view lemmas replaced by `ew1_view`); run it for today's",
        "figure.",
        "",
        "The online-softmax merge round (online-softmax-merge.lemma, docs/lemma-dsl.md",
        f"\"Online softmax\") went from {STATEMENTS_BEFORE_MERGE} statements ({CHECKED_BEFORE_MERGE} checked) to",
        f"{STATEMENTS_AFTER_MERGE} ({CHECKED_AFTER_MERGE} checked): nine general laws added (the merge of any",
        "number of parts in any order, the running-max quotient laws), two",
        "per-form lemmas removed (`logsumexp_cat_same`, `logsumexp_max_shift`).",
        "",
        "## What is proved for all sizes, what is fuzzed",
        "",
        "Every lemma and every instance of a class lemma is fuzzed:",
        "`shardcheck lemmas check` evaluates both sides with the reference",
        "interpreter on random instances (ranks 1-4, random sizes, dims, keepdim,",
        "split points, dtypes, and for class lemmas every operator of the class), and",
        "the load-time instance test checks that both sides have one type on 600",
        "instances.  This refutes; it does not prove.  No lemma's side conditions",
        "are yet proved for all sizes with cvc5 (src/smt is used by the checker",
        "for symbolic sizes of bundles, not for lemma conditions): all lemmas are",
        "fuzzed only.  The class lemmas' conditions are linear integer arithmetic",
        "over ranks, dims and sizes (`reduced`, `reduced_before` are finite case",
        "splits at a bounded rank), the form TensorRight (POPL 2025) proves with a",
        "rank bound; that is the next step.",
        "",
        "A few lemmas get few random instances (a random target shape rarely fits",
        "a view): `view_view_cat_aligned` and `view_cat_regroup_aligned`",
        "(layout-batched.lemma) get 0 to 4 a run.  Both are identities wherever",
        "both sides are defined (two views in a row are one view; cat is",
        "associative); their conditions only restrict where they fire.",
    ]
    for name, header, entries in parsed:
        out += ["", f"## {name}", ""]
        if header:
            about = re.sub(r"^\S+\.lemma\s*[-—:]+\s*", "", sentence(header, 600))
            out += [about, ""]
        ops = [(n, c) for k, n, c, _ in entries if k == "op"]
        lemmas = [(n + (f"` (class `{cl}`)" if cl else "`"), c) for k, n, c, cl in entries
                  if k == "lemma"]
        if ops:
            out += ["| operator | what it computes |", "|---|---|"]
            out += [f"| `{n}` | {sentence(c)} |" for n, c in ops]
            out.append("")
        if lemmas:
            out += ["| lemma | identity |", "|---|---|"]
            out += [f"| `{n} | {sentence(c)} |" for n, c in lemmas]
    return "\n".join(out) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="write docs/lemmas.md from the lemma files")
    ap.add_argument("--lemmas", default=os.path.join(here, "..", "lemmas"))
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--check", metavar="FILE")
    a = ap.parse_args()
    text = render(a.lemmas)
    if a.check:
        with open(a.check, encoding="utf-8") as f:
            have = f.read()
        if have != text:
            print(f"{a.check} is stale: run python3 tools/lemma-docs.py -o {a.check}")
            return 1
        print(f"{a.check} is up to date")
        return 0
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
