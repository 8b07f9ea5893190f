//! The scripted refiner's draft: the instruction composed from a grounded task's request
//! sentences, its user facts, who the customer is (`situations.toml`) and the wordings of
//! the fixed phrases (`wordings.toml`), with seeded variation per task. An endpoint refiner
//! rewrites this draft; the scripted refiner keeps it.

use super::RefinedConfig;
use crate::artifact::TaskRecord;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

/// One domain's table of `situations.toml`: who a customer is, in three parts.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct People {
    #[serde(default)]
    pub(super) traits: Vec<String>,
    #[serde(default)]
    pub(super) who: Vec<String>,
    #[serde(default)]
    pub(super) ties: Vec<String>,
}

/// `stage/situations.toml`: the `[default]` traits and people, parsed once; a malformed
/// file is a build defect the tests catch.
pub(super) static SITUATIONS: std::sync::LazyLock<std::collections::BTreeMap<String, People>> =
    std::sync::LazyLock::new(|| {
        toml::from_str(include_str!("../situations.toml")).unwrap_or_default()
    });

include!(concat!(env!("OUT_DIR"), "/domain_situations.rs"));

/// `wordings.toml`: groups of phrases that mean the same.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Wordings {
    pub(super) group: Vec<Wording>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Wording {
    pub(super) say: Vec<String>,
}

pub(super) static WORDINGS: std::sync::LazyLock<Wordings> = std::sync::LazyLock::new(|| {
    toml::from_str(include_str!("../wordings.toml")).unwrap_or_default()
});

/// `text` with each phrase of a `wordings.toml` group said in one wording the instruction
/// draws (the same wording for every occurrence); a phrase only matches at a word start.
pub fn vary_wording(text: &str, rng: &mut ChaCha8Rng) -> String {
    let chosen: Vec<(&str, &str)> = WORDINGS
        .group
        .iter()
        .filter_map(|g| {
            let from = g.say.first()?;
            Some((
                from.as_str(),
                g.say[rng.random_range(0..g.say.len())].as_str(),
            ))
        })
        .collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    let bytes = text.as_bytes();
    'scan: while i < text.len() {
        let at_word_start = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if at_word_start {
            for (from, to) in &chosen {
                if text[i..].starts_with(from) {
                    out.push_str(to);
                    i += from.len();
                    continue 'scan;
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// A domain's own table: a built-in domain's `src/domain/<d>/situations.toml`, or the
/// ties a domain outside the crate declares (a remote domain's `domain.toml`) with the
/// default traits and people; parsed and leaked once per domain. `None`: the domain has
/// none (a new domain until its table is written).
pub(super) fn people_of(domain: &str) -> Option<&'static People> {
    static TABLES: std::sync::Mutex<std::collections::BTreeMap<String, Option<&'static People>>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let mut tables = TABLES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = tables.get(domain) {
        return *p;
    }
    let own = match DOMAIN_SITUATIONS.iter().find(|(d, _)| *d == domain) {
        Some((_, text)) => toml::from_str::<People>(text).ok(),
        None => crate::domain::find(domain).ok().map(|d| People {
            ties: d.ties(),
            ..People::default()
        }),
    };
    let own = own
        .filter(|p| !p.ties.is_empty())
        .map(|p| &*Box::leak(Box::new(p)));
    tables.insert(domain.to_string(), own);
    own
}

/// Who the customer of a `domain` task is, as one second-person sentence ("You are a busy
/// nurse who books flights for the whole household."); `None` for a domain that lists no
/// `ties` (a new domain until its table is written).
pub fn situation(domain: &str, rng: &mut ChaCha8Rng) -> Option<String> {
    let own = people_of(domain)?;
    let fallback = SITUATIONS.get("default");
    let or_default = |own: &'static Vec<String>,
                      pick: fn(&'static People) -> &'static Vec<String>| {
        if own.is_empty() {
            fallback.map_or(own, pick)
        } else {
            own
        }
    };
    let traits = or_default(&own.traits, |p| &p.traits);
    let who = or_default(&own.who, |p| &p.who);
    if own.ties.is_empty() || traits.is_empty() || who.is_empty() {
        return None;
    }
    let t = &traits[rng.random_range(0..traits.len())];
    let w = &who[rng.random_range(0..who.len())];
    let tie = &own.ties[rng.random_range(0..own.ties.len())];
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    let lead = if rng.random_bool(0.5) {
        "You are"
    } else {
        "You're"
    };
    Some(format!("{lead} {article} {t} {w} {tie}."))
}

/// How the next intent follows the one before; short, since a task has up to ten requests
/// (the longer "Once that is settled, " and "There is one more thing: " cost a ten-request
/// task some fifteen words).
pub(super) const CONNECTIVES: &[&str] = &[
    "After that, ",
    "Separately, ",
    "Also, ",
    "Besides, ",
    "Next, ",
];

/// How a later request of the same intent follows the one before (one fixed "Then" made
/// every instruction read as the same chain).
pub(super) const STEP_LINKS: &[&str] =
    &["Then ", "After that, ", "Next, ", "Also, ", "Once done, "];

/// How the instruction hands the customer its identity (one fixed sentence was the most
/// repeated 6-gram of every domain).
/// Their last words differ, so no 6-gram across a lead and the fact after it is shared by
/// more than one lead.
pub(super) const IDENTITY_LEADS: &[&str] = &[
    "If asked who you are: ",
    "Should the agent need to identify you: ",
    "To confirm your identity: ",
    "For identification: ",
    "When the agent wants to verify you, say that ",
    "In case the agent looks up your account: ",
    "You can prove who you are with this: ",
    "If verification comes up, ",
    "For the account check, tell them ",
    "The agent may ask for your details; ",
];

pub(super) const PREFERENCES: &[&str] = &[
    "You would like to sort everything out in this one conversation.",
    "You prefer short, clear answers over long explanations.",
    "If the agent suggests extras you did not ask for, you politely decline them.",
    "You want the agent to confirm each change before making it.",
    "You are happy to wait while the agent looks things up.",
];

/// Each holds a cue the scripted user reads (`harness::user::VAGUE_CUES`).
pub(super) const AMBIGUITY: &[&str] = &[
    "Open in general terms and give details only when the agent asks.",
    "You do not give every detail at once; answer the agent's questions as they come.",
    "Begin vaguely and let the agent ask for what it needs.",
];

pub(super) fn pick<'a>(rng: &mut ChaCha8Rng, bank: &[&'a str]) -> &'a str {
    bank[rng.random_range(0..bank.len())]
}

