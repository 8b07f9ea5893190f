//! `tracer compare A B` on a real eval output: against itself every difference is 0 and
//! within noise; against a copy whose rewards are all 0 the original is better (and the
//! other way round); a missing path, a k mismatch and no common task are one-line errors
//! naming the path.

use crate::common::*;
use std::path::{Path, PathBuf};
use tracer::artifact::{self, RolloutRecord};

/// The episodes of `from` changed by `edit`, written as an eval output root at `root`
/// (`eval/domain=retail/part-00000.parquet`) with the same provenance.
fn edited_copy(from: &Path, root: &Path, edit: impl Fn(&mut Vec<RolloutRecord>)) -> PathBuf {
    let (mut rows, prov) = artifact::read_records::<RolloutRecord>(from).unwrap();
    edit(&mut rows);
    let dir = root.join("eval/domain=retail");
    std::fs::create_dir_all(&dir).unwrap();
    artifact::write_records(&dir.join("part-00000.parquet"), &rows, &prov).unwrap();
    root.to_path_buf()
}

/// The body rows of the comparison table, as cells.
fn table_rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| scope"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn compare(root: &Path, out: &Path, a: &Path, b: &Path) -> std::process::Output {
    tracer(
        root,
        out,
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    )
}

#[track_caller]
fn assert_one_line_error(o: &std::process::Output, names: &str) {
    assert!(!o.status.success(), "{}", stdout(o));
    let err = stderr(o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(names), "{err}");
}

#[test]
fn compare_says_which_run_is_better_and_when_it_is_noise() {
    let root = small_project("compare");
    let out = temp_dir("compare-out");
    assert_ok(&tracer(&root, &out, &["run", "eval", "--domain", "retail"]));
    let part = out.join("eval/domain=retail/part-00000.parquet");

    // Itself: the output root against its Parquet file.
    let o = compare(&root, &out, &out, &part);
    assert_ok(&o);
    let text = stdout(&o);
    let rows = table_rows(&text);
    let scopes: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        scopes,
        [
            ("retail", "Avg@3"),
            ("retail", "Pass^3"),
            ("overall", "Avg@3"),
            ("overall", "Pass^3")
        ],
        "{text}"
    );
    for r in &rows {
        assert_eq!(r[3], r[4], "{text}");
        assert_eq!(
            &r[5..],
            ["+0.0", "[+0.0, +0.0]", "1.000", "within noise"],
            "{text}"
        );
    }
    assert!(text.contains("sign-flip permutation test"), "{text}");
    let avg: f64 = rows[0][3].trim_end_matches('%').parse().unwrap();
    assert!(
        avg > 20.0,
        "the scripted agent should succeed often: {text}"
    );

    // Every reward 0 on one side: the other is better, whichever side it is.
    let zero_dir = temp_dir("compare-zero");
    let zero = edited_copy(&part, &zero_dir, |rows| {
        rows.iter_mut().for_each(|r| r.reward = 0)
    });
    for (a, b, better) in [
        (out.path(), zero.as_path(), "A better"),
        (zero.as_path(), out.path(), "B better"),
    ] {
        let o = compare(&root, &out, a, b);
        assert_ok(&o);
        let text = stdout(&o);
        let rows = table_rows(&text);
        assert_eq!(rows.len(), 4, "{text}");
        // One domain: the overall rows are the domain's.
        assert_eq!(rows[0][2..], rows[2][2..], "{text}");
        assert_eq!(rows[1][2..], rows[3][2..], "{text}");
        for r in rows.iter().filter(|r| r[1] == "Avg@3") {
            assert_eq!(r[8], better, "{text}");
            assert!(r[3] == "0.0%" || r[4] == "0.0%", "{text}");
            let p: f64 = r[7].parse().unwrap();
            assert!(p < 0.05, "{text}");
        }
    }

    // Bad input: one line naming the path, exit 1, nothing on stdout.
    let missing = out.join("no-such-run");
    let o = compare(&root, &out, &out, &missing);
    assert_one_line_error(&o, missing.to_str().unwrap());
    assert!(stdout(&o).is_empty());
    let empty = temp_dir("compare-empty");
    assert_one_line_error(&compare(&root, &out, &empty, &out), empty.to_str().unwrap());
    let two_trials_dir = temp_dir("compare-k2");
    let two_trials = edited_copy(&part, &two_trials_dir, |rows| rows.retain(|r| r.trial < 2));
    assert_one_line_error(
        &compare(&root, &out, &out, &two_trials),
        &format!("{}: 2 trial(s) per task", two_trials.display()),
    );
    let renamed_dir = temp_dir("compare-renamed");
    let renamed = edited_copy(&part, &renamed_dir, |rows| {
        rows.iter_mut()
            .for_each(|r| r.task_id = format!("other-{}", r.task_id))
    });
    assert_one_line_error(
        &compare(&root, &out, &out, &renamed),
        "no task has scored episodes in both",
    );
}
