//! The README is a front door whose map is the tree, and the docs hang together: every relative
//! link goes to a file (and a heading) that exists, and every seed the code cites is in
//! docs/design/seeds. Plain file checks, no services.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The files git tracks, relative to the root (untracked build output is not the tree).
fn tracked() -> Vec<String> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(ROOT)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git ls-files: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// The names directly under `dir` ("" for the root) among the tracked files; a folder ends in `/`.
fn children(files: &[String], dir: &str) -> BTreeSet<String> {
    files
        .iter()
        .filter_map(|f| f.strip_prefix(dir))
        .map(|rest| match rest.split_once('/') {
            Some((folder, _)) => format!("{folder}/"),
            None => rest.to_string(),
        })
        .collect()
}

/// The README's map: its top-level entries, and the entries indented under each folder.
fn map() -> (BTreeSet<String>, Vec<(String, BTreeSet<String>)>) {
    let readme = read(&Path::new(ROOT).join("README.md"));
    let block = readme
        .split("\n## Map\n")
        .nth(1)
        .expect("README has a `## Map` section")
        .split("```\n")
        .nth(1)
        .expect("the map is a code block");
    let mut top = BTreeSet::new();
    let mut nested: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let name = line.split_whitespace().next().unwrap().to_string();
        if line.starts_with("  ") {
            let (_, entries) = nested.last_mut().expect("an indented line under a folder");
            entries.insert(name);
        } else {
            if name.ends_with('/') {
                nested.push((name.clone(), BTreeSet::new()));
            }
            top.insert(name);
        }
    }
    (top, nested)
}

#[test]
fn the_readmes_map_names_every_top_level_entry_and_every_crate_service_and_doc() {
    let files = tracked();
    let (top, nested) = map();
    assert_eq!(
        top,
        children(&files, ""),
        "README's map and the tree's top level differ"
    );
    for (folder, entries) in nested.iter().filter(|(_, e)| !e.is_empty()) {
        let actual: BTreeSet<String> = children(&files, folder)
            .into_iter()
            .map(|c| c.trim_end_matches('/').to_string())
            .collect();
        assert_eq!(entries, &actual, "README's map and the tree differ under {folder}");
    }
    for folder in ["crates/", "services/", "docs/"] {
        assert!(
            nested.iter().any(|(f, e)| f == folder && !e.is_empty()),
            "the map lists what is in {folder}"
        );
    }
}

#[test]
fn the_readme_is_a_front_door_under_300_lines() {
    let lines = read(&Path::new(ROOT).join("README.md")).lines().count();
    assert!(lines < 300, "README.md has {lines} lines: move reference into docs/");
}

/// README.md and every Markdown page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = tracked()
        .into_iter()
        .filter(|f| f.ends_with(".md") && (f == "README.md" || f.starts_with("docs/")))
        .map(|f| Path::new(ROOT).join(f))
        .collect();
    out.sort();
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of a page outside its fenced code blocks (and not the fences themselves).
fn unfenced(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

fn anchors(text: &str) -> BTreeSet<String> {
    unfenced(text)
        .filter(|line| line.starts_with('#'))
        .map(|line| anchor(line.trim_start_matches('#')))
        .collect()
}

/// The `](target)` links of a page outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for mut rest in unfenced(text) {
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_readme_and_docs_reaches_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = read(&page);
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {link} (no such file)", page.display()));
            } else if !fragment.is_empty()
                && target.extension().is_some_and(|e| e == "md")
                && !anchors(&read(&target)).contains(fragment)
            {
                broken.push(format!("{}: {link} (no such heading)", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_seed_the_code_cites_is_in_docs_design() {
    let files = tracked();
    let seeds = children(&files, "docs/design/seeds/");
    let mut cited = BTreeSet::new();
    for file in files
        .iter()
        .filter(|f| f.ends_with(".rs") || f.ends_with(".toml") || f.ends_with(".md"))
    {
        let text = read(&Path::new(ROOT).join(file)).to_lowercase();
        for (at, _) in text.match_indices("seed ") {
            let number: String = text[at + 5..].chars().take(3).collect();
            if number.len() == 3 && number.chars().all(|c| c.is_ascii_digit()) {
                cited.insert(number);
            }
        }
    }
    assert!(cited.len() >= 5, "the code cites seeds 000 to 004: {cited:?}");
    for number in cited {
        assert!(
            seeds.iter().any(|s| s.starts_with(&format!("{number}_"))),
            "seed {number} is cited but not in docs/design/seeds: {seeds:?}"
        );
    }
    for note in ["docs/design/DESIGN.md", "docs/design/README.md"] {
        assert!(Path::new(ROOT).join(note).exists(), "{note}");
    }
}
