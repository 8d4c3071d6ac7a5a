//! What a CLI under a PTY shows, read the way a person reads it: on a rendered terminal screen
//! (vt100), not as a byte stream. TUIs draw with cursor moves and redraws, so lines split on
//! `\n` lose words and whole screens; the screen model puts every character where the CLI put it.
//!
//! Each time the output pauses the harness *settles* the screen: rows that were not on the
//! last settled screen are new output (`terminal.output`, tool calls, files, commands, usage);
//! the whole screen is matched for a permission menu, a question menu and the ready prompt.
//! The ready prompt only counts as idle once the screen has been still for a while and nothing
//! says the CLI is busy, and never before the screen changed after the harness typed.
//!
//! A menu is also looked for on the live screen, between settles (`menu_showing`): the harness
//! types nothing while one shows, not even in the moment before the next settle reports it.
//!
//! What the harness typed is the CLI's input, never its question: the messages typed lately are
//! blanked out of the screen before menus are looked for on it (a line-oriented CLI echoes
//! "is it green? [relay dm from …]" on its input row, the shape of a "question? [options]").

use crate::parse::{Detected, PatternSet, is_file_tool, normalize_operation, parse_permission};
use regex::{Captures, Regex};
use std::time::Duration;

/// How long the screen must be still before its ready prompt means idle (spinners redraw
/// several times a second while a CLI works).
pub const IDLE_QUIET: Duration = Duration::from_millis(300);
/// How long a resumed CLI's screen must be still before its ready prompt means idle when the
/// `resumeLoaded` output never came (a session with nothing to load, a CLI that changed).
pub const RESUME_QUIET: Duration = Duration::from_secs(5);

struct Patterns {
    permission: Option<Regex>,
    question: Option<Regex>,
    option: Option<Regex>,
    idle: Option<Regex>,
    busy: Option<Regex>,
    tokens: Option<Regex>,
    tool: Option<Regex>,
    tool_done: Option<Regex>,
    file: Option<Regex>,
    command: Option<Regex>,
    ignore: Option<Regex>,
    unasked: Option<Regex>,
    blocked: Option<Regex>,
    resume_loaded: Option<regex::bytes::Regex>,
}

pub struct Screen {
    vt: vt100::Parser,
    p: Patterns,
    /// Rows of the last settled screen.
    last: Vec<String>,
    /// The permission or question menu showing (its matched text), reported once.
    shown: Option<String>,
    idle: bool,
    /// Typed into since the last output: the screen must change before idle is believed.
    typed: bool,
    /// When the harness last typed, until a settle has read what the CLI drew after it.
    unread_typing: Option<std::time::Instant>,
    /// The screen said the CLI runs tools without asking, at the last settle.
    unasked: bool,
    /// The CLI has shown its ready prompt once: from then on no screen is taken as `blocked`
    /// (its output may quote one).
    was_ready: bool,
    /// A `blocked` screen shows (reported once).
    blocked: bool,
    open_tool: Option<String>,
    /// Resumed, and the `resumeLoaded` output not seen yet.
    awaiting_resume: bool,
    /// The end of the last output piece, so a marker split between two pieces is still seen.
    tail: Vec<u8>,
    /// Messages typed lately (their non-blank text): their echo is no menu.
    echoes: std::collections::VecDeque<String>,
}

/// How many typed messages are remembered as echoes.
const ECHOES: usize = 16;
/// Shorter pieces of typed text are not blanked out: they could be part of a real menu ("yes").
const ECHO_MIN_CHARS: usize = 8;

impl Screen {
    /// Errors name the field and the regex error, e.g. "patterns.tool: regex parse error ...".
    pub fn new(set: &PatternSet, rows: u16, cols: u16) -> Result<Screen, String> {
        let p = Patterns {
            permission: compile("permission", &set.permission)?,
            question: compile("question", &set.question)?,
            option: compile("option", &set.option)?,
            idle: compile("idle", &set.idle)?,
            busy: compile("busy", &set.busy)?,
            tokens: compile("tokens", &set.tokens)?,
            tool: compile("tool", &set.tool)?,
            tool_done: compile("toolDone", &set.tool_done)?,
            file: compile("file", &set.file)?,
            command: compile("command", &set.command)?,
            ignore: compile("ignore", &set.ignore)?,
            unasked: compile("unasked", &set.unasked)?,
            blocked: compile("blocked", &set.blocked)?,
            resume_loaded: match set.resume_loaded.as_deref().filter(|s| !s.is_empty()) {
                Some(re) => Some(regex::bytes::Regex::new(re).map_err(|e| format!("patterns.resumeLoaded: {e}"))?),
                None => None,
            },
        };
        for (field, re, group) in [("tokens", &p.tokens, 2), ("tool", &p.tool, 1), ("file", &p.file, 2)] {
            if let Some(re) = re
                && re.captures_len() <= group
            {
                return Err(format!(
                    "patterns.{field}: {:?} needs {group} capture group(s)",
                    re.as_str()
                ));
            }
        }
        Ok(Screen {
            vt: vt100::Parser::new(rows, cols, 0),
            p,
            last: Vec::new(),
            shown: None,
            idle: false,
            typed: false,
            unread_typing: None,
            unasked: false,
            was_ready: false,
            blocked: false,
            open_tool: None,
            awaiting_resume: false,
            tail: Vec::new(),
            echoes: Default::default(),
        })
    }

