//! User facts every domain builds the same way: how the customer authenticates (email,
//! phone, name + zip, name + date of birth, a user id), their name, and the entities they
//! can name. Identity comes first in a task's facts; the instruction states it verbatim.
//!
//! Architecture invariant: builds [`UserFact`]s from strings; knows no domain.

use super::rows::Name;
use super::text::join_and;
use crate::domain::UserFact;

/// How a customer proves who they are.
#[derive(Clone, Copy, Debug)]
pub enum Identity<'a> {
    Email(&'a str),
    Phone(&'a str),
    UserId(&'a str),
    /// The domain's own customer id: "Your {noun} id is {id}."
    Id {
        noun: &'a str,
        id: &'a str,
    },
    NameZip {
        first: &'a str,
        last: &'a str,
        zip: &'a str,
    },
    NameDob {
        first: &'a str,
        last: &'a str,
        dob: &'a str,
    },
}

/// The identity fact (kind `identity`); `ids` are the internal ids it lets an agent
/// resolve (typically the customer id).
pub fn identity(id: Identity<'_>, ids: &[&str]) -> UserFact {
    let (text, values) = match id {
        Identity::Email(e) => (format!("Your email address is {e}."), vec![e.to_string()]),
        Identity::Phone(p) => (format!("Your phone number is {p}."), vec![p.to_string()]),
        Identity::UserId(u) => (format!("Your user id is {u}."), vec![u.to_string()]),
        Identity::Id { noun, id } => (format!("Your {noun} id is {id}."), vec![id.to_string()]),
        Identity::NameZip { first, last, zip } => (
            name_zip_text(first, last, zip, "address"),
            vec![first.to_string(), last.to_string(), zip.to_string()],
        ),
        Identity::NameDob { first, last, dob } => (
            format!("Your name is {first} {last}, and you were born on {dob}."),
            vec![first.to_string(), last.to_string(), dob.to_string()],
        ),
    };
    fact("identity", text, values, ids)
}

/// "Your name is First Last, and the zip code of your address is 12345." in one of a few
/// wordings, chosen by the name and zip themselves (no seed: a customer's fact reads the
/// same in every task); one fixed sentence was the most repeated 6-gram of every domain that
/// identifies by name and zip. `address` names which address ("default address").
pub fn name_zip_text(first: &str, last: &str, zip: &str, address: &str) -> String {
    let pick = [first, last, zip]
        .iter()
        .flat_map(|s| s.bytes())
        .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
    match pick % 4 {
        0 => format!("Your name is {first} {last}, and the zip code of your {address} is {zip}."),
        1 => format!("Your name is {first} {last}; your {address} has the zip code {zip}."),
        2 => format!("Your name is {first} {last}, and your {address} is in zip code {zip}."),
        _ => format!("Your name is {first} {last}, and your zip code is {zip}."),
    }
}

/// The identities of a customer who authenticates by email, with name and zip code as the
/// fallback: that second fact has kind `name`, so it is not the one an instruction must
/// state.
pub fn email_or_name_zip(
    email: &str,
    (first, last, zip): (&str, &str, &str),
    ids: &[&str],
) -> Vec<UserFact> {
    let mut fallback = identity(Identity::NameZip { first, last, zip }, ids);
    fallback.kind = "name".into();
    vec![identity(Identity::Email(email), ids), fallback]
}

/// The first facts of a customer who identifies by their own id: "Your traveler id is X."
/// (resolving X), then their name.
pub fn id_and_name(noun: &str, id: &str, name: &Name) -> Vec<UserFact> {
    vec![
        identity(Identity::Id { noun, id }, &[id]),
        self::name(&name.first_name, &name.last_name),
    ]
}

/// "Your name is First Last."
pub fn name(first: &str, last: &str) -> UserFact {
    fact(
        "name",
        format!("Your name is {first} {last}."),
        vec![first.to_string(), last.to_string()],
        &[],
    )
}

/// A fact of any kind.
pub fn fact(kind: &str, text: String, values: Vec<String>, ids: &[&str]) -> UserFact {
    UserFact {
        kind: kind.to_string(),
        text,
        values,
        ids: ids.iter().map(|s| s.to_string()).collect(),
    }
}

/// "Your appointment ids are A, B and C." / "Your appointment id is A." — entities the
/// customer can name by id (printed on their confirmations).
pub fn entity_ids(noun: &str, ids: &[String]) -> Option<UserFact> {
    let text = match ids {
        [] => return None,
        [one] => format!("Your {noun} is {one}."),
        many => format!("Your {noun}s are {}.", join_and(many)),
    };
    Some(fact("entity", text, ids.to_vec(), &[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_first_with_its_values() {
        let f = identity(Identity::Email("a@b.org"), &["ann_lee_1"]);
        assert_eq!(f.kind, "identity");
        assert_eq!(f.text, "Your email address is a@b.org.");
        assert_eq!(f.ids, ["ann_lee_1"]);
        let f = identity(
            Identity::NameDob {
                first: "Ann",
                last: "Lee",
                dob: "1990-01-02",
            },
            &[],
        );
        assert_eq!(f.values, ["Ann", "Lee", "1990-01-02"]);
        assert_eq!(
            entity_ids("ticket id", &["T1".into(), "T2".into()])
                .unwrap()
                .text,
            "Your ticket ids are T1 and T2."
        );
        assert!(entity_ids("x", &[]).is_none());
    }
}
