//! A role's prompt as data: its instructions and a few worked examples, read from a Markdown
//! file (`prompts/<name>.md`) so a maintainer can tune a prompt without a rebuild, and so a
//! prompt's text is part of the fingerprint of every stage that sends it.
//!
//! The format, kept small enough to read at a glance:
//!
//! ```text
//! The instructions: everything before the first example heading is the system message.
//! <!-- an HTML comment is a note for maintainers; it is never sent -->
//!
//! ## Example: a short label
//! <!-- domains: airline, retail -->     (optional: only for these domains)
//! ### Input
//! what the role is given (sent as a user message)
//! ### Output
//! what a good answer is (sent as the assistant's reply)
//! ```
//!
//! Examples go after the system message as user / assistant pairs, in file order. Ones
//! restricted to domains are sent only for those domains' items.
//!
//! Architecture invariant: knows chat messages and text; nothing of what any role asks.

use super::ChatMessage;
use sha2::{Digest, Sha256};
use std::path::Path;

/// One worked example of a prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    pub label: String,
    /// The domains this example is for; empty = every domain.
    pub domains: Vec<String>,
    pub input: String,
    pub output: String,
}

/// A parsed prompt file.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    /// Where it came from: a file's path, or `built-in:<name>`.
    pub source: String,
    pub system: String,
    pub examples: Vec<Example>,
    /// The first 12 hex digits of the SHA-256 of the file's bytes: the version the dataset
    /// card names.
    pub version: String,
}

const EXAMPLE_HEADING: &str = "## Example";

/// Text without `<!-- ... -->` comments.
fn strip_comments(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut comments = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => {
                comments.push(rest[start + 4..start + end].trim().to_string());
                rest = &rest[start + end + 3..];
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    (out, comments)
}

/// Trim blank lines at both ends, keep the inner layout.
fn tidy(text: &str) -> String {
    text.trim_matches(|c: char| c == '\n' || c == '\r')
        .trim_end()
        .to_string()
}

impl Prompt {
    /// Parse a prompt's text; `source` names it in errors (`prompts/refiner.md: ...`).
    pub fn parse(text: &str, source: &str) -> Result<Prompt, String> {
        let err = |m: String| format!("{source}: {m}");
        let version = hex12(text.as_bytes());
        let padded = format!("\n{text}");
        let heading = format!("\n{EXAMPLE_HEADING}");
        let mut sections = padded.split(heading.as_str());
        let head = sections.next().unwrap_or("");
        let (head, _) = strip_comments(head);
        let system = tidy(&head);
        if system.is_empty() {
            return Err(err(
                "no instructions before the first example (the system message is empty)".into(),
            ));
        }
        let mut examples = Vec::new();
        for (i, section) in sections.enumerate() {
            let (label_line, body) = section.split_once('\n').unwrap_or((section, ""));
            let label = label_line.trim_start_matches(':').trim().to_string();
            let (body, comments) = strip_comments(body);
            let domains: Vec<String> = comments
                .iter()
                .filter_map(|c| c.strip_prefix("domains:"))
                .flat_map(|d| d.split(',').map(|s| s.trim().to_string()))
                .filter(|s| !s.is_empty())
                .collect();
            let n = i + 1;
            let (_, after_input) = body
                .split_once("### Input")
                .ok_or_else(|| err(format!("example {n} ('{label}') has no `### Input`")))?;
            let (input, output) = after_input
                .split_once("### Output")
                .ok_or_else(|| err(format!("example {n} ('{label}') has no `### Output`")))?;
            let (input, output) = (tidy(input), tidy(output));
            if input.is_empty() || output.is_empty() {
                return Err(err(format!(
                    "example {n} ('{label}') has an empty input or output"
                )));
            }
            examples.push(Example {
                label,
                domains,
                input,
                output,
            });
        }
        Ok(Prompt {
            source: source.to_string(),
            system,
            examples,
            version,
        })
    }

    /// Read and parse a prompt file; errors name the file.
    pub fn load(path: &Path) -> Result<Prompt, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Prompt::parse(&text, &path.display().to_string())
    }

    /// The leading messages of a request: the system message, then each example meant for
    /// `domain` (every example when `None`) as a user message and the assistant's answer.
    pub fn messages(&self, domain: Option<&str>) -> Vec<ChatMessage> {
        let mut out = vec![ChatMessage::system(self.system.clone())];
        for e in &self.examples {
            let fits =
                e.domains.is_empty() || domain.is_none_or(|d| e.domains.iter().any(|x| x == d));
            if fits {
                out.push(ChatMessage::user(e.input.clone()));
                out.push(ChatMessage::assistant(e.output.clone()));
            }
        }
        out
    }
}

