//! Output parser for agent CLIs running under a PTY (seed 003 §1.6 and §6.3).
//!
//! Raw PTY bytes go in; complete lines (ANSI escapes stripped) and what was recognised in them come
//! out: tool calls, permission prompts, questions, token usage, file operations, shell commands and
//! the CLI's ready prompt. What is recognised is a [`PatternSet`] of regex strings per CLI, so it can
//! come from configuration; the builtin sets follow the seed and the `fake-agent` binary, whose output
//! formats live in [`fake`] so the two cannot drift apart.
//!
//! Prompts (permission, question, idle) are printed without a newline while the CLI waits for input,
//! so they are also looked for on the unterminated line at the end of each feed; a prompt reported
//! that way is not reported again when the line is later completed (typically by the PTY echo of the
//! answer). Prompt patterns should therefore be closed (end in a fixed marker such as `(y/n)`), so no
//! prefix of a prompt matches with a different capture. Every other detection needs a complete line.

use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};

/// A line longer than this without a newline is flushed as a [`Detected::Line`] to bound memory.
const MAX_LINE: usize = 64 * 1024;

/// The unterminated line is only checked for prompts up to this length: prompts are short, and this
/// keeps a long line trickling in byte by byte from costing a full rescan per feed.
const MAX_PROMPT: usize = 16 * 1024;

/// One pattern set per CLI, as strings so it can come from configuration. An empty string disables a
/// pattern (useful to switch off a builtin one through overrides).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PatternSet {
    /// Capture 1 = what is asked, e.g. `Bash(rm -rf build)`.
    pub permission: Option<String>,
    /// A match anywhere makes the whole line a question; options are parsed from a trailing `(...)` or `[...]`.
    pub question: Option<String>,
    /// Capture 1 = input tokens, capture 2 = output tokens (digits with optional commas).
    pub tokens: Option<String>,
    /// A tool call starting: named groups `tool` (tool name) and `input` (its argument).
    pub tool: Option<String>,
    /// A tool call finished; an optional named group `tool`, else the last started tool is meant.
    pub tool_done: Option<String>,
    /// A file operation: named groups `operation` and `path`.
    pub file: Option<String>,
    /// A shell command executed: capture 1 = the command.
    pub command: Option<String>,
    /// The CLI's ready prompt: the agent is idle and waiting for input.
    pub idle: Option<String>,
}

impl PatternSet {
    /// Built-in sets: "claude", "codex", "gemini"; any other name gets a conservative generic set.
    pub fn builtin(cli: &str) -> PatternSet {
        let p = |s: &str| Some(s.to_string());
        match cli.to_ascii_lowercase().as_str() {
            "claude" => PatternSet {
                // "Allow Bash(rm -rf build)? (y/n)" (seed)
                permission: p(r"(?:Allow|Approve)\s+(.+?)\?\s*\(?[Yy]/[Nn]\)?"),
                // "Which database should I use? (postgres/mysql)" (seed)
                question: p(r"\?\s*\(.*\)\s*$"),
                // "Token usage: 1,500 input, 800 output" (seed)
                tokens: p(r"(\d[\d,]*)\s*input.*?(\d[\d,]*)\s*output"),
                // "⏺ Bash(ls -la)": the bullet of a tool call
                tool: p(r"⏺\s*(?P<tool>[A-Za-z][\w.:-]*)\((?P<input>.*)\)\s*$"),
                // "  ⎿  Done": the result marker closing the open tool call
                tool_done: p(r"^\s*⎿\s+Done\s*$"),
                // "⏺ Update(src/main.rs)": a call of one of the file tools
                file: p(r"⏺\s*(?P<operation>Read|Write|Update|Edit|MultiEdit|Delete)\((?P<path>.*)\)\s*$"),
                // "⏺ Bash(ls -la)": a Bash tool call is a command execution
                command: p(r"⏺\s*Bash\((.*)\)\s*$"),
                // "> ": the input prompt with nothing typed yet
                idle: p(r"^\s*>\s*$"),
            },
            "codex" => PatternSet {
                // "Approve: Bash rm -rf build [y/n]" (seed)
                permission: p(r"Approve:\s*(.+?)\s*\[y/n\]"),
                // "Which database should I use? [postgres/mysql]" (seed)
                question: p(r"\?\s*\[.*\]\s*$"),
                // "Tokens: 1500 in / 800 out" (seed)
                tokens: p(r"Tokens:\s*(\d[\d,]*)\s*in\s*/\s*(\d[\d,]*)\s*out"),
                // "tool search.query(rust)": an MCP-style tool call
                tool: p(r"^\s*tool\s+(?P<tool>[\w.-]+)\((?P<input>.*)\)\s*$"),
                // "tool search.query(rust) success": the same call, finished
                tool_done: p(r"^\s*tool\s+(?P<tool>[\w.-]+)\(.*\)\s+(?:success|succeeded|failed)\b"),
                // "apply_patch M src/main.rs": one file of a patch (A added, M modified, D deleted)
                file: p(r"^\s*apply_patch\s+(?P<operation>[AMD])\s+(?P<path>\S.*?)\s*$"),
                // "exec bash -lc 'ls -la'": a shell command run by the agent
                command: p(r"^\s*exec\s+(?:bash\s+-lc\s+)?'?(.+?)'?\s*$"),
                // "› ": the input prompt with nothing typed yet
                idle: p(r"^\s*›\s*$"),
            },
            "gemini" => PatternSet {
                // "Permission requested: Bash rm -rf build (y/n)": the seed's `(.+)` ended at the end of
                // the line, so every prefix of a prompt still arriving would match with another capture;
                // ending the capture at the answer marker keeps the prompt closed and the marker out.
                permission: p(r"Permission requested:\s*(.+?)\s*\(?[Yy]/[Nn]\)?"),
                // "Which database should I use? (postgres/mysql)": no seed pattern; the claude shape
                question: p(r"\?\s*\(.*\)\s*$"),
                // "Usage: input_tokens=1500, output_tokens=800" (seed)
                tokens: p(r"input_tokens\s*=\s*(\d+).*?output_tokens\s*=\s*(\d+)"),
                // "⊷ Shell ls -la": a tool executing
                tool: p(r"^\s*⊷\s+(?P<tool>\w+)(?:\s+(?P<input>.*?))?\s*$"),
                // "✔ Shell ls -la": a tool that succeeded
                tool_done: p(r"^\s*✔\s+(?P<tool>\w+)"),
                // "⊷ Edit src/main.rs": a call of one of the file tools
                file: p(r"^\s*⊷\s+(?P<operation>ReadFile|WriteFile|Edit|Replace|DeleteFile)\s+(?P<path>\S.*?)\s*$"),
                // "⊷ Shell ls -la": a Shell tool call is a command execution
                command: p(r"^\s*⊷\s+Shell\s+(\S.*?)\s*$"),
                // "> ": the input prompt with nothing typed yet
                idle: p(r"^\s*>\s*$"),
            },
            _ => PatternSet {
                // "Allow X? (y/n)" / "Approve X? [Y/n]": the claude shape
                permission: p(r"(?:Allow|Approve)\s+(.+?)\?\s*[\(\[]?[Yy]/[Nn][\)\]]?"),
                // a question ending in a list of options, in either bracket style
                question: p(r"\?\s*(?:\(.*\)|\[.*\])\s*$"),
                // the claude token pattern, the loosest of the seed's
                tokens: p(r"(\d[\d,]*)\s*input.*?(\d[\d,]*)\s*output"),
                // "> " alone at line start: the common shell-like prompt
                idle: p(r"^>\s*$"),
                ..PatternSet::default()
            },
        }
    }

