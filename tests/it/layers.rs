//! The layering of `src/`, checked from the source text. The folders are the
//! layers: `domain` (the pure core, `crates/goldfish-core/`), `adapters`,
//! `app`, `front`; each may use
//! only the layers an allow-list names, the core does no I/O, the
//! application layer never prints, and no modules use each other in a cycle.
//!
//! Run it alone: `cargo test --test it layers`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
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

/// The files of `src/` and of the core crate (`goldfish::domain`), the
/// core's under `domain` with its `crate::` paths read as
/// `crate::domain::`: its own crate cannot use goldfish (the compiler holds
/// that), and the words its layer forbids are checked here.
fn all_modules() -> Vec<(Module, String)> {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/goldfish-core/src");
    let mut files = modules(&src());
    for (module, text) in modules(&core) {
        let mut inside = vec!["domain".to_owned()];
        inside.extend(module);
        files.push((inside, text.replace("crate::", "crate::domain::")));
    }
    files
}

/// The module graph at one level: top-level modules, or the submodules of
/// one (a module's edges to its own parent or children are not counted:
/// `mod.rs` declares its children and they use what it defines).
fn graph(level: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let files = all_modules();
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

/// The layers, bottom up: a module of one may use its own and those below,
/// as [`may_use`] says.
const LAYERS: [&str; 4] = ["domain", "adapters", "app", "front"];

/// Whether a module of `from` (a layer) may use `target`, and why not.
fn may_use(from: &str, target: &[&str]) -> Result<(), &'static str> {
    let Some(&layer) = target.first() else {
        return Ok(());
    };
    match (from, layer) {
        (_, "domain") => Ok(()),
        ("domain", _) => Err("the core uses nothing but itself"),
        ("adapters", "adapters") => Ok(()),
        ("adapters", _) => Err("an adapter knows neither the application layer nor a front end"),
        ("app", "adapters" | "app") => Ok(()),
        ("app", _) => Err("the application layer must not know its front ends"),
        ("front", "app" | "front") => Ok(()),
        ("front", "adapters") => Err("a front end asks the application layer (src/app/) for that"),
        _ => Err("not a layer"),
    }
}

/// Words that give a file away as doing what its layer must not.
fn forbidden_words(layer: &str) -> &'static [&'static str] {
    match layer {
        "domain" => &[
            r"\bstd::(fs|env|process|net|io::std(in|out|err))\b",
            r"\buse std::\{[^}]*\b(fs|env|process|net)\b",
            r"\b(File|OpenOptions)::|\bprocess::Command\b",
            r"\b(e?println|e?print)!",
            r"\b(Instant|SystemTime|Timestamp|Zoned)::now\b",
        ],
        "app" => &[
            r"\b(e?println|e?print)!",
            r"\bstd::io::std(out|err)\b",
            r"\buse std::io::\{[^}]*\bstd(out|err)\b",
        ],
        "front" => &[
            r"\bstd::(fs|process)\b",
            r"\buse std::\{[^}]*\b(fs|process)\b",
            r"\b(File|OpenOptions)::",
        ],
        _ => &[],
    }
}

/// Why `src/` breaks its layering: one line per finding.
fn violations(files: &[(Module, String)]) -> Vec<String> {
    let known: BTreeSet<Module> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut found = Vec::new();
    let stderr_print = regex::Regex::new(r"\beprint(ln)?!").unwrap();
    for (module, text) in files {
        let file = format!("src/{}", module.join("/"));
        let Some(layer) = module.first().map(String::as_str) else {
            continue; // lib.rs
        };
        if !LAYERS.contains(&layer) {
            found.push(format!(
                "{file}: not in a layer folder ({})",
                LAYERS.join(", ")
            ));
            continue;
        }
        let code: String = text
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for word in forbidden_words(layer) {
            if let Some(hit) = regex::Regex::new(word).unwrap().find(&code) {
                found.push(format!(
                    "{file}: `{}` has no place in src/{layer}/",
                    hit.as_str()
                ));
            }
        }
        // Every stderr line of a front end goes through one place, escaped.
        if layer == "front"
            && module.as_slice() != ["front", "stderr"]
            && let Some(hit) = stderr_print.find(&code)
        {
            found.push(format!(
                "{file}: `{}`: stderr lines go through src/front/stderr.rs",
                hit.as_str()
            ));
        }
        for target in references(&known, module, text) {
            let path: Vec<&str> = target.iter().map(String::as_str).collect();
            if let Err(why) = may_use(layer, &path) {
                found.push(format!("{file} uses crate::{}: {why}", path.join("::")));
            }
        }
    }
    found
}

