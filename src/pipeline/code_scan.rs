//! The crate's own sources as the code fingerprints see them: each file's code without its
//! comments and tests, and the files it reaches along its imports. The build script
//! includes this file (`#[path]`) to write the table `pipeline::fingerprint` reads; the
//! library compiles it too, for its tests. Standard library only.
//!
//! What counts as an import (a superset of what the compiler resolves, never less):
//! - a path that starts with `crate::`, `self::` or `super::` (use trees with `{...}`
//!   expanded), resolved to the deepest module file it names;
//! - a path that starts with the name of a child module the file declares (`mod x;` and
//!   then `x::...`): a parent depends on a child only where it uses it, so a registry that
//!   names every stage lives in a file of its own;
//! - a macro a file calls by name (`name!`) that another file defines with `macro_rules!`;
//! - a data file it includes (`include_str!`, `include_bytes!`).
//!
//! Files named `tests.rs` and items under `#[cfg(test)]` are left out; comments and blank
//! lines do not count towards a file's hash.

use std::collections::{BTreeMap, BTreeSet};

/// One file of the crate's sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedFile {
    /// Path relative to the crate root, with `/` separators (e.g. `src/stage/db.rs`).
    pub path: String,
    /// FNV-1a of the code (comments, tests and blank lines left out), or of the bytes of a
    /// data file.
    pub hash: u64,
    /// The domain folder the file lives in (`src/domain/<d>/`, `kit` excepted).
    pub domain: Option<String>,
    /// Indices (into the scanned list) of the files it reaches directly.
    pub deps: Vec<usize>,
}

/// FNV-1a, 64 bits: no dependencies, stable across platforms.
pub fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Scan `files` (crate-relative paths with their contents): the table the fingerprints read,
/// in the order given. Files named `tests.rs` are left out.
pub fn scan(files: &[(String, Vec<u8>)], domain_dirs: &BTreeSet<String>) -> Vec<ScannedFile> {
    let kept: Vec<&(String, Vec<u8>)> = files
        .iter()
        .filter(|(p, _)| !p.ends_with("/tests.rs") && p != "src/main.rs")
        .collect();
    let index: BTreeMap<&str, usize> = kept
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (p.as_str(), i))
        .collect();
    let modules: BTreeMap<Vec<String>, usize> = kept
        .iter()
        .enumerate()
        .filter_map(|(i, (p, _))| module_path(p).map(|m| (m, i)))
        .collect();
    let codes: Vec<Option<String>> = kept
        .iter()
        .map(|(p, bytes)| {
            p.ends_with(".rs")
                .then(|| drop_cfg_test(&strip_comments(&String::from_utf8_lossy(bytes))))
        })
        .collect();
    let tokens: Vec<Vec<Tok>> = codes
        .iter()
        .map(|c| c.as_deref().map(tokenize).unwrap_or_default())
        .collect();
    let mut macros: BTreeMap<String, usize> = BTreeMap::new();
    for (i, toks) in tokens.iter().enumerate() {
        for w in toks.windows(3) {
            if let [Tok::Ident(m), Tok::Punct('!'), Tok::Ident(name)] = w
                && m == "macro_rules"
            {
                macros.entry(name.clone()).or_insert(i);
            }
        }
    }
    kept.iter()
        .enumerate()
        .map(|(i, (path, bytes))| {
            let hash = match &codes[i] {
                Some(code) => fnv(normalize(code).as_bytes()),
                None => fnv(bytes),
            };
            let mut deps = BTreeSet::new();
            if let Some(me) = module_path(path) {
                for target in referenced_modules(&tokens[i], &me) {
                    if let Some(j) = deepest(&modules, &target) {
                        deps.insert(j);
                    }
                }
                for (name, j) in &macros {
                    if calls_macro(&tokens[i], name) {
                        deps.insert(*j);
                    }
                }
                for inc in includes(&tokens[i]) {
                    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
                    if let Some(j) = index.get(join(dir, &inc).as_str()) {
                        deps.insert(*j);
                    }
                }
            }
            deps.remove(&i);
            ScannedFile {
                path: path.clone(),
                hash,
                domain: domain_of(path, domain_dirs),
                deps: deps.into_iter().collect(),
            }
        })
        .collect()
}