    /// Fields set in `overrides` replace the builtin ones.
    pub fn merged(self, overrides: &PatternSet) -> PatternSet {
        let pick = |over: &Option<String>, base: Option<String>| over.clone().or(base);
        PatternSet {
            permission: pick(&overrides.permission, self.permission),
            question: pick(&overrides.question, self.question),
            tokens: pick(&overrides.tokens, self.tokens),
            tool: pick(&overrides.tool, self.tool),
            tool_done: pick(&overrides.tool_done, self.tool_done),
            file: pick(&overrides.file, self.file),
            command: pick(&overrides.command, self.command),
            idle: pick(&overrides.idle, self.idle),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Detected {
    /// A complete line of output, ANSI escapes stripped, without the line ending (for terminal.output events).
    Line(String),
    ToolStarted {
        tool: String,
        input: String,
    },
    ToolCompleted {
        tool: String,
    },
    Permission {
        tool: String,
        command: Option<String>,
        file_path: Option<String>,
        description: String,
    },
    Question {
        question: String,
        options: Vec<String>,
    },
    Tokens {
        input: u64,
        output: u64,
    },
    FileOperation {
        path: String,
        operation: String,
    },
    Command {
        command: String,
    },
    /// The CLI shows its ready prompt.
    Idle,
}

impl Detected {
    fn is_prompt(&self) -> bool {
        matches!(
            self,
            Detected::Permission { .. } | Detected::Question { .. } | Detected::Idle
        )
    }
}

struct Patterns {
    permission: Option<Regex>,
    question: Option<Regex>,
    tokens: Option<Regex>,
    tool: Option<Regex>,
    tool_done: Option<Regex>,
    file: Option<Regex>,
    command: Option<Regex>,
    idle: Option<Regex>,
}

pub struct OutputParser {
    patterns: Patterns,
    escape: Escape,
    /// The current line so far: text bytes only (escapes and `\r` already dropped), maybe ending mid UTF-8.
    line: Vec<u8>,
    /// Prompts already reported from the unterminated current line, so completing it does not repeat them.
    reported: Vec<Detected>,
    /// The tool call started last and not yet completed, for done markers that do not name the tool.
    open_tool: Option<String>,
}

impl OutputParser {
    /// Errors name the field and the regex error, e.g. "patterns.tool: regex parse error ...".
    pub fn new(set: &PatternSet) -> Result<OutputParser, String> {
        let patterns = Patterns {
            permission: compile("permission", &set.permission, &[])?,
            question: compile("question", &set.question, &[])?,
            tokens: compile("tokens", &set.tokens, &[(2, None)])?,
            tool: compile("tool", &set.tool, &[(1, Some("tool"))])?,
            tool_done: compile("toolDone", &set.tool_done, &[])?,
            file: compile("file", &set.file, &[(2, Some("path"))])?,
            command: compile("command", &set.command, &[])?,
            idle: compile("idle", &set.idle, &[])?,
        };
        Ok(OutputParser {
            patterns,
            escape: Escape::Ground,
            line: Vec::new(),
            reported: Vec::new(),
            open_tool: None,
        })
    }

    /// Feed raw PTY bytes (which may split lines, escape sequences and UTF-8 sequences anywhere).
    /// Returns what was detected, in output order: a line's detections follow its [`Detected::Line`],
    /// except prompts seen on the unterminated line, which are reported as soon as they show.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Detected> {
        let mut out = Vec::new();
        for &byte in bytes {
            match self.escape.text(byte) {
                Some(b'\n') => self.finish_line(&mut out),
                Some(b'\t') => self.line.push(b'\t'),
                // Other controls go, `\r` included: a lone `\r` (progress bars) just joins what it would
                // overwrite, which is not worth a screen model.
                Some(c) if c < 0x20 || c == 0x7f => {}
                Some(c) => {
                    self.line.push(c);
                    if self.line.len() >= MAX_LINE {
                        // Keep a UTF-8 sequence cut by the limit whole, on the next line.
                        let tail = self.line.split_off(complete_utf8_len(&self.line));
                        self.finish_line(&mut out);
                        self.line = tail;
                    }
                }
                None => {}
            }
        }
        if !self.line.is_empty() && self.line.len() <= MAX_PROMPT {
            let partial = String::from_utf8_lossy(&self.line[..complete_utf8_len(&self.line)]).into_owned();
            self.detect(&partial, true, &mut out);
        }
        out
    }

    fn finish_line(&mut self, out: &mut Vec<Detected>) {
        let text = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
        out.push(Detected::Line(text.clone()));
        self.detect(&text, false, out);
        self.reported.clear();
    }

    /// Looks for everything in a complete line, or only for prompts in the unterminated one.
    fn detect(&mut self, text: &str, partial: bool, out: &mut Vec<Detected>) {
        let p = &self.patterns;
        let mut found = Vec::new();
        if !partial {
            if let Some(c) = captures(&p.tool_done, text) {
                let named = c.name("tool").map(|m| m.as_str().to_string());
                let tool = match named {
                    Some(tool) => {
                        if self.open_tool.as_ref() == Some(&tool) {
                            self.open_tool = None;
                        }
                        Some(tool)
                    }
                    None => self.open_tool.take(),
                };
                found.extend(tool.map(|tool| Detected::ToolCompleted { tool }));
            }
            if let Some(c) = captures(&p.tool, text)
                && let Some(tool) = group(&c, "tool", 1)
            {
                let input = group(&c, "input", 2).unwrap_or_default().trim().to_string();
                self.open_tool = Some(tool.to_string());
                found.push(Detected::ToolStarted {
                    tool: tool.to_string(),
                    input,
                });
            }
            if let Some(c) = captures(&p.file, text)
                && let Some(path) = group(&c, "path", 2).map(str::trim).filter(|s| !s.is_empty())
            {
                let operation = normalize_operation(group(&c, "operation", 1).unwrap_or_default());
                found.push(Detected::FileOperation {
                    path: path.to_string(),
                    operation,
                });
            }
            if let Some(c) = captures(&p.command, text) {
                let command = first_group(&c).trim();
                if !command.is_empty() {
                    found.push(Detected::Command {
                        command: command.to_string(),
                    });
                }
            }
            if let Some(c) = captures(&p.tokens, text) {
                found.extend(tokens(&c));
            }
        }
        // A permission prompt often looks like a question too ("...? (y/n)"); it is only a permission.
        if let Some(c) = captures(&p.permission, text) {
            found.extend(permission(first_group(&c)));
        } else if p.question.as_ref().is_some_and(|r| r.is_match(text)) {
            found.push(question(text));
        }
        if p.idle.as_ref().is_some_and(|r| r.is_match(text)) {
            found.push(Detected::Idle);
        }

        for d in found {
            if d.is_prompt() {
                if self.reported.contains(&d) {
                    continue;
                }
                self.reported.push(d.clone());
            }
            out.push(d);
        }
    }
}

/// Compiles one field; `groups` lists what it needs: (capture groups, or this named group instead).
fn compile(field: &str, pattern: &Option<String>, groups: &[(usize, Option<&str>)]) -> Result<Option<Regex>, String> {
    let Some(pattern) = pattern.as_deref().filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let re = Regex::new(pattern).map_err(|e| format!("patterns.{field}: {e}"))?;
    for &(count, name) in groups {
        let named = name.is_some_and(|n| re.capture_names().any(|c| c == Some(n)));
        if !named && re.captures_len() <= count {
            let what = match name {
                Some(n) => format!("a named group `{n}` or {count} capture group(s)"),
                None => format!("{count} capture groups"),
            };
            return Err(format!("patterns.{field}: {pattern:?} needs {what}"));
        }
    }
    Ok(Some(re))
}

fn captures<'h>(re: &Option<Regex>, text: &'h str) -> Option<Captures<'h>> {
    re.as_ref()?.captures(text)
}