#[test]
fn each_layer_uses_only_what_its_allow_list_names() {
    let files = all_modules();
    assert!(
        files
            .iter()
            .any(|(module, _)| module == &["domain", "memory", "secrets"]),
        "the core's files are read"
    );
    let found = violations(&files);
    assert!(
        found.is_empty(),
        "the layering of src/ is broken:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_allow_list_catches_what_it_forbids() {
    // The check itself, on files that break it: a test that could not fail
    // would hold nothing.
    let file = |path: &str, text: &str| {
        let module: Module = path.split('/').map(str::to_owned).collect();
        (module, text.to_owned())
    };
    let cases = [
        (file("domain/a", "use std::fs;\n"), "`std::fs`"),
        (
            file("domain/a", "use std::{collections::HashMap, fs};\n"),
            "`use std::{collections::HashMap, fs`",
        ),
        (
            file("domain/a", "use crate::adapters::git;\n"),
            "crate::adapters::git",
        ),
        (
            file("adapters/a", "use crate::app::Session;\n"),
            "crate::app",
        ),
        (file("app/a", "fn f() { println!(\"x\"); }\n"), "`println!`"),
        (
            file("front/cli/a", "fn f() { eprintln!(\"x\"); }\n"),
            "stderr lines go through src/front/stderr.rs",
        ),
        (
            file("app/a", "use crate::front::cli;\n"),
            "crate::front::cli",
        ),
        (
            file("front/a", "use crate::adapters::memdir;\n"),
            "crate::adapters::memdir",
        ),
        (
            file("front/a", "fn f() { std::fs::read(\"x\"); }\n"),
            "`std::fs`",
        ),
        (file("stray", "pub fn f() {}\n"), "not in a layer folder"),
    ];
    for ((module, text), expected) in cases {
        let mut files = vec![
            (vec!["domain".to_owned()], String::new()),
            (vec!["adapters".to_owned()], String::new()),
            (vec!["adapters".to_owned(), "git".to_owned()], String::new()),
            (
                vec!["adapters".to_owned(), "memdir".to_owned()],
                String::new(),
            ),
            (vec!["app".to_owned()], String::new()),
            (vec!["front".to_owned()], String::new()),
            (vec!["front".to_owned(), "cli".to_owned()], String::new()),
        ];
        files.push((module.clone(), text.clone()));
        let found = violations(&files);
        assert!(
            found.iter().any(|line| line.contains(expected)),
            "src/{}: {text:?} should be a violation mentioning {expected:?}, found {found:?}",
            module.join("/")
        );
    }
}

#[test]
fn the_source_root_holds_only_the_crate_and_the_binary() {
    let mut stray = Vec::new();
    for entry in std::fs::read_dir(src()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_file() && !matches!(name.as_str(), "lib.rs" | "main.rs") {
            stray.push(name);
        } else if path.is_dir() && !LAYERS.contains(&name.as_str()) {
            stray.push(format!("{name}/"));
        }
    }
    assert!(
        stray.is_empty(),
        "src/ holds {stray:?}: every module lives in a layer folder ({})",
        LAYERS.join(", ")
    );
}

/// Each command's clap arguments sit beside its handler, in the file of
/// `src/front/cli/` that runs it: `cli/mod.rs` holds the command tree and
/// dispatch, and defines arguments only for the commands it serves itself;
/// no file of `cli/` takes an `Args` type from it.
#[test]
fn each_commands_arguments_sit_beside_its_handler() {
    // Served in `cli/mod.rs` itself: the MCP server (outside stdout's lock),
    // the viewer and the merge driver (each a call into another front end).
    const SERVED_BY_MOD: [&str; 3] = ["McpArgs", "UiArgs", "MergeDriverArgs"];
    let cli = src().join("front/cli");
    let upward = regex::Regex::new(r"\bsuper::(?:\w+Args\b|\{[^}]*\b\w+Args\b)").unwrap();
    let defined = regex::Regex::new(r"(?m)^(?:pub(?:\(\w+\))? )?struct (\w+Args)\b").unwrap();
    let mut found = Vec::new();
    for entry in fs::read_dir(&cli).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(&path).unwrap();
        if name == "mod.rs" {
            for args in defined.captures_iter(&text) {
                if !SERVED_BY_MOD.contains(&&args[1]) {
                    found.push(format!(
                        "src/front/cli/mod.rs defines {}: move it beside its handler",
                        &args[1]
                    ));
                }
            }
        } else if let Some(hit) = upward.find(&text) {
            found.push(format!(
                "src/front/cli/{name}: `{}`: a command's arguments live in its handler's file",
                hit.as_str()
            ));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The environment is read in one place: `src/adapters/env.rs`, the
/// registry of the variables goldfish reads, a function for each. Setting a
/// variable (for this process's libraries, or a child's) is not reading it,
/// and `std::env::current_dir`, `args_os` and the like are not variables.
#[test]
fn the_environment_is_read_only_through_the_registry() {
    let read = regex::Regex::new(r"\benv::(var|var_os|vars|vars_os)\b").unwrap();
    let mut found = Vec::new();
    for (module, text) in all_modules() {
        if module == ["adapters", "env"] {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(hit) = read.find(line) {
                found.push(format!(
                    "src/{}: line {}: `{}`: read it through a function of src/adapters/env.rs",
                    module.join("/"),
                    n + 1,
                    hit.as_str()
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The index stores what history found and what the core judged; it reads
/// neither git nor history itself (nor gix): the sync walks, the index
/// writes what it is handed.
#[test]
fn the_index_reads_neither_git_nor_history() {
    let files = all_modules();
    let known: BTreeSet<Module> = files.iter().map(|(module, _)| module.clone()).collect();
    // git's repository handle, reached through a glob import too.
    let handle = regex::Regex::new(r"&(?:'\w+\s+)?Workspace\b").unwrap();
    let mut reading = Vec::new();
    for (module, text) in &files {
        if module.len() < 2 || module[..2] != ["adapters", "index"] {
            continue;
        }
        let uses = handle.is_match(text)
            || text.contains("gix::")
            || references(&known, module, text).into_iter().any(|target| {
                target.len() >= 2
                    && target[0] == "adapters"
                    && (target[1] == "git" || target[1] == "history")
            });
        if uses {
            let path = src().join(module.join("/"));
            let file = if path.with_extension("rs").is_file() {
                format!("{}.rs", module.join("/"))
            } else {
                format!("{}/mod.rs", module.join("/"))
            };
            reading.push(file);
        }
    }
    reading.sort();
    assert!(
        reading.is_empty(),
        "{reading:?} use crate::adapters::git, ::history or gix: the index stores what history found (the sync, src/adapters/sync/, hands it facts, or a core trait)"
    );
}

/// SQL is the index's: every other module hands it facts and asks it
/// questions through its types (`index::writing::Writing` for a sync).
#[test]
fn only_the_index_speaks_sql() {
    let speaking: Vec<String> = all_modules()
        .into_iter()
        .filter(|(module, text)| {
            !(module.len() >= 2 && module[..2] == ["adapters", "index"])
                && text.contains("rusqlite")
        })
        .map(|(module, _)| module.join("/"))
        .collect();
    assert!(
        speaking.is_empty(),
        "{speaking:?} use rusqlite: only src/adapters/index/ speaks SQL"
    );
}

/// docs/ARCHITECTURE.md stays short (at most 30 KiB) and true to the tree:
/// every `.rs` file a code-map section names exists under the folders its
/// heading names (at any depth), or as a path from the repository's root,
/// `src/` or `tests/it/`.
#[test]
fn the_architecture_page_names_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    assert!(
        page.len() <= 30 * 1024,
        "docs/ARCHITECTURE.md is {} bytes: keep it within 30 KiB",
        page.len()
    );
    let quoted = regex::Regex::new(r"`([^`\s]+)`").unwrap();
    let mut missing = Vec::new();
    let code_map = page
        .split("\n## ")
        .find(|part| part.starts_with("Code Map"))
        .unwrap();
    for section in code_map.split("\n### ").skip(1) {
        let (heading, body) = section.split_once('\n').unwrap();
        let folders: Vec<PathBuf> = quoted
            .captures_iter(heading)
            .map(|c| root.join(c[1].trim_end_matches('/')))
            .map(|path| {
                if path.is_dir() {
                    path
                } else {
                    path.parent().unwrap().to_owned()
                }
            })
            .collect();
        for named in quoted.captures_iter(body) {
            let name = &named[1];
            if !name.ends_with(".rs") || name.contains("::") {
                continue;
            }
            let found = ["", "src", "tests/it"]
                .iter()
                .any(|base| root.join(base).join(name).is_file())
                || folders.iter().any(|folder| holds(folder, name));
            if !found {
                missing.push(format!("{heading}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md names files that do not exist: {missing:#?}"
    );
}

/// Whether `folder` holds `name` (a file name, or a path ending in one) at
/// any depth.
fn holds(folder: &Path, name: &str) -> bool {
    if folder.join(name).is_file() {
        return true;
    }
    fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| {
            let path = entry.path();
            path.is_dir() && holds(&path, name)
        })
}