    /// The CLI was started to continue a session: its ready prompt waits for `resumeLoaded`.
    pub fn resuming(&mut self) {
        self.awaiting_resume = self.p.resume_loaded.is_some();
    }

    /// Whether a resumed CLI has not shown `resumeLoaded` yet.
    pub fn awaiting_resume(&self) -> bool {
        self.awaiting_resume
    }

    /// Raw output of the CLI, in any pieces.
    pub fn feed(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.typed = false;
        }
        if self.awaiting_resume
            && let Some(re) = &self.p.resume_loaded
        {
            self.tail.extend_from_slice(bytes);
            if re.is_match(&self.tail) {
                self.awaiting_resume = false;
                self.tail = Vec::new();
            } else {
                let keep = self.tail.len().saturating_sub(64);
                self.tail.drain(..keep);
            }
        }
        self.vt.process(bytes);
    }

    /// The harness typed into the terminal: whatever showed before is no longer the answer.
    pub fn typed(&mut self) {
        self.typed = true;
        self.idle = false;
        self.unread_typing = Some(std::time::Instant::now());
    }

    /// A message is about to be typed: wherever the CLI echoes it (its input row, its history,
    /// a line that repeats it), it is the harness's own text, not a menu.
    pub fn echo(&mut self, text: &str) {
        let pieces = std::iter::once(text).chain(text.lines());
        for piece in pieces.map(compact) {
            if piece.chars().count() >= ECHO_MIN_CHARS && !self.echoes.contains(&piece) {
                self.echoes.push_back(piece);
            }
        }
        while self.echoes.len() > ECHOES {
            self.echoes.pop_front();
        }
    }

    /// The screen with the echoes of typed messages blanked out (same byte offsets, rows kept):
    /// what menus are looked for on.
    fn without_echoes(&self, text: &str) -> String {
        if self.echoes.is_empty() {
            return text.to_string();
        }
        // Matched ignoring whitespace: a long echo wraps onto the next row, and a row's trailing
        // blanks are trimmed.
        let (dense, at): (String, Vec<usize>) = text
            .char_indices()
            .filter(|(_, c)| !c.is_whitespace())
            .map(|(i, c)| (c, i))
            .unzip();
        let offsets: Vec<usize> = dense.char_indices().map(|(i, _)| i).collect();
        let mut blank = vec![false; text.len()];
        for echo in &self.echoes {
            let chars = echo.chars().count();
            for (start, _) in dense.match_indices(echo.as_str()) {
                let first = offsets.partition_point(|&o| o < start);
                let (from, last) = (at[first], at[first + chars - 1]);
                let to = last + text[last..].chars().next().map_or(1, char::len_utf8);
                blank[from..to].iter_mut().for_each(|b| *b = true);
            }
        }
        text.char_indices()
            .map(|(i, c)| match c == '\n' || !blank[i] {
                true => c.to_string(),
                false => " ".repeat(c.len_utf8()),
            })
            .collect()
    }

    /// Whether a permission or question menu shows right now (not only as of the last settle).
    pub fn menu_showing(&self) -> bool {
        let text = self.without_echoes(&self.rows().join("\n"));
        let matches = |re: &Option<Regex>| re.as_ref().is_some_and(|re| re.is_match(&text));
        matches(&self.p.permission) || matches(&self.p.question)
    }

    /// When the harness typed last, if no settle has read the screen the CLI drew after it yet:
    /// what it typed may be about to open a menu.
    pub fn unread_typing(&self) -> Option<std::time::Instant> {
        self.unread_typing
    }

    /// Whether the screen shows the ready prompt with an empty input (busy or not): until a
    /// paste shows in the input, the CLI has not taken it.
    pub fn input_empty(&self) -> bool {
        let text = self.rows().join("\n");
        self.p.idle.as_ref().is_some_and(|re| re.is_match(&text))
    }

    /// Whether the text typed (its first line) still waits in the CLI's input: the input is not
    /// empty, the text shows, and no menu or busy CLI explains it. Only then is a second Enter
    /// safe: in a menu, Enter would choose an option.
    ///
    /// Where the terminal's cursor shows, the text must be on the cursor's line: a line-oriented
    /// CLI keeps what was submitted in its history, and while it works it shows no prompt, so
    /// the text on the screen alone does not say it waits in the input (an Enter pressed again
    /// there is an empty line for the CLI). TUIs that hide the cursor draw their own.
    pub fn still_in_input(&self, text: &str) -> bool {
        let rows = self.rows();
        let screen = rows.join("\n");
        let first: String = text
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .chars()
            .take(30)
            .collect();
        let menus = self.without_echoes(&screen);
        let matches = |re: &Option<Regex>, text: &str| re.as_ref().is_some_and(|re| re.is_match(text));
        let vt = self.vt.screen();
        let on_cursor_line = vt.hide_cursor() || {
            let (row, _) = vt.cursor_position();
            let mut top = row;
            while top > 0 && vt.row_wrapped(top - 1) {
                top -= 1;
            }
            let line = rows
                .get(usize::from(top)..=usize::from(row))
                .unwrap_or_default()
                .concat();
            compact(&line).contains(&compact(&first))
        };
        !first.is_empty()
            && !matches(&self.p.idle, &screen)
            && !matches(&self.p.permission, &menus)
            && !matches(&self.p.question, &menus)
            && !matches(&self.p.busy, &screen)
            && screen.contains(&first)
            && on_cursor_line
    }

    /// Whether the patterns can tell an empty input from a filled one (they know its prompt).
    pub fn sees_input(&self) -> bool {
        self.p.idle.is_some()
    }

    /// Whether the CLI asked for bracketed paste (`ESC [ ? 2004 h`).
    pub fn bracketed_paste(&self) -> bool {
        self.vt.screen().bracketed_paste()
    }

    fn rows(&self) -> Vec<String> {
        let (_, cols) = self.vt.screen().size();
        self.vt
            .screen()
            .rows(0, cols)
            .map(|r| r.trim_end().replace('\u{a0}', " "))
            .collect()
    }

    /// Reads the screen after the output paused for `quiet`.
    pub fn settle(&mut self, quiet: Duration) -> Vec<Detected> {
        let rows = self.rows();
        let mut out = Vec::new();
        for row in new_rows(&self.last, &rows) {
            if self.p.ignore.as_ref().is_some_and(|re| re.is_match(&row)) {
                continue;
            }
            out.push(Detected::Line(row.clone()));
            self.detect_line(&row, &mut out);
        }
        let text = rows.join("\n");
        tracing::debug!(screen = %text, "screen settled");
        self.last = rows;
        // The CLI has drawn since the harness typed, and this settle read it.
        if !self.typed {
            self.unread_typing = None;
        }
        let unasked = self.p.unasked.as_ref().is_some_and(|re| re.is_match(&text));
        if unasked != self.unasked {
            self.unasked = unasked;
            // First: the rows of this settle ran in the mode it names.
            out.insert(0, Detected::Unasked(unasked));
        }

        // A screen only a person can answer, before the CLI was ever ready: reported, and
        // nothing is idle or a menu while it shows.
        let blocked = self.p.blocked.as_ref().filter(|_| !self.was_ready).and_then(|re| {
            let c = re.captures(&text)?;
            Some(c.name("reason").or_else(|| c.get(0))?.as_str().trim().to_string())
        });
        match blocked {
            Some(reason) => {
                if !self.blocked {
                    self.blocked = true;
                    out.push(Detected::Screen(text.clone()));
                    out.push(Detected::Blocked { reason, screen: text });
                }
                self.idle = false;
                return out;
            }
            None => self.blocked = false,
        }

        // Menus are looked for with the typed messages' echoes blanked out; what a menu asks is
        // read on the screen as it is, where it matches there the same way.
        let menus = self.without_echoes(&text);
        let find = |re: &Option<Regex>| {
            let re = re.as_ref()?;
            let blanked = re.captures(&menus)?;
            let start = blanked.get(0)?.start();
            match re.captures_at(&text, start) {
                Some(c) if c.get(0).is_some_and(|m| m.start() == start) => Some(c),
                _ => Some(blanked),
            }
        };
        let menu = find(&self.p.permission)
            .map(|c| (true, c))
            .or_else(|| find(&self.p.question).map(|c| (false, c)));
        match menu {
            Some((is_permission, c)) => {
                let found = if is_permission {
                    permission(&c)
                } else {
                    question(&c, &menus, self.p.option.as_ref())
                };
                // Asked once: the same menu redrawn, or matched on other rows, is still the one shown.
                let key = match &found {
                    Some(found) => format!("{found:?}"),
                    None => c[0].to_string(),
                };
                if self.shown.as_deref() != Some(&key) {
                    out.push(Detected::Screen(text.clone()));
                    out.extend(found);
                    self.shown = Some(key);
                }
                self.idle = false;
                return out;
            }
            None => {
                if self.shown.take().is_some() {
                    out.push(Detected::MenuClosed);
                }
            }
        }

        let ready = self.p.idle.as_ref().is_some_and(|re| re.is_match(&text))
            && !self.p.busy.as_ref().is_some_and(|re| re.is_match(&text));
        if !ready {
            self.idle = false;
        } else if !self.idle && !self.typed && quiet >= if self.awaiting_resume { RESUME_QUIET } else { IDLE_QUIET } {
            self.idle = true;
            self.was_ready = true;
            // Loaded or not, the session resumed: later prompts need only the usual quiet.
            self.awaiting_resume = false;
            out.push(Detected::Screen(text));
            out.push(Detected::Idle);
        }
        out
    }

    fn detect_line(&mut self, row: &str, out: &mut Vec<Detected>) {
        let p = &self.p;
        let done = captures(&p.tool_done, row);
        // A call before what it did and its completion, also when one row shows them all
        // (Gemini's "✓ Shell x"); a row that completes the call already open (its running row
        // came first) only completes it.
        if let Some(c) = captures(&p.tool, row)
            && let Some(tool) = group(&c, "tool", 1)
            && !(done.is_some() && self.open_tool.as_deref() == Some(tool))
        {
            let input = group(&c, "input", 2).unwrap_or_default().trim().to_string();
            self.open_tool = Some(tool.to_string());
            out.push(Detected::ToolStarted {
                tool: tool.to_string(),
                input,
            });
        }
        if let Some(c) = captures(&p.file, row)
            && let Some(path) = group(&c, "path", 2).map(str::trim).filter(|s| !s.is_empty())
        {
            out.push(Detected::FileOperation {
                path: path.to_string(),
                operation: normalize_operation(group(&c, "operation", 1).unwrap_or_default()),
            });
        }
        if let Some(c) = captures(&p.command, row) {
            let command = c.get(1).or_else(|| c.get(0)).map_or("", |m| m.as_str()).trim();
            if !command.is_empty() {
                out.push(Detected::Command {
                    command: command.to_string(),
                });
            }
        }
        // Last: what the row says the call did belongs to it (Codex's "• Ran x", Gemini's "✓ Shell x").
        if let Some(c) = done {
            let tool = match c.name("tool").map(|m| m.as_str().to_string()) {
                Some(tool) => {
                    if self.open_tool.as_ref() == Some(&tool) {
                        self.open_tool = None;
                    }
                    Some(tool)
                }
                None => self.open_tool.take(),
            };
            out.extend(tool.map(|tool| Detected::ToolCompleted { tool }));
        }
        if let Some(c) = captures(&p.tokens, row) {
            let number = |i: usize| c.get(i)?.as_str().replace(',', "").parse::<u64>().ok();
            if let (Some(input), Some(output)) = (number(1), number(2)) {
                out.push(Detected::Tokens { input, output });
            }
        }
    }
}

