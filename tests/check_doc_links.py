#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/*.md resolves.

A link is `[text](target)`, `![alt](target)` or `<img src="target">` outside code (fenced
blocks and inline code spans). Web links (http:, https:, mailto:) are not followed. A
relative target must name a file or folder that exists, relative to the page it is on; a
`#anchor` must name a heading of the page it points to (GitHub's rule: lower case, spaces to
`-`, punctuation other than `-` and `_` dropped, `-1`, `-2`, ... for repeats).

Usage: check_doc_links.py [REPO_ROOT] [PAGE.md ...]   (ctest: doc_links)
Exit 0 when every link resolves, else 1 with one line per broken link (page:line: target).
"""
import pathlib
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMG = re.compile(r"<img\s[^>]*\bsrc=\"([^\"]+)\"", re.IGNORECASE)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(text):
    """Yields (line number, line) outside fenced code, inline code spans removed."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"`[^`]*`", "", line)


def slug(heading):
    text = re.sub(r"`([^`]*)`", r"\1", heading)               # inline code keeps its text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)      # a link keeps its text
    text = re.sub(r"[*_]{1,2}([^*_]+)[*_]{1,2}", r"\1", text)  # emphasis
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page, cache={}):
    if page not in cache:
        seen, found = {}, set()
        fenced = False
        for line in page.read_text(encoding="utf-8").split("\n"):
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if m:
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
        cache[page] = found
    return cache[page]


def check(page, root):
    errors = []
    text = page.read_text(encoding="utf-8")
    for number, line in prose_lines(text):
        for target in LINK.findall(line) + IMG.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # http:, https:, mailto: ...
            path, _, anchor = target.partition("#")
            dest = page if not path else (page.parent / path)
            where = f"{page.relative_to(root)}:{number}: {target}"
            if not dest.exists():
                errors.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor.lower() not in anchors(dest.resolve()):
                errors.append(f"{where}: no heading '#{anchor}' in {dest.name}")
            elif not dest.resolve().is_relative_to(root.resolve()):
                errors.append(f"{where}: outside the repository")
    return errors


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    pages = [pathlib.Path(p) for p in argv[2:]] or [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    errors, links = [], 0
    for page in pages:
        errors += check(page, root)
        links += sum(len(LINK.findall(l)) + len(IMG.findall(l)) for _, l in prose_lines(page.read_text()))
    for e in errors:
        print(e)
    print(f"{len(pages)} pages, {links} links, {len(errors)} broken")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
