//! No module cycles inside `shared`, at the granularity of its top-level modules (`app`, `auth`,
//! `store`, …): a module may use another only if that one does not, directly or through others,
//! use it back. Cycles make modules impossible to understand, test or move one at a time.
//!
//! The graph is read from the source: every file under `src/` (nested modules included) belongs
//! to the top-level module of its path, and its references to other top-level modules are the
//! paths starting with `crate::` (or `shared::`, the crate's own name) and the `super::` paths
//! that climb to the crate root, with `use` groups (`crate::{a, b::c}`) expanded and the root's
//! re-exports (`crate::AppState` is `app`) and exported macros resolved to their modules.
//! Comments (documentation links included) and string literals do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module → the modules it uses, each with the first place it does.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

#[test]
fn top_level_modules_of_shared_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph_of(&src);
    assert!(graph.len() > 10, "the source was not found or not read: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|pair| format!("  {} -> {}   ({})", pair[0], pair[1], graph[&pair[0]][&pair[1]]))
            .collect();
        panic!("module cycle in shared: {}\n{}", cycle.join(" -> "), steps.join("\n"));
    }
}

/// The first cycle found, as a path that ends where it starts; None for an acyclic graph.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_owned(), Mark::Open);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(|edges| edges.keys()) {
            match marks.get(next.as_str()) {
                Some(Mark::Open) => {
                    let start = path.iter().position(|n| n == next).expect("open nodes are on the path");
                    let mut cycle = path[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, marks, path) {
                        return Some(cycle);
                    }
                }
            }
        }
        path.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if !marks.contains_key(node.as_str())
            && let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

/// The graph of the crate whose `lib.rs` is in `src`.
fn graph_of(src: &Path) -> Graph {
    let root = code_of(&std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let modules = declared_modules(&root);
    let mut files = Vec::new();
    collect_files(src, &mut files);
    // Names the root re-exports, and exported macros, lead to the module that defines them.
    let mut aliases: BTreeMap<String, String> = re_exports(&root, &modules);
    let mut sources = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src").to_path_buf();
        let Some(path) = module_path(&relative) else { continue };
        let code = code_of(&std::fs::read_to_string(&file).expect("readable source"));
        for name in exported_macros(&code) {
            aliases.insert(name, path[0].clone());
        }
        sources.push((relative, path, code));
    }
    let mut graph = Graph::new();
    for module in &modules {
        graph.entry(module.clone()).or_default();
    }
    for (relative, path, code) in sources {
        for (line, target) in references(&code, &path) {
            let target = aliases.get(&target).cloned().unwrap_or(target);
            if target != path[0] && modules.contains(&target) {
                let place = format!("src/{}:{line}", relative.display());
                graph.entry(path[0].clone()).or_default().entry(target).or_insert(place);
            }
        }
    }
    graph
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("readable directory").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file relative to `src` (`store/keys.rs` is `store::keys`,
/// `store/mod.rs` is `store`); None for the crate root.
fn module_path(relative: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let file = parts.pop()?;
    let stem = file.strip_suffix(".rs")?;
    if stem != "mod" && !(parts.is_empty() && stem == "lib") {
        parts.push(stem.to_owned());
    }
    (!parts.is_empty()).then_some(parts)
}

/// `mod x;` / `pub mod x;` declarations of the root.
fn declared_modules(root: &str) -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for line in root.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(i) = words.iter().position(|w| *w == "mod")
            && let Some(name) = words.get(i + 1).and_then(|n| n.strip_suffix(';'))
        {
            modules.insert(name.to_owned());
        }
    }
    modules
}

/// `pub use module::Name;` and `pub use module::{A, B};` at the root: name → module.
fn re_exports(root: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut aliases = BTreeMap::new();
    for statement in root.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else { continue };
        let rest = rest.trim().trim_start_matches("crate::");
        let Some((module, items)) = rest.split_once("::") else { continue };
        if !modules.contains(module) {
            continue;
        }
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.rsplit("::").next().unwrap_or_default();
            let name = name.split(" as ").last().unwrap_or_default().trim();
            if !name.is_empty() {
                aliases.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    aliases
}

/// Macros a file exports to the crate root (`#[macro_export] macro_rules! name`).
fn exported_macros(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[macro_export]") {
        rest = &rest[at + "#[macro_export]".len()..];
        if let Some(name) = rest.trim_start().strip_prefix("macro_rules!") {
            names.push(identifier(name.trim_start()).to_owned());
        }
    }
    names
}

/// The crate-level names a file's code refers to, with their line numbers: the first segment
/// after `crate::` / `shared::`, or after enough `super::` to reach the root (a file's module
/// path, plus the inline `mod x { … }` blocks it is in, says how many that takes).
fn references(code: &str, path: &[String]) -> Vec<(usize, String)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut inline: Vec<usize> = Vec::new(); // brace depths at which inline modules opened
    let mut depth = 0usize;
    let mut line = 1;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => line += 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        let starts_word = i == 0 || !is_ident(bytes[i - 1]);
        if !starts_word || !is_ident(c) {
            i += 1;
            continue;
        }
        let word = identifier(&code[i..]);
        let after = &code[i + word.len()..];
        match word {
            "mod" => {
                // An inline module: `mod name {`.
                let rest = after.trim_start();
                let name = identifier(rest);
                if !name.is_empty() && rest[name.len()..].trim_start().starts_with('{') {
                    inline.push(depth);
                }
            }
            "crate" | "shared" if after.starts_with("::") => {
                for name in first_segments(&after[2..]) {
                    found.push((line, name));
                }
            }
            "super" if after.starts_with("::") => {
                let mut rest = &after[2..];
                let mut climbs = 1;
                while let Some(next) = rest.strip_prefix("super::") {
                    rest = next;
                    climbs += 1;
                }
                let levels = path.len() + inline.len();
                if climbs >= levels {
                    for name in first_segments(rest) {
                        found.push((line, name));
                    }
                }
                // Past the whole chain: its inner `super`s are not paths of their own.
                i = code.len() - rest.len();
                continue;
            }
            _ => {}
        }
        i += word.len();
    }
    found
}