/// A pick from `bank` that differs from the link this instruction used last ("Also, ...
/// Also, ... Also, ..." read as a list, not a person).
pub(super) fn pick_link<'a>(rng: &mut ChaCha8Rng, bank: &[&'a str], last: &mut &'a str) -> &'a str {
    let mut link = pick(rng, bank);
    if link == *last {
        let i = bank.iter().position(|b| *b == link).unwrap_or(0);
        link = bank[(i + 1) % bank.len()];
    }
    *last = link;
    link
}

pub(super) fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The scripted instruction for a grounded task; `Err` when the task states no request.
pub fn scripted_instruction(
    task: &TaskRecord,
    is_read: &dyn Fn(&str) -> bool,
    rng: &mut ChaCha8Rng,
    cfg: &RefinedConfig,
) -> Result<String, String> {
    // Drawn from a stream of its own, so every other choice is the one it was without it.
    let mut own = rng.clone();
    own.set_stream(1);
    let who = own
        .random_bool(cfg.situation_rate.clamp(0.0, 1.0))
        .then(|| situation(&task.domain, &mut own))
        .flatten();
    let start = rng.clone();
    let without = compose_instruction(task, is_read, rng, cfg, None)?;
    // A long task tells who the customer is only while it stays within the word budget.
    match who {
        Some(who)
            if without.split_whitespace().count() + who.split_whitespace().count()
                <= WORD_BUDGET =>
        {
            *rng = start;
            compose_instruction(task, is_read, rng, cfg, Some(who))
        }
        _ => Ok(without),
    }
}

/// Words an instruction may reach by telling who the customer is (issue 22 keeps the 90th
/// percentile of every domain at or under 250).
pub(super) const WORD_BUDGET: usize = 235;

