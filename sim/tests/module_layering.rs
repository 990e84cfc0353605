//! The modules of `leaselab-sim` import each other without cycles: each module's `crate::`
//! references (comments left out) form a graph, which must have no cycle. In particular the
//! shared caller loop (`driver`) depends on nothing simulation-specific.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name → the modules it references.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("sim/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let module = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .expect("a UTF-8 file name")
            .to_string();
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        let mut uses = BTreeSet::new();
        for line in text.lines() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for (at, _) in code.match_indices("crate::") {
                let rest = &code[at + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    uses.insert(name);
                }
            }
            // `use crate::{a, b}` lists several.
            if let Some(list) = code.strip_prefix("use crate::{") {
                for name in list.split([',', '}', ';']) {
                    let name = name.trim().split("::").next().unwrap_or("").to_string();
                    if !name.is_empty() && name != module {
                        uses.insert(name);
                    }
                }
            }
        }
        graph.insert(module, uses);
    }
    graph
}

/// A cycle through `graph`, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(2) => return None,
            Some(1) => {
                let from = path.iter().position(|n| n == node).expect("on the path");
                let mut cycle = path[from..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, state, path) {
                return Some(cycle);
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut state, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn sim_modules_import_each_other_without_cycles() {
    let graph = imports();
    assert!(graph.contains_key("driver") && graph.contains_key("run"));
    assert_eq!(find_cycle(&graph), None, "import graph: {graph:#?}");
}

#[test]
fn the_shared_caller_loop_depends_on_nothing_simulation_specific() {
    let graph = imports();
    let driver: Vec<&str> = graph["driver"].iter().map(String::as_str).collect();
    assert_eq!(driver, ["clients", "events"]);
}

#[test]
fn a_cycle_is_found_when_there_is_one() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    graph.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    graph.insert("c".to_string(), BTreeSet::new());
    assert_eq!(find_cycle(&graph), None);
}
