//! Which database a task runs against: the one enum every layer shares (domains generate
//! a database per split; artifacts store it in every record's `split` column).
//!
//! Architecture invariant: depends on nothing in the crate, so both `artifact` and
//! `domain` can use it.

use serde::{Deserialize, Serialize};

/// Which database a task runs against. Domains that keep one database ignore it.
/// The default (a record built field by field in a test) is the training split.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord,
)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    #[default]
    Train,
    Eval,
}

impl Split {
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Eval => "eval",
        }
    }
}

impl std::fmt::Display for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Split {
    type Err = String;
    fn from_str(s: &str) -> Result<Split, String> {
        match s {
            "train" => Ok(Split::Train),
            "eval" => Ok(Split::Eval),
            other => Err(format!("split must be 'train' or 'eval', got '{other}'")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Split;

    #[test]
    fn splits_round_trip_through_their_names_and_refuse_others() {
        for s in [Split::Train, Split::Eval] {
            assert_eq!(s.as_str().parse::<Split>(), Ok(s));
            assert_eq!(s.to_string(), s.as_str());
        }
        let err = "test".parse::<Split>().unwrap_err();
        assert!(err.contains("'test'"), "{err}");
    }
}
