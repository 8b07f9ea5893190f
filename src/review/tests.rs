use super::edges::{EdgeDecision, EdgeLine, EdgeReviews, append_edge};
use super::*;
use crate::artifact::TaskRecord;

fn task() -> TaskRecord {
    TaskRecord {
        task_id: "t1".into(),
        user_id: "u1".into(),
        actions: serde_json::from_value(serde_json::json!([
            {"name": "get_order", "kwargs": {"order_id": "#W100"}},
            {"name": "cancel", "kwargs": {"order_id": "#W100", "reason": "no longer needed"}},
        ]))
        .unwrap(),
        instruction: Some("You want to cancel order #W100.".into()),
        emotion_instruction: Some("You are calm.".into()),
        ..Default::default()
    }
}

fn by(reviewer: &str, decision: Decision, content: &str) -> ReviewLine {
    ReviewLine {
        task_id: "t1".into(),
        content: content.into(),
        decision,
        reason: (decision == Decision::Reject).then(|| "duplicate".into()),
        edit: (decision == Decision::Edit).then(|| Edit {
            instruction: Some("x".into()),
            ..Default::default()
        }),
        reviewer: reviewer.into(),
        resolves: false,
    }
}

fn line(decision: Decision, content: &str) -> ReviewLine {
    by("ana", decision, content)
}

