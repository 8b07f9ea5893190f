//! What the oracle agent looks up before it acts, so it uses no id the conversation has
//! not shown it: the call that identifies the customer ([`identify_call`]) and the lookups
//! before each reference action ([`discovery_plan`]), both planned on a fork of the
//! environment.
//!
//! Architecture invariant: plans from the task and the environment's read tools; says
//! nothing to the customer.

use crate::artifact::TaskRecord;
use serde_json::Value;

/// The lookup that identifies the customer before the first write, when the reference
/// actions make none: the first read tool whose required arguments the customer's identity
/// fills (an email, a phone number, a name with a zip code or birth date, or the user id)
/// and that succeeds on `env` for this customer. `None` when a reference read already
/// carries an identity value before the first write, or when no tool fits.
pub fn identify_call(
    env: &dyn crate::domain::Environment,
    task: &TaskRecord,
) -> Option<(String, Value)> {
    use crate::domain::ToolKind;
    let specs = env.tool_specs();
    let kind = |name: &str| specs.iter().find(|s| s.name == name).map(|s| s.kind);
    let identity: Vec<String> = task
        .user_facts
        .iter()
        .filter(|f| f.kind == "identity")
        .flat_map(|f| f.values.iter().cloned())
        .collect();
    let quoted =
        |args: &Value, v: &str| !v.is_empty() && args.to_string().contains(&format!("\"{v}\""));
    // What the customer says they are: their identity values (the user id among them where
    // they quote it). A user id they never say (a guest's internal reference) is one the
    // agent learns from a lookup, so a reference call carrying it needs one before it.
    let carries = |args: &Value| identity.iter().any(|v| quoted(args, v));
    let internal_id = !identity.contains(&task.user_id);
    let needs_identity = |a: &crate::task::Action| {
        kind(&a.name) == Some(ToolKind::Write) || internal_id && quoted(&a.kwargs, &task.user_id)
    };
    for a in &task.actions {
        if kind(&a.name) == Some(ToolKind::Read) && carries(&a.kwargs) {
            return None;
        }
        if needs_identity(a) {
            break;
        }
    }
    if !task.actions.iter().any(needs_identity) {
        return None;
    }
    let by_id = identity.iter().any(|v| v == &task.user_id);
    let fill = |param: &str| -> Option<String> {
        let p = param.to_lowercase();
        let find = |pred: &dyn Fn(&str) -> bool| identity.iter().find(|v| pred(v)).cloned();
        if p.contains("email") {
            find(&|v| v.contains('@'))
        } else if p.contains("phone") {
            find(&|v| v.chars().filter(char::is_ascii_digit).count() >= 7 && !v.contains('@'))
        } else if p.contains("first") {
            identity.first().cloned().filter(|_| identity.len() == 3)
        } else if p.contains("last") {
            identity.get(1).cloned().filter(|_| identity.len() == 3)
        } else if p.contains("zip") || p.contains("postal") || p.contains("birth") || p == "dob" {
            identity.get(2).cloned().filter(|_| identity.len() == 3)
        } else if p.ends_with("id") && by_id {
            Some(task.user_id.clone())
        } else {
            None
        }
    };
    for spec in specs.iter().filter(|s| s.kind == ToolKind::Read) {
        let required: Vec<&str> = required_args(spec);
        if required.is_empty() {
            continue;
        }
        let mut args = serde_json::Map::new();
        for p in &required {
            match fill(p) {
                Some(v) => {
                    args.insert(p.to_string(), Value::String(v));
                }
                None => break,
            }
        }
        if args.len() != required.len() {
            continue;
        }
        let args = Value::Object(args);
        let out = env.fork().invoke(spec.name, &args);
        if !out.is_error && (out.text.contains(&task.user_id) || carries(&args)) {
            return Some((spec.name.to_string(), args));
        }
    }
    None
}