/// The domain whose folder holds `path` (`src/domain/<d>/...`, `kit` excepted).
fn domain_of(path: &str, domain_dirs: &BTreeSet<String>) -> Option<String> {
    let rest = path.strip_prefix("src/domain/")?;
    let (dir, _) = rest.split_once('/')?;
    (dir != "kit" && domain_dirs.contains(dir)).then(|| dir.to_string())
}

/// `src/a/b.rs` -> `[a, b]`, `src/a/mod.rs` -> `[a]`, `src/lib.rs` -> `[]`.
fn module_path(path: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix("src/")?.strip_suffix(".rs")?;
    let mut segs: Vec<String> = rest.split('/').map(str::to_string).collect();
    if segs.last().is_some_and(|s| s == "mod") || segs == ["lib"] {
        segs.pop();
    }
    Some(segs)
}

fn deepest(modules: &BTreeMap<Vec<String>, usize>, target: &[String]) -> Option<usize> {
    (0..=target.len())
        .rev()
        .find_map(|k| modules.get(&target[..k]).copied())
}

/// `dir` joined with a relative `rel`, `..` and `.` folded.
fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Lines trimmed, blank ones dropped: reformatting a file's indentation keeps its hash.
fn normalize(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    for line in code.lines().map(str::trim).filter(|l| !l.is_empty()) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The source without `//` and `/* */` comments (doc comments included); string and char
/// literals are kept as they are.
pub fn strip_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(b' ');
        } else if let Some(len) = literal_len(src, i) {
            out.extend_from_slice(&b[i..i + len]);
            i += len;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Length of a raw string literal (`r"..."`, `r#"..."#`, `br"..."`) starting at `i`.
fn raw_string_len(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|c| **c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let end = b[j..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map_or(b.len(), |p| j + p + close.len());
    Some(end - i)
}

/// Length of a string, raw string or char literal starting at byte `i`, if one does
/// (a lifetime such as `'a` is not one).
fn literal_len(src: &str, i: usize) -> Option<usize> {
    let b = src.as_bytes();
    if let Some(len) = raw_string_len(b, i) {
        return Some(len);
    }
    match b[i] {
        b'"' => {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(b.len()) - i)
        }
        // An escape: the backslash and the character after it, then the closing quote.
        b'\'' if b.get(i + 1) == Some(&b'\\') => b[(i + 3).min(b.len())..]
            .iter()
            .position(|c| *c == b'\'')
            .map(|p| p + 4),
        b'\'' => {
            let ch = src.get(i + 1..)?.chars().next()?.len_utf8();
            (b.get(i + 1 + ch) == Some(&b'\'')).then_some(ch + 2)
        }
        _ => None,
    }
}

/// The code without its `#[cfg(test)]` items (a `mod tests;` line or a braced block).
/// Expects comments already stripped.
pub fn drop_cfg_test(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let b = code.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if let Some(len) = literal_len(code, i) {
            out.extend_from_slice(&b[i..i + len]);
            i += len;
        } else if b[i..].starts_with(MARK.as_bytes()) {
            i = item_end(code, i + MARK.len()).unwrap_or(b.len());
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The end (exclusive) of the item starting at `from`: after its `;` or its braced body.
fn item_end(s: &str, from: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b';' => return Some(i + 1),
            b'{' => break,
            _ => i += literal_len(s, i).unwrap_or(1),
        }
    }
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {
                i += literal_len(s, i).unwrap_or(1);
                continue;
            }
        }
        i += 1;
    }
    None
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Str(String),
    Punct(char),
}

fn tokenize(code: &str) -> Vec<Tok> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if let Some(len) = literal_len(code, i) {
            let lit = &code[i..i + len];
            let inner = lit
                .trim_start_matches(['b', 'r', '#'])
                .trim_end_matches('#')
                .trim_matches(['"', '\'']);
            out.push(Tok::Str(inner.to_string()));
            i += len;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(code[start..i].to_string()));
        } else if b[i..].starts_with(b"::") {
            out.push(Tok::Path);
            i += 2;
        } else if c.is_ascii_whitespace() || !c.is_ascii() {
            i += 1;
        } else {
            out.push(Tok::Punct(c as char));
            i += 1;
        }
    }
    out
}

