//! The cache key: SHA-256 over a format version, the request kind, the role's namespace
//! and the request body's canonical JSON (object keys sorted, [`Canonical`]), streamed into
//! the hash.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Bump when the stored value format or the key derivation changes.
pub(super) const KEY_VERSION: &str = "tracer-llm-cache/v1";

/// The cache key of a request body of `kind` (`"chat"`, `"embeddings"`) in `namespace`.
/// The body's canonical JSON is streamed into the hash, never built as a string.
pub fn request_key(kind: &str, namespace: &str, body: &Value) -> [u8; 32] {
    let mut h = key_hasher(kind, namespace);
    // Writing into a hasher cannot fail, and a `Value` always serialises.
    let _ = serde_json::to_writer(HashWriter(&mut h), &Canonical(body));
    h.finalize().into()
}

/// [`request_key`] of a body already written as canonical JSON text.
pub fn text_key(kind: &str, namespace: &str, canonical: &str) -> [u8; 32] {
    let mut h = key_hasher(kind, namespace);
    h.update(canonical.as_bytes());
    h.finalize().into()
}

fn key_hasher(kind: &str, namespace: &str) -> Sha256 {
    let mut h = Sha256::new();
    h.update(KEY_VERSION.as_bytes());
    h.update([0]);
    h.update(kind.as_bytes());
    h.update([0]);
    if !namespace.is_empty() {
        h.update(b"namespace\0");
        h.update(namespace.as_bytes());
        h.update([0]);
    }
    h
}

/// `io::Write` into a running SHA-256.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A JSON value serialised with every object's keys in sorted order (no copy of the tree).
pub(crate) struct Canonical<'a>(pub &'a Value);

impl serde::Serialize for Canonical<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                // With serde_json's default (sorted) maps this is already in order; sorting
                // keeps the key stable even if some dependency turns on `preserve_order`.
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, &Canonical(v))?;
                }
                map.end()
            }
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&Canonical(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

/// JSON text with every object's keys sorted (what [`request_key`] hashes, as a string: the
/// tests compare written bodies with it; the key itself is streamed).
#[cfg(test)]
pub(crate) fn canonical_json(v: &Value) -> String {
    serde_json::to_string(&Canonical(v)).unwrap_or_default()
}