/// The lookups to make before each reference action so that every id it uses was shown
/// to the agent first: `plan[i]` are the reads before action `i`. A reference action
/// names records by ids (a payment method's `credit_card_7815826`, a guest's `31CYexc`, a
/// flight's `HAT163`) that the customer may never say; an agent learns them from a lookup
/// (the customer's profile, an order, a flight search). Simulated on a fork of `env` in
/// the reference's order (after `identify`, when there is one): an id that neither the
/// customer's words (instruction and facts) nor an earlier result shows is looked for with
/// the read tools whose required arguments what is known fills, one or two lookups deep;
/// the first (reads of one argument first, then in tool order) that shows it is planned. An id no lookup shows stays unplanned
/// (the failure analysis then flags the call as `unseen_id`).
pub fn discovery_plan(
    env: &dyn crate::domain::Environment,
    task: &TaskRecord,
    identify: Option<&(String, Value)>,
) -> Vec<Vec<(String, Value)>> {
    use crate::domain::ToolKind;
    let specs = env.tool_specs();
    // Reads by one id before searches over several arguments (in tool order otherwise): a
    // search tries every pair of candidates and would spend the lookup budget before a
    // record read by the customer's own id is tried.
    let mut reads: Vec<_> = specs.iter().filter(|s| s.kind == ToolKind::Read).collect();
    reads.sort_by_key(|s| required_args(s).len() > 1);
    let mut state = env.fork();
    let mut known = Known::default();
    known.add_text(task.instruction.as_deref().unwrap_or_default());
    for f in &task.user_facts {
        known.add_text(&f.text);
        for v in &f.values {
            known.add_value("", v);
        }
        if f.kind == "identity" {
            known.identity.extend(f.values.iter().cloned());
        }
    }
    // What a confirmation read back now would have words for.
    let mut heard = super::readback::Heard::default();
    heard.hear(task.instruction.as_deref().unwrap_or_default(), None);
    if let Some((name, args)) = identify {
        let out = state.invoke(name, args);
        known.add_output(&out.text);
        heard.hear("", Some(&out.text));
    }
    let mut plan = vec![Vec::new(); task.actions.len()];
    for (i, action) in task.actions.iter().enumerate() {
        let mut leaves = Vec::new();
        leaf_values("", &action.kwargs, &mut leaves);
        // What the customer states for this request (dates, places, cabins) fills a
        // search's arguments; the ids are what is looked for.
        let stated: Vec<&(String, String)> = leaves
            .iter()
            .filter(|(k, v)| !is_id(k, v) || known.shows(v))
            .collect();
        for (key, v) in stated {
            known.add_value(key, v);
        }
        for (_, id) in leaves.iter().filter(|(k, v)| is_id(k, v)) {
            if known.shows(id) {
                continue;
            }
            if let Some(found) = find_lookup(state.as_mut(), &reads, &known, id) {
                for (name, args, out) in found {
                    known.add_output(&out);
                    heard.hear("", Some(&out));
                    plan[i].push((name, args));
                }
            }
        }
        if specs
            .iter()
            .any(|s| s.name == action.name && s.kind == ToolKind::Write)
        {
            for (name, args, out) in name_lookups(state.as_mut(), &reads, &action.kwargs, &heard) {
                known.add_output(&out);
                heard.hear("", Some(&out));
                plan[i].push((name, args));
            }
        }
        let out = state.invoke(&action.name, &action.kwargs);
        known.add_output(&out.text);
        heard.hear("", Some(&out.text));
    }
    plan
}

