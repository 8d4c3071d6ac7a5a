//! The README's subject tables are generated from the declarations in `relay_contracts::rpc`
//! and the request and reply schemas. Run with `RELAY_UPDATE_README=1` to rewrite them.

use relay_contracts::rpc::docs;

const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");

/// The README with every `<!-- subjects:<service> -->` block regenerated.
fn regenerated(readme: &str) -> String {
    let mut out = readme.to_string();
    for service in docs::services() {
        let open = format!("<!-- subjects:{service} -->\n");
        let start = out
            .find(&open)
            .unwrap_or_else(|| panic!("README has no {open:?} block for {service}"))
            + open.len();
        let end = start + out[start..].find("<!-- /subjects -->").expect("a closing marker");
        out.replace_range(start..end, &docs::markdown_table(service));
    }
    out
}

#[test]
fn the_readme_subject_tables_are_generated_from_the_declarations() {
    let readme = std::fs::read_to_string(README).unwrap();
    let fresh = regenerated(&readme);
    if std::env::var_os("RELAY_UPDATE_README").is_some() {
        std::fs::write(README, &fresh).unwrap();
        return;
    }
    assert!(
        readme == fresh,
        "README's subject tables are stale: run `RELAY_UPDATE_README=1 cargo test -p gateway --test readme_subjects`"
    );
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
