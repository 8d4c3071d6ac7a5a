//! Every crate's modules form a graph without cycles: when one module uses another's items, the
//! other never uses the first's, directly or around a loop. A module's submodules are folded
//! into it (the graph is of the modules directly under the crate root), and the crate root itself
//! (`lib.rs`, `main.rs`, `src/bin/*.rs`) is left out: it only declares and wires, and every
//! module may name what it defines. Test code (`#[cfg(test)]`) is left out too.
//!
//! `make modules` prints every crate's graph. The sources are read with syn: `use` trees, every
//! path in items and expressions, and `crate::`/`super::` paths inside macro calls.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Crates whose cycles wait for a split, each with the reason; each must still have one (a crate
/// that lost its last cycle comes off this list, so none comes back unseen). None today.
const WAITING: &[(&str, &str)] = &[];

/// A module path under the crate root (`[]` is the root).
type ModPath = Vec<String>;

/// One crate target's modules: each module's file text is parsed once, inline modules included.
struct Tree {
    modules: BTreeSet<ModPath>,
    /// Names the crate root imports (`use a::B;` makes `crate::B` mean `crate::a::B`).
    root_uses: BTreeMap<String, ModPath>,
    files: Vec<(ModPath, syn::File)>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string() == "test"))
}

fn parse(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Collects the modules declared by `items` (at `at`, whose files live in `dir`).
fn declare(tree: &mut Tree, items: &[syn::Item], at: &ModPath, dir: &Path) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_cfg_test(&m.attrs) {
            continue;
        }
        let mut path = at.clone();
        path.push(m.ident.to_string());
        tree.modules.insert(path.clone());
        match &m.content {
            Some((_, inner)) => declare(tree, inner, &path, &dir.join(m.ident.to_string())),
            None => {
                let flat = dir.join(format!("{}.rs", m.ident));
                let file = if flat.exists() {
                    flat
                } else {
                    dir.join(m.ident.to_string()).join("mod.rs")
                };
                let parsed = parse(&file);
                declare(tree, &parsed.items, &path, &dir.join(m.ident.to_string()));
                tree.files.push((path, parsed));
            }
        }
    }
}

fn load(root_file: &Path) -> Tree {
    let parsed = parse(root_file);
    let mut tree = Tree {
        modules: BTreeSet::from([vec![]]),
        root_uses: BTreeMap::new(),
        files: Vec::new(),
    };
    declare(&mut tree, &parsed.items, &vec![], root_file.parent().unwrap());
    for item in &parsed.items {
        if let syn::Item::Use(u) = item {
            for (name, path) in use_leaves(&u.tree, vec![]) {
                tree.root_uses.insert(name, path);
            }
        }
    }
    tree.files.push((vec![], parsed));
    tree
}

/// A `use` tree's leaves: the name each brings in and the full path it names.
fn use_leaves(tree: &syn::UseTree, mut prefix: Vec<String>) -> Vec<(String, Vec<String>)> {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix)
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name != "self" {
                prefix.push(name.clone());
            }
            let name = prefix.last().cloned().unwrap_or(name);
            vec![(name, prefix)]
        }
        syn::UseTree::Rename(r) => {
            prefix.push(r.ident.to_string());
            vec![(r.rename.to_string(), prefix)]
        }
        syn::UseTree::Glob(_) => vec![("*".into(), prefix)],
        syn::UseTree::Group(g) => g.items.iter().flat_map(|t| use_leaves(t, prefix.clone())).collect(),
    }
}

/// Finds what each module names: a visitor over one file, tracking the inline module it is in.
struct Refs<'a> {
    tree: &'a Tree,
    at: ModPath,
    out: BTreeSet<ModPath>,
}

impl Refs<'_> {
    /// The module `segments` (as written in module `self.at`) names, if it is one of this crate's.
    fn resolve(&mut self, segments: &[String]) {
        let mut abs: Vec<String> = match segments.first().map(String::as_str) {
            Some("crate") => segments[1..].to_vec(),
            Some("super") => {
                let supers = segments.iter().take_while(|s| *s == "super").count();
                let keep = self.at.len().saturating_sub(supers);
                [&self.at[..keep], &segments[supers..]].concat()
            }
            Some("self") => [&self.at[..], &segments[1..]].concat(),
            Some(first) => {
                let child = [&self.at[..], &[first.to_string()]].concat();
                if self.tree.modules.contains(&child) {
                    [&self.at[..], segments].concat()
                } else {
                    return;
                }
            }
            None => return,
        };
        // `crate::Name` for a name the root imports from a module means that module.
        if let Some(first) = abs.first()
            && !self.tree.modules.contains(&vec![first.clone()])
            && let Some(real) = self.tree.root_uses.get(first)
        {
            abs = [&real[..], &abs[1..]].concat();
            if abs.first().is_some_and(|s| s == "crate") {
                abs.remove(0);
            }
        }
        let module = (0..=abs.len())
            .rev()
            .map(|n| abs[..n].to_vec())
            .find(|p| self.tree.modules.contains(p))
            .unwrap_or_default();
        self.out.insert(module);
    }
}

