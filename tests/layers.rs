//! The import graph of `src/` matches ARCHITECTURE.md: no file imports another that imports it back (directly or
//! around a circle), and the layering rules hold (readers never import a policy; kinds never import the container's
//! readers or builders; the leaves import nothing of the crate). Read from the source text: every `crate::…`,
//! `super::…` and `self::…` path and every `use child::…`, resolved to the file that defines the module. A child
//! naming its own ancestors (the shared types a parent defines for the children it dispatches to) is not counted,
//! as a dispatcher and its cases are one layer.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path (`["kind", "ribbon", "policy"]`) for each source file, and the file for each module path.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            // `tests.rs` files are unit tests, which may import anything.
            if path.extension().is_none_or(|e| e != "rs")
                || path.file_name().is_some_and(|f| f == "tests.rs")
            {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let last = parts.pop().unwrap();
            let stem = last.trim_end_matches(".rs");
            if stem != "mod" && stem != "lib" {
                parts.push(stem.to_owned());
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The module paths a file's text names: `crate::a::b…` and `super::…` (made absolute from `module`).
fn named_paths(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        // `use child::…` names a child module of this one, as `use self::child::…` does.
        let relative = line
            .strip_prefix("use ")
            .or_else(|| line.strip_prefix("pub use "))
            .or_else(|| line.strip_prefix("pub(crate) use "))
            .filter(|rest| {
                let first = rest.split("::").next().unwrap_or("");
                rest.contains("::")
                    && !["crate", "super", "self", "std", "core", "alloc"].contains(&first)
                    && first.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
            .map(|rest| (0, format!("self::{rest}")));
        let owned: Vec<(usize, String)> = line
            .match_indices("crate::")
            .chain(line.match_indices("super::"))
            .map(|(start, _)| (start, line[start..].to_owned()))
            .chain(relative)
            .collect();
        for (_, rest) in &owned {
            let rest = rest.as_str();
            let mut segments: Vec<String> = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let mut base: Vec<String> = Vec::new();
            match segments.first().map(String::as_str) {
                Some("self") => {
                    segments.remove(0);
                    base = module.to_vec();
                }
                Some("crate") => {
                    segments.remove(0);
                }
                Some("super") => {
                    base = module.to_vec();
                    while segments.first().map(String::as_str) == Some("super") {
                        segments.remove(0);
                        base.pop();
                    }
                }
                _ => continue,
            }
            base.extend(segments);
            out.push(base);
        }
    }
    out
}

/// The files each file imports (by the longest module path of each name that is a file).
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = modules(src);
    let name = |p: &Path| p.strip_prefix(src).unwrap().to_string_lossy().into_owned();
    let mut edges = BTreeMap::new();
    for (module, path) in &files {
        let text = fs::read_to_string(path).unwrap();
        // Tests may import anything: only the code above `#[cfg(test)]` counts.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut targets = BTreeSet::new();
        for mut named in named_paths(code, module) {
            while !named.is_empty() {
                // A module's own items, and its ancestors' (the shared types a parent module defines for the
                // children it dispatches to), are not an import of another layer.
                if module.starts_with(&named) {
                    break;
                }
                if let Some(target) = files.get(&named) {
                    targets.insert(name(target));
                    break;
                }
                named.pop();
            }
        }
        edges.insert(name(path), targets);
    }
    edges
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_imports_one_that_imports_it_back() {
    let edges = graph(&src());
    // Depth-first search for a back edge; report the circle.
    fn visit<'a>(
        node: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) {
        state.insert(node, 1);
        path.push(node);
        for next in edges.get(node).into_iter().flatten() {
            if next == "lib.rs" {
                continue; // the crate root re-exports everything; imports of `crate::X` resolve to X itself
            }
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = path.iter().position(|n| *n == next).unwrap();
                    panic!("import circle: {:?} -> {next}", &path[from..]);
                }
                Some(_) => {}
                None => visit(next, edges, state, path),
            }
        }
        path.pop();
        state.insert(node, 2);
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node.as_str()) {
            visit(node, &edges, &mut state, &mut Vec::new());
        }
    }
    assert!(edges.len() > 40, "only {} files read", edges.len());
}

#[test]
fn layers_import_downward_only() {
    let edges = graph(&src());
    let imports = |file: &str| edges.get(file).cloned().unwrap_or_default();
    // Leaves import nothing of the crate.
    for leaf in [
        "tag.rs",
        "hash.rs",
        "le.rs",
        "math.rs",
        "order.rs",
        "prefetch.rs",
        "cpu.rs",
        "sizing/rates.rs",
    ] {
        assert!(
            imports(leaf).is_empty(),
            "{leaf} imports {:?}",
            imports(leaf)
        );
    }
    for (file, targets) in &edges {
        let is_policy = |t: &String| t == "policy.rs" || t.ends_with("/policy.rs");
        // Reader code never imports a policy (the bytes decide how to read).
        if file == "reader.rs" || file.starts_with("partitioned/reader") || file == "format.rs" {
            assert!(
                !targets.iter().any(is_policy),
                "{file} imports a policy: {targets:?}"
            );
        }
        // A kind's algorithm (everything in its folder but its policy and builder) knows nothing of policies, the
        // readers, the builders or the stores of filters.
        let algorithm = file.starts_with("kind/")
            && !file.ends_with("policy.rs")
            && !file.ends_with("builder.rs");
        if algorithm {
            for t in targets {
                assert!(
                    !(is_policy(t)
                        || t == "reader.rs"
                        || t == "builder.rs"
                        || t.starts_with("partitioned/")
                        || t.starts_with("memory/")),
                    "{file} imports {t}"
                );
            }
        }
    }
}