/// A named group, or the numbered one when the pattern does not name it.
fn group<'h>(c: &Captures<'h>, name: &str, index: usize) -> Option<&'h str> {
    c.name(name).or_else(|| c.get(index)).map(|m| m.as_str())
}

/// Capture 1, or the whole match for a pattern without groups.
fn first_group<'h>(c: &Captures<'h>) -> &'h str {
    c.get(1).or_else(|| c.get(0)).map_or("", |m| m.as_str())
}

/// Token counts like "1,500"; garbage or overflow skips the detection.
fn tokens(c: &Captures) -> Option<Detected> {
    let number = |i: usize| c.get(i)?.as_str().replace(',', "").parse::<u64>().ok();
    Some(Detected::Tokens {
        input: number(1)?,
        output: number(2)?,
    })
}

/// "Bash(rm -rf build)" → tool "bash", command "rm -rf build"; "Read(src/a.rs)" → file_path "src/a.rs";
/// "Bash rm -rf build" → tool "bash", command "rm -rf build".
fn permission(asked: &str) -> Option<Detected> {
    let description = strip_answer_marker(asked).to_string();
    if description.is_empty() {
        return None;
    }
    let (name, argument) = match description.find('(') {
        Some(open) if open > 0 && description.ends_with(')') && !description[..open].contains(char::is_whitespace) => (
            &description[..open],
            description[open + 1..description.len() - 1].trim(),
        ),
        _ => description
            .split_once(char::is_whitespace)
            .map_or((description.as_str(), ""), |(name, rest)| (name, rest.trim())),
    };
    let tool = name.trim_end_matches(':').to_lowercase();
    let argument = (!argument.is_empty()).then(|| argument.to_string());
    let (command, file_path) = if is_file_tool(&tool) {
        (None, argument)
    } else {
        (argument, None)
    };
    Some(Detected::Permission {
        tool,
        command,
        file_path,
        description,
    })
}

/// Patterns capturing to the end of the line (like the seed's gemini one) also capture "(y/n)".
fn strip_answer_marker(asked: &str) -> &str {
    let asked = asked.trim();
    for marker in ["(y/n)", "[y/n]", "y/n"] {
        if let Some(cut) = asked.len().checked_sub(marker.len())
            && asked.get(cut..).is_some_and(|end| end.eq_ignore_ascii_case(marker))
        {
            return asked[..cut].trim_end();
        }
    }
    asked
}

