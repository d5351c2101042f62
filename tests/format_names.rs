//! FORMAT.md names the errors a reader reports; the code must have exactly those names. Every error FORMAT.md
//! writes out in code (`Error::TooShort { expected: 36, found }`, `BadParams { field: "flags" }`, ...) is checked
//! against the variants of the code's error types, read from their source: the variant exists, is a struct or a
//! tuple as written, has every field written, and every `field: "..."` value is one the code reports. Renaming a
//! variant, a field or a field value on one side only fails here.

use std::collections::BTreeMap;
use std::path::Path;

/// A variant of an error enum: its fields by name, or `None` for a tuple or unit variant.
type Variants = BTreeMap<String, Option<Vec<String>>>;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The variants of `pub enum {name}` in `source`, as rustfmt lays them out (a variant at four spaces of indent,
/// its fields at eight).
fn variants(source: &str, name: &str) -> Variants {
    let start = format!("pub enum {name} {{");
    let body = source
        .split_once(&start)
        .unwrap_or_else(|| panic!("no `{start}`"))
        .1;
    let body = body.split("\n}").next().unwrap_or_default();
    let mut variants = Variants::new();
    let mut current: Option<String> = None;
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("//") || trimmed.starts_with("#[") || trimmed.is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 4 && trimmed.starts_with(|c: char| c.is_ascii_uppercase()) {
            let ident: String = trimmed
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let fields = trimmed[ident.len()..]
                .trim_start()
                .starts_with('{')
                .then(Vec::new);
            variants.insert(ident.clone(), fields);
            current = Some(ident);
        } else if indent == 8
            && let Some(Some(fields)) = current.as_ref().and_then(|v| variants.get_mut(v))
            && let Some((field, _)) = trimmed.split_once(':')
        {
            fields.push(field.trim().to_owned());
        }
    }
    assert!(!variants.is_empty(), "`{name}` has no variants");
    variants
}

/// A code span that names a variant: the span, the variant, the fields written in braces (`None` for none, or a
/// tuple), and the string values written for `field`.
type Mention<'a> = (&'a str, String, Option<Vec<String>>, Vec<String>);

/// Every code span of `text` that names a variant of `variants` (optionally behind `{prefix}::`).
fn mentions<'a>(text: &'a str, prefix: &str, variants: &Variants) -> Vec<Mention<'a>> {
    let mut found = Vec::new();
    for span in text.split('`').skip(1).step_by(2) {
        let prefixed = span.strip_prefix(&format!("{prefix}::"));
        let name_part = prefixed.unwrap_or(span);
        let ident: String = name_part
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !variants.contains_key(&ident) {
            // Written as the type's variant, it must be one.
            assert!(
                prefixed.is_none(),
                "`{span}`: the code has no `{prefix}::{ident}`"
            );
            continue;
        }
        let rest = name_part[ident.len()..].trim();
        let (fields, values) = match rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            Some(inside) => {
                let mut fields = Vec::new();
                let mut values = Vec::new();
                for part in inside.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let (field, value) = part.split_once(':').unwrap_or((part, ""));
                    fields.push(field.trim().to_owned());
                    if field.trim() == "field"
                        && let Some(value) = value
                            .trim()
                            .strip_prefix('"')
                            .and_then(|v| v.strip_suffix('"'))
                    {
                        values.push(value.to_owned());
                    }
                }
                (Some(fields), values)
            }
            None => (None, Vec::new()),
        };
        found.push((span, ident, fields, values));
    }
    found
}

/// Checks the mentions of `variants` in `text` and returns how many there were.
fn check(text: &str, prefix: &str, variants: &Variants, field_values: &str) -> usize {
    let mentions = mentions(text, prefix, variants);
    for (span, ident, fields, values) in &mentions {
        let known = &variants[ident];
        if let Some(fields) = fields {
            let known = known
                .as_ref()
                .unwrap_or_else(|| panic!("`{span}`: `{ident}` has no named fields in the code"));
            for field in fields {
                assert!(
                    known.contains(field),
                    "`{span}`: `{ident}` has no field `{field}` in the code (it has {known:?})"
                );
            }
        }
        for value in values {
            assert!(
                field_values.contains(&format!("\"{value}\"")),
                "`{span}`: the code never reports field \"{value}\""
            );
        }
    }
    mentions.len()
}

/// The source of every file under `dir`, apart from test files.
fn sources(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all.push_str(&sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            all.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    all
}

#[test]
fn the_errors_format_md_names_are_the_codes() {
    let format = read("FORMAT.md");
    // Section 7 is the reference table's, whose errors are its own; the appendices are other engines' formats.
    let (core, table) = {
        let (before, from_seven) = format
            .split_once("\n## 7.")
            .expect("FORMAT.md has a section 7");
        let (seven, after) = from_seven
            .split_once("\n## 8.")
            .expect("FORMAT.md has a section 8");
        let after = after.split("\n## Appendix").next().unwrap_or_default();
        (format!("{before}\n{after}"), seven.to_owned())
    };
    let src = sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let errors = variants(&read("src/error.rs"), "Error");
    let n = check(&core, "Error", &errors, &src);
    assert!(
        n >= 20,
        "only {n} errors named outside section 7: is the parser still reading FORMAT.md?"
    );

    let table_src = read("crates/sstfilter-table/src/error.rs");
    let table_errors = variants(&table_src, "TableError");
    let n = check(&table, "TableError", &table_errors, &table_src);
    assert!(n >= 2, "only {n} table errors named in section 7");
}

/// The parser itself: a renamed field or variant is caught.
#[test]
fn a_renamed_name_is_caught() {
    let source = "pub enum Error {\n    /// Doc.\n    TooShort {\n        /// Doc.\n        expected: usize,\n        \
                  found: usize,\n    },\n    UnknownKind(u8),\n    BadParams {\n        field: &'static str,\n    },\n}\n";
    let errors = variants(source, "Error");
    assert_eq!(errors.len(), 3);
    let fields = "field: \"flags\"";
    assert_eq!(
        check(
            "`Error::TooShort { expected: 36, found }`",
            "Error",
            &errors,
            fields
        ),
        1
    );
    for renamed in [
        "`Error::TooShort { need: 36, got }`",
        "`UnknownKind { tag }`",
        "`Error::TooShrt { expected, found }`",
        "`BadParams { field: \"fags\" }`",
    ] {
        let caught = std::panic::catch_unwind(|| check(renamed, "Error", &errors, fields));
        assert!(caught.is_err(), "{renamed} was not caught");
    }
}