/// The prompts the project ships (`prompts/<name>.md`), compiled in: what a command that
/// runs outside a stage sends when the project has no such file, and what tests send.
const BUILTINS: &[(&str, &str)] = &[
    ("grounder", include_str!("../../prompts/grounder.md")),
    ("refiner", include_str!("../../prompts/refiner.md")),
    ("feeler", include_str!("../../prompts/feeler.md")),
    ("judge", include_str!("../../prompts/judge.md")),
    ("user", include_str!("../../prompts/user.md")),
    (
        "analysis_judge",
        include_str!("../../prompts/analysis_judge.md"),
    ),
];

/// The names of the prompts the project ships.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(n, _)| *n)
}

/// The shipped prompt `name` (`built-in:<name>`); `None` for a name not shipped.
pub fn builtin(name: &str) -> Option<Prompt> {
    let (_, text) = BUILTINS.iter().find(|(n, _)| *n == name)?;
    Prompt::parse(text, &format!("built-in:{name}")).ok()
}

/// The prompt `name` of a project: `<root>/<dir>/<name>.md` when that file exists, else the
/// shipped one. For commands outside a stage run (a stage requires its file: it is an input).
pub fn project_or_builtin(root: &Path, dir: &str, name: &str) -> Result<Prompt, String> {
    let path = root.join(dir).join(format!("{name}.md"));
    if path.is_file() {
        Prompt::load(&path)
    } else {
        builtin(name).ok_or_else(|| format!("{}: not found", path.display()))
    }
}

fn hex12(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "<!-- refiner prompt -->\nYou rewrite drafts.\n\nKeep every value.\n\n\
## Example: a cancellation\n<!-- domains: airline, retail -->\n### Input\nDraft: cancel it\n\
### Output\nYou want it cancelled.\n\n## Example: any domain\n### Input\nDraft: x\n### Output\nY\n";

    #[test]
    fn parses_instructions_and_examples_and_filters_by_domain() {
        let p = Prompt::parse(TEXT, "prompts/refiner.md").unwrap();
        assert_eq!(p.system, "You rewrite drafts.\n\nKeep every value.");
        assert_eq!(p.examples.len(), 2);
        assert_eq!(p.examples[0].domains, ["airline", "retail"]);
        assert_eq!(p.examples[0].output, "You want it cancelled.");
        assert_eq!(p.version.len(), 12);
        // airline: both examples; bank: only the unrestricted one.
        assert_eq!(p.messages(Some("airline")).len(), 5);
        let bank = p.messages(Some("bank"));
        assert_eq!(bank.len(), 3);
        assert_eq!(bank[1].content.as_deref(), Some("Draft: x"));
        // A changed byte is a new version.
        let edited = Prompt::parse(&TEXT.replace("drafts", "drafts!"), "x").unwrap();
        assert_ne!(edited.version, p.version);
    }

    #[test]
    fn every_shipped_prompt_parses() {
        for name in builtin_names() {
            let p = builtin(name).unwrap_or_else(|| panic!("prompts/{name}.md does not parse"));
            assert!(p.system.len() > 100, "{name}: {}", p.system);
            assert!(!p.system.contains("<!--"), "{name}");
        }
        // The refiner has worked examples for every domain family.
        let refiner = builtin("refiner").unwrap();
        for d in ["airline", "telehealth", "bank"] {
            assert!(refiner.messages(Some(d)).len() >= 5, "{d}");
        }
    }

    #[test]
    fn malformed_files_name_the_file_and_the_example() {
        for (text, expected) in [
            (
                "## Example: a\n### Input\nx\n### Output\ny",
                "system message is empty",
            ),
            (
                "Rules.\n\n## Example: lonely\n### Output\ny",
                "example 1 ('lonely') has no `### Input`",
            ),
            (
                "Rules.\n\n## Example: half\n### Input\nx\n",
                "has no `### Output`",
            ),
            (
                "Rules.\n\n## Example: blank\n### Input\n\n### Output\ny",
                "empty input",
            ),
        ] {
            let e = Prompt::parse(text, "prompts/user.md").unwrap_err();
            assert!(e.starts_with("prompts/user.md: "), "{e}");
            assert!(e.contains(expected), "{text:?} -> {e}");
        }
    }
}