/// Tools whose argument is a file path rather than a command.
fn is_file_tool(tool: &str) -> bool {
    matches!(
        tool,
        "read"
            | "edit"
            | "multiedit"
            | "write"
            | "update"
            | "create"
            | "delete"
            | "notebookedit"
            | "readfile"
            | "read_file"
            | "writefile"
            | "write_file"
            | "replace"
            | "deletefile"
            | "readmanyfiles"
            | "read_many_files"
    )
}

/// The CLIs' words for a file operation, as read / create / update / delete.
fn normalize_operation(operation: &str) -> String {
    let operation = operation.trim().to_lowercase();
    match operation.as_str() {
        "read" | "readfile" | "view" => "read",
        "a" | "add" | "added" | "create" | "created" | "new" | "write" | "wrote" | "writefile" => "create",
        "m" | "modify" | "modified" | "update" | "updated" | "edit" | "edited" | "multiedit" | "replace" => "update",
        "d" | "delete" | "deleted" | "remove" | "removed" | "deletefile" => "delete",
        _ => return operation,
    }
    .to_string()
}

/// "Which database should I use? (postgres/mysql)" → question and options.
fn question(line: &str) -> Detected {
    let line = line.trim();
    let open = match line.chars().last() {
        Some(')') => line.rfind('('),
        Some(']') => line.rfind('['),
        _ => None,
    };
    let (question, options) = match open {
        Some(i) => {
            let options = line[i + 1..line.len() - 1]
                .split(['/', '|', ','])
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .map(String::from)
                .collect();
            (line[..i].trim_end(), options)
        }
        None => (line, Vec::new()),
    };
    Detected::Question {
        question: question.to_string(),
        options,
    }
}

