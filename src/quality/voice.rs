//! Whether a simulated user sounds like its condition: a small lexicon per emotion family
//! of the words people use to say how they feel ("worried", "fed up", "relieved"), matched
//! at word boundaries in the user's turns. A coarse, model-agnostic reading — it asks only
//! whether the family shows anywhere in the conversation, for scripted and model users
//! alike; it cannot tell a well-played condition from a mention.

/// Words and phrases that voice each family, lower case; a trailing `*` marks a stem
/// ("worr*": worried, worries), anything else must end at a word boundary ("down", not
/// "downtown").
fn lexicon(family: &str) -> &'static [&'static str] {
    match family {
        "anger" => &[
            "annoy*",
            "irritat*",
            "frustrat*",
            "fed up",
            "argue*",
            "runaround",
            "resent*",
            "expected better",
            "had about enough",
            "had enough",
            "wearing thin",
            "unacceptable",
            "ridiculous",
            "angry",
            "furious",
        ],
        "fear" => &[
            "worr*",
            "anxious*",
            "nervous*",
            "uneasy",
            "dread*",
            "scared",
            "afraid",
            "desperate*",
            "running out of options",
            "panic*",
            "stress*",
        ],
        "disgust" => &[
            "not happy",
            "don't like",
            "nothing more to do",
            "rid of",
            "bad taste",
            "off-putting",
            "appall*",
            "disgust*",
            "awful",
            "can't stand",
            "revolting",
        ],
        "sadness" => &[
            "sad",
            "down",
            "disappoint*",
            "let down",
            "discourag*",
            "helpless*",
            "hopeless*",
            "worth the effort",
            "can't figure",
            "upset",
            "heartbroken",
        ],
        "enjoyment" => &[
            "relie*",
            "pleased",
            "proud",
            "calm",
            "excit*",
            "looking forward",
            "glad",
            "delighted",
            "no stress",
            "thrilled",
        ],
        _ => &[],
    }
}

/// Whether `text` voices `family` (a lexicon entry at word boundaries).
pub fn shows_family(text: &str, family: &str) -> bool {
    let t = text.to_lowercase();
    let boundary = |c: char| !c.is_alphanumeric();
    lexicon(family).iter().any(|entry| {
        let (w, stem) = match entry.strip_suffix('*') {
            Some(w) => (w, true),
            None => (*entry, false),
        };
        t.match_indices(w).any(|(i, _)| {
            let starts = i == 0 || t[..i].ends_with(boundary);
            let ends = stem || t[i + w.len()..].chars().next().is_none_or(boundary);
            starts && ends
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_read_at_word_starts() {
        assert!(shows_family("I'm a bit worried about this.", "fear"));
        assert!(shows_family("Honestly, I'm FED UP.", "anger"));
        assert!(!shows_family("I need to update my address.", "anger"));
        // "sad" inside "crusade" is not sadness; "down" at a word start is.
        assert!(!shows_family("The crusade tickets, please.", "sadness"));
        assert!(shows_family("I'm feeling down.", "sadness"));
        assert!(!shows_family("Two tickets at Downtown Cinema.", "sadness"));
        assert!(shows_family("I was dreading this.", "fear"));
        assert!(!shows_family("I'm feeling down.", "enjoyment"));
        assert!(!shows_family("anything", "unknown-family"));
    }
}