/// The module paths a file names (absolute, as segment lists), from its `crate::`,
/// `self::`, `super::` paths and its uses of the child modules it declares.
fn referenced_modules(toks: &[Tok], me: &[String]) -> Vec<Vec<String>> {
    let children: BTreeSet<&str> = toks
        .windows(3)
        .filter_map(|w| match w {
            [Tok::Ident(m), Tok::Ident(name), Tok::Punct(';')] if m == "mod" => Some(name.as_str()),
            _ => None,
        })
        .collect();
    // The module a `super::` or `self::` path is relative to: a `mod.rs` is its folder's
    // module; `lib.rs` the crate.
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let starts_path = i == 0 || toks[i - 1] != Tok::Path;
        let head = match &toks[i] {
            Tok::Ident(w) if starts_path && toks.get(i + 1) == Some(&Tok::Path) => w.as_str(),
            _ => {
                i += 1;
                continue;
            }
        };
        if !matches!(head, "crate" | "self" | "super") && !children.contains(head) {
            i += 1;
            continue;
        }
        let mut paths = Vec::new();
        let next = use_tree(toks, i, Vec::new(), &mut paths);
        for p in paths {
            out.push(absolute(me, &p));
        }
        i = next.max(i + 1);
    }
    out
}

/// Parse a use tree (or a plain path) at `i`; push every leaf path (prefix included).
/// Returns the index after it.
fn use_tree(
    toks: &[Tok],
    mut i: usize,
    mut path: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match toks.get(i) {
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                i += 1;
                if toks.get(i) == Some(&Tok::Path) {
                    i += 1;
                    continue;
                }
                out.push(path);
                return i;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                loop {
                    match toks.get(i) {
                        Some(Tok::Punct('}')) => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        Some(Tok::Ident(w)) if w == "as" => i += 2,
                        Some(Tok::Ident(_)) | Some(Tok::Punct('{')) => {
                            i = use_tree(toks, i, path.clone(), out);
                        }
                        Some(_) => {
                            // `*` or anything else: the prefix itself.
                            out.push(path.clone());
                            i += 1;
                        }
                        None => return i,
                    }
                }
            }
            _ => {
                // `*`, `<` of a generic, or the end: the path so far.
                out.push(path);
                return i;
            }
        }
    }
}

/// A path as written in module `me`, made absolute (`crate`, `self`, `super` resolved; a
/// path starting with a child's name is under `me`).
fn absolute(me: &[String], path: &[String]) -> Vec<String> {
    let mut segs = path.iter().peekable();
    let mut base: Vec<String> = match segs.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segs.next();
            Vec::new()
        }
        Some("self") => {
            segs.next();
            me.to_vec()
        }
        Some("super") => {
            let mut b = me.to_vec();
            while segs.peek().is_some_and(|s| *s == "super") {
                segs.next();
                b.pop();
            }
            b
        }
        _ => me.to_vec(),
    };
    base.extend(segs.filter(|s| *s != "self").cloned());
    base
}

fn calls_macro(toks: &[Tok], name: &str) -> bool {
    toks.windows(2)
        .any(|w| matches!(w, [Tok::Ident(n), Tok::Punct('!')] if n == name))
}

