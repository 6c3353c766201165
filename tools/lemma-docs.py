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
the file's section.  Each lemma's line also says what `shardcheck lemmas
prove` proved of its typing for all sizes (read from --proofs, default
docs/lemma-proofs.json: the JSON of `shardcheck lemmas prove --format
json`, which the test `lemmas-prove-library` compares with the prover's
answers).  Standard library only.
"""
import json
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


def first_reason(table, why):
    """The text of TABLE's first (key, text) whose key is in WHY, else
    "other: " and WHY's first 60 characters."""
    w = why or ""
    for key, text in table:
        if key in w:
            return text
    return "other: " + w[:60]


def category(why, rank_bound):
    """A short reason for a lemma the prover does not prove."""
    table = [
        ("over budget (time)", "over the solver's wall-time limit (a loaded machine)"),
        ("budget", "over the prover's budget"),
        ("floor division, modulo", "an opaque floor division or modulo"),
        ("concrete integer", "a shape rule needs a concrete integer"),
        ("condition is undecided", "a condition on values"),
        ("cannot be evaluated on symbolic", "a condition not over integers"),
        ("Scalar attribute", "a Scalar attribute in a computed argument or an arange bound"),
        ("float attribute", "a float attribute in the condition"),
        ("string attribute", "a string attribute"),
        ("well-typed in no configuration",
         "no well-typed instance at rank <= " + (re.search(r"rank <= (\d+)", why) or
                                                 [None, str(rank_bound)])[1]),
        ("no concrete", "refuted on a path, no concrete witness"),
        ("neither provably equal", "sizes neither equal nor different"),
        ("cannot assume", "a case split sym cannot assume"),
        ("undecided", "a comparison the solver leaves undecided"),
    ]
    return first_reason(table, why)


def load_proofs(path):
    """(rank bound, {lemma name: (status, why)}) or (None, {}) without FILE."""
    if not path or not os.path.exists(path):
        return None, {}
    with open(path, encoding="utf-8") as f:
        rep = json.load(f)
    return rep["rank_bound"], {l["name"]: (l["status"], l.get("why"), l.get("values"),
                                           l.get("values_why"),
                                           l.get("rank_bound", rep["rank_bound"]))
                               for l in rep["lemmas"]}


def values_category(w):
    """A short reason why a layout lemma's values are not proved."""
    table = [
        ("over budget (time)", "over the solver's wall-time limit (a loaded machine)"),
        ("merges dims", "a view merging dims (div/mod)"),
        ("regroups dims", "a view regrouping dims otherwise"),
        ("budget", "over budget"),
        ("no concrete instance", "refuted symbolically, no interpreter witness"),
        ("not a constant", "a symbolic dim argument"),
        ("undecided", "a comparison left undecided"),
    ]
    return first_reason(table, w)


def prover_cell(results, n):
    """The cell of a statement of N instances whose prover results are
    RESULTS: (status, the reason's category when neither proved nor refuted,
    the rank bound of the result)."""
    if n == 1:
        st, why, rb = results[0]
        if st == "proved":
            return f"proved (rank <= {rb})"
        if st == "refuted":
            return "**refuted**"
        return "fuzzed only: " + why
    proved = sum(1 for st, *_ in results if st == "proved")
    refuted = sum(1 for st, *_ in results if st == "refuted")
    reasons = sorted({why for st, why, _ in results if st == "not_provable"})
    text = f"proved {proved}/{n} instances"
    if refuted:
        text += f", **{refuted} refuted**"
    if reasons:
        text += "; fuzzed only: " + "; ".join(reasons)
    return text


def values_cell(name, proofs):
    """What the prover says of statement NAME's values (layout lemmas only)."""
    mine = [v for k, v in proofs.items() if k == name or k.startswith(name + "[")]
    tried = [(v, vw, rb) for _, _, v, vw, rb in mine if v is not None]
    if not tried:
        return "fuzzed only"
    results = [(v, None if v in ("proved", "refuted") else values_category(vw), rb)
               for v, vw, rb in tried]
    return prover_cell(results, len(mine))


def status_cell(name, proofs, rank_bound):
    """What the prover says of statement NAME (its instances for a class lemma)."""
    mine = [v for k, v in proofs.items() if k == name or k.startswith(name + "[")]
    if not mine:
        return "fuzzed only: not run by the prover"
    results = [(st, None if st in ("proved", "refuted") else category(w, rank_bound), rb)
               for st, w, _, _, rb in mine]
    return prover_cell(results, len(mine))