impl<'ast> Visit<'ast> for Refs<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_cfg_test(&m.attrs) {
            return;
        }
        if let Some((_, items)) = &m.content {
            self.at.push(m.ident.to_string());
            for item in items {
                self.visit_item(item);
            }
            self.at.pop();
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_cfg_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_cfg_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if is_cfg_test(&u.attrs) {
            return;
        }
        for (_, path) in use_leaves(&u.tree, vec![]) {
            self.resolve(&path);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.resolve(&segments);
        syn::visit::visit_path(self, p);
    }

    /// Macro bodies are tokens to syn: `crate :: a :: b` and `super :: a` runs in them count.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        fn walk(tokens: proc_macro2::TokenStream, refs: &mut Refs<'_>) {
            let tokens: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
            let mut i = 0;
            while i < tokens.len() {
                match &tokens[i] {
                    proc_macro2::TokenTree::Group(g) => walk(g.stream(), refs),
                    proc_macro2::TokenTree::Ident(id) if id == "crate" || id == "super" => {
                        let mut segments = vec![id.to_string()];
                        let mut j = i + 1;
                        // `::` is two `:` puncts, then an identifier.
                        while let (
                            Some(proc_macro2::TokenTree::Punct(a)),
                            Some(proc_macro2::TokenTree::Punct(b)),
                            Some(proc_macro2::TokenTree::Ident(next)),
                        ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
                        {
                            if a.as_char() != ':' || b.as_char() != ':' {
                                break;
                            }
                            segments.push(next.to_string());
                            j += 3;
                        }
                        refs.resolve(&segments);
                        i = j - 1;
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        walk(m.tokens.clone(), self);
        syn::visit::visit_macro(self, m);
    }
}

/// One target's graph: top-level module → the top-level modules it uses.
fn graph(tree: &Tree) -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = tree
        .modules
        .iter()
        .filter(|m| m.len() == 1)
        .map(|m| (m[0].clone(), BTreeSet::new()))
        .collect();
    for (at, file) in &tree.files {
        let Some(top) = at.first() else { continue };
        let mut refs = Refs {
            tree,
            at: at.clone(),
            out: BTreeSet::new(),
        };
        refs.visit_file(file);
        for target in refs.out {
            if let Some(other) = target.first()
                && other != top
            {
                g.get_mut(top).unwrap().insert(other.clone());
            }
        }
    }
    g
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn connect<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in &s.g[v] {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                connect(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                component.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            connect(&mut s, v);
        }
    }
    s.out
}

/// Every crate target in the workspace: `(crate/target, root file)`.
fn targets() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for group in ["crates", "services"] {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join(group))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("Cargo.toml").exists())
            .collect();
        dirs.sort();
        for dir in dirs {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            for root in ["lib.rs", "main.rs"] {
                let file = dir.join("src").join(root);
                if file.exists() {
                    out.push((format!("{name}/{root}"), file));
                }
            }
            let mut bins: Vec<PathBuf> = std::fs::read_dir(dir.join("src/bin"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "rs"))
                .collect();
            bins.sort();
            for bin in bins {
                out.push((
                    format!("{name}/bin/{}", bin.file_name().unwrap().to_string_lossy()),
                    bin,
                ));
            }
        }
    }
    out
}

#[test]
fn no_crate_has_a_cycle_between_its_modules() {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut edges = 0;
    for (target, file) in targets() {
        let g = graph(&load(&file));
        edges += g.values().map(BTreeSet::len).sum::<usize>();
        // The graph, one module a line with what it uses (`make modules` shows it).
        println!("{target}: {} modules", g.len());
        for (module, uses) in &g {
            let uses: Vec<&str> = uses.iter().map(String::as_str).collect();
            println!("  {module} -> {}", uses.join(", "));
        }
        for cycle in cycles(&g) {
            let within: Vec<String> = cycle
                .iter()
                .flat_map(|m| {
                    g[m].iter()
                        .filter(|w| cycle.contains(*w))
                        .map(move |w| format!("{m} -> {w}"))
                })
                .collect();
            let krate = target.split('/').next().unwrap().to_string();
            found.entry(krate).or_default().push(within.join(", "));
        }
    }
    assert!(edges > 100, "the scan found only {edges} uses between modules");
    let waiting: BTreeSet<&str> = WAITING.iter().map(|(c, _)| *c).collect();
    let unexpected: BTreeMap<&String, &Vec<String>> =
        found.iter().filter(|(c, _)| !waiting.contains(c.as_str())).collect();
    assert!(unexpected.is_empty(), "cycles between modules: {unexpected:#?}");
    let cleared: Vec<&&str> = waiting.iter().filter(|c| !found.contains_key(**c)).collect();
    assert!(cleared.is_empty(), "no cycle left in {cleared:?}: take it off WAITING");
}