pub(super) fn compose_instruction(
    task: &TaskRecord,
    is_read: &dyn Fn(&str) -> bool,
    rng: &mut ChaCha8Rng,
    cfg: &RefinedConfig,
    who: Option<String>,
) -> Result<String, String> {
    let TaskRecord {
        actions,
        requests,
        user_facts: facts,
        ..
    } = task;
    let mut parts: Vec<String> = Vec::new();
    if let Some(name) = facts.iter().find(|f| f.kind == "name") {
        parts.push(name.text.clone());
    }
    parts.extend(who);
    let tool_of = |j: usize| actions.get(j).map_or("", |a| a.name.as_str());
    let mut said: Vec<&str> = Vec::new();
    let mut last_link = "";
    let mut stated_intents = 0;
    for intent in 0..task.intents.len() {
        let mut sentences: Vec<String> = Vec::new();
        for (j, (i, request)) in task.action_intents.iter().zip(requests).enumerate() {
            let Some(request) = request.as_deref() else {
                continue;
            };
            if *i as usize != intent {
                continue;
            }
            if said.contains(&request) {
                // Asking for the same information twice reads oddly; a repeated change is
                // a second request of its own and must be said again.
                if is_read(tool_of(j)) {
                    continue;
                }
                sentences.push(format!(
                    "You also want the same again: {}",
                    lower_first(request)
                ));
            } else {
                sentences.push(request.to_string());
            }
            said.push(request);
        }
        if sentences.is_empty() {
            continue;
        }
        let body = sentences
            .iter()
            .enumerate()
            .map(|(k, s)| {
                if k == 0 {
                    s.clone()
                } else {
                    format!(
                        "{}{}",
                        pick_link(rng, STEP_LINKS, &mut last_link),
                        lower_first(s)
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        if stated_intents == 0 {
            parts.push(body);
        } else {
            parts.push(format!(
                "{}{}",
                pick_link(rng, CONNECTIVES, &mut last_link),
                lower_first(&body)
            ));
        }
        stated_intents += 1;
    }
    if stated_intents == 0 {
        return Err("no intent of this task states a customer request".into());
    }
    // Facts that resolve internal ids the actions use (payment methods, ...), each only if
    // an id it resolves is not resolved already by a fact the requests state (retail's
    // orders resolve every variant of their products, so the order a return names already
    // resolves the item; another order holding the same product need not be described).
    // The actions as their column stores them: an id is used when it is a quoted value there.
    let action_text = crate::artifact::JsonText::to_json(actions);
    let body = parts.join(" ");
    let used = |id: &String| action_text.contains(&format!("\"{id}\""));
    let candidates = || {
        facts
            .iter()
            .filter(|f| f.kind != "identity" && f.kind != "name")
    };
    let mut resolved: Vec<&String> = candidates()
        .filter(|f| {
            body.contains(&f.text)
                || !f.values.is_empty() && f.values.iter().all(|v| body.contains(v.as_str()))
        })
        .flat_map(|f| f.ids.iter().filter(|id| used(id)))
        .collect();
    for fact in candidates() {
        let open: Vec<&String> = fact
            .ids
            .iter()
            .filter(|id| used(id) && !resolved.contains(id))
            .collect();
        if !open.is_empty() {
            parts.push(fact.text.clone());
            resolved.extend(open);
        }
    }
    if rng.random_bool(cfg.preference_rate.clamp(0.0, 1.0)) {
        let preference = pick(rng, PREFERENCES);
        // A preference about changes only makes sense when the task changes something.
        let writes = (0..actions.len()).any(|j| !is_read(tool_of(j)));
        if writes || !preference.contains("change") {
            parts.push(preference.to_string());
        }
    }
    if rng.random_bool(cfg.ambiguity_rate.clamp(0.0, 1.0)) {
        parts.push(pick(rng, AMBIGUITY).to_string());
    }
    if let Some(id) = facts.iter().find(|f| f.kind == "identity") {
        parts.push(format!(
            "{}{}",
            pick(rng, IDENTITY_LEADS),
            lower_first(&id.text)
        ));
    }
    // Later mentions of the same booking, traveler or card said briefly (each request's
    // sentence names them in full), then the fixed phrases around values in this task's
    // own wording (a stream of its own, as the situation's).
    let brief =
        crate::quality::language::tidy(&crate::quality::brief::brief_repeats(&parts.join(" ")));
    let mut own = rng.clone();
    own.set_stream(2);
    Ok(vary_wording(&brief, &mut own))
}
