//! A plan as Markdown (the table `tracer plan` prints) and as JSON (`--json`, the same data).

use super::{Basis, Plan};

/// A count as the tables show it: rounded, with thousands separators; `-` when unknown.
pub fn count(x: Option<f64>) -> String {
    let Some(x) = x else {
        return "-".to_string();
    };
    let n = x.round().max(0.0) as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn pair(x: [f64; 2]) -> String {
    format!("{} / {}", count(Some(x[0])), count(Some(x[1])))
}

/// The plan as JSON (pretty-printed).
pub fn json(plan: &Plan) -> String {
    serde_json::to_string_pretty(plan).unwrap_or_default()
}

/// The plan as Markdown: what it is based on, the table per stage and role with the total,
/// the counts per domain, the pilot's measurements (for a pilot), and the notes.
pub fn markdown(plan: &Plan) -> String {
    let mut out = String::new();
    out.push_str(&match &plan.basis {
        Basis::Measured { output } => format!(
            "Planned from the configuration and the run in {output} (its yields and request sizes).\n\n"
        ),
        Basis::Defaults { output } => format!(
            "Planned from the configuration and the documented defaults: there is no run in {output} to measure (an offline `tracer run trajectories` costs nothing and gives measured figures).\n\n"
        ),
        Basis::Pilot {
            dir,
            tasks_per_split,
        } => format!(
            "**Extrapolated from a pilot** of {tasks_per_split} task(s) per domain and split on the real endpoints ({dir}).\n\n"
        ),
    });
    out.push_str("| stage | role | model | requests | prompt tokens | completion tokens | cost | note |\n|---|---|---|---:|---:|---:|---:|---|\n");
    for l in &plan.lines {
        let cost = match (l.scripted, l.dollars) {
            (true, _) => "$0 (scripted)".to_string(),
            (false, Some(d)) => crate::stats::dollars(d),
            (false, None) => "-".to_string(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {cost} | {} |\n",
            l.stage,
            l.role,
            l.model,
            count(l.requests),
            count(l.prompt_tokens),
            count(l.completion_tokens),
            l.note
        ));
    }
    let t = &plan.total;
    out.push_str(&format!(
        "| **total** | | | {} | {} | {} | **{}{}** | |\n",
        count(Some(t.requests)),
        count(Some(t.prompt_tokens)),
        count(Some(t.completion_tokens)),
        crate::stats::dollars(t.dollars),
        if t.unpriced { " + unpriced" } else { "" }
    ));
    out.push_str("\nCounts (train / eval):\n\n| domain | traces taken | grounded | verified tasks | rollout episodes | screening episodes | eval episodes | episodes analysed |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for c in &plan.counts {
        let f = &c.funnel;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.domain,
            pair(f.attempted),
            pair(f.grounded),
            pair(f.verified),
            count(Some(f.rollout_episodes)),
            count(Some(f.screened_episodes)),
            count(Some(f.eval_episodes)),
            count(Some(f.analysed)),
        ));
    }
    if let Some(p) = &plan.pilot {
        out.push_str(&format!(
            "\nWhat the pilot measured ({} tokens in all):\n\n| domain | traces tried (train / eval) | grounded | verified | kept by screening | kept trajectories | errored at an endpoint | tokens per verified task | tokens per kept trajectory |\n|---|---:|---:|---:|---:|---:|---|---:|---:|\n",
            count(Some(p.tokens))
        ));
        for d in &p.domains {
            let errored: Vec<String> = d
                .errored
                .iter()
                .filter(|e| e.items > 0.0)
                .map(|e| {
                    format!(
                        "{} {}/{}",
                        e.stage,
                        count(Some(e.errored)),
                        count(Some(e.items))
                    )
                })
                .collect();
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                d.domain,
                pair(d.tried),
                pair(d.grounded),
                pair(d.verified),
                count(Some(d.screened_kept)),
                count(Some(d.kept_trajectories)),
                errored.join(", "),
                count(d.tokens_per_verified_task),
                count(d.tokens_per_kept_trajectory),
            ));
        }
    }
    if !plan.notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in &plan.notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    out
}