/// The text without its whitespace: an echo is found whatever the rows did to its blanks.
fn compact(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Rows of `now` that `before` did not have (as many times), top to bottom; blank rows skipped.
fn new_rows(before: &[String], now: &[String]) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for row in before {
        *seen.entry(row.as_str()).or_default() += 1;
    }
    let mut fresh = Vec::new();
    for row in now {
        if row.trim().is_empty() {
            continue;
        }
        match seen.get_mut(row.as_str()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => fresh.push(row.clone()),
        }
    }
    fresh
}

fn compile(field: &str, pattern: &Option<String>) -> Result<Option<Regex>, String> {
    let Some(pattern) = pattern.as_deref().filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    Regex::new(pattern)
        .map(Some)
        .map_err(|e| format!("patterns.{field}: {e}"))
}

fn captures<'h>(re: &Option<Regex>, text: &'h str) -> Option<Captures<'h>> {
    re.as_ref()?.captures(text)
}

/// A named group, or the numbered one when the pattern does not name it.
fn group<'h>(c: &Captures<'h>, name: &str, index: usize) -> Option<&'h str> {
    c.name(name).or_else(|| c.get(index)).map(|m| m.as_str())
}

/// A permission menu: named groups `tool` and `command` (or `path`) when the pattern has them
/// (a `command` without a `tool` is a shell command: tool `bash`), else capture 1 read as
/// `Tool(argument)` / `Tool argument`.
fn permission(c: &Captures) -> Option<Detected> {
    let tool = match (c.name("tool"), c.name("command")) {
        (Some(t), _) => t.as_str().trim(),
        (None, Some(_)) => "Bash",
        (None, None) => return parse_permission(c.get(1).or_else(|| c.get(0))?.as_str()),
    };
    let argument = c
        .name("command")
        .or_else(|| c.name("path"))
        .map(|m| m.as_str().trim().to_string())
        .filter(|s| !s.is_empty());
    // Every CLI's shell tool is `bash` to the permission manager's policies.
    let tool_lc = match tool.to_lowercase().as_str() {
        "shell" | "run_shell_command" | "exec_command" => "bash".to_string(),
        other => other.to_string(),
    };
    let description = match &argument {
        Some(a) => format!("{tool} {a}"),
        None => tool.to_string(),
    };
    let (command, file_path) = if is_file_tool(&tool_lc) || c.name("path").is_some() {
        (None, argument)
    } else {
        (argument, None)
    };
    Some(Detected::Permission {
        tool: tool_lc,
        command,
        file_path,
        description,
    })
}