/// Length of `b` without a trailing UTF-8 sequence that may still be incomplete.
fn complete_utf8_len(b: &[u8]) -> usize {
    let n = b.len();
    for back in 1..=n.min(3) {
        let c = b[n - back];
        if c & 0xC0 != 0x80 {
            // Not a continuation byte: the start of the last sequence (or ASCII).
            let needed = match c {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if needed > back { n - back } else { n };
        }
    }
    n
}

/// Where the byte stream is with respect to escape sequences; they may span feeds.
#[derive(Clone, Copy)]
enum Escape {
    Ground,
    /// After ESC.
    Esc,
    /// CSI `ESC [ params final`.
    Csi,
    /// OSC / DCS / APC / PM / SOS: up to BEL or ST (`ESC \`).
    String,
    /// `ESC ( B` and friends: one more byte.
    Charset,
}

impl Escape {
    /// Advances over one byte; returns it if it is text.
    fn text(&mut self, byte: u8) -> Option<u8> {
        let (next, text) = match (*self, byte) {
            (Escape::Ground, 0x1b) => (Escape::Esc, None),
            (Escape::Ground, b) => (Escape::Ground, Some(b)),
            // A newline never belongs to a sequence: a malformed one must not swallow the output.
            (_, b'\n') => (Escape::Ground, Some(b'\n')),
            (Escape::Esc, b) => (
                match b {
                    b'[' => Escape::Csi,
                    b']' | b'P' | b'_' | b'^' | b'X' => Escape::String,
                    b'(' | b')' | b'*' | b'+' | b'-' | b'.' | b'/' | b'#' | b'%' => Escape::Charset,
                    0x1b => Escape::Esc,
                    _ => Escape::Ground,
                },
                None,
            ),
            (Escape::Csi, 0x40..=0x7e) => (Escape::Ground, None),
            (Escape::Csi, _) => (Escape::Csi, None),
            (Escape::String, 0x07) => (Escape::Ground, None),
            // ESC ends the string; the `\` of ST then ends the escape in the Esc state.
            (Escape::String, 0x1b) => (Escape::Esc, None),
            (Escape::String, _) => (Escape::String, None),
            (Escape::Charset, _) => (Escape::Ground, None),
        };
        *self = next;
        text
    }
}

/// Output formats of the `fake-agent` binary, per CLI style. They live next to the builtin patterns so
/// a test proves every line the fake agent prints is recognised by the builtin set of its style.
/// Lines are returned without line ending; prompts end with a space and are printed without newline.
pub mod fake {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Style {
        Claude,
        Codex,
        Gemini,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum FileOp {
        Update,
        Create,
        Delete,
    }

    impl FileOp {
        /// The operation the parser reports for it.
        pub fn operation(self) -> &'static str {
            match self {
                FileOp::Update => "update",
                FileOp::Create => "create",
                FileOp::Delete => "delete",
            }
        }
    }

    pub const WORKING: &str = "Working...";
    pub const GOODBYE: &str = "Goodbye";

    /// A user message, echoed back.
    pub fn received(text: &str) -> String {
        format!("Received: {text}")
    }

    pub fn answer_received(answer: &str) -> String {
        format!("Answer received: {answer}")
    }

    /// `ask Which database should I use? postgres/mysql` → the question and its options; the options
    /// are what follows the last `?`, separated by `/` (yes/no when there are none).
    pub fn split_ask(text: &str) -> (String, Vec<String>) {
        let (question, options) = match text.rsplit_once('?') {
            Some((question, options)) => (format!("{}?", question.trim_end()), options),
            None => (format!("{}?", text.trim_end()), ""),
        };
        let mut options: Vec<String> = options
            .split('/')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(String::from)
            .collect();
        if options.is_empty() {
            options = vec!["yes".into(), "no".into()];
        }
        (question, options)
    }

    /// `1500` → `1,500`.
    pub fn thousands(n: u64) -> String {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, d) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(d);
        }
        out
    }

    impl Style {
        pub const ALL: [Style; 3] = [Style::Claude, Style::Codex, Style::Gemini];

        pub fn from_name(name: &str) -> Option<Style> {
            Style::ALL.into_iter().find(|s| s.name() == name)
        }

        /// The CLI name, which is also the name of its builtin [`super::PatternSet`].
        pub fn name(self) -> &'static str {
            match self {
                Style::Claude => "claude",
                Style::Codex => "codex",
                Style::Gemini => "gemini",
            }
        }

        pub fn banner(self) -> String {
            format!(
                "fake-agent ({} style). Commands: tool, edit, create, delete, run, ask-permission, ask, tokens, sleep, exit",
                self.name()
            )
        }

        pub fn idle_prompt(self) -> &'static str {
            match self {
                Style::Claude | Style::Gemini => "> ",
                Style::Codex => "› ",
            }
        }

        /// A tool call: started, one line of output, done.
        pub fn tool_call(self, tool: &str, args: &str) -> Vec<String> {
            let output = format!("fake output from {tool}");
            match self {
                Style::Claude => vec![
                    format!("⏺ {tool}({args})"),
                    format!("  ⎿  {output}"),
                    CLAUDE_DONE.into(),
                ],
                Style::Codex => {
                    vec![
                        format!("tool {tool}({args})"),
                        format!("  {output}"),
                        format!("tool {tool}({args}) success"),
                    ]
                }
                Style::Gemini => vec![gemini('⊷', tool, args), format!("  {output}"), gemini('✔', tool, args)],
            }
        }

        /// A file edited, created or deleted. Claude and gemini do it with a file tool call, codex with a patch.
        pub fn file_operation(self, op: FileOp, path: &str) -> Vec<String> {
            match self {
                Style::Claude => {
                    let tool = match op {
                        FileOp::Update => "Update",
                        FileOp::Create => "Write",
                        FileOp::Delete => "Delete",
                    };
                    vec![format!("⏺ {tool}({path})"), CLAUDE_DONE.into()]
                }
                Style::Codex => {
                    let letter = match op {
                        FileOp::Update => 'M',
                        FileOp::Create => 'A',
                        FileOp::Delete => 'D',
                    };
                    vec![format!("apply_patch {letter} {path}")]
                }
                Style::Gemini => {
                    let tool = match op {
                        FileOp::Update => "Edit",
                        FileOp::Create => "WriteFile",
                        FileOp::Delete => "DeleteFile",
                    };
                    vec![gemini('⊷', tool, path), gemini('✔', tool, path)]
                }
            }
        }

        /// A shell command run, with one line of output. Claude and gemini run it through their shell tool.
        pub fn command(self, command: &str) -> Vec<String> {
            let output = format!("ran: {command}");
            match self {
                Style::Claude => vec![
                    format!("⏺ Bash({command})"),
                    format!("  ⎿  {output}"),
                    CLAUDE_DONE.into(),
                ],
                Style::Codex => vec![format!("exec bash -lc '{command}'"), output],
                Style::Gemini => {
                    vec![
                        gemini('⊷', "Shell", command),
                        format!("  {output}"),
                        gemini('✔', "Shell", command),
                    ]
                }
            }
        }

        /// What a permission asks for, as the style writes it: `Bash(rm -rf build)` or `Bash rm -rf build`.
        pub fn request(self, tool: &str, args: &str) -> String {
            match (self, args.is_empty()) {
                (_, true) => tool.to_string(),
                (Style::Claude, false) => format!("{tool}({args})"),
                (_, false) => format!("{tool} {args}"),
            }
        }

        pub fn permission_prompt(self, tool: &str, args: &str) -> String {
            let request = self.request(tool, args);
            match self {
                Style::Claude => format!("Allow {request}? (y/n) "),
                Style::Codex => format!("Approve: {request} [y/n] "),
                Style::Gemini => format!("Permission requested: {request} (y/n) "),
            }
        }

        pub fn permission_result(self, granted: bool, tool: &str, args: &str) -> String {
            let verdict = if granted { "granted" } else { "denied" };
            format!("Permission {verdict}: {}", self.request(tool, args))
        }

        /// `question` with or without its `?`.
        pub fn question_prompt(self, question: &str, options: &[String]) -> String {
            let question = question.trim_end().trim_end_matches('?');
            let options = options.join("/");
            match self {
                Style::Codex => format!("{question}? [{options}] "),
                Style::Claude | Style::Gemini => format!("{question}? ({options}) "),
            }
        }

        pub fn tokens(self, input: u64, output: u64) -> String {
            match self {
                Style::Claude => format!("Token usage: {} input, {} output", thousands(input), thousands(output)),
                Style::Codex => format!("Tokens: {input} in / {output} out"),
                Style::Gemini => format!("Usage: input_tokens={input}, output_tokens={output}"),
            }
        }
    }

    const CLAUDE_DONE: &str = "  ⎿  Done";

    fn gemini(mark: char, tool: &str, args: &str) -> String {
        if args.is_empty() {
            format!("{mark} {tool}")
        } else {
            format!("{mark} {tool} {args}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::{FileOp, Style};
    use super::*;

    fn parser(cli: &str) -> OutputParser {
        OutputParser::new(&PatternSet::builtin(cli)).unwrap()
    }

    /// Everything but the lines.
    fn events(detected: Vec<Detected>) -> Vec<Detected> {
        detected
            .into_iter()
            .filter(|d| !matches!(d, Detected::Line(_)))
            .collect()
    }

    fn lines(detected: &[Detected]) -> Vec<&str> {
        detected
            .iter()
            .filter_map(|d| match d {
                Detected::Line(l) => Some(l.as_str()),
                _ => None,
            })
            .collect()
    }

    fn feed_lines(p: &mut OutputParser, lines: &[String]) -> Vec<Detected> {
        events(p.feed(lines.iter().map(|l| format!("{l}\r\n")).collect::<String>().as_bytes()))
    }

    fn started(tool: &str, input: &str) -> Detected {
        Detected::ToolStarted {
            tool: tool.into(),
            input: input.into(),
        }
    }

    fn completed(tool: &str) -> Detected {
        Detected::ToolCompleted { tool: tool.into() }
    }

    fn file(path: &str, operation: &str) -> Detected {
        Detected::FileOperation {
            path: path.into(),
            operation: operation.into(),
        }
    }

    fn command(c: &str) -> Detected {
        Detected::Command { command: c.into() }
    }

    fn bash_permission(description: &str) -> Detected {
        Detected::Permission {
            tool: "bash".into(),
            command: Some("rm -rf build".into()),
            file_path: None,
            description: description.into(),
        }
    }

    fn db_question() -> Detected {
        Detected::Question {
            question: "Which database should I use?".into(),
            options: vec!["postgres".into(), "mysql".into()],
        }
    }

    #[test]
    fn claude_builtin_detects_every_kind_with_its_fields() {
        let mut p = parser("claude");
        let out = events(
            p.feed(
                "⏺ Bash(ls -la)\n  ⎿  total 48\n  ⎿  Done\n⏺ Read(src/main.rs)\n  ⎿  Done\n\
             Token usage: 1,500 input, 800 output\nWhich database should I use? (postgres/mysql)\n\
             Allow Bash(rm -rf build)? (y/n) "
                    .as_bytes(),
            ),
        );
        assert_eq!(
            out,
            vec![
                started("Bash", "ls -la"),
                command("ls -la"),
                completed("Bash"),
                started("Read", "src/main.rs"),
                file("src/main.rs", "read"),
                completed("Read"),
                Detected::Tokens {
                    input: 1500,
                    output: 800
                },
                db_question(),
                bash_permission("Bash(rm -rf build)"),
            ]
        );
        assert_eq!(events(p.feed(b"y\r\n> ")), vec![Detected::Idle]);
    }

    #[test]
    fn codex_builtin_detects_every_kind_with_its_fields() {
        let mut p = parser("codex");
        let out = events(
            p.feed(
                "tool search.query(rust pty)\n  3 results\ntool search.query(rust pty) success\n\
             exec bash -lc 'cargo test'\napply_patch A src/new.rs\nTokens: 1500 in / 800 out\n\
             Which database should I use? [postgres/mysql]\nApprove: Bash rm -rf build [y/n] "
                    .as_bytes(),
            ),
        );
        assert_eq!(
            out,
            vec![
                started("search.query", "rust pty"),
                completed("search.query"),
                command("cargo test"),
                file("src/new.rs", "create"),
                Detected::Tokens {
                    input: 1500,
                    output: 800
                },
                db_question(),
                bash_permission("Bash rm -rf build"),
            ]
        );
        assert_eq!(events(p.feed("n\r\n› ".as_bytes())), vec![Detected::Idle]);
    }

    #[test]
    fn gemini_builtin_detects_every_kind_with_its_fields() {
        let mut p = parser("gemini");
        let out = events(
            p.feed(
                "⊷ Shell ls -la\n  total 48\n✔ Shell ls -la\n⊷ Edit src/lib.rs\n✔ Edit src/lib.rs\n\
             Usage: input_tokens=1500, output_tokens=800\nWhich database should I use? (postgres/mysql)\n\
             Permission requested: Bash rm -rf build (y/n) "
                    .as_bytes(),
            ),
        );
        assert_eq!(
            out,
            vec![
                started("Shell", "ls -la"),
                command("ls -la"),
                completed("Shell"),
                started("Edit", "src/lib.rs"),
                file("src/lib.rs", "update"),
                completed("Edit"),
                Detected::Tokens {
                    input: 1500,
                    output: 800
                },
                db_question(),
                bash_permission("Bash rm -rf build"),
            ]
        );
        assert_eq!(events(p.feed(b"yes\r\n> ")), vec![Detected::Idle]);
    }

    #[test]
    fn generic_builtin_is_conservative() {
        let mut p = parser("aider");
        let out = events(p.feed(b"$ ls\nToken usage: 10 input, 2 output\nAllow Bash(ls)? [Y/n]\n> "));
        assert_eq!(
            out,
            vec![
                Detected::Tokens { input: 10, output: 2 },
                Detected::Permission {
                    tool: "bash".into(),
                    command: Some("ls".into()),
                    file_path: None,
                    description: "Bash(ls)".into()
                },
                Detected::Idle,
            ]
        );
    }

    #[test]
    fn prompt_split_across_feeds_at_every_byte_boundary_is_detected_exactly_once() {
        let options = vec!["postgres".to_string(), "mysql".to_string()];
        for style in Style::ALL {
            let request = style.request("Bash", "rm -rf build");
            let prompts = [
                (
                    style.permission_prompt("Bash", "rm -rf build"),
                    bash_permission(&request),
                ),
                (
                    style.question_prompt("Which database should I use?", &options),
                    db_question(),
                ),
                (style.idle_prompt().to_string(), Detected::Idle),
            ];
            for (prompt, expected) in prompts {
                // Coloured, as real CLIs print it, so escape sequences get split too.
                let bytes = format!("\x1b[1;33m{prompt}\x1b[0m").into_bytes();
                // Each round ends with a completed line, so one parser serves every cut.
                let mut p = parser(style.name());
                for cut in 0..=bytes.len() {
                    let mut seen = p.feed(&bytes[..cut]);
                    seen.extend(p.feed(&bytes[cut..]));
                    assert_eq!(
                        events(seen.clone()),
                        vec![expected.clone()],
                        "{style:?} {prompt:?} cut at {cut}"
                    );
                    // The PTY echo of the answer completes the line: one Line, no second prompt.
                    let after = p.feed(b"y\r\n");
                    assert_eq!(
                        after,
                        vec![Detected::Line(format!("{prompt}y"))],
                        "{style:?} {prompt:?} cut at {cut}"
                    );
                    assert!(lines(&seen).is_empty());
                }
            }
        }
    }

    #[test]
    fn permission_prompt_is_not_also_a_question() {
        let mut p = parser("claude");
        let out = p.feed(b"Allow Bash(rm -rf build)? (y/n)\n");
        assert_eq!(
            out,
            vec![
                Detected::Line("Allow Bash(rm -rf build)? (y/n)".into()),
                bash_permission("Bash(rm -rf build)")
            ]
        );
    }

    #[test]
    fn permission_request_names_the_tool_and_its_command_or_file() {
        let mut p = parser("claude");
        assert_eq!(
            events(p.feed(b"Allow Edit(src/main.rs)? (y/n)\nApprove WebFetch? (Y/N)\n")),
            vec![
                Detected::Permission {
                    tool: "edit".into(),
                    command: None,
                    file_path: Some("src/main.rs".into()),
                    description: "Edit(src/main.rs)".into()
                },
                Detected::Permission {
                    tool: "webfetch".into(),
                    command: None,
                    file_path: None,
                    description: "WebFetch".into()
                },
            ]
        );
        // Without parentheses: the first word is the tool, the rest its command.
        let mut p = parser("codex");
        assert_eq!(
            events(p.feed(b"Approve: rm -rf build [y/n]\n")),
            vec![Detected::Permission {
                tool: "rm".into(),
                command: Some("-rf build".into()),
                file_path: None,
                description: "rm -rf build".into()
            }]
        );
    }

    #[test]
    fn seed_gemini_permission_pattern_as_override_leaves_the_answer_marker_out() {
        let set = PatternSet::builtin("gemini").merged(&PatternSet {
            permission: Some(r"Permission requested:\s*(.+)".into()),
            ..Default::default()
        });
        let mut p = OutputParser::new(&set).unwrap();
        assert_eq!(
            events(p.feed(b"Permission requested: Bash rm -rf build (y/n)\n")),
            vec![bash_permission("Bash rm -rf build")]
        );
    }

    #[test]
    fn ansi_coloured_lines_are_stripped_and_detected() {
        let mut p = parser("claude");
        let out = p.feed(
            b"\x1b]0;claude\x07\x1b[38;5;2m\xe2\x8f\xba\x1b[0m \x1b[1mBash\x1b[22m(ls -la)\x1b[K\r\n\
              \x1b(B\x1b[2mToken usage: \x1b[0m1,500 input, 800 output\r\n",
        );
        assert_eq!(
            out,
            vec![
                Detected::Line("⏺ Bash(ls -la)".into()),
                started("Bash", "ls -la"),
                command("ls -la"),
                Detected::Line("Token usage: 1,500 input, 800 output".into()),
                Detected::Tokens {
                    input: 1500,
                    output: 800
                },
            ]
        );
    }

    #[test]
    fn ansi_sequences_and_utf8_split_across_feeds_byte_by_byte() {
        let text = "\x1b[32m⏺\x1b[0m Update(src/café.rs)\r\n  ⎿  Done\r\n";
        let mut p = parser("claude");
        let mut out = Vec::new();
        for b in text.as_bytes() {
            out.extend(p.feed(std::slice::from_ref(b)));
        }
        assert_eq!(
            out,
            vec![
                Detected::Line("⏺ Update(src/café.rs)".into()),
                started("Update", "src/café.rs"),
                file("src/café.rs", "update"),
                Detected::Line("  ⎿  Done".into()),
                completed("Update"),
            ]
        );
    }

    #[test]
    fn invalid_utf8_and_malformed_escapes_do_not_panic_or_swallow_lines() {
        let mut p = parser("claude");
        let out = p.feed(b"bad \xff\xfe byte\n\x1b]0;title never ends\nnext\n\xe2\x8f");
        assert_eq!(lines(&out), vec!["bad \u{fffd}\u{fffd} byte", "", "next"]);
        assert_eq!(lines(&p.feed(b"\n")), vec!["\u{fffd}"]);
    }

    #[test]
    fn complete_lines_are_reported_once_with_crlf_removed() {
        let mut p = parser("claude");
        let mut out = p.feed(b"one\r\ntw");
        out.extend(p.feed(b"o\r"));
        out.extend(p.feed(b"\nthree"));
        out.extend(p.feed(b"\n"));
        assert_eq!(lines(&out), vec!["one", "two", "three"]);
    }

    #[test]
    fn token_numbers_with_commas_parse_and_overflow_is_skipped() {
        let mut p = parser("claude");
        assert_eq!(
            events(p.feed(b"Token usage: 1,234,567 input, 800 output\n")),
            vec![Detected::Tokens {
                input: 1_234_567,
                output: 800
            }]
        );
        assert_eq!(
            events(p.feed(b"Token usage: 99999999999999999999999 input, 800 output\n")),
            vec![]
        );
        let mut p = parser("codex");
        assert_eq!(events(p.feed(b"Tokens: 1500 in / 184467440737095516150 out\n")), vec![]);
    }

    #[test]
    fn partial_line_over_64_kib_is_flushed_as_a_line_without_cutting_utf8() {
        let mut p = parser("claude");
        // 1 + 80,000 bytes: the 64 KiB limit falls between the two bytes of an "é".
        let long = "é".repeat(40_000);
        let mut out = p.feed(format!("x{long}").as_bytes());
        assert_eq!(lines(&out).len(), 1);
        assert!(lines(&out)[0].len() <= MAX_LINE && !lines(&out)[0].contains('\u{fffd}'));
        out.extend(p.feed(b"\n"));
        let all = lines(&out).concat();
        assert_eq!(all, format!("x{long}"));
    }

    #[test]
    fn invalid_override_regex_gives_an_error_naming_the_field() {
        let set = PatternSet::builtin("claude").merged(&PatternSet {
            tool: Some("(unclosed".into()),
            ..Default::default()
        });
        let err = OutputParser::new(&set).err().unwrap();
        assert!(err.starts_with("patterns.tool: regex parse error"), "{err}");

        let set = PatternSet {
            tokens: Some(r"(\d+) tokens".into()),
            ..Default::default()
        };
        let err = OutputParser::new(&set).err().unwrap();
        assert!(
            err.starts_with("patterns.tokens: ") && err.contains("2 capture groups"),
            "{err}"
        );
    }

    #[test]
    fn overrides_replace_builtins_and_an_empty_pattern_disables_one() {
        let overrides: PatternSet =
            serde_json::from_str(r#"{"idle": "^READY$", "toolDone": "", "command": "^RUN (.+)$"}"#).unwrap();
        let set = PatternSet::builtin("claude").merged(&overrides);
        assert_eq!(set.idle.as_deref(), Some("^READY$"));
        assert_eq!(set.tokens, PatternSet::builtin("claude").tokens);
        let mut p = OutputParser::new(&set).unwrap();
        assert_eq!(events(p.feed(b"> \n")), vec![]);
        assert_eq!(
            events(p.feed(b"\xe2\x8f\xba Bash(ls)\n  \xe2\x8e\xbf  Done\nRUN make\nREADY")),
            vec![started("Bash", "ls"), command("make"), Detected::Idle]
        );
    }

    #[test]
    fn pattern_set_reads_camel_case_keys_with_every_field_optional() {
        let set: PatternSet = serde_json::from_str(r#"{"toolDone": "done"}"#).unwrap();
        assert_eq!(set.tool_done.as_deref(), Some("done"));
        assert!(set.permission.is_none() && set.idle.is_none());
        assert!(serde_json::to_string(&set).unwrap().contains("\"toolDone\":\"done\""));
    }

    /// Runs every fake-agent command through the builtin parser of its style, as the PTY would show it.
    #[test]
    fn everything_fake_agent_prints_is_recognised_by_the_builtin_set_of_its_style() {
        use super::fake;
        let db = vec!["postgres".to_string(), "mysql".to_string()];
        for style in Style::ALL {
            let mut p = parser(style.name());
            let prompt = style.idle_prompt();
            // Banner, then the idle prompt, echoed input completing its line.
            assert_eq!(feed_lines(&mut p, &[style.banner()]), vec![]);
            assert_eq!(events(p.feed(prompt.as_bytes())), vec![Detected::Idle]);
            assert_eq!(events(p.feed(b"tool Grep TODO src\r\n")), vec![]);

            assert_eq!(
                feed_lines(&mut p, &style.tool_call("Grep", "TODO src")),
                vec![started("Grep", "TODO src"), completed("Grep")],
                "{style:?}"
            );

            for op in [FileOp::Update, FileOp::Create, FileOp::Delete] {
                let out = feed_lines(&mut p, &style.file_operation(op, "src/main.rs"));
                let expected = file("src/main.rs", op.operation());
                let tool = match (style, op) {
                    (Style::Codex, _) => None,
                    (Style::Claude, FileOp::Update) => Some("Update"),
                    (Style::Claude, FileOp::Create) => Some("Write"),
                    (Style::Claude, FileOp::Delete) => Some("Delete"),
                    (Style::Gemini, FileOp::Update) => Some("Edit"),
                    (Style::Gemini, FileOp::Create) => Some("WriteFile"),
                    (Style::Gemini, FileOp::Delete) => Some("DeleteFile"),
                };
                let expected = match tool {
                    Some(t) => vec![started(t, "src/main.rs"), expected, completed(t)],
                    None => vec![expected],
                };
                assert_eq!(out, expected, "{style:?} {op:?}");
            }

            let out = feed_lines(&mut p, &style.command("cargo test"));
            let expected = match style {
                Style::Claude => vec![started("Bash", "cargo test"), command("cargo test"), completed("Bash")],
                Style::Codex => vec![command("cargo test")],
                Style::Gemini => vec![
                    started("Shell", "cargo test"),
                    command("cargo test"),
                    completed("Shell"),
                ],
            };
            assert_eq!(out, expected, "{style:?}");

            assert_eq!(
                events(p.feed(style.permission_prompt("Bash", "rm -rf build").as_bytes())),
                vec![bash_permission(&style.request("Bash", "rm -rf build"))],
                "{style:?}"
            );
            assert_eq!(events(p.feed(b"y\r\n")), vec![]);
            assert_eq!(
                feed_lines(&mut p, &[style.permission_result(true, "Bash", "rm -rf build")]),
                vec![]
            );
            assert_eq!(
                feed_lines(&mut p, &[style.permission_result(false, "Bash", "rm -rf build")]),
                vec![]
            );

            let (question, options) = fake::split_ask("Which database should I use? postgres/mysql");
            assert_eq!(options, db);
            assert_eq!(
                events(p.feed(style.question_prompt(&question, &options).as_bytes())),
                vec![db_question()]
            );
            assert_eq!(events(p.feed(b"postgres\r\n")), vec![]);
            assert_eq!(feed_lines(&mut p, &[fake::answer_received("postgres")]), vec![]);

            assert_eq!(
                feed_lines(&mut p, &[style.tokens(1500, 800)]),
                vec![Detected::Tokens {
                    input: 1500,
                    output: 800
                }],
                "{style:?}"
            );
            let quiet = [
                fake::WORKING.to_string(),
                fake::received("hello there"),
                fake::GOODBYE.to_string(),
            ];
            assert_eq!(feed_lines(&mut p, &quiet), vec![]);
        }
        assert_eq!(Style::Claude.tokens(1500, 800), "Token usage: 1,500 input, 800 output");
        assert_eq!(Style::Codex.tokens(1500, 800), "Tokens: 1500 in / 800 out");
        assert_eq!(
            Style::Gemini.tokens(1500, 800),
            "Usage: input_tokens=1500, output_tokens=800"
        );
        assert_eq!(fake::thousands(1_234_567), "1,234,567");
        assert_eq!(
            fake::split_ask("Continue"),
            ("Continue?".to_string(), vec!["yes".into(), "no".into()])
        );
    }
}