/// Reads that give a write's ids their words before it is confirmed: an id argument the
/// customer never says (a package, an agent they name by name) that no result so far
/// names is looked up by the read whose required arguments the write's own arguments fill
/// (`get_package_details` by the package id), when that read's result names it; the
/// confirmation then reads it back by name, not by code.
fn name_lookups(
    state: &mut dyn crate::domain::Environment,
    reads: &[&&'static crate::domain::ToolSpec],
    args: &Value,
    heard: &super::readback::Heard,
) -> Vec<Read> {
    let Some(m) = args.as_object() else {
        return Vec::new();
    };
    let mut heard = heard.clone();
    let mut out = Vec::new();
    for (key, v) in m {
        let Some(id) = v.as_str().filter(|id| is_id(key, id)) else {
            continue;
        };
        if heard.said(id) || heard.words_for(id).is_some() {
            continue;
        }
        for spec in reads {
            let required: Vec<&str> = required_args(spec);
            if !required.contains(&key.as_str())
                || !required
                    .iter()
                    .all(|p| m.get(*p).is_some_and(Value::is_string))
            {
                continue;
            }
            let call: serde_json::Map<String, Value> = required
                .iter()
                .map(|p| (p.to_string(), m[*p].clone()))
                .collect();
            let call = Value::Object(call);
            let result = state.invoke(spec.name, &call);
            if result.is_error {
                continue;
            }
            let mut more = heard.clone();
            more.hear("", Some(&result.text));
            if more.words_for(id).is_some() {
                heard = more;
                out.push((spec.name.to_string(), call, result.text));
                break;
            }
        }
    }
    out
}

/// The names of a tool's required arguments, in schema order.
fn required_args(spec: &crate::domain::ToolSpec) -> Vec<&str> {
    spec.parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether an argument value is an id the agent must have seen: one that reads as an id
/// (`id_like`), or a code of words under an id key (a plan's `tv_plus`, a provider's
/// `dr_lee_cardiology`), which a customer names by words ("the TV Plus package"), never so.
fn is_id(key: &str, value: &str) -> bool {
    crate::domain::kit::text::id_like(value)
        || (key.ends_with("_id") || key.ends_with("_ids"))
            && value.contains('_')
            && !value.contains(char::is_whitespace)
}

/// What the agent has seen: the text (lower-case, for "was it shown") and the values by
/// the key they came under (to fill a lookup's arguments).
#[derive(Clone, Default)]
struct Known {
    text: String,
    /// What the customer identifies with: an email, a phone number, or a first name, last
    /// name and zip code (or birth date).
    identity: Vec<String>,
    values: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl Known {
    fn add_text(&mut self, text: &str) {
        self.text.push(' ');
        self.text.push_str(&text.to_lowercase());
    }

    fn add_value(&mut self, key: &str, value: &str) {
        if !value.is_empty() && value.len() <= 80 {
            self.values
                .entry(key.to_string())
                .or_default()
                .insert(value.to_string());
        }
    }

    fn add_output(&mut self, output: &str) {
        self.add_text(output);
        match serde_json::from_str::<Value>(output) {
            Ok(v) => {
                let mut leaves = Vec::new();
                leaf_values("", &v, &mut leaves);
                for (k, x) in leaves {
                    self.add_value(&k, &x);
                }
            }
            // A one-token answer ("sara_doe_496"): an id for any id argument.
            Err(_) if !output.trim().contains(char::is_whitespace) => {
                self.add_value("", output.trim());
            }
            Err(_) => {}
        }
    }

    fn shows(&self, value: &str) -> bool {
        shows_id(&self.text, value)
    }

    /// Values for a parameter: those seen under a key of the same stem ("order_id" <-
    /// "orders", "order_id"), else, for an id parameter, every id seen.
    fn candidates(&self, param: &str) -> Vec<&str> {
        let p = param.to_lowercase();
        let stem = ["_ids", "_refs", "_id", "_ref", "_number", "_code"]
            .iter()
            .find_map(|s| p.strip_suffix(s))
            .unwrap_or(&p);
        let keyed: Vec<&str> = self
            .values
            .iter()
            .filter(|(k, _)| !k.is_empty() && (k.starts_with(stem) || k.as_str() == p))
            .flat_map(|(_, vs)| vs.iter().map(String::as_str))
            .collect();
        if !keyed.is_empty() {
            // The ids the customer identifies with (a moviegoer's booking ids) fill an id
            // parameter too, after those seen under its key.
            let mut out = keyed;
            if stem.len() < p.len() {
                for v in &self.identity {
                    if crate::domain::kit::text::id_like(v) && !out.contains(&v.as_str()) {
                        out.push(v);
                    }
                }
            }
            return out;
        }
        // A name with a zip code or birth date, as the customer identifies.
        let part = if p.contains("first") || p.contains("given") {
            Some(0)
        } else if p.contains("last") || p.contains("family") {
            Some(1)
        } else if p.contains("zip") || p.contains("postal") || p.contains("birth") || p == "dob" {
            Some(2)
        } else {
            None
        };
        if let Some(k) = part.filter(|_| self.identity.len() == 3) {
            return vec![self.identity[k].as_str()];
        }
        // Unkeyed values (what the customer says, one-token answers) by their shape.
        let fits: fn(&str) -> bool = if p.contains("email") {
            |v| v.contains('@')
        } else if p.contains("phone") {
            |v| v.chars().filter(char::is_ascii_digit).count() >= 7 && !v.contains('@')
        } else if stem.len() < p.len() || p == "id" || p.ends_with("id") {
            crate::domain::kit::text::id_like
        } else {
            return Vec::new();
        };
        let mut ids: Vec<&str> = self
            .values
            .values()
            .flatten()
            .map(String::as_str)
            .filter(|v| fits(v))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        // The ids the customer identifies with come first: of everything seen they are the
        // likeliest to be theirs (a moviegoer's booking ids, which a lookup tries before the
        // listings' many theater and film ids use up the candidates tried).
        let (mut own, rest): (Vec<&str>, Vec<&str>) = ids
            .into_iter()
            .partition(|v| self.identity.iter().any(|i| i == v));
        own.extend(rest);
        own
    }
}

/// Every string leaf of `v` (and every object key that reads as an id) with the key it
/// sits under (a list's items under the list's key).
fn leaf_values(key: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((key.to_string(), s.clone())),
        Value::Number(n) => out.push((key.to_string(), n.to_string())),
        Value::Array(items) => items.iter().for_each(|x| leaf_values(key, x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                if crate::domain::kit::text::id_like(k) {
                    out.push((key.to_string(), k.clone()));
                }
                leaf_values(k, x, out);
            }
        }
        _ => {}
    }
}

/// A read made while planning: the tool, its arguments, its output.
type Read = (String, Value, String);

/// Lookups (name, arguments, output) that show `id`: one read, or two where the first
/// shows what fills the second. At most this many calls are tried per id.
const LOOKUP_BUDGET: usize = 400;

fn find_lookup(
    state: &mut dyn crate::domain::Environment,
    reads: &[&&'static crate::domain::ToolSpec],
    known: &Known,
    id: &str,
) -> Option<Vec<Read>> {
    let mut budget = LOOKUP_BUDGET;
    // Every successful read `known` can fill, in tool order, until one shows `id` (then
    // `Err` carries it) or the budget runs out.
    let mut try_reads = |known: &Known| -> Result<Vec<Read>, Read> {
        let mut seen = Vec::new();
        for spec in reads {
            for args in fillings(spec, known) {
                if budget == 0 {
                    return Ok(seen);
                }
                budget -= 1;
                let out = state.invoke(spec.name, &args);
                if out.is_error {
                    continue;
                }
                let read = (spec.name.to_string(), args, out.text);
                if shows_id(&read.2.to_lowercase(), id) {
                    return Err(read);
                }
                seen.push(read);
            }
        }
        Ok(seen)
    };
    let first_level = match try_reads(known) {
        Err(found) => return Some(vec![found]),
        Ok(seen) => seen,
    };
    for first in first_level {
        let mut more = known.clone();
        more.add_output(&first.2);
        if let Err(found) = try_reads(&more) {
            return Some(vec![first, found]);
        }
    }
    None
}

/// Whether lower-case `text` shows `id` (a leading '#' aside, as customers drop it).
fn shows_id(text: &str, id: &str) -> bool {
    text.contains(&id.trim_start_matches('#').to_lowercase())
}

/// The argument sets for a read whose required parameters all have candidates (at most 40
/// values tried per parameter; tools with more than two required parameters use the first
/// candidate of the rest).
fn fillings(spec: &crate::domain::ToolSpec, known: &Known) -> Vec<Value> {
    let required: Vec<&str> = required_args(spec);
    if required.is_empty() {
        return vec![Value::Object(Default::default())];
    }
    let options: Vec<Vec<&str>> = required
        .iter()
        .map(|p| known.candidates(p).into_iter().take(40).collect())
        .collect();
    if options.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    let seconds: Vec<Option<&str>> = match options.get(1) {
        Some(o) => o.iter().map(|x| Some(*x)).collect(),
        None => vec![None],
    };
    let mut out = Vec::new();
    for a in &options[0] {
        for &b in &seconds {
            let mut m = serde_json::Map::new();
            m.insert(required[0].to_string(), Value::String(a.to_string()));
            if let Some(b) = b {
                m.insert(required[1].to_string(), Value::String(b.to_string()));
            }
            for (p, o) in required.iter().zip(&options).skip(2) {
                m.insert(p.to_string(), Value::String(o[0].to_string()));
            }
            out.push(Value::Object(m));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::identify_call;
    use serde_json::json;

    #[test]
    fn a_guest_reference_the_customer_never_says_is_looked_up_first() {
        use crate::domain::{Action, Split, UserFact};
        let env = crate::domain::find("restaurant")
            .expect("restaurant is registered")
            .generate(7, Split::Eval);
        let guest = env.customers().into_iter().next().expect("a patron");
        let profile: serde_json::Value = serde_json::from_str(
            &env.fork()
                .invoke("get_patron_details", &json!({"guest_ref": guest}))
                .text,
        )
        .unwrap();
        let email = profile["contact_email"]
            .as_str()
            .expect("a patron has an email")
            .to_string();
        let task = |actions: Vec<Action>, identity: &str| crate::artifact::TaskRecord {
            user_id: guest.clone(),
            actions,
            user_facts: vec![UserFact {
                kind: "identity".into(),
                text: String::new(),
                values: vec![identity.to_string()],
                ids: vec![guest.clone()],
            }],
            ..Default::default()
        };
        let read = Action {
            name: "get_patron_details".into(),
            kwargs: json!({"guest_ref": guest}),
        };
        // Read-only, and the reference goes straight to the internal reference: the agent
        // finds it by the email the customer gives.
        let (tool, args) = identify_call(env.as_ref(), &task(vec![read.clone()], &email))
            .expect("an identifying lookup");
        assert_eq!(tool, "find_patron_ref_by_email");
        assert_eq!(args, json!({"email": email}));
        // A customer who quotes the reference themself needs no lookup.
        assert_eq!(identify_call(env.as_ref(), &task(vec![read], &guest)), None);
    }
    #[test]
    fn an_id_the_customer_never_says_is_looked_up_before_the_call_that_uses_it() {
        use crate::domain::{Action, Split, UserFact};
        let env = crate::domain::find("restaurant")
            .expect("restaurant is registered")
            .generate(7, Split::Eval);
        let profile = |g: &str| -> serde_json::Value {
            serde_json::from_str(
                &env.fork()
                    .invoke("get_patron_details", &json!({"guest_ref": g}))
                    .text,
            )
            .unwrap()
        };
        let (guest, ticket) = env
            .customers()
            .into_iter()
            .find_map(|g| {
                let t = profile(&g)["ticket_log"]
                    .as_array()?
                    .first()?
                    .as_str()?
                    .to_string();
                Some((g, t))
            })
            .expect("a patron with a ticket");
        assert!(crate::domain::kit::text::id_like(&ticket), "{ticket}");
        let email = profile(&guest)["contact_email"]
            .as_str()
            .unwrap()
            .to_string();
        let task = crate::artifact::TaskRecord {
            user_id: guest.clone(),
            instruction: Some("You want to hear the status of your last order.".into()),
            actions: vec![Action {
                name: "get_ticket_details".into(),
                kwargs: json!({"ticket_ref": ticket}),
            }],
            user_facts: vec![UserFact {
                kind: "identity".into(),
                text: format!("Your email address is {email}."),
                values: vec![email.clone()],
                ids: vec![guest.clone()],
            }],
            ..Default::default()
        };
        // A read-only task needs no identifying lookup of its own; the ticket is found by
        // the email (which gives the patron's reference) and the patron's record.
        assert_eq!(identify_call(env.as_ref(), &task), None);
        let plan = super::discovery_plan(env.as_ref(), &task, None);
        assert_eq!(
            plan,
            vec![vec![
                (
                    "find_patron_ref_by_email".to_string(),
                    json!({"email": email})
                ),
                (
                    "get_patron_details".to_string(),
                    json!({"guest_ref": guest})
                ),
            ]]
        );
        // Said by the customer: nothing to look up.
        let said = crate::artifact::TaskRecord {
            instruction: Some(format!("You want to hear the status of order {ticket}.")),
            ..task.clone()
        };
        let plan = super::discovery_plan(env.as_ref(), &said, None);
        assert_eq!(plan, vec![Vec::new()]);
    }

    #[test]
    fn the_ids_a_customer_identifies_with_fill_an_id_parameter_after_the_keyed_ones() {
        // A moviegoer proves who they are with their booking ids; a booking shown by a
        // result must not hide the others from a lookup.
        let mut k = super::Known {
            identity: vec!["4W4B1CI-B".into(), "T0B4CCO-B".into()],
            ..Default::default()
        };
        k.add_output(r#"{"booking_id": "4W4B1CI-B", "date": "24-06-14"}"#);
        assert_eq!(k.candidates("booking_id"), ["4W4B1CI-B", "T0B4CCO-B"]);
        assert_eq!(k.candidates("date"), ["24-06-14"]);
    }

    #[test]
    fn a_code_of_words_under_an_id_key_is_an_id_a_choice_is_not() {
        assert!(super::is_id("service_id", "tv_plus"));
        assert!(super::is_id("order_id", "#W1234567"));
        assert!(!super::is_id("reason", "no_longer_needed"));
        assert!(!super::is_id("service_id", "3"));
    }

    #[test]
    fn a_write_naming_a_record_by_code_looks_its_words_up_first() {
        use crate::domain::Split;
        let env = crate::domain::find("travel")
            .expect("travel is registered")
            .generate(7, Split::Eval);
        let agents = env.tables().into_iter().find(|(t, _)| *t == "agents");
        let (agent, row) = agents
            .and_then(|(_, rows)| rows.into_iter().next())
            .unwrap();
        let name = format!(
            "{} {}",
            row["name"]["first_name"].as_str().unwrap(),
            row["name"]["last_name"].as_str().unwrap()
        );
        let reads: Vec<_> = env
            .tool_specs()
            .into_iter()
            .filter(|s| s.kind == crate::domain::ToolKind::Read)
            .collect();
        let reads: Vec<_> = reads.iter().collect();
        let meeting = json!({"traveler_id": "T1", "agent_id": agent, "date": "24-07-06"});
        let heard = super::super::readback::Heard::default();
        let found = super::name_lookups(env.fork().as_mut(), &reads, &meeting, &heard);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "get_agent_details");
        assert_eq!(found[0].1, json!({"agent_id": agent}));
        let mut after = heard.clone();
        after.hear("", Some(&found[0].2));
        let said = super::super::readback::summarise_write_as(
            "schedule_agent_meeting",
            &meeting,
            &[],
            &[],
            Some(&after),
        );
        assert!(said.contains(&format!("agent: {name}")), "{said}");
        // Nothing is looked up for a record the customer names by its code.
        let mut told = heard.clone();
        told.hear(&format!("I want to meet agent {agent}."), None);
        assert!(super::name_lookups(env.fork().as_mut(), &reads, &meeting, &told).is_empty());
    }
}
