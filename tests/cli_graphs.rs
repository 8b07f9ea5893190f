//! `tracer graphs ...`: shipped graphs verify by execution; malformed files are one-line
//! errors naming file and field.

use crate::common::*;

#[test]
fn shipped_graphs_verify_with_every_edge_demonstrated() {
    let o = tracer(&repo(), &temp_dir("verify"), &["graphs", "verify"]);
    assert_ok(&o);
    let s = stdout(&o);
    assert!(s.contains("9 tools, 31 edges, 31 demonstrated"), "{s}");
    assert!(s.contains("10 tools, 35 edges, 35 demonstrated"), "{s}");
    let stats = stdout(&tracer(&repo(), &temp_dir("stats"), &["graphs", "stats"]));
    assert!(stats.contains("| airline | 9 | 31 | 0.43 |"), "{stats}");
    assert!(stats.contains("| retail | 10 | 35 | 0.39 |"), "{stats}");
}

fn broken(label: &str, edit: impl Fn(&mut serde_json::Value)) -> (String, bool) {
    let dir = temp_dir(label);
    let mut g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("graphs/airline.json")).unwrap())
            .unwrap();
    edit(&mut g);
    let file = dir.join("bad.json");
    std::fs::write(&file, serde_json::to_string_pretty(&g).unwrap()).unwrap();
    let out = dir.join("out");
    let f = file.display().to_string();
    let o = tracer(
        &repo(),
        &out,
        &["graphs", "verify", "--domain", "airline", "--file", &f],
    );
    (stderr(&o), o.status.success())
}

type Edit = Box<dyn Fn(&mut serde_json::Value)>;

#[test]
fn malformed_graphs_are_rejected_with_file_and_field() {
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "unknown",
            Box::new(|g| g["nodes"][2]["tool"] = "fly_to_moon".into()),
            "nodes[2].tool: unknown tool 'fly_to_moon'",
        ),
        (
            "dangling",
            Box::new(|g| g["edges"][4]["to"] = "nowhere".into()),
            "edges[4].to: dangling edge",
        ),
        (
            "noroot",
            Box::new(|g| {
                for n in g["nodes"].as_array_mut().unwrap() {
                    n["root"] = false.into();
                }
            }),
            "nodes: no root-eligible node",
        ),
        (
            "kind",
            Box::new(|g| g["nodes"][0]["kind"] = "write".into()),
            "nodes[0].kind",
        ),
        (
            "dup",
            Box::new(|g| {
                let e = g["edges"][0].clone();
                g["edges"].as_array_mut().unwrap().push(e);
            }),
            "duplicate edge",
        ),
    ];
    for (label, edit, expected) in cases {
        let (err, ok) = broken(label, edit);
        assert!(!ok, "{label} must fail");
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{label}: one line, got {err}"
        );
        assert!(
            err.contains("bad.json: ") && err.contains(expected),
            "{label}: {err}"
        );
    }
    let dir = temp_dir("badjson");
    let file = dir.join("bad.json");
    std::fs::write(&file, "{\"domain\": \"airline\", \"nodes\": [").unwrap();
    let f = file.display().to_string();
    let o = tracer(
        &repo(),
        &dir.join("out"),
        &["graphs", "verify", "--domain", "airline", "--file", &f],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.json: json: "), "{}", stderr(&o));
}

#[test]
fn render_writes_dot_with_roots_and_two_way_edges() {
    let dir = temp_dir("render");
    let d = dir.display().to_string();
    assert_ok(&tracer(
        &repo(),
        &dir,
        &["graphs", "render", "--domain", "airline", "--out-dir", &d],
    ));
    let dot = std::fs::read_to_string(dir.join("airline.dot")).unwrap();
    assert!(dot.contains("cluster_read") && dot.contains("cluster_write"));
    assert!(dot.contains("dir=both"), "two-way pairs are marked");
    assert!(dot.contains("penwidth=2"), "roots are highlighted");
}

#[test]
fn build_proposes_demonstrated_candidates() {
    let dir = temp_dir("build");
    let file = dir.join("candidate.json");
    let f = file.display().to_string();
    let o = tracer(
        &repo(),
        &dir,
        &["graphs", "build", "--domain", "retail", "--out", &f],
    );
    assert_ok(&o);
    let g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let edges = g["edges"].as_array().unwrap();
    assert!(edges.len() >= 10, "{}", stderr(&o));
    // The candidate graph is itself a loadable graph.
    assert_ok(&tracer(
        &repo(),
        &dir.join("out"),
        &["graphs", "stats", "--domain", "retail"],
    ));
    assert!(stderr(&o).contains("yields order_id"), "{}", stderr(&o));
}

/// The reference pages' generated blocks are current (`tracer docs --check`, as CI runs
/// it), and a stale block is named, fails the check and is rewritten by `tracer docs`.
#[test]
fn docs_check_passes_on_the_repository_and_names_a_stale_block() {
    let out = temp_dir("docs-out");
    let o = tracer(&repo(), out.path(), &["docs", "--check"]);
    assert_ok(&o);
    assert!(
        stdout(&o).contains("11 generated pages are current"),
        "{}",
        stdout(&o)
    );

    let root = project_copy("docs");
    copy_dir(&repo().join("docs/domains"), &root.join("docs/domains"));
    for entry in std::fs::read_dir(repo().join("tests/fixtures/reference")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.is_dir() {
            let to = root
                .join("tests/fixtures/reference")
                .join(dir.file_name().unwrap());
            std::fs::create_dir_all(&to).unwrap();
            if dir.join("departures.json").exists() {
                std::fs::copy(dir.join("departures.json"), to.join("departures.json")).unwrap();
            }
        }
    }
    assert_ok(&tracer(root.path(), out.path(), &["docs", "--check"]));
    // A tool's row edited by hand is stale; the prose around the blocks is not checked.
    let page = root.join("docs/domains/movie.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let edited = text.replacen(
        "| `cancel_booking` | write |",
        "| `cancel_booking` | read |",
        1,
    );
    assert_ne!(
        edited, text,
        "the movie page lists cancel_booking as a write"
    );
    std::fs::write(&page, edited.replace("# Movie", "# Movie, edited prose")).unwrap();
    let o = tracer(root.path(), out.path(), &["docs", "--check"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("movie.md: stale generated block(s) tools"),
        "{}",
        stderr(&o)
    );
    assert_ok(&tracer(root.path(), out.path(), &["docs"]));
    let fixed = std::fs::read_to_string(&page).unwrap();
    assert!(fixed.starts_with("# Movie, edited prose"));
    assert_eq!(fixed.replace("# Movie, edited prose", "# Movie"), text);
    assert_ok(&tracer(root.path(), out.path(), &["docs", "--check"]));
    // A page without its blocks is an error naming the page and the block.
    std::fs::write(&page, "# Movie\n").unwrap();
    let o = tracer(root.path(), out.path(), &["docs", "--check"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("movie.md: the generated block 'summary' must appear once (found 0)"),
        "{}",
        stderr(&o)
    );
}