/// The first segment of a path (`a::b` gives `a`), or of every path of a group (`{a, b::c}`).
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut names = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    names.extend(first_segments(&group[start..i]));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    names.extend(first_segments(&group[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        return names;
    }
    let name = identifier(rest);
    if name.is_empty() || name == "self" { Vec::new() } else { vec![name.to_owned()] }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn identifier(text: &str) -> &str {
    let end = text.bytes().position(|b| !is_ident(b)).unwrap_or(text.len());
    &text[..end]
}

/// The code without comments and without the contents of string and character literals (line
/// breaks kept, so line numbers stay right).
fn code_of(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut nesting = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    nesting += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    nesting -= 1;
                    i += 2;
                    if nesting == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && (i == 0 || !is_ident(chars[i - 1] as u8)) {
            // A raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            let literal_end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j] == '\'')
            } else {
                (chars.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            match literal_end {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod finder {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut graph = Graph::new();
        for (from, to) in edges {
            graph.entry((*from).to_owned()).or_default().insert((*to).to_owned(), "test".to_owned());
            graph.entry((*to).to_owned()).or_default();
        }
        graph
    }

    #[test]
    fn finds_a_cycle_and_names_it() {
        let cyclic = graph(&[("app", "auth"), ("auth", "store"), ("store", "keys"), ("keys", "auth"), ("app", "x")]);
        let cycle = find_cycle(&cyclic).expect("a cycle");
        assert_eq!(cycle.first(), cycle.last());
        let mut members: Vec<&str> = cycle[1..].iter().map(String::as_str).collect();
        members.sort_unstable();
        assert_eq!(members, ["auth", "keys", "store"]);
        assert_eq!(find_cycle(&graph(&[("a", "b"), ("b", "a")])).map(|c| c.len()), Some(3));
    }

    #[test]
    fn accepts_an_acyclic_graph() {
        assert_eq!(find_cycle(&graph(&[("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")])), None);
        assert_eq!(find_cycle(&graph(&[])), None);
    }

    #[test]
    fn reads_references_of_nested_modules_groups_and_super() {
        let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
        let code = code_of(
            "use crate::{app::AppState, store::{self, keys}};\n\
             use super::Sibling; // crate::ignored\n\
             /// [`crate::doc_link`]\n\
             fn f() { let _ = \"crate::in_a_string\"; let c = '\"'; shared::error::x(); }\n\
             mod tests { use super::*; use super::super::up; fn g<'a>(_: &'a str) {} }\n\
             use super::super::top;\n",
        );
        let names = |refs: Vec<(usize, String)>| refs.into_iter().map(|(_, n)| n).collect::<Vec<_>>();
        // In `auth::session`: `super::` stays in auth, `super::super::` reaches the root.
        assert_eq!(names(references(&code, &path("auth::session"))), ["app", "store", "error", "top"]);
        // In `auth`: one `super::` reaches the root; in its inline module, two do.
        assert_eq!(names(references(&code, &path("auth"))), ["app", "store", "Sibling", "error", "up", "top"]);
        assert_eq!(module_path(Path::new("store/keys.rs")), Some(path("store::keys")));
        assert_eq!(module_path(Path::new("store/mod.rs")), Some(path("store")));
        assert_eq!(module_path(Path::new("lib.rs")), None);
    }

    #[test]
    fn a_cycle_written_in_files_is_found() {
        let dir = std::env::temp_dir().join(format!("module-cycles-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("lib.rs"), "pub mod a;\npub mod b;\npub mod c;\npub use c::Thing;\n").unwrap();
        std::fs::write(dir.join("a.rs"), "use crate::b::inner::X;\n").unwrap();
        std::fs::write(dir.join("b/mod.rs"), "pub mod inner;\n").unwrap();
        std::fs::write(dir.join("b/inner.rs"), "mod t { fn f() { super::super::super::c::go(); } }\n").unwrap();
        std::fs::write(dir.join("c.rs"), "pub struct Thing; fn f() { let _: crate::a::Y; }\n").unwrap();
        let found = graph_of(&dir);
        let cycle = find_cycle(&found);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(cycle.map(|c| c.join(" -> ")).as_deref(), Some("a -> b -> c -> a"));
        // Without the edge back, no cycle (and a re-export resolves to its module).
        let dir = std::env::temp_dir().join(format!("module-cycles-ok-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lib.rs"), "pub mod a;\npub mod c;\npub use c::Thing;\n").unwrap();
        std::fs::write(dir.join("a.rs"), "use crate::Thing;\n").unwrap();
        std::fs::write(dir.join("c.rs"), "pub struct Thing;\n").unwrap();
        let found = graph_of(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(found["a"].keys().collect::<Vec<_>>(), ["c"]);
        assert_eq!(find_cycle(&found), None);
    }
}
