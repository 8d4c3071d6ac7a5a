//! The docs' generated parts — the subject tables of every service (`<!-- subjects:<service> -->`
//! blocks, in the guide of their concern or the reference) and the services diagram with its
//! subject counts (`<!-- services -->`, docs/architecture.md) — are generated from the
//! declarations in `relay_contracts::rpc` and the request and reply schemas. Run with
//! `RELAY_UPDATE_README=1` to rewrite them.

use relay_contracts::rpc::docs;
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// README.md and every Markdown file under docs/.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![Path::new(ROOT).join("README.md")];
    walk(&Path::new(ROOT).join("docs"), &mut out);
    out.sort();
    out
}

/// `text` with the block between `open` and `close` replaced by `body`, if it has the block.
fn replace_block(text: &mut String, open: &str, close: &str, body: &str) -> bool {
    let Some(at) = text.find(open) else { return false };
    let start = at + open.len();
    let end = start + text[start..].find(close).expect("a closing marker");
    text.replace_range(start..end, body);
    true
}

/// Every page with its generated blocks regenerated; panics when a block is missing or twice.
fn regenerated() -> Vec<(PathBuf, String, String)> {
    let mut pages: Vec<(PathBuf, String, String)> = pages()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text.clone(), text)
        })
        .collect();
    let mut blocks: Vec<(String, &str, String)> = docs::services()
        .into_iter()
        .map(|s| {
            (
                format!("<!-- subjects:{s} -->\n"),
                "<!-- /subjects -->",
                docs::markdown_table(s),
            )
        })
        .collect();
    blocks.push((
        "<!-- services -->\n".into(),
        "<!-- /services -->",
        docs::services_markdown(),
    ));
    for (open, close, body) in &blocks {
        let homes: Vec<&Path> = pages
            .iter_mut()
            .filter_map(|(p, _, fresh)| replace_block(fresh, open, close, body).then_some(p.as_path()))
            .collect();
        assert_eq!(homes.len(), 1, "{open:?} must be in exactly one page, is in {homes:?}");
    }
    pages
}

#[test]
fn the_docs_subject_tables_and_services_diagram_are_generated_from_the_declarations() {
    let stale: Vec<_> = regenerated()
        .into_iter()
        .filter(|(_, text, fresh)| text != fresh)
        .collect();
    if std::env::var_os("RELAY_UPDATE_README").is_some() {
        for (path, _, fresh) in &stale {
            std::fs::write(path, fresh).unwrap();
        }
        return;
    }
    let names: Vec<_> = stale.iter().map(|(p, _, _)| p.display().to_string()).collect();
    assert!(
        stale.is_empty(),
        "generated tables are stale in {names:?}: run `RELAY_UPDATE_README=1 cargo test -p gateway --test readme_subjects`"
    );
}

#[test]
fn the_services_table_counts_every_declared_subject_once() {
    let table = docs::services_markdown();
    let counted: usize = table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Service") && !l.starts_with("| **all"))
        .filter_map(|l| l.split('|').nth(2)?.trim().parse::<usize>().ok())
        .sum();
    assert_eq!(counted, relay_contracts::rpc::ALL.len(), "{table}");
    assert!(table.contains("| session-registry |"), "{table}");
}

#[test]
fn a_table_marks_required_fields_and_optional_replies() {
    let table = docs::markdown_table("permission-manager");
    // permission.request: agentId, sessionId and tool are required; description is not.
    let row = table.lines().find(|l| l.starts_with("| `permission.request`")).unwrap();
    assert!(
        row.contains("requestId, **agentId**, **sessionId**, **tool**, command, filePath, description"),
        "{row}"
    );
    // question.ask answers `answer` only when a policy answered at once.
    let row = table.lines().find(|l| l.starts_with("| `question.ask`")).unwrap();
    assert!(row.contains("`{questionId, answer?}`"), "{row}");
}
