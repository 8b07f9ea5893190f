#!/usr/bin/env python3
"""Check the relative links of the project's Markdown: every link in README.md and
docs/**/*.md (and any other files given) must name an existing file or directory, and a
`#fragment` must name a heading of the target file (GitHub's anchor rules). External links
(http, https, mailto) are not followed. Standard library only.

    python3 scripts/check_links.py [FILE.md ...]

Prints one line per broken link and exits 1 if there is any.
"""

import re
import sys
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
# [text](target) and ![alt](target); the target stops at whitespace or ')'.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links -> their text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def strip_code(text: str) -> str:
    """Drop fenced code blocks and inline code spans, which hold no links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path: Path) -> set:
    seen, out, fenced = {}, set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def check(md: Path) -> list:
    problems = []
    for target in LINK.findall(strip_code(md.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto:
        path_part, _, fragment = target.partition("#")
        dest = (md.parent / unquote(path_part)).resolve() if path_part else md
        where = md.relative_to(ROOT)
        if not dest.exists():
            problems.append(f"{where}: {target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            problems.append(f"{where}: {target}: no heading '#{fragment}' in {dest.relative_to(ROOT)}")
    return problems


def main() -> int:
    files = [Path(a).resolve() for a in sys.argv[1:]] or [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    problems = [p for f in files for p in check(f)]
    for p in problems:
        print(p)
    print(f"{len(files)} files checked, {len(problems)} broken links", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