/// A question menu: the `question` group (or capture 1), and the options listed below it as
/// rows matching the `option` pattern (group `label`, or capture 2).
fn question(c: &Captures, text: &str, option: Option<&Regex>) -> Option<Detected> {
    let question = c
        .name("question")
        .or_else(|| c.get(1))
        .or_else(|| c.get(0))?
        .as_str()
        .trim()
        .to_string();
    let below = &text[c.get(0).map_or(0, |m| m.start())..];
    // Options listed inline: "Which one? (a/b)".
    if let Some(inline) = c.name("o1").or_else(|| c.name("o2")) {
        let options = inline
            .as_str()
            .split(['/', '|', ','])
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(String::from)
            .collect();
        return Some(Detected::Question { question, options });
    }
    let options = match option {
        Some(re) => below
            .lines()
            .filter_map(|row| re.captures(row))
            .filter_map(|o| group(&o, "label", 2).map(|l| l.trim().to_string()))
            .collect(),
        None => Vec::new(),
    };
    Some(Detected::Question { question, options })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A screen for `cli` showing `rows` (as the real TUI drew them), read after `quiet`.
    fn shown(cli: &str, rows: &[&str], quiet: Duration) -> Vec<Detected> {
        let mut s = Screen::new(&PatternSet::builtin(cli), 50, 200).unwrap();
        s.feed(rows.join("\r\n").as_bytes());
        s.settle(quiet)
    }

    fn prompts(found: Vec<Detected>) -> Vec<Detected> {
        found
            .into_iter()
            .filter(|d| !matches!(d, Detected::Line(_) | Detected::Screen(_)))
            .collect()
    }

    const CLAUDE_IDLE: &[&str] = &[
        "● Tool finished. DONE.",
        "",
        "✻ Brewed for 0s",
        "",
        "────────────────",
        "❯\u{a0}",
        "────────────────",
        "  ? for shortcuts · ← for agents",
    ];
    const CLAUDE_BUSY: &[&str] = &[
        "✽ Contemplating…",
        "",
        "────────────────",
        "❯\u{a0}",
        "────────────────",
        "  esc to interrupt · ← for agents",
    ];

    #[test]
    fn claude_is_idle_only_when_its_empty_input_shows_nothing_busy_and_the_screen_was_still() {
        assert_eq!(prompts(shown("claude", CLAUDE_IDLE, IDLE_QUIET)), vec![Detected::Idle]);
        assert_eq!(
            prompts(shown("claude", CLAUDE_IDLE, Duration::from_millis(100))),
            vec![]
        );
        assert_eq!(prompts(shown("claude", CLAUDE_BUSY, IDLE_QUIET)), vec![]);
    }

    #[test]
    fn codex_is_idle_once_loaded_under_its_footer_not_while_working() {
        let loading = [
            "  >_ OpenAI Codex (v0.169.0)",
            "     loading",
            "",
            "› Ask Codex to do anything",
        ];
        let idle = [
            "› Ask Codex to do anything",
            "",
            "  GPT-5.5 default · /tmp/ws-codex",
            "  ← for agents · ? for shortcuts",
        ];
        let working = [
            "◦ Working (5s • esc to interrupt)",
            "",
            "",
            "› Ask Codex to do anything",
            "",
            "  GPT-5.5 default · /tmp/ws-codex",
        ];
        assert_eq!(prompts(shown("codex", &loading, IDLE_QUIET)), vec![]);
        assert_eq!(prompts(shown("codex", &idle, IDLE_QUIET)), vec![Detected::Idle]);
        assert_eq!(prompts(shown("codex", &working, IDLE_QUIET)), vec![]);
    }

    #[test]
    fn the_real_permission_menus_are_recognised_with_their_command() {
        let claude = [
            "● Bash(touch ran.txt)",
            "  ⎿  Waiting…",
            "────────",
            " Bash command",
            "",
            "   touch ran.txt",
            "   Run a shell command",
            "",
            " Do you want to proceed?",
            " ❯ 1. Yes",
            "   2. Yes, and always allow access to ws-claude/ from this project",
            "   3. No",
            "",
            " Esc to cancel · Tab to amend · ctrl+e to explain",
        ];
        let codex = [
            "› RUNTOOL now",
            "",
            "• Running touch ran.txt",
            "",
            "  Would you like to run the following command?",
            "",
            "  Environment: local",
            "",
            "  Reason: Fake model wants to run this command",
            "",
            "  $ touch ran.txt",
            "",
            "› 1. Yes, proceed (y)",
            "  2. Yes, and don't ask again for commands that start with `touch ran.txt` (p)",
            "  3. No, and tell Codex what to do differently (esc)",
            "",
            "  Press enter to confirm or esc to cancel",
        ];
        let gemini = [
            "╭──────────────────────────────────────╮",
            "│ ? Shell  touch ran.txt                 │",
            "│ ╭──────────────────────────────────╮ │",
            "│ │ touch ran.txt                    │ │",
            "│ ╰──────────────────────────────────╯ │",
            "│ Allow execution of [Shell]?            │",
            "│                                      │",
            "│ ● 1. Allow once                        │",
            "│   2. Allow for this session            │",
            "│   3. No, suggest changes (esc)         │",
            "╰──────────────────────────────────────╯",
        ];
        // Claude Code 2.1.332 (the npm latest on 2026-11-28)
        let claude_latest = [
            "● Running a shell command",
            "  ⎿  $ touch ran.txt",
            "────────",
            " Bash command",
            " Tip: auto mode handles these prompts for you — choose \"switch to auto mode\" below",
            " Run a shell command",
            "╌╌╌╌╌╌╌╌",
            " touch ran.txt",
            "╌╌╌╌╌╌╌╌",
            " Do you want to proceed?",
            " ❯ 1. Yes",
            "   2. Yes, and always allow access to /tmp/ws from this project",
            "   3. Yes, and switch to auto mode · auto mode handles these prompts for you",
            "   4. No",
            " Esc to cancel · Tab to amend",
        ];
        let all = [
            ("claude", &claude[..]),
            ("claude", &claude_latest[..]),
            ("codex", &codex[..]),
            ("gemini", &gemini[..]),
        ];
        for (cli, rows) in all {
            let found = prompts(shown(cli, rows, IDLE_QUIET));
            let permission = found.iter().find(|d| matches!(d, Detected::Permission { .. }));
            let Some(Detected::Permission { tool, command, .. }) = permission else {
                panic!("{cli}: {found:?}")
            };
            assert_eq!(
                (tool.as_str(), command.as_deref()),
                ("bash", Some("touch ran.txt")),
                "{cli}"
            );
            assert!(!found.contains(&Detected::Idle), "{cli}: a menu is never idle");
        }
    }

    #[test]
    fn the_real_question_menus_are_recognised_with_their_options() {
        let claude = [
            "❯ ASKQ please",
            "────────",
            " ☐ Question",
            "",
            "Which color do you prefer?",
            "",
            "❯ 1. Red",
            "     Red",
            "  2. Blue",
            "     Blue",
            "  3. Type something.",
            "────────",
            "  4. Chat about this",
            "",
            "Enter to select · ↑/↓ to navigate · Esc to cancel",
        ];
        let codex = [
            "  Question 1/1 (1 unanswered)",
            "  Which color do you prefer?",
            "",
            "  › 1. Red                Red",
            "    2. Blue               Blue",
            "    3. None of the above  Optionally, add details in notes (tab)",
            "",
            "  tab to add notes | enter to submit answer | esc to interrupt",
        ];
        let gemini = [
            "│ Answer Questions                                   │",
            "│                                                    │",
            "│ Which color do you prefer?                         │",
            "│                                                    │",
            "│ ● 1.  Red                                          │",
            "│       Red                                          │",
            "│   2.  Blue                                         │",
            "│       Blue                                         │",
            "│   3.  Enter a custom value                         │",
        ];
        for (cli, rows) in [("claude", &claude[..]), ("codex", &codex[..]), ("gemini", &gemini[..])] {
            let found = prompts(shown(cli, rows, IDLE_QUIET));
            let Some(Detected::Question { question, options }) = found.first() else {
                panic!("{cli}: {found:?}")
            };
            assert_eq!(question, "Which color do you prefer?", "{cli}");
            assert_eq!(&options[..2], ["Red", "Blue"], "{cli}: {options:?}");
            let keys = crate::parse::Keys::from(&PatternSet::builtin(cli));
            assert_eq!(keys.answer("Blue", options), "2", "{cli}: the option's digit");
        }
    }

    /// The screens the real CLIs show in a new cwd or a home with no auth (captured under tmux
    /// from Claude Code 2.1.197, Codex 0.171.0 and Gemini CLI 0.61.0).
    #[test]
    fn a_folder_trust_or_sign_in_screen_before_the_first_prompt_is_blocked_and_reported_once() {
        let claude = [
            "─────────────────────────────────",
            " Accessing workspace:",
            "",
            " /tmp/scr/w-claude",
            "",
            " Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source",
            " Claude Code'll be able to read, edit, and execute files here.",
            "",
            " ❯ 1. Yes, I trust this folder",
            "   2. No, exit",
            "",
            " Enter to confirm · Esc to cancel",
        ];
        let gemini = [
            " ╭──────────────────────────────────────────╮",
            " │                                          │",
            " │ Do you trust the files in this folder?   │",
            " │                                          │",
            " │ ● 1. Trust folder (w-gemini)             │",
            " │   2. Trust parent folder (scr)           │",
            " │   3. Don't trust                         │",
            " ╰──────────────────────────────────────────╯",
        ];
        let gemini_auth = [
            "│ ? Get started                                                    │",
            "│   How would you like to authenticate for this project?           │",
            "│     1. Sign in with Google                                       │",
            "│   ● 2. Use Gemini API Key                                        │",
        ];
        let codex = [
            "  Welcome to Codex, OpenAI's command-line coding agent",
            "  Choose how you want to use Codex.",
            "> 1. Sign in with ChatGPT",
            "     Usage included with Plus, Pro, Business, and Enterprise plans",
            "  Press enter to continue",
        ];
        let codex_model = [
            "  Meet GPT-6 Sol",
            "  Our latest Sol is more intelligent and more efficient so your usage limits go further.",
            "› 1. Try new model",
            "  2. Use existing model",
            "  enter/esc confirm · ^c quit",
        ];
        for (cli, rows, reason) in [
            ("codex", &codex_model[..], "Try new model"),
            ("claude", &claude[..], "Yes, I trust this folder"),
            ("gemini", &gemini[..], "Do you trust the files in this folder?"),
            (
                "gemini",
                &gemini_auth[..],
                "How would you like to authenticate for this project?",
            ),
            ("codex", &codex[..], "Sign in with ChatGPT"),
        ] {
            let mut s = Screen::new(&PatternSet::builtin(cli), 50, 200).unwrap();
            s.feed(rows.join("\r\n").as_bytes());
            let found = prompts(s.settle(IDLE_QUIET));
            let [Detected::Blocked { reason: got, screen }] = &found[..] else {
                panic!("{cli}: {found:?}")
            };
            assert_eq!(got, reason, "{cli}");
            assert!(screen.contains(reason), "{cli}: the screen goes with it");
            s.feed(b" ");
            assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![], "{cli}: reported once");
        }
    }

    #[test]
    fn a_trust_question_in_the_output_of_a_cli_that_was_ready_is_not_blocked() {
        let mut s = Screen::new(&PatternSet::builtin("claude"), 50, 200).unwrap();
        s.feed(CLAUDE_IDLE.join("\r\n").as_bytes());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![Detected::Idle]);
        s.feed(b"\x1b[2J\x1b[H\xe2\x97\x8f It asks: Do you trust the files in this folder?\r\n");
        let found = s.settle(IDLE_QUIET);
        assert!(
            !found.iter().any(|d| matches!(d, Detected::Blocked { .. })),
            "{found:?}"
        );
    }

    #[test]
    fn claudes_auto_mode_footer_says_tools_run_unasked_and_its_summary_row_is_a_command() {
        let auto = [
            "❯ RUNTOOL now",
            "  Ran 1 shell command",
            "● Tool finished. DONE.",
            "────────────────",
            "❯\u{a0}",
            "────────────────",
            "  ⏵⏵ auto mode on (shift+tab to cycle)",
        ];
        let found = prompts(shown("claude", &auto, IDLE_QUIET));
        assert_eq!(found[0], Detected::Unasked(true), "{found:?}");
        assert!(found.contains(&Detected::Command {
            command: "Ran 1 shell command".into()
        }));
        let manual = [
            "────────────────",
            "❯\u{a0}",
            "────────────────",
            "  ⏸ manual mode on · ? for shortcuts",
        ];
        assert_eq!(prompts(shown("claude", &manual, IDLE_QUIET)), vec![Detected::Idle]);
    }

    #[test]
    fn a_row_that_shows_a_call_and_its_completion_calls_it_first() {
        let found = prompts(shown("gemini", &["│ ✓  Shell touch ran.txt │"], IDLE_QUIET));
        let tool = "Shell".to_string();
        assert_eq!(
            found,
            vec![
                Detected::ToolStarted {
                    tool: tool.clone(),
                    input: "touch ran.txt".into()
                },
                Detected::Command {
                    command: "touch ran.txt".into()
                },
                Detected::ToolCompleted { tool },
            ]
        );
    }

    #[test]
    fn a_menu_gone_from_the_screen_is_reported_closed_once() {
        let mut s = Screen::new(&PatternSet::builtin("gemini"), 50, 200).unwrap();
        s.feed("│ ? Shell  touch x │\r\n│ Allow execution of [Shell]? │\r\n".as_bytes());
        assert!(s.menu_showing(), "seen on the live screen before any settle");
        assert!(matches!(
            prompts(s.settle(IDLE_QUIET))[..],
            [Detected::Permission { .. }]
        ));
        s.feed(b"\x1b[2J\x1b[H");
        assert!(!s.menu_showing());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![Detected::MenuClosed]);
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![]);
    }

    #[test]
    fn after_typing_the_old_screen_is_not_believed_until_the_cli_redraws() {
        let mut s = Screen::new(&PatternSet::builtin("claude"), 50, 200).unwrap();
        s.feed(CLAUDE_IDLE.join("\r\n").as_bytes());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![Detected::Idle]);
        s.typed();
        assert_eq!(
            prompts(s.settle(IDLE_QUIET)),
            vec![],
            "no output since the keys: not idle yet"
        );
        s.feed(b"\x1b[2J\x1b[H");
        s.feed(CLAUDE_IDLE.join("\r\n").as_bytes());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![Detected::Idle]);
    }

    #[test]
    fn only_rows_that_were_not_on_the_screen_are_new_however_often_they_repeat() {
        let before = vec!["a".to_string(), "b".into(), "".into()];
        let now = vec!["a".to_string(), "b".into(), "b".into(), "".into(), "c".into()];
        assert_eq!(new_rows(&before, &now), vec!["b".to_string(), "c".into()]);
    }

    const DM: &str = "is the build green?\n[relay dm from @root · message 01a2 · answer with relay_reply]";

    #[test]
    fn a_typed_message_echoed_by_a_line_oriented_cli_is_no_question() {
        let mut s = Screen::new(&PatternSet::builtin("generic"), 50, 80).unwrap();
        s.feed(b"fake-agent (generic style)\r\n> ");
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![Detected::Idle]);
        s.echo(DM);
        s.typed();
        // Typed on one line; 80 columns wrap it.
        s.feed(DM.replace('\n', " ").as_bytes());
        assert!(!s.menu_showing());
        assert!(s.still_in_input(DM), "the cursor is on the typed line");
        s.feed(format!("\r\nReceived: {}\r\n> ", DM.replace('\n', " ")).as_bytes());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![Detected::Idle]);
        // The CLI's own question is one still, also when it quotes the message.
        s.feed(b"\r\x1b[2KAnswer 'is the build green?' now? (yes/no)");
        assert_eq!(
            prompts(s.settle(IDLE_QUIET)),
            vec![Detected::Question {
                question: "Answer 'is the build green?' now?".into(),
                options: vec!["yes".into(), "no".into()],
            }]
        );
    }

    #[test]
    fn a_line_oriented_cli_at_work_has_nothing_left_in_its_input_and_a_bare_prompt_above_is_history() {
        let mut s = Screen::new(&PatternSet::builtin("generic"), 50, 200).unwrap();
        s.feed(b"> \r\n> sleep 3000\r\nWorking...");
        assert!(!s.input_empty(), "the prompt row above is history");
        assert!(!s.still_in_input("sleep 3000"), "submitted: the cursor left its line");
        s.feed(b"\r\x1b[2KWorked for 3s\r\n> ");
        assert!(s.input_empty());
        s.feed(b"hello");
        assert!(!s.input_empty(), "typed into the prompt on the last row");
        assert!(s.still_in_input("hello"));
    }

    #[test]
    fn a_question_redrawn_is_asked_once() {
        let mut s = Screen::new(&PatternSet::builtin("generic"), 50, 200).unwrap();
        s.feed(b"Which database? (postgres/mysql)");
        assert_eq!(prompts(s.settle(IDLE_QUIET)).len(), 1);
        s.feed(b"\r\x1b[2KWhich database? (postgres/mysql)");
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![]);
    }

    const GEMINI_READY: &str = " >   Type your message or @path/to/file\r\n";

    #[test]
    fn a_resumed_gemini_is_idle_only_after_its_history_reload() {
        let mut s = Screen::new(&PatternSet::builtin("gemini"), 50, 200).unwrap();
        s.resuming();
        // The prompt it draws before it reloads the session is not the one to type into.
        s.feed(GEMINI_READY.as_bytes());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![]);
        // The reload clears the screen (the marker split between two pieces of output).
        s.feed(b"\x1b[2");
        s.feed(b"J\x1b[3J\x1b[H > REMEMBER the word BANANA\r\n");
        s.feed(GEMINI_READY.as_bytes());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![Detected::Idle]);
    }

    #[test]
    fn a_resumed_gemini_that_never_reloads_is_idle_after_a_longer_quiet() {
        let mut s = Screen::new(&PatternSet::builtin("gemini"), 50, 200).unwrap();
        s.resuming();
        s.feed(GEMINI_READY.as_bytes());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![]);
        assert_eq!(prompts(s.settle(RESUME_QUIET)), vec![Detected::Idle]);
        // The next turn's prompt is idle after the usual quiet.
        s.typed();
        s.feed(b"\x1b[H");
        s.feed(GEMINI_READY.as_bytes());
        assert_eq!(prompts(s.settle(IDLE_QUIET)), vec![Detected::Idle]);
    }
}
