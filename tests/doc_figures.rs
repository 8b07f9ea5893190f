//! `scripts/doc_figures.py`: the run figures of the docs (blocks between `run figures`
//! markers) are written from a run's `tracer quality` and `tracer stats`, and `--check`
//! names every block that differs, here against a small offline run.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Output};

fn figures(root: &Path, args: &[&str]) -> Output {
    Command::new("python3")
        .arg(repo().join("scripts/doc_figures.py"))
        .args(args)
        .env("TRACER", env!("CARGO_BIN_EXE_tracer"))
        .env("TRACER_ROOT", root)
        .env(
            "TRACER_EMBED_MODEL",
            repo().join(".cache/models/all-MiniLM-L6-v2"),
        )
        .env("TRACER_EMOTION_CACHE", repo().join(".cache/emotion"))
        .output()
        .unwrap()
}

const BLOCKS: [&str; 12] = [
    "readme-quality",
    "quality-tables",
    "funnel",
    "top-6gram",
    "6grams-quarter",
    "shared-openings",
    "p90-max",
    "words-max",
    "actions-10",
    "conditions-used",
    "dimension-min",
    "screening-airline",
];

#[test]
fn doc_figures_are_written_from_a_run_and_checked() {
    let root = small_project("doc-figures");
    let out = temp_dir("doc-figures-out");
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "trajectories", "--domain", "airline"],
    ));
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "screened", "--domain", "airline"],
    ));
    let o = out.display().to_string();

    // A page holding every block, each with a figure no run gives.
    let page = out.join("page.md");
    let text: String = BLOCKS
        .iter()
        .map(|b| format!("{b}: <!-- run figures: {b} -->999<!-- /run figures: {b} -->\n"))
        .collect();
    std::fs::write(&page, &text).unwrap();
    let p = page.display().to_string();
    let check = figures(&root, &["--check", &o, &p]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    for b in BLOCKS {
        assert!(
            stderr(&check).contains(&format!("stale: {p}: {b}\n")),
            "{b}: {}",
            stderr(&check)
        );
    }
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        text,
        "--check writes nothing"
    );

    // Written from the run, the page checks clean, and says what the run's tables say.
    assert_ok(&figures(&root, &[&o, &p]));
    assert_ok(&figures(&root, &["--check", &o, &p]));
    let written = std::fs::read_to_string(&page).unwrap();
    let quality = stdout(&tracer(&root, &out, &["quality"]));
    let stats = stdout(&tracer(&root, &out, &["stats"]));
    let funnel = stats
        .lines()
        .find(|l| l.starts_with("| airline | eval |"))
        .unwrap();
    let cells: Vec<&str> = funnel.split(" | ").collect();
    // | domain | split | traces | grounded | refined | verified | screened | ...
    let screening = format!("{} of {}", cells[6], cells[5]);
    assert!(
        written.contains(&format!(
            "screening-airline: <!-- run figures: screening-airline -->{screening}<!--"
        )),
        "{written}\n{funnel}"
    );
    let first_quality_row = quality
        .lines()
        .find(|l| l.starts_with("| airline | train |"))
        .unwrap();
    assert!(written.contains(first_quality_row), "{written}");
    assert!(written.contains(funnel), "{written}");
    let kept = quality
        .lines()
        .filter(|l| l.starts_with("| airline | train |"))
        .nth(2) // the kept SFT rows' table: after the tasks' and the emotion mix's
        .unwrap()
        .split(" | ")
        .nth(2)
        .unwrap()
        .to_string();
    assert!(
        written.contains(&format!("fault | 434 of 2,138 | 0 of {kept} |")),
        "{kept}: {written}"
    );

    // One figure edited by hand is named, and rewritten.
    let edited = written.replacen(&screening, "147 of 150", 1);
    std::fs::write(&page, &edited).unwrap();
    let check = figures(&root, &["--check", &o, &p]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert_eq!(
        stderr(&check)
            .lines()
            .filter(|l| l.starts_with("stale: "))
            .collect::<Vec<_>>(),
        [format!("stale: {p}: screening-airline")]
    );

    // An unknown or unclosed block is an error naming the file and block.
    std::fs::write(
        &page,
        "<!-- run figures: nope -->1<!-- /run figures: nope -->\n",
    )
    .unwrap();
    let bad = figures(&root, &["--check", &o, &p]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains(&format!("{p}: block 'nope': unknown block")),
        "{}",
        stderr(&bad)
    );
    std::fs::write(&page, "<!-- run figures: funnel -->1\n").unwrap();
    let bad = figures(&root, &[&o, &p]);
    assert!(
        stderr(&bad).contains("block 'funnel' is not closed"),
        "{}",
        stderr(&bad)
    );

    // The repository's docs hold only blocks the script knows, each closed: checked against
    // this small run they are stale (they are written from a ten-domain run), never wrong.
    let repo_check = figures(&root, &["--check", &o]);
    let err = stderr(&repo_check);
    assert!(
        err.lines()
            .all(|l| l.starts_with("stale: ")
                || l.starts_with("error: ") && l.contains("differ from")),
        "{err}"
    );
    for file in ["README.md", "docs/data-quality.md", "docs/user-guide.md"] {
        assert!(err.contains(&format!("stale: {file}: ")), "{file}: {err}");
    }
}