def render(lemma_dir, proofs_path=None):
    rank_bound, proofs = load_proofs(proofs_path)
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
        "instances.  This refutes; it does not prove.  Values are fuzzed only,",
        "except those of the pure layout lemmas below.",
        "",
        "What is proved for all sizes is **typing**, by `shardcheck lemmas prove`",
        "(include/shardcheck/lemprove.h, src/lemma/prove*.c), after TensorRight",
        "(POPL 2025): wherever the left side is well-typed and the where condition",
        "holds, the right side is well-typed with the same shape and dtype (for a",
        "`<=>` lemma, the converse too), for every size, at every rank up to a",
        "bound R.  Ranks, dim arguments (every value in [-R, R), and dim lists of",
        "length <= R), bools, dtypes (one dtype shared by the tensor variables,",
        "each of the 9; a dtype per tensor variable, every assignment, for a",
        "lemma typed with no shared dtype: an integer index beside float data,",
        "a bool mask) and loss reductions are enumerated, a Scalar attribute takes",
        "8 representatives (-1, 0, 1, 2, 0.5, -0.5, True, False: the shape rules read",
        "a Scalar's kind and sign, not its magnitude; a Scalar bound of arange or",
        "linspace is not provable), a float probability p (dropout) 0, 0.5, 1,",
        "-0.5 and 2, any other float 0.5 (no shape rule reads it); every size (in [1,",
        "2^31]) and every other integer (starts, ends, lengths, view and expand",
        "sizes: in [-2^40, 2^40]) is a symbol.  The operators' own shape rules run",
        "on the symbolic types; a size comparison that neither the normal form nor",
        "cvc5 decides splits the run into the case where it holds and the case",
        "where it does not (each path a conjunction of integer facts, replayed),",
        "and the sizes that rules special-case without asking (a broadcast size",
        "1, a size -1 in a size list) are split the same way; a comparison over",
        "a floor division or modulo (a view's -1 size, a slice's length by its",
        "step) splits on the comparison written with the division's definition",
        "as cvc5's query carries it (a remainder L % D, a quotient L / D),",
        "which the symtab parses back to the same atom.  A refutation is",
        "reported only with a concrete instance that breaks the lemma under the",
        "concrete shape rules.  A condition's top-level conjuncts that read a",
        "Scalar attribute are dropped (a weaker hypothesis: a proof without them",
        "is a proof with them; a refutation's concrete instance must satisfy the",
        "whole condition); a path that would refute with no concrete instance",
        "is put to cvc5 once, and one that no size satisfies covers nothing.",
        "Not covered: mixed dtypes among the tensor variables of a lemma",
        "typed with a shared one, sizes 0, ranks above R, float attributes in",
        "conditions, Scalars in computed arguments.",
        "Configurations are not enumerated blindly (src/lemma/prove-configs.c):",
        "a *unit* is a top-level conjunct of the condition, a node of a",
        "`requires`, or a node of a `=>` lemma's left side; it is judged once",
        "per assignment of its own variables' digits (and the dtype when it",
        "reads a tensor), on the empty path, by the normal form and the",
        "solver's answers so far.  Where a conjunct is NO (its negation YES) or",
        "a node is refused for a reason other than the method's, every path of",
        "every configuration that agrees on those digits is vacuous, so none is",
        "run: the odometer puts the variables of small units slowest and skips",
        "them in one step.  `ew2_cat[add.Tensor]` has 93,312 configurations",
        "at rank <= 2, of which 360 are run.  A lemma whose left side is",
        "well-typed in no configuration at rank <= R is proved again at R + 1,",
        "up to `--max-rank-bound` (4): batched matmuls at rank 3, attention",
        "layouts at rank 4; its column says the bound.  In cvc5's query, a",
        "remainder L % D and the floor quotient L / D of the same operands",
        "share the quotient (src/sym/sym-decide.c), so that `L % D == 0` gives",
        "`D * (L / D) == L` without nonlinear reasoning (a view's -1 size).",
        "Budgets per lemma: 200,000 configurations visited (run, or found",
        "vacuous one by one; not those skipped in bulk), 15,000 runs (a run is a",
        "path, a split or an infeasible case), 4,000 paths in one configuration,",
        "600 calls of cvc5; a lemma over a budget is not provable here.  The",
        "results do not depend on the machine's load: each cvc5 check runs under",
        "a resource limit (`rlimit-per` 50,000, SC_SMT_DEFAULT_RLIMIT), which is",
        "deterministic; the wall time per query (60 s) is only a safety net, and",
        "a lemma it cuts short is reported \"over budget (time)\" (stderr says how",
        "often it ran out).  `SC_SMT_RLIMIT` and `SC_SMT_TLIMIT_MS` override them.",
        "Measured on the library before this page's last additions (load 20-44):",
        "the defaults give exactly the answers of a 10 s wall time per query;",
        "of 96,902 checks, 3 stopped at the resource limit, none at the wall time.",
        "`shardcheck lemmas prove --rank-bound 3` proves every lemma at rank",
        "<= 3 (at a cost: a few seconds per lemma with several tensors).",
        "",
        "**Values for all sizes** are proved for the pure layout lemmas (every",
        "operator of both sides among cat, stack, slice, narrow, select, split,",
        "split_with_sizes, chunk, unbind, transpose, t, permute, unsqueeze, squeeze,",
        "expand, repeat, repeat_interleave (along a dim), roll (along dims),",
        "view/reshape/flatten, flip, constant_pad_nd and the identities) whose",
        "typing is proved (src/lemma/prove-values.c).  Both sides are index",
        "maps: at a symbolic output index o (one symbol per dim, assumed in",
        "bounds), each side is walked from its root to its leaves, each operator",
        "rewriting the index (cat: which part, by comparing o with the parts'",
        "offsets; slice: start + o * step; chunk: o plus k times the ceil-divided",
        "part size; permute: a reorder; expand: 0 where the operand's size is 1;",
        "pad: a shift, or the fill value outside; a view whose non-1 sizes match",
        "one to one, split an input size into consecutive output sizes (the",
        "linearised index) or merge consecutive input sizes into one (the digits",
        "of o in their mixed radix); repeat: o modulo the size; repeat_interleave:",
        "o divided by the count; roll: o minus the shift, modulo the size),",
        "every comparison decided by the normal form or cvc5 or split as for",
        "typing.  A floor division or modulo is made affine per piece: where the",
        "sizes decide it (a count of 1; a rotated index within one period of",
        "the size, split on its sign) it is the index itself or the index plus",
        "the size; elsewhere a quotient q and a remainder r become fresh symbols",
        "with a == b*q + r and 0 <= r < b assumed (the same a and b give the",
        "same q and r on both sides, and a dividend that differs from an earlier",
        "one by a multiple of b reuses its q), so every comparison stays",
        "polynomial and can split the path.  On every path both sides must read",
        "the same element of the same variable (every index component provably",
        "equal) or the same fill value.  A value refutation is reported only",
        "with a concrete instance on which the interpreter finds the sides'",
        "values different.  Not provable (with the reason): a dim argument that",
        "is not a constant, repeat_interleave without a dim, roll without dims,",
        "a view that regroups dims otherwise (2 x 3 as 3 x 2), a comparison",
        "cvc5 leaves undecided over a division the shape rules made.",
        "",
    ]
    if proofs:
        counts = {"proved": 0, "refuted": 0, "not_provable": 0}
        reasons = {}
        vcounts = {"proved": 0, "refuted": 0, "not_provable": 0}
        higher = 0
        for st, w, v, _, rb in proofs.values():
            counts[st] += 1
            higher += st == "proved" and rb > rank_bound
            if v is not None:
                vcounts[v] += 1
            if st == "not_provable":
                c = category(w, rank_bound)
                reasons[c] = reasons.get(c, 0) + 1
        out += [
            f"On the library (docs/lemma-proofs.json, rank bound R = {rank_bound}), of",
            f"{len(proofs)} lemmas and class-lemma instances: **{counts['proved']} typing proved",
            f"for all sizes at rank <= {rank_bound}**"
            + (f" ({higher} of them at rank <= 3 or 4, their left side typed at no lower "
               "rank)" if higher else "")
            + f", {counts['refuted']} refuted, {counts['not_provable']} fuzzed only",
            "(not provable by this method), by reason:",
            "",
            "| reason | lemmas |",
            "|---|---:|",
        ]
        out += [f"| {c} | {n} |" for c, n in sorted(reasons.items(), key=lambda x: -x[1])]
        vtried = sum(vcounts.values())
        out += [
            "",
            f"Values: of the {vtried} layout lemmas and instances whose typing is proved,",
            f"**{vcounts['proved']} values proved for all sizes at rank <= {rank_bound}**, "
            f"{vcounts['refuted']} refuted,",
            f"{vcounts['not_provable']} fuzzed only (not provable by the method).",
        ]
        out += ["", "Each lemma's line below says which (columns \"typing for all sizes\" and",
                "\"values for all sizes\").", ""]
    out += [
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
        bare = [n for k, n, c, cl in entries if k == "lemma"]
        if ops:
            out += ["| operator | what it computes |", "|---|---|"]
            out += [f"| `{n}` | {sentence(c)} |" for n, c in ops]
            out.append("")
        if lemmas and proofs:
            out += ["| lemma | identity | typing for all sizes | values for all sizes |",
                    "|---|---|---|---|"]
            out += [f"| `{n} | {sentence(c)} | {status_cell(b, proofs, rank_bound)} | "
                    f"{values_cell(b, proofs)} |"
                    for (n, c), b in zip(lemmas, bare)]
        elif lemmas:
            out += ["| lemma | identity |", "|---|---|"]
            out += [f"| `{n} | {sentence(c)} |" for n, c in lemmas]
    return "\n".join(out) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="write docs/lemmas.md from the lemma files")
    ap.add_argument("--lemmas", default=os.path.join(here, "..", "lemmas"))
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--check", metavar="FILE")
    ap.add_argument("--proofs", default=os.path.join(here, "..", "docs", "lemma-proofs.json"),
                    help="the JSON of `shardcheck lemmas prove --format json`")
    a = ap.parse_args()
    text = render(a.lemmas, a.proofs)
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
