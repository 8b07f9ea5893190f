//! Lookups an answer needs: a read the customer asked for can owe them values its own
//! output does not show (a day's show list carries movie ids; the customer who asked what
//! is on hears the films' titles). The reference conversation must show every value the
//! agent tells, so such a read is followed by the lookups that show the rest: reads that
//! take one id argument, called with the ids of that name the read's output holds, until
//! every owed value is shown.
//!
//! Architecture invariant: knows domains through `Environment` (its tool specs and forks);
//! nothing of stages or roles.

use super::GroundedStep;
use crate::domain::{Environment, ToolKind};
use serde_json::{Value, json};

/// `steps` with a lookup after each requested read whose owed values (`required_outputs`)
/// no step's output shows, for as long as lookups show more of them. A value no lookup
/// shows stays owed; verification's `answered` gate rejects the task then.
pub(super) fn add_answer_lookups(
    env: &dyn Environment,
    steps: Vec<GroundedStep>,
) -> Vec<GroundedStep> {
    let shown_anywhere =
        |steps: &[GroundedStep], w: &str| steps.iter().any(|s| s.output.contains(w));
    let owes = |s: &GroundedStep| {
        s.required_outputs
            .iter()
            .any(|w| !shown_anywhere(&steps, w))
    };
    if !steps.iter().any(owes) {
        return steps;
    }
    let lookups = single_id_reads(env);
    let mut state = env.fork();
    let mut out: Vec<GroundedStep> = Vec::with_capacity(steps.len() + 2);
    for (k, step) in steps.iter().enumerate() {
        state.invoke(&step.tool, &step.args);
        out.push(step.clone());
        let shown = |w: &str, out: &[GroundedStep]| {
            shown_anywhere(out, w) || shown_anywhere(&steps[k + 1..], w)
        };
        let mut owed: Vec<&String> = step
            .required_outputs
            .iter()
            .filter(|w| !shown(w, &out))
            .collect();
        if owed.is_empty() {
            continue;
        }
        let Ok(listed) = serde_json::from_str::<Value>(&step.output) else {
            continue;
        };
        for (tool, arg) in &lookups {
            for id in strings_under(&listed, arg) {
                if owed.is_empty() {
                    break;
                }
                let mut one = serde_json::Map::new();
                one.insert(arg.clone(), json!(id));
                let args = Value::Object(one);
                if out.iter().any(|s| s.tool == *tool && s.args == args) {
                    continue;
                }
                let result = state.fork().invoke(tool, &args);
                if result.is_error || !owed.iter().any(|w| result.text.contains(w.as_str())) {
                    continue;
                }
                owed.retain(|w| !result.text.contains(w.as_str()));
                out.push(GroundedStep {
                    intent: step.intent,
                    tool: tool.to_string(),
                    args,
                    output: result.text,
                    request: None,
                    required_outputs: Vec::new(),
                });
            }
        }
    }
    out
}

/// The domain's reads that take exactly one argument, an id (`get_movie_details(movie_id)`),
/// as (tool, argument), in the order the domain lists its tools.
fn single_id_reads(env: &dyn Environment) -> Vec<(&'static str, String)> {
    env.tool_specs()
        .into_iter()
        .filter(|s| s.kind == ToolKind::Read && !s.terminates)
        .filter_map(|s| {
            let props = s.parameters.get("properties")?.as_object()?;
            let (name, _) = props.iter().next().filter(|_| props.len() == 1)?;
            name.ends_with("_id").then(|| (s.name, name.clone()))
        })
        .collect()
}

/// The distinct strings under key `key` anywhere in `v`, in the order a walk of its lists
/// and (sorted) keys meets them.
fn strings_under<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    fn walk<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match x.as_str() {
                        Some(s) if k == key && !s.is_empty() && !out.contains(&s) => out.push(s),
                        _ => walk(x, key, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, key, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, key, &mut out);
    out
}

/// A test's movie listing: the arguments and result of a `list_shows` that shows at least
/// `films` distinct films (the first theater and day that does).
#[cfg(test)]
pub(crate) fn day_with_films(env: &dyn Environment, films: usize) -> (Value, Value) {
    let call = |tool: &str, args: Value| -> Value {
        serde_json::from_str(&env.fork().invoke(tool, &args).text).unwrap_or(Value::Null)
    };
    let theaters = call("list_theaters", json!({}));
    let ids = theaters.as_array().into_iter().flatten();
    ids.filter_map(|t| t["theater_id"].as_str())
        .flat_map(|t| {
            let details = call("get_theater_details", json!({"theater_id": t}));
            let days = details["dates"].as_object().cloned().unwrap_or_default();
            days.into_iter()
                .map(move |(d, _)| json!({"theater_id": t, "date": d}))
        })
        .map(|args| (args.clone(), call("list_shows", args)))
        .find(|(_, shows)| strings_under(shows, "movie_id").len() >= films)
        .expect("a theater and day with the films")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Split;

    /// A day's show list owes the films' titles: each film not looked up yet is, right
    /// after the list, once; a title an earlier step showed needs no lookup.
    #[test]
    fn a_listing_is_followed_by_the_lookups_its_answer_needs() {
        let env = crate::domain::find("movie")
            .unwrap()
            .generate(3, Split::Eval);
        let run = |tool: &str, args: Value| {
            let output = env.fork().invoke(tool, &args).text;
            GroundedStep {
                intent: 0,
                tool: tool.into(),
                args,
                output,
                request: None,
                required_outputs: Vec::new(),
            }
        };
        let (args, _) = day_with_films(env.as_ref(), 2);
        let listing = run("list_shows", args);
        let movies = strings_under(&serde_json::from_str(&listing.output).unwrap(), "movie_id")
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>();
        let details: Vec<GroundedStep> = movies
            .iter()
            .map(|m| run("get_movie_details", json!({"movie_id": m})))
            .collect();
        let title = |s: &GroundedStep| {
            serde_json::from_str::<Value>(&s.output).unwrap()["title"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let asked = GroundedStep {
            request: Some("You want to know which films are on.".into()),
            required_outputs: details.iter().map(title).collect(),
            ..listing
        };
        let tools = |steps: &[GroundedStep]| -> Vec<(String, Value)> {
            steps
                .iter()
                .map(|s| (s.tool.clone(), s.args.clone()))
                .collect()
        };
        let added = add_answer_lookups(env.as_ref(), vec![asked.clone()]);
        assert_eq!(
            tools(&added[1..]),
            tools(&details),
            "one lookup per film, after the listing"
        );
        // The first film was looked up before: only the others are.
        let added = add_answer_lookups(env.as_ref(), vec![details[0].clone(), asked.clone()]);
        assert_eq!(tools(&added[2..]), tools(&details[1..]));
        // Nothing owed: nothing added.
        let plain = GroundedStep {
            required_outputs: Vec::new(),
            ..asked
        };
        assert_eq!(add_answer_lookups(env.as_ref(), vec![plain]).len(), 1);
    }
}
