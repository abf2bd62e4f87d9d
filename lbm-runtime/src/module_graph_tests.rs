//! The runtime's modules import each other without circles: every top-level module of
//! `src/` (a file, or a folder with its submodules) is a node, and an edge goes from a module
//! to each module whose items it names through `crate::` (directly, or through a name that
//! `lib.rs` re-exports). A circle is reported with its path, so that the module that closes
//! it can be moved or split (a type both sides need goes to the lower one). Submodules may
//! use their parent's items (`super::`): they are one node with it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The source files below `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("the runtime's sources are readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` without its line comments (doc comments link to modules they do not import).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers `text` names after `crate::`, and those inside `use crate::{…}` groups.
fn named(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find(';').unwrap_or(group.len());
            for word in group[..end].split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                out.insert(word.to_string());
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

/// The names `lib.rs` re-exports (`pub use module::{A, B as C};`), with their modules.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        for name in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            let name = name.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    out
}

/// The first circle of `graph` found, as the modules along it (the first repeated at the end).
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_runtime_modules_import_each_other_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = code(&fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let exported = reexports(&lib);
    let mut files = Vec::new();
    sources(&src, &mut files);
    let module_of = |path: &Path| -> String {
        let rel = path.strip_prefix(&src).expect("below src");
        let first = rel.components().next().expect("a file");
        let name = first.as_os_str().to_string_lossy();
        name.trim_end_matches(".rs").to_string()
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    for file in &files {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let module = module_of(file);
        // The tests of a module are not the module, and the crate root declares every module.
        if name.ends_with("_tests.rs") || module == "lib" || module == "testing" {
            continue;
        }
        let text = code(&fs::read_to_string(file).expect("a source file"));
        let targets = graph.entry(module.clone()).or_default();
        for n in named(&text) {
            let target = exported.get(&n).cloned().unwrap_or(n);
            if target != module && modules.contains(&target) {
                targets.insert(target);
            }
        }
    }
    assert!(graph.len() > 20, "the modules were not found: {graph:?}");
    assert!(
        graph["lattice"].contains("kernels"),
        "the edges were not read"
    );
    if let Some(found) = circle(&graph) {
        panic!(
            "the runtime's modules import each other in a circle: {}",
            found.join(" → ")
        );
    }
}
