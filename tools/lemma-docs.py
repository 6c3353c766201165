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
        m = STMT.match(line)
        if m:
            kind = m.group(1) or m.group(3)
            name = m.group(2) or m.group(4)
            if block:
                last_block = block
            entries.append((kind, name, last_block))
        block = []  # a statement line or one of its continuation lines
    return header, entries


def render(lemma_dir):
    files = sorted(glob.glob(os.path.join(lemma_dir, "*.lemma")))
    parsed = [(os.path.basename(p), *parse(p)) for p in files]
    n_lemmas = sum(1 for _, _, es in parsed for k, _, _ in es if k == "lemma")
    n_ops = sum(1 for _, _, es in parsed for k, _, _ in es if k == "op")
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
        nl = sum(1 for k, _, _ in entries if k == "lemma")
        no = sum(1 for k, _, _ in entries if k == "op")
        about = sentence(header) if header else ""
        about = re.sub(r"^\S+\.lemma\s*[-—:]+\s*", "", about)
        out.append(f"| [`{name}`](#{name.replace('.', '')}) | {nl} | {no} | {about} |")
    for name, header, entries in parsed:
        out += ["", f"## {name}", ""]
        if header:
            about = re.sub(r"^\S+\.lemma\s*[-—:]+\s*", "", sentence(header, 600))
            out += [about, ""]
        ops = [(n, c) for k, n, c in entries if k == "op"]
        lemmas = [(n, c) for k, n, c in entries if k == "lemma"]
        if ops:
            out += ["| operator | what it computes |", "|---|---|"]
            out += [f"| `{n}` | {sentence(c)} |" for n, c in ops]
            out.append("")
        if lemmas:
            out += ["| lemma | identity |", "|---|---|"]
            out += [f"| `{n}` | {sentence(c)} |" for n, c in lemmas]
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