fn temp_dir(label: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tracer-review-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_last_decision_on_the_current_content_wins_and_changed_content_is_stale() {
    let t = task();
    let h = content_hash(&t);
    assert_eq!(Reviews::default().state(&t), State::Pending);
    let r = Reviews::new(vec![line(Decision::Reject, &h), line(Decision::Accept, &h)]);
    assert_eq!(r.state(&t), State::Accepted);
    let r = Reviews::new(vec![
        line(Decision::Reject, &h),
        line(Decision::Accept, &h),
        line(Decision::Reject, "0123456789abcdef"),
    ]);
    assert_eq!(
        r.state(&t),
        State::Accepted,
        "a line for other content is ignored"
    );
    let mut changed = t.clone();
    changed.instruction = Some("You want to cancel order #W100 today.".into());
    assert_eq!(r.state(&changed), State::Stale);
}

#[test]
fn an_undo_reverses_the_reviewers_last_standing_decision_only() {
    let t = task();
    let h = content_hash(&t);
    let mut lines = vec![line(Decision::Accept, &h), line(Decision::Reject, &h)];
    assert!(matches!(
        Reviews::new(lines.clone()).state(&t),
        State::Rejected(_)
    ));
    lines.push(line(Decision::Undo, &h));
    let r = Reviews::new(lines.clone());
    assert_eq!(r.state(&t), State::Accepted, "undo restores the accept");
    assert_eq!(
        r.history("t1").iter().map(|(_, s)| *s).collect::<Vec<_>>(),
        [true, false, false],
        "the reject no longer stands; an undo never does"
    );
    lines.push(line(Decision::Undo, &h));
    assert_eq!(Reviews::new(lines.clone()).state(&t), State::Pending);
    // One more undo has nothing to reverse; another reviewer's undo never touches ana's.
    lines.push(line(Decision::Undo, &h));
    lines.push(line(Decision::Accept, &h));
    lines.push(by("ben", Decision::Undo, &h));
    assert_eq!(Reviews::new(lines.clone()).state(&t), State::Accepted);
    // An undo of a decision on earlier content leaves the current one alone.
    lines.push(line(Decision::Undo, "0123456789abcdef"));
    assert_eq!(Reviews::new(lines).state(&t), State::Accepted);
}

#[test]
fn disagreeing_reviewers_make_a_conflict_until_a_resolution() {
    let t = task();
    let h = content_hash(&t);
    let mut lines = vec![
        by("ana", Decision::Accept, &h),
        by("ben", Decision::Accept, &h),
    ];
    assert_eq!(Reviews::new(lines.clone()).state(&t), State::Accepted);
    // Two rejects with different reasons agree.
    let mut both_reject = vec![
        by("ana", Decision::Reject, &h),
        by("ben", Decision::Reject, &h),
    ];
    both_reject[1].reason = Some("unsolvable".into());
    assert_eq!(
        Reviews::new(both_reject).state(&t),
        State::Rejected("unsolvable".into())
    );
    lines.push(by("ben", Decision::Reject, &h));
    let State::Conflict(opinions) = Reviews::new(lines.clone()).state(&t) else {
        panic!("accept vs reject is a conflict");
    };
    assert_eq!(
        opinions
            .iter()
            .map(|l| (l.reviewer.as_str(), l.decision))
            .collect::<Vec<_>>(),
        [("ana", Decision::Accept), ("ben", Decision::Reject)]
    );
    // An accept and an edit disagree too: the release would differ.
    let edit = vec![
        by("ana", Decision::Accept, &h),
        by("ben", Decision::Edit, &h),
    ];
    assert!(matches!(Reviews::new(edit).state(&t), State::Conflict(_)));
    // A resolution settles it; a later dissent opens it again; undoing that closes it.
    let mut resolution = by("cy", Decision::Reject, &h);
    resolution.resolves = true;
    lines.push(resolution);
    assert!(matches!(
        Reviews::new(lines.clone()).state(&t),
        State::Rejected(_)
    ));
    lines.push(by("ana", Decision::Accept, &h));
    assert!(matches!(
        Reviews::new(lines.clone()).state(&t),
        State::Conflict(_)
    ));
    lines.push(by("ana", Decision::Undo, &h));
    assert!(matches!(
        Reviews::new(lines.clone()).state(&t),
        State::Rejected(_)
    ));
    // Undoing the resolution brings the conflict back.
    lines.push(by("cy", Decision::Undo, &h));
    assert!(matches!(Reviews::new(lines).state(&t), State::Conflict(_)));
}

#[test]
fn kappa_and_raw_agreement_over_doubly_reviewed_tasks() {
    // Textbook table: 20 accept/accept, 5 accept/reject, 10 reject/accept, 15 reject/reject:
    // p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4.
    let a = Agreement {
        accept_accept: 20,
        accept_reject: 5,
        reject_accept: 10,
        reject_reject: 15,
    };
    assert_eq!(a.tasks(), 50);
    assert!((a.raw().unwrap() - 0.7).abs() < 1e-12);
    assert!((a.kappa().unwrap() - 0.4).abs() < 1e-12, "{:?}", a.kappa());
    // Perfect disagreement on balanced labels is -1; one label only leaves kappa undefined.
    assert_eq!(cohen_kappa(&[(true, false), (false, true)]), Some(-1.0));
    assert_eq!(cohen_kappa(&[(true, true), (true, true)]), None);
    assert_eq!(cohen_kappa(&[]), None);

    // From decisions: t1 both accept (ana's edit counts as an accept), t2 accept vs reject,
    // t3 decided once (not counted), a resolution is not an opinion of its own.
    let h = "0123456789abcdef";
    let on = |task: &str, reviewer: &str, d: Decision, resolves: bool| {
        let mut l = by(reviewer, d, h);
        l.task_id = task.into();
        l.resolves = resolves;
        l
    };
    let r = Reviews::new(vec![
        on("t1", "ana", Decision::Edit, false),
        on("t1", "ben", Decision::Accept, false),
        on("t2", "ben", Decision::Accept, false),
        on("t2", "ana", Decision::Reject, false),
        on("t2", "cy", Decision::Reject, true),
        on("t3", "ana", Decision::Accept, false),
    ]);
    let got = agreement(&r, [("t1", h), ("t2", h), ("t3", h)]);
    assert_eq!(
        got,
        Agreement {
            accept_accept: 1,
            accept_reject: 1,
            ..Default::default()
        }
    );
    let mut pooled = got;
    pooled.add(&got);
    assert_eq!((pooled.tasks(), pooled.agreed()), (4, 2));
}

#[test]
fn malformed_lines_are_refused_naming_file_line_and_field() {
    let dir = temp_dir("malformed");
    let path = dir.join("airline.jsonl");
    let good = serde_json::to_string(&line(Decision::Accept, "0123456789abcdef")).unwrap();
    std::fs::write(
        &path,
        format!("{good}\n{{\"task_id\":\"t\",\"content\":\"0123456789abcdef\",\"decision\":\"reject\",\"reviewer\":\"a\"}}\n"),
    )
    .unwrap();
    let e = Reviews::read(&path).unwrap_err();
    assert!(e.contains("airline.jsonl:2") && e.contains("reason"), "{e}");
    std::fs::write(&path, "{\"task_id\":\"t\",\"decision\":\"maybe\"}\n").unwrap();
    let e = Reviews::read(&path).unwrap_err();
    assert!(e.contains("airline.jsonl:1"), "{e}");
    std::fs::remove_file(&path).unwrap();
    assert!(
        Reviews::read(&path).unwrap().lines().is_empty(),
        "missing = none"
    );
    append(&path, &line(Decision::Accept, "0123456789abcdef")).unwrap();
    append(&path, &line(Decision::Edit, "0123456789abcdef")).unwrap();
    assert_eq!(Reviews::read(&path).unwrap().lines().len(), 2);
    assert!(append(&path, &line(Decision::Accept, "nothex")).is_err());
    let mut undo = line(Decision::Undo, "0123456789abcdef");
    undo.reason = Some("why".into());
    assert!(append(&path, &undo).is_err(), "an undo carries no reason");
    assert_eq!(
        Reviews::read(&path).unwrap().lines().len(),
        2,
        "nothing written"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_append_after_a_last_line_without_newline_keeps_the_file_readable() {
    let dir = temp_dir("dangling");
    let path = dir.join("airline.jsonl");
    // A hand edit (or a merge) left the last line without its newline.
    let first = serde_json::to_string(&line(Decision::Accept, "0123456789abcdef")).unwrap();
    std::fs::write(&path, &first).unwrap();
    append(&path, &line(Decision::Reject, "0123456789abcdef")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.ends_with('\n'));
    let r = Reviews::read(&path).expect("the file still reads");
    assert_eq!(
        r.lines().iter().map(|l| l.decision).collect::<Vec<_>>(),
        [Decision::Accept, Decision::Reject]
    );

    // A file that does not read is refused with its line named, and left as it was.
    let broken = format!("{first}\n{{\"task_id\": \"t1\", \"content\": \"01");
    std::fs::write(&path, &broken).unwrap();
    let e = append(&path, &line(Decision::Accept, "0123456789abcdef")).unwrap_err();
    assert!(
        e.contains("airline.jsonl:2") && e.contains("nothing was saved"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bulk_decision_is_one_line_per_task_in_one_write() {
    let dir = temp_dir("bulk");
    let path = dir.join("airline.jsonl");
    append(&path, &line(Decision::Reject, "0123456789abcdef")).unwrap();
    let bulk: Vec<ReviewLine> = (0..5)
        .map(|i| {
            let mut l = line(Decision::Accept, "0123456789abcdef");
            l.task_id = format!("t{i}");
            l
        })
        .collect();
    append_all(&path, &bulk).unwrap();
    assert_eq!(Reviews::read(&path).unwrap().lines().len(), 6);
    // One bad line refuses the whole batch.
    let mut bad = bulk.clone();
    bad[3].content = "x".into();
    assert!(append_all(&path, &bad).is_err());
    assert_eq!(Reviews::read(&path).unwrap().lines().len(), 6);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn assignment_is_round_robin_with_a_stable_second_share() {
    let dir = temp_dir("assign");
    let path = dir.join(ASSIGNMENT_FILE);
    assert_eq!(Assignment::read(&path).unwrap(), None);
    std::fs::write(
        &path,
        "reviewers = [\"ana\", \"ben\", \"cy\"]\nsecond_share = 0.5\n",
    )
    .unwrap();
    let a = Assignment::read(&path).unwrap().unwrap();
    let ids: Vec<String> = (0..200).map(|i| format!("task{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let got = a.assign("airline", &refs);
    assert_eq!(got[0][0], "ana");
    assert_eq!(got[1][0], "ben");
    assert_eq!(got[2][0], "cy");
    assert_eq!(got[3][0], "ana");
    let doubled: Vec<usize> = (0..200).filter(|&i| got[i].len() == 2).collect();
    assert!(
        (70..=130).contains(&doubled.len()),
        "about half get a second reviewer: {}",
        doubled.len()
    );
    assert!(doubled.iter().all(|&i| got[i][0] != got[i][1]));
    // Which tasks are doubled depends on the task, not on where it is listed.
    let mut reversed = refs.clone();
    reversed.reverse();
    let again = a.assign("airline", &reversed);
    for (j, id) in reversed.iter().enumerate() {
        let i = refs.iter().position(|x| x == id).unwrap();
        assert_eq!(again[j].len(), got[i].len(), "{id}");
    }

    std::fs::write(
        &path,
        "reviewers = [\"ana\", \"ben\"]\nmode = \"by_domain\"\nsecond_share = 1.0\n[domains]\nairline = [\"ben\"]\n",
    )
    .unwrap();
    let a = Assignment::read(&path).unwrap().unwrap();
    let got = a.assign("airline", &refs[..3]);
    assert!(got.iter().all(|g| g == &["ben", "ana"]), "{got:?}");
    let got = a.assign("retail", &refs[..2]);
    assert_eq!(got[0][0], "ana", "a domain not listed goes to everyone");

    for (text, field) in [
        ("reviewers = []\n", "reviewers"),
        ("reviewers = [\"a\", \"a\"]\n", "reviewers"),
        ("reviewers = [\"a\"]\nmode = \"lottery\"\n", "mode"),
        ("reviewers = [\"a\"]\nsecond_share = 1.5\n", "second_share"),
        (
            "reviewers = [\"a\"]\nmode = \"by_domain\"\n[domains]\nairline = [\"zed\"]\n",
            "domains.airline",
        ),
    ] {
        std::fs::write(&path, text).unwrap();
        let e = Assignment::read(&path).unwrap_err();
        assert!(
            e.contains("assignment.toml") && e.contains(field),
            "{text}: {e}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn edge_decisions_the_last_one_counts_and_a_drop_needs_a_reason() {
    let dir = temp_dir("edges");
    let path = edges::edge_reviews_path(&dir, "reviews", "airline");
    let edge = |from: &str, to: &str, decision: EdgeDecision| EdgeLine {
        from: from.into(),
        to: to.into(),
        decision,
        reason: (decision == EdgeDecision::Drop).then(|| "never follows".into()),
        reviewer: "ana".into(),
    };
    append_edge(&path, &edge("a", "b", EdgeDecision::Drop)).unwrap();
    append_edge(&path, &edge("a", "c", EdgeDecision::Drop)).unwrap();
    append_edge(&path, &edge("a", "c", EdgeDecision::Keep)).unwrap();
    let mut no_reason = edge("b", "c", EdgeDecision::Drop);
    no_reason.reason = None;
    assert!(append_edge(&path, &no_reason).is_err());
    let r = EdgeReviews::read(&path).unwrap();
    assert_eq!(r.lines.len(), 3);
    assert_eq!(
        r.dropped().into_iter().collect::<Vec<_>>(),
        [("a".to_string(), "b".to_string())]
    );
    assert_eq!(r.decision("a", "c").unwrap().decision, EdgeDecision::Keep);
    assert_eq!(r.history("a", "c").count(), 2);
    std::fs::write(&path, "{\"from\": \"a\"}\n").unwrap();
    let e = EdgeReviews::read(&path).unwrap_err();
    assert!(e.contains("airline.jsonl:1"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn edits_are_classified_like_the_papers_review() {
    let before = task();
    let mut after = before.clone();
    after.actions[0].kwargs["order_id"] = "#W200".into();
    after.actions[1].kwargs["order_id"] = "#W200".into();
    after.instruction = Some("You want to cancel order #W200.".into());
    let k = edit_kinds(&before, &after);
    assert!(
        k.id_swap && !k.gold_edit && !k.rewrite && !k.emotion_edit,
        "{k:?}"
    );

    let mut after = before.clone();
    after.actions[1].kwargs["reason"] = "ordered by mistake".into();
    let k = edit_kinds(&before, &after);
    assert!(k.gold_edit && !k.id_swap && !k.rewrite, "{k:?}");

    let mut after = before.clone();
    after.instruction = Some("Your plans changed; the order #W100 must go.".into());
    after.emotion_instruction = Some("You are tense.".into());
    let k = edit_kinds(&before, &after);
    assert!(
        k.rewrite && k.emotion_edit && !k.gold_edit && !k.id_swap,
        "{k:?}"
    );

    let mut after = before.clone();
    after.outputs = vec!["$10".into()];
    assert!(edit_kinds(&before, &after).gold_edit);
}
