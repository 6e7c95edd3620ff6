//! The layering of `src/`, checked from the source text: no module cycle
//! (between top-level modules, or between the submodules of one), the
//! application layer never prints and knows neither front end.
//!
//! Run it alone: `cargo test --test it layers`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file of `src/` (but `main.rs`) with its module path.
fn modules(src: &Path) -> Vec<(Module, String)> {
    let mut found = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap();
            let mut module: Module = relative
                .with_extension("")
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|last| last == "mod") {
                module.pop();
            }
            if module == ["lib"] {
                module.clear();
            }
            if module == ["main"] {
                continue;
            }
            found.push((module, std::fs::read_to_string(&path).unwrap()));
        }
    }
    found
}

/// The module a path names, as deep as a file of `src/` goes.
fn resolve(known: &BTreeSet<Module>, mut base: Module, names: &[&str]) -> Module {
    for name in names {
        let mut deeper = base.clone();
        deeper.push((*name).to_owned());
        if !known.contains(&deeper) {
            break;
        }
        base = deeper;
    }
    base
}

/// `crate::a::b`, `super::c` and `use super::{d, e}` references of a file.
fn references(known: &BTreeSet<Module>, module: &Module, text: &str) -> BTreeSet<Module> {
    let path = regex::Regex::new(r"\b(crate|super)((?:::\w+)+|::\{[^}]*\})").unwrap();
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        for capture in path.captures_iter(code) {
            let base = if &capture[1] == "crate" {
                Vec::new()
            } else {
                module[..module.len().saturating_sub(1)].to_vec()
            };
            let rest = &capture[2];
            if let Some(group) = rest.strip_prefix("::{") {
                for item in group.trim_end_matches('}').split(',') {
                    let names: Vec<&str> = item
                        .split("::")
                        .map(|name| name.trim().trim_start_matches("self"))
                        .filter(|name| !name.is_empty() && !name.contains(' '))
                        .collect();
                    found.insert(resolve(known, base.clone(), &names));
                }
            } else {
                let names: Vec<&str> = rest.split("::").filter(|n| !n.is_empty()).collect();
                found.insert(resolve(known, base, &names));
            }
        }
    }
    found
}

/// The strongly connected components of more than one node (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a str) {
        let n = state.index.len();
        state.index.insert(node, n);
        state.low.insert(node, n);
        state.stack.push(node);
        for next in state.edges.get(node).into_iter().flatten() {
            let next = next.as_str();
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.low[node].min(state.low[next]);
                state.low.insert(node, low);
            } else if state.stack.contains(&next) {
                let low = state.low[node].min(state.index[next]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(top) = state.stack.pop() {
                component.push(top.to_owned());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.found
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module graph at one level: top-level modules, or the submodules of
/// one (a module's edges to its own parent or children are not counted:
/// `mod.rs` declares its children and they use what it defines).
fn graph(level: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let files = modules(&src());
    let known: BTreeSet<Module> = files.iter().map(|(module, _)| module.clone()).collect();
    let depth = level.len() + 1;
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &files {
        if module.len() < depth || module[..level.len()] != *level {
            continue;
        }
        let from = module[depth - 1].clone();
        for target in references(&known, module, text) {
            if target.len() < depth || target[..level.len()] != *level {
                continue;
            }
            let to = target[depth - 1].clone();
            if to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

#[test]
fn no_module_cycle() {
    let mut found = Vec::new();
    let top = graph(&[]);
    for cycle in cycles(&top) {
        found.push(format!("crate: {}", cycle.join(" ⇄ ")));
    }
    for parent in top.keys() {
        for cycle in cycles(&graph(std::slice::from_ref(parent))) {
            found.push(format!("{parent}: {}", cycle.join(" ⇄ ")));
        }
    }
    assert!(
        found.is_empty(),
        "modules that use each other (a cycle):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_application_layer_never_prints_nor_knows_its_front_end() {
    let files = modules(&src());
    let known: BTreeSet<Module> = files.iter().map(|(module, _)| module.clone()).collect();
    for (module, text) in files
        .iter()
        .filter(|(module, _)| module.first().is_some_and(|m| m == "app"))
    {
        for word in [
            "println!",
            "eprintln!",
            "print!(",
            "eprint!(",
            "std::io::stdout",
            "std::io::stderr",
        ] {
            assert!(
                !text.contains(word),
                "src/{}: the application layer prints ({word}); return a notice instead",
                module.join("/")
            );
        }
        for target in references(&known, module, text) {
            assert!(
                !matches!(target.first().map(String::as_str), Some("cli" | "mcp")),
                "src/{} uses crate::{}: the application layer must not know its front ends",
                module.join("/"),
                target.join("::")
            );
        }
    }
}

#[test]
fn the_command_line_only_parses_dispatches_and_renders() {
    let files = modules(&src());
    let known: BTreeSet<Module> = files.iter().map(|(module, _)| module.clone()).collect();
    for (module, text) in files
        .iter()
        .filter(|(module, _)| module.first().is_some_and(|m| m == "cli"))
    {
        // The index, the log, capture's queues and the processes goldfish
        // starts are the application layer's business (`src/app/`); the
        // command line may name the index's result types to render them.
        for word in ["std::process::", "std::fs::"] {
            assert!(
                !text.contains(word),
                "src/{}: the command line uses {word}; that belongs in src/app/",
                module.join("/")
            );
        }
        for target in references(&known, module, text) {
            let path: Vec<&str> = target.iter().map(String::as_str).collect();
            let allowed = match path.as_slice() {
                ["log", ..] | ["capture", ..] => false,
                ["index", "search"] => true,
                ["index", ..] => false,
                _ => true,
            };
            assert!(
                allowed,
                "src/{} uses crate::{}: the command line should call src/app/ for that",
                module.join("/"),
                target.join("::")
            );
        }
    }
}
