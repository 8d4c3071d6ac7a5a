//! Secret redaction before persisting (seed 001 reliability rules): every string in the payload
//! of a terminal, transcript, tool, command or file event is scrubbed by configurable patterns.
//!
//! A pattern may name groups `pre` and `post`; they are kept around `[REDACTED]`, so
//! `Bearer abc` becomes `Bearer [REDACTED]` rather than losing the word that says what it was.

use regex::{Regex, RegexSet};
use serde_json::Value;

pub const DEFAULT_PATTERNS: &[&str] = &[
    // Provider API keys.
    r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}",
    r"AKIA[0-9A-Z]{16}",
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"xox[abprs]-[A-Za-z0-9-]{10,}",
    r"AIza[0-9A-Za-z_-]{35}",
    // Bearer tokens.
    r"(?i)(?P<pre>bearer\s+)[A-Za-z0-9._~+/=-]{8,}",
    // Passwords in URLs: scheme://user:password@host.
    r"(?P<pre>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+(?P<post>@)",
    // key=value / key: value for the usual names.
    r#"(?i)(?P<pre>\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b["']?\s*[=:]\s*["']?)[^\s"',;]+"#,
];

pub const DEFAULT_TYPES: &[&str] = &["terminal.", "transcript.", "tool.", "command.", "file.", "item."];

pub struct Redactor {
    /// One pass over a string tells whether any pattern matches (most strings: none).
    any: RegexSet,
    patterns: Vec<Regex>,
    types: Vec<String>,
}

impl Redactor {
    pub fn new(patterns: &[String], types: &[String]) -> Result<Self, regex::Error> {
        let any = RegexSet::new(patterns)?;
        let patterns = patterns.iter().map(|p| Regex::new(p)).collect::<Result<_, _>>()?;
        Ok(Redactor {
            any,
            patterns,
            types: types.to_vec(),
        })
    }

    pub fn applies_to(&self, event_type: &str) -> bool {
        self.types.iter().any(|t| event_type.starts_with(t.as_str()))
    }

    /// Scrubs every string in `value`, in place.
    pub fn scrub(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                for i in self.any.matches(s).iter() {
                    let re = &self.patterns[i];
                    *s = re.replace_all(s, "${pre}[REDACTED]${post}").into_owned();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.scrub(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.scrub(v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defaults() -> Redactor {
        let p: Vec<String> = DEFAULT_PATTERNS.iter().map(std::string::ToString::to_string).collect();
        let t: Vec<String> = DEFAULT_TYPES.iter().map(std::string::ToString::to_string).collect();
        Redactor::new(&p, &t).unwrap()
    }

    #[test]
    fn default_patterns_hide_keys_tokens_and_url_passwords_but_keep_context() {
        let r = defaults();
        let mut v = json!({
            "text": "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "nested": ["curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig' https://x"],
            "url": "postgres://admin:hunter2@db.internal:5432/app",
            "aws": "AKIAIOSFODNN7EXAMPLE",
            "plain": "nothing secret here, count=3",
            "cfg": "password: s3cr3t!"
        });
        r.scrub(&mut v);
        let s = v.to_string();
        for secret in ["sk-ant-api03", "eyJhbGci", "hunter2", "AKIAIOSFODNN7EXAMPLE", "s3cr3t"] {
            assert!(!s.contains(secret), "{secret} leaked: {s}");
        }
        assert_eq!(v["url"], "postgres://admin:[REDACTED]@db.internal:5432/app");
        assert!(v["nested"][0].as_str().unwrap().contains("Bearer [REDACTED]"));
        assert_eq!(v["plain"], "nothing secret here, count=3");
        assert_eq!(v["cfg"], "password: [REDACTED]");
    }

    #[test]
    fn only_configured_event_types_are_scrubbed() {
        let r = defaults();
        assert!(r.applies_to("terminal.output") && r.applies_to("tool.called") && r.applies_to("transcript.chunk"));
        assert!(!r.applies_to("status.changed") && !r.applies_to("session.created"));
    }
}