fn includes(toks: &[Tok]) -> Vec<String> {
    toks.windows(4)
        .filter_map(|w| match w {
            [Tok::Ident(m), Tok::Punct('!'), Tok::Punct('('), Tok::Str(p)]
                if m == "include_str" || m == "include_bytes" =>
            {
                Some(p.clone())
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_of(files: &[(&str, &str)]) -> Vec<ScannedFile> {
        let files: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
            .collect();
        scan(&files, &["shop".to_string()].into())
    }

    fn deps_of<'a>(scanned: &'a [ScannedFile], path: &str) -> Vec<&'a str> {
        let f = scanned.iter().find(|f| f.path == path).unwrap();
        let mut deps: Vec<&str> = f.deps.iter().map(|i| scanned[*i].path.as_str()).collect();
        deps.sort();
        deps
    }

    #[test]
    fn comments_go_and_literals_stay() {
        let src = "let url = \"http://x\"; // gone\n/* gone /* nested */ */ let c = '/'; let r = r#\"a // b\"#; 'a: loop {}";
        let out = strip_comments(src);
        assert!(!out.contains("gone"), "{out}");
        assert!(out.contains("\"http://x\""));
        assert!(out.contains("'/'"));
        assert!(out.contains("r#\"a // b\"#"));
        assert!(out.contains("'a: loop"));
    }

    #[test]
    fn test_items_go_even_with_braces_in_literals() {
        let src = "fn a() {}\n#[cfg(test)]\nmod tests {\n fn b() { let c = '}'; let s = \"}\"; }\n}\nfn d() {}\n#[cfg(test)]\nmod more;\nconst S: &str = \"#[cfg(test)] kept\";";
        let out = drop_cfg_test(src);
        assert!(out.contains("fn a()") && out.contains("fn d()"), "{out}");
        assert!(!out.contains("fn b") && !out.contains("mod more"), "{out}");
        assert!(out.contains("\"#[cfg(test)] kept\""), "{out}");
    }

    #[test]
    fn a_comment_or_a_test_edit_keeps_the_hash_and_a_code_edit_changes_it() {
        let base = scan_of(&[("src/a.rs", "fn f() { 1 }\n")]);
        let commented = scan_of(&[(
            "src/a.rs",
            "/// doc\nfn f() { 1 } // note\n\n#[cfg(test)]\nmod tests { fn t() {} }\n",
        )]);
        let changed = scan_of(&[("src/a.rs", "fn f() { 2 }\n")]);
        assert_eq!(base[0].hash, commented[0].hash);
        assert_ne!(base[0].hash, changed[0].hash);
    }

    #[test]
    fn imports_resolve_to_the_deepest_module_file() {
        let scanned = scan_of(&[
            ("src/lib.rs", "pub mod a;\npub mod b;\npub mod shop_reg;\n"),
            (
                "src/a/mod.rs",
                "pub mod x;\npub mod y;\npub mod z;\npub use x::Thing;\n",
            ),
            ("src/a/x.rs", "use super::*;\n"),
            (
                "src/a/y.rs",
                "use crate::{b::{self, deep::Item as I}, a};\n",
            ),
            ("src/a/z.rs", "fn f() { crate::shop_reg::all(); }\n"),
            (
                "src/b/mod.rs",
                "pub mod deep;\nmacro_rules! m { () => {} }\n",
            ),
            (
                "src/b/deep.rs",
                "const T: &str = include_str!(\"t.toml\"); m!();\n",
            ),
            ("src/b/t.toml", "x = 1\n"),
            ("src/b/tests.rs", "use crate::a::z;\n"),
            ("src/shop_reg.rs", "// crate::a::z in a comment\n"),
        ]);
        assert_eq!(deps_of(&scanned, "src/a/mod.rs"), ["src/a/x.rs"]);
        assert_eq!(deps_of(&scanned, "src/a/x.rs"), ["src/a/mod.rs"]);
        assert_eq!(
            deps_of(&scanned, "src/a/y.rs"),
            ["src/a/mod.rs", "src/b/deep.rs", "src/b/mod.rs"]
        );
        assert_eq!(deps_of(&scanned, "src/a/z.rs"), ["src/shop_reg.rs"]);
        assert_eq!(
            deps_of(&scanned, "src/b/deep.rs"),
            ["src/b/mod.rs", "src/b/t.toml"]
        );
        assert!(deps_of(&scanned, "src/shop_reg.rs").is_empty());
        assert!(deps_of(&scanned, "src/lib.rs").is_empty());
        assert!(scanned.iter().all(|f| f.path != "src/b/tests.rs"));
    }

    #[test]
    fn files_in_a_domain_folder_belong_to_it() {
        let scanned = scan_of(&[
            ("src/domain/shop/mod.rs", ""),
            ("src/domain/kit/mod.rs", ""),
        ]);
        assert_eq!(scanned[0].domain.as_deref(), Some("shop"));
        assert_eq!(scanned[1].domain, None);
    }
}
