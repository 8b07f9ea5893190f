#!/usr/bin/env python3
"""Write the run figures of the docs from a run's output, or check them.

    python3 scripts/doc_figures.py OUTPUT_DIR [FILE ...]          # rewrite the blocks
    python3 scripts/doc_figures.py --check OUTPUT_DIR [FILE ...]  # name each stale block

A figure a run measures (a share of tasks, a word count, a funnel count) sits in the docs
between markers, inline or on lines of their own:

    <!-- run figures: NAME -->...<!-- /run figures: NAME -->

and this script writes what is between them from `tracer quality` and `tracer stats` on
OUTPUT_DIR (and, for the conditions used, the `tasks` Parquet files), leaving everything
else alone. FILE defaults to README.md, docs/data-quality.md and docs/user-guide.md. The
docs are written from a ten-domain offline run (`make trajectories`, then `tracer run eval`);
`--check` exits 1 naming every block that differs (an integration test runs it against a
small run). An unknown block name, a block the run cannot fill (a domain or stage it has
not run) or an unclosed marker is an error naming the file and block.

The tracer binary is $TRACER, else target/debug/tracer under $CARGO_TARGET_DIR or the
repository. Historical figures ("before" a change, as measured when it landed) are not run
figures: they are written as such in the prose, or here as constants (README's "before"
column, the public tasks' share of ten-action tasks).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILES = ["README.md", "docs/data-quality.md", "docs/user-guide.md"]
MARKER = re.compile(
    r"<!-- run figures: ([a-z0-9-]+) -->(.*?)<!-- /run figures: \1 -->", re.S
)
OPEN = re.compile(r"<!-- run figures: ([a-z0-9-]+) -->")


class FigureError(Exception):
    pass


def tracer_binary():
    if os.environ.get("TRACER"):
        return os.environ["TRACER"]
    target = os.environ.get("CARGO_TARGET_DIR") or str(ROOT / "target")
    return str(Path(target) / "debug" / "tracer")


def run_tracer(output, *args):
    env = dict(os.environ, TRACER_OUTPUT=str(output))
    p = subprocess.run(
        [tracer_binary(), *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if p.returncode != 0:
        raise FigureError(f"tracer {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout


def tables(text):
    """Every Markdown table in `text`: (header cells, rows of cells)."""
    out, header, rows = [], None, []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not all(set(c) <= set("-: ") for c in cells):
                rows.append(dict(zip(header, cells)))
        elif header is not None:
            out.append((header, rows))
            header, rows = None, []
    return out


def table_with(all_tables, column):
    for header, rows in all_tables:
        if column in header:
            return rows
    raise FigureError(f"no table with a {column!r} column")


def pct(cell):
    """'10.1%' / '0.0% (none)' / '144: 100.0%' -> 10.1."""
    m = re.search(r"([0-9.]+)%", cell)
    if not m:
        raise FigureError(f"not a share: {cell!r}")
    return float(m.group(1))


def num(cell):
    return int(cell.replace(",", ""))


def span(values, unit=""):
    lo, hi = min(values), max(values)
    return f"{lo:g}{unit}" if lo == hi else f"{lo:g}–{hi:g}{unit}"


def thousands(n):
    return f"{n:,}"


class Run:
    """The figures of one run."""

    def __init__(self, output):
        self.output = Path(output)
        quality = run_tracer(output, "quality")
        self.quality_text = quality.split("\n", 2)[2] if quality.startswith("## ") else quality
        qt = tables(quality)
        self.tasks = table_with(qt, "words med/p90/max")
        self.mix = table_with(qt, "conditions of 594")
        try:
            self.sft = table_with(qt, "kept SFT rows")
        except FigureError:
            self.sft = []
        stats = run_tracer(output, "stats")
        self.funnel_rows = table_with(tables(stats), "verified")
        funnel = stats.split("## Task funnel\n\n", 1)[-1]
        self.funnel_text = funnel.split("\n\n", 1)[0].rstrip("\n") + "\n"

    def weighted(self, column):
        total = sum(num(r["tasks"]) for r in self.tasks)
        share = sum(pct(r[column]) * num(r["tasks"]) for r in self.tasks) / total
        return f"{share:.1f}%"

    def words(self, i):
        return [int(r["words med/p90/max"].split("/")[i]) for r in self.tasks]

    def kept(self):
        if not self.sft:
            raise FigureError("no kept SFT rows: run `tracer run trajectories` first")
        rows = sum(num(r["kept SFT rows"]) for r in self.sft)
        faulty = sum(
            num(r["with a policy or interaction fault (fault n)"].split()[0]) for r in self.sft
        )
        return faulty, rows

    def screening(self, domain):
        for r in self.funnel_rows:
            if r["domain"] == domain and r["split"] == "eval":
                if r["screened"] == "-":
                    break
                return f"{num(r['screened'])} of {num(r['verified'])}"
        raise FigureError(f"no screened {domain} tasks: run `tracer run screened` first")

    def conditions_used(self):
        import pyarrow.parquet as pq

        used = set()
        for part in sorted(self.output.glob("tasks/domain=*/part-00000.parquet")):
            for t in pq.read_table(
                part, columns=["emotion", "politeness", "urgency", "trust"]
            ).to_pylist():
                if t["emotion"]:
                    used.add((t["emotion"], t["politeness"], t["urgency"], t["trust"]))
        return len(used)

    def dimension_min(self):
        shares = []
        for r in self.mix:
            for column in r:
                if column.split()[0] in ("politeness", "urgency", "trust"):
                    shares += [int(x) for x in r[column].rstrip("%").split("/")]
        return f"{min(shares)}%"

    def readme_quality(self):
        incoherent = max(pct(r["incoherent (kind n)"]) for r in self.tasks)
        answered = min(pct(r["asking: answered"]) for r in self.tasks)
        unknowable = max(pct(r["unknowable ids (kind n)"]) for r in self.tasks)
        unknowable = "0" if unknowable == 0 else f"up to {unknowable:g}%"
        language = sum(
            sum(int(n) for n in re.findall(r" (\d+)", r["language hits (rule n)"]))
            for r in self.tasks
        )
        faulty, rows = self.kept()
        identified = [
            pct(r["identified before the first write"])
            for r in self.sft
            if r["identified before the first write"] != "-"
        ]
        med, p90, top = self.words(0), self.words(1), self.words(2)
        lines = [
            "| measure | before | now |",
            "|---|---|---|",
            f"| verified tasks that repeat or undo their own writes | 27% | {incoherent:g}% (changes of mind kept only when stated) |",
            f"| questions with values the reward checks | 7% of tasks carry `outputs` | {answered:g}% of tasks that ask |",
            f"| ids the customer cannot know (made in the task, internal, attribute dumps) | up to 93% of a domain | {unknowable} |",
            f"| words per instruction, median / p90 / max | 180 / 309 / 570 (all tasks) | {span(med)} / {span(p90)} / at most {max(top)} (per domain and split) |",
            f"| most frequent content 6-gram, share of a domain's tasks | up to 100% | {span([pct(r['top 6-gram']) for r in self.tasks], '%')} |",
            f"| tasks sharing their first 12 request words with another | 16-78% | {span([round(pct(r['shared openings'])) for r in self.tasks], '%')} |",
            f"| tasks with 10 or more reference actions | 35% | {self.weighted('>= 10 actions')} (public hand-checked tasks: 7%) |",
            f"| instructions with language errors | 20% | {language} |",
            f"| kept SFT rows with a policy, interaction or integrity fault | 434 of 2,138 | {faulty} of {thousands(rows)} |",
            f"| kept rows whose customer is identified before the first write | about 20% | {min(identified):g}% |",
        ]
        return "\n" + "\n".join(lines) + "\n"


def figures(run):
    """Block name -> how to write it (inline blocks are one line, table blocks start and end
    with a newline)."""
    six = [pct(r["top 6-gram"]) for r in run.tasks]
    quarter = [int(r["6-grams in >= 25%"]) for r in run.tasks]
    openings = [round(pct(r["shared openings"])) for r in run.tasks]
    return {
        "readme-quality": run.readme_quality,
        "quality-tables": lambda: "\n" + run.quality_text.rstrip("\n") + "\n",
        "funnel": lambda: "\n" + run.funnel_text,
        "top-6gram": lambda: span(six, "%"),
        "6grams-quarter": lambda: span(quarter),
        "shared-openings": lambda: span(openings, "%"),
        "p90-max": lambda: str(max(run.words(1))),
        "words-max": lambda: str(max(run.words(2))),
        "actions-10": lambda: run.weighted(">= 10 actions"),
        "conditions-used": lambda: str(run.conditions_used()),
        "dimension-min": run.dimension_min,
        "screening-airline": lambda: run.screening("airline"),
    }


def rewrite(path, text, fill):
    """`text` with every block filled; the names of the blocks that changed."""
    changed = []
    opened = [m.group(1) for m in OPEN.finditer(text)]
    closed = [m.group(1) for m in MARKER.finditer(text)]
    for name in opened:
        if name not in closed:
            raise FigureError(f"{path}: block {name!r} is not closed")

    def one(m):
        name, old = m.group(1), m.group(2)
        try:
            new = fill(name)
        except FigureError as e:
            raise FigureError(f"{path}: block {name!r}: {e}") from None
        if new != old:
            changed.append(name)
        return f"<!-- run figures: {name} -->{new}<!-- /run figures: {name} -->"

    return MARKER.sub(one, text), changed


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if not args:
        sys.exit(__doc__)
    output, files = args[0], args[1:] or DEFAULT_FILES
    try:
        run = Run(output)
        table = figures(run)
        cache = {}

        def fill(name):
            if name not in table:
                raise FigureError(f"unknown block (known: {', '.join(sorted(table))})")
            if name not in cache:
                cache[name] = table[name]()
            return cache[name]

        stale = []
        for f in files:
            path = Path(f) if Path(f).is_absolute() else ROOT / f
            text = path.read_text()
            new, changed = rewrite(f, text, fill)
            stale += [f"{f}: {name}" for name in changed]
            if not check and new != text:
                path.write_text(new)
    except (FigureError, OSError) as e:
        sys.exit(f"error: {e}")
    if check and stale:
        for s in stale:
            print(f"stale: {s}", file=sys.stderr)
        sys.exit(f"error: {len(stale)} run figure block(s) differ from {output}; rerun "
                 f"`python3 scripts/doc_figures.py {output}`")
    if not check:
        print(f"run figures written from {output}" + (f": {', '.join(stale)}" if stale else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
