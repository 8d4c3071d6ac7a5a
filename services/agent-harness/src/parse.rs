//! What the harness recognises on a CLI's screen, per CLI (seed 003 §1.6 and §6.3, checked
//! against the real TUIs of Claude Code 2.1.197, Codex 0.169.0 and Gemini CLI 0.61.0), and how
//! it answers their menus.
//!
//! A [`PatternSet`] is regex strings, so it can come from configuration
//! (`[harness.patterns.<cli>]` overrides any field). Screen patterns (`permission`, `question`,
//! `idle`, `busy`) are matched against the whole rendered screen, one row per line (use `(?m)`
//! for `^`/`$` per row); row patterns (`tool`, `toolDone`, `file`, `command`, `tokens`) against
//! each row that appeared since the screen last settled. The `fake` module draws what the
//! `fake-agent` binary shows in each style, the same screens as the real CLIs, so the tests that
//! use it exercise the patterns the real CLIs need.

use serde::{Deserialize, Serialize};

/// One pattern set per CLI, as strings so it can come from configuration. An empty string disables
/// a pattern (useful to switch off a builtin one through overrides).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PatternSet {
    /// Screen: a permission menu. Named groups `tool` and `command` (or `path`); or capture 1
    /// = what is asked, as `Tool(argument)` or `Tool argument`.
    pub permission: Option<String>,
    /// Screen: a question menu; group `question` (or capture 1) is the question.
    pub question: Option<String>,
    /// Row below a question: one option, group `label` (or capture 2).
    pub option: Option<String>,
    /// Screen: the CLI's ready prompt with an empty input.
    pub idle: Option<String>,
    /// Screen: the CLI is working (a spinner, "esc to interrupt"); never idle while it shows.
    pub busy: Option<String>,
    /// Row: capture 1 = input tokens, capture 2 = output tokens (digits with optional commas).
    pub tokens: Option<String>,
    /// Row: a tool call starting: named groups `tool` (tool name) and `input` (its argument).
    pub tool: Option<String>,
    /// Row: a tool call finished; an optional named group `tool`, else the last started tool is meant.
    pub tool_done: Option<String>,
    /// Row: a file operation: named groups `operation` and `path`.
    pub file: Option<String>,
    /// Row: a shell command executed: capture 1 = the command.
    pub command: Option<String>,
    /// Row: chrome that is not output (input box borders, status lines); not reported.
    pub ignore: Option<String>,
    /// Screen: the CLI says it runs tools without asking (a permission mode such as Claude
    /// Code's `⏵⏵ auto mode on`). A tool that runs while it shows, with no menu seen for it,
    /// is a bypass: `permission.bypassed`, and the agent is blocked.
    pub unasked: Option<String>,
    /// Screen, until the CLI first shows its ready prompt: a screen only a person can answer
    /// (folder trust, sign-in); the named group `reason` (or the whole match) says what it asks.
    /// The agent is reported `blocked` with the screen (`status.blocked`) instead of waiting at
    /// `starting`; a person answers it with `agent.input`, or a prepared home avoids it.
    pub blocked: Option<String>,
    /// Keys that approve the permission menu once.
    pub approve: Option<String>,
    /// Keys that deny it (they must never select an approving option).
    pub deny: Option<String>,
    /// Keys that answer a question: `{n}` is the chosen option's number (1-based), `{text}`
    /// the answer typed; an answer that is no option is typed with `answerText`.
    pub answer: Option<String>,
    /// Keys for an answer that is not one of the options (`{text}`).
    pub answer_text: Option<String>,
    /// Milliseconds between the typed text showing in the CLI's input and the Enter that sends it.
    pub enter_delay_ms: Option<u64>,
    /// Keys that interrupt the CLI while it works (default Escape, as Claude Code, Codex and
    /// Gemini CLI take it).
    pub interrupt: Option<String>,
    /// Arguments that start the CLI with a session id of ours (`{id}`), so it can be resumed.
    pub session_args: Option<String>,
    /// Arguments that continue session `{id}` (a harness restarted after a crash).
    pub resume_args: Option<String>,
    /// Raw output: a resumed CLI has loaded the session it continues. Until it shows, the
    /// ready prompt of a resumed CLI is not idle (what is typed before the history is loaded
    /// can be lost), unless the screen stays still for `RESUME_QUIET`.
    pub resume_loaded: Option<String>,
}

/// How a CLI's menus are answered.
#[derive(Debug, Clone)]
pub struct Keys {
    pub enter_delay: std::time::Duration,
    pub approve: String,
    pub deny: String,
    pub interrupt: String,
    answer: String,
    answer_text: String,
}

impl Keys {
    pub fn from(set: &PatternSet) -> Keys {
        let or = |v: &Option<String>, d: &str| v.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| d.to_string());
        Keys {
            enter_delay: std::time::Duration::from_millis(set.enter_delay_ms.unwrap_or(0)),
            approve: or(&set.approve, "y\r"),
            deny: or(&set.deny, "n\r"),
            interrupt: or(&set.interrupt, "\x1b"),
            answer: or(&set.answer, "{text}\r"),
            answer_text: or(&set.answer_text, "{text}\r"),
        }
    }

    /// The keys for `answer`: its option number when it is one of `options`.
    pub fn answer(&self, answer: &str, options: &[String]) -> String {
        let chosen = options.iter().position(|o| o.eq_ignore_ascii_case(answer.trim()));
        match chosen {
            Some(i) => self
                .answer
                .replace("{n}", &(i + 1).to_string())
                .replace("{text}", answer),
            None => self.answer_text.replace("{text}", answer),
        }
    }
}

impl PatternSet {
    /// Built-in sets: "claude", "codex", "gemini"; any other name gets a conservative generic set.
    pub fn builtin(cli: &str) -> PatternSet {
        let p = |s: &str| Some(s.to_string());
        match cli.to_ascii_lowercase().as_str() {
            "claude" => PatternSet {
                // " Bash command" … "   touch x" … " Do you want to proceed?" / " ❯ 1. Yes"; 2.1.332
                // puts a tip and the description first and the command between dashed rules
                permission: p(
                    r"(?m)^ (?P<tool>[A-Z][\w ]*?) command\n(?:\s*\n)*(?: (?:Tip:|Run a )[^\n]*\n(?:\s*\n)*)*(?:╌+\n)?\s+(?P<command>\S.*?)\s*$(?s:.*?)^ Do you want to proceed\?",
                ),
                // " ☐ Question" / "Which color do you prefer?" / "❯ 1. Red"
                question: p(r"(?m)^ ☐ [^\n]*\n(?:\s*\n)*(?P<question>[^\n]*\?)\s*$"),
                option: p(r"^(?:❯ | {2})(\d+)\.\s+(?P<label>.+?)\s*$"),
                // "❯" and a no-break space (read as a space) between two rules: the empty input
                idle: p(r"(?m)^─{8,}\n❯\s*\n─{8,}$"),
                // the footer's "esc to interrupt", or a spinner row "✽ Contemplating…" (a status
                // line setting hides the footer hint)
                busy: p(r"(?m)esc to interrupt|^[✽✶·*✢✻✳] [^\n]*…"),
                tokens: None,
                // "● Bash(ls -la)": the bullet of a tool call
                tool: p(r"^[●⏺]\s*(?P<tool>[A-Za-z][\w.:-]*)\((?P<input>.*)\)\s*$"),
                // "  ⎿  Done" (or the first row of the result) closes the open tool call
                tool_done: p(r"^\s*⎿\s+\S"),
                // "● Update(src/main.rs)": a call of one of the file tools
                file: p(r"^[●⏺]\s*(?P<operation>Read|Write|Update|Edit|MultiEdit|Delete)\((?P<path>.*)\)\s*$"),
                // "● Bash(ls -la)": a Bash tool call is a command execution (reported once it
                // ran); newer releases sum calls up as "Ran 1 shell command"
                command: p(r"^[●⏺]\s*Bash\((.*)\)\s*$|^\s*(Ran \d+ shell commands?)\s*$"),
                // the input box (what is typed, and the user's messages in the history: they
                // are messages, not output), its rules, hints and mode line, the spinner
                ignore: p(
                    r"^─{8,}$|^\s*\? for shortcuts|^\s*esc to interrupt|^❯(?:\s|$)|^[✽✶·*✢✻✳] [^\n]*…|⎿\s+Waiting…$|^\s*(?:⏵⏵|⏸) ",
                ),
                // the footer of a mode that runs tools unasked (Claude Code 2.1.332 starts in
                // auto mode unless told `--permission-mode default`)
                unasked: p(r"(?m)^\s*⏵⏵ (?:auto mode|bypass permissions|accept edits) on"),
                // "Accessing workspace: … ❯ 1. Yes, I trust this folder" (2.1.197), the older
                // trust question, the sign-in choice of a home with no key or login
                blocked: p(
                    r"(?P<reason>Yes, I trust this folder|Do you trust the files in this folder\?|Select login method)",
                ),
                // "1. Yes" acts at once; Esc denies ("3. No" would too, but Esc never lands in
                // the input box should the menu be gone)
                approve: p("1"),
                deny: p("\u{1b}"),
                answer: p("{n}"),
                answer_text: p("{text}\r"),
                enter_delay_ms: None,
                session_args: p("--session-id {id}"),
                resume_args: p("--resume {id}"),
                resume_loaded: None,
                interrupt: None,
            },
            "codex" => PatternSet {
                // "Would you like to run the following command?" … "$ touch x" … "› 1. Yes, proceed (y)"
                permission: p(
                    r"(?m)^\s*Would you like to run the following command\?(?s:.*?)^\s*\$ (?P<command>.+?)\s*$",
                ),
                // "Question 1/1 (1 unanswered)" / "Which color do you prefer?" / "› 1. Red   Red"
                question: p(r"(?m)^\s*Question \d+/\d+[^\n]*\n\s*(?P<question>[^\n]+?)\s*$"),
                option: p(r"^\s*(?:›\s*)?(\d+)\.\s+(?P<label>\S+(?: \S+)*)"),
                // the composer pinned to the bottom, empty, showing its placeholder, above the
                // footer's model line (drawn once Codex has loaded)
                idle: p(r"(?m)^› (?:Ask Codex to do anything|Ask a follow-up question)\s*\n(?:\s*\n)?  \S[^\n]* · "),
                busy: p(r"esc to interrupt\)"),
                tokens: None,
                // "• Running touch x" / "• Ran touch x"
                tool: p(r"^•\s+Running\s+(?P<input>.+?)\s*$"),
                tool_done: p(r"^•\s+(?:Ran|Exited \(status \d+\))\s+"),
                // "• Edited src/main.rs (+1 -0)" / "• Added …" / "• Deleted …"
                file: p(r"^•\s+(?P<operation>Edited|Added|Deleted)\s+(?P<path>\S+)"),
                command: p(r"^•\s+Ran\s+(.+?)\s*$"),
                ignore: p(r"^\s*⚠|default · /|^\s*Press enter to confirm|^\s*← for agents|^› |esc to interrupt\)"),
                unasked: None,
                // a home with no provider and no login: "Welcome to Codex" … "1. Sign in with
                // ChatGPT"; an older model's migration notice: "Meet GPT-6 Sol" … "1. Try new model"
                blocked: p(
                    r"(?P<reason>Sign in with ChatGPT|Do you trust the contents of this directory\?|Try new model)",
                ),
                // "1. Yes, proceed (y)"; Esc is "No, and tell Codex what to do differently"
                approve: p("y"),
                deny: p("\u{1b}"),
                answer: p("{n}"),
                answer_text: p("{text}\r"),
                enter_delay_ms: None,
                // Codex names its own thread: nothing to give it up front (the harness finds it
                // in $CODEX_HOME/sessions)
                session_args: None,
                resume_args: p("resume {id}"),
                resume_loaded: None,
                interrupt: None,
            },
            "gemini" => PatternSet {
                // "│ ? Shell  touch x │" … "│ Allow execution of [Shell]? │" … "│ ● 1. Allow once │"
                permission: p(
                    r"(?m)^[│\s]*\?\s+(?P<tool>\w+)\s+(?P<command>.*?)\s*│?\s*$(?s:.*?)^[│\s]*Allow execution of",
                ),
                // "│ Answer Questions │" / "│ Which color do you prefer? │" / "│ ● 1.  Red │"
                question: p(r"(?m)^│ Answer Questions\s*│?\s*\n(?:│\s*│?\s*\n)*│ (?P<question>[^│\n]*\?)\s*│?\s*$"),
                option: p(r"^│\s*(?:●\s*)?(\d+)\.\s+(?P<label>.+?)\s*│?\s*$"),
                // " >   Type your message or @path/to/file"
                idle: p(r"(?m)^\s*>\s+Type your message"),
                busy: p(r"\(esc to cancel,"),
                tokens: None,
                // "│ ✓  Shell touch x │": a tool that ran
                tool: p(r"^[│\s]*[✓✔⊷]\s+(?P<tool>\w+)\s+(?P<input>.*?)\s*│?\s*$"),
                tool_done: p(r"^[│\s]*[✓✔-]\s+(?P<tool>\w+)"),
                file: p(r"^[│\s]*[✓✔⊷]\s+(?P<operation>ReadFile|WriteFile|Edit|Replace|DeleteFile)\s+(?P<path>\S+)"),
                command: p(r"^[│\s]*[✓✔]\s+Shell\s+(\S.*?)\s*│?\s*$"),
                ignore: p(
                    r"^\s*workspace \(/directory\)|^\s*Shift\+Tab|^\s*> |\(esc to cancel,|^\s*\? for shortcuts|^─{8,}$",
                ),
                unasked: None,
                // the folder-trust dialog of a new cwd; "Get started … How would you like to
                // authenticate for this project?" in a home with no auth chosen
                blocked: p(
                    r"(?P<reason>Do you trust the files in this folder\?|How would you like to authenticate for this project\?)",
                ),
                // "● 1. Allow once" acts at once; Esc is "3. No, suggest changes (esc)"
                approve: p("1"),
                deny: p("\u{1b}"),
                answer: p("{n}"),
                answer_text: p("{text}\r"),
                // an Enter within ~50 ms of a paste is a newline to Gemini
                enter_delay_ms: Some(150),
                session_args: p("--session-id {id}"),
                resume_args: p("--resume {id}"),
                // Gemini draws its ready prompt, then clears the screen (ESC[2J) to redraw the
                // resumed history; a message submitted in between never reaches the model.
                resume_loaded: p(r"\x1b\[2J"),
                interrupt: None,
            },
            _ => PatternSet {
                // "Allow X? (y/n)" / "Approve X? [Y/n]": the common shape
                permission: p(r"(?m)(?:Allow|Approve)\s+(.+?)\?\s*[\(\[]?[Yy]/[Nn][\)\]]?\s*$"),
                // a question ending in a list of options, in either bracket style
                question: p(r"(?m)^(?P<question>.*\?)\s*(?:\((?P<o1>[^)]*)\)|\[(?P<o2>[^\]]*)\])\s*$"),
                // aider: "Tokens: 1.2k sent, 800 received."; "1,500 input … 800 output"
                tokens: p(r"(\d[\d,]*)\s*(?:input|sent).*?(\d[\d,]*)\s*(?:output|received)"),
                // "> " alone on the last row: the common shell-like prompt (a bare "> " row
                // higher up is history: an empty line once submitted)
                idle: p(r"(?m)^>\s*\z"),
                // the prompt with what was typed: the message, echoed
                ignore: p(r"^> "),
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
            option: pick(&overrides.option, self.option),
            idle: pick(&overrides.idle, self.idle),
            busy: pick(&overrides.busy, self.busy),
            tokens: pick(&overrides.tokens, self.tokens),
            tool: pick(&overrides.tool, self.tool),
            tool_done: pick(&overrides.tool_done, self.tool_done),
            file: pick(&overrides.file, self.file),
            command: pick(&overrides.command, self.command),
            ignore: pick(&overrides.ignore, self.ignore),
            unasked: pick(&overrides.unasked, self.unasked),
            blocked: pick(&overrides.blocked, self.blocked),
            approve: pick(&overrides.approve, self.approve),
            deny: pick(&overrides.deny, self.deny),
            answer: pick(&overrides.answer, self.answer),
            answer_text: pick(&overrides.answer_text, self.answer_text),
            enter_delay_ms: overrides.enter_delay_ms.or(self.enter_delay_ms),
            interrupt: pick(&overrides.interrupt, self.interrupt),
            session_args: pick(&overrides.session_args, self.session_args),
            resume_args: pick(&overrides.resume_args, self.resume_args),
            resume_loaded: pick(&overrides.resume_loaded, self.resume_loaded),
        }
    }

    /// The CLI session to run and the arguments that say so: `resume` continued, else a new
    /// id of ours when the CLI takes one; (None, []) when it cannot be resumed.
    pub fn session(&self, resume: Option<&str>) -> (Option<String>, Vec<String>) {
        let args = |template: &str, id: &str| template.split_whitespace().map(|a| a.replace("{id}", id)).collect();
        let set = |t: &Option<String>| t.clone().filter(|t| !t.is_empty());
        match (resume, set(&self.resume_args), set(&self.session_args)) {
            (Some(id), Some(t), _) => (Some(id.to_string()), args(&t, id)),
            (None, _, Some(t)) => {
                let id = uuid::Uuid::new_v4().to_string();
                let a = args(&t, &id);
                (Some(id), a)
            }
            _ => (None, Vec::new()),
        }
    }

    /// Whether the CLI shows token usage on its screen (otherwise its capabilities say so).
    pub fn observes_usage(&self) -> bool {
        self.tokens.as_deref().is_some_and(|t| !t.is_empty())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Detected {
    /// A row of output that was not on the screen before (for terminal.output events).
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
    /// The permission or question menu that showed is gone from the screen.
    MenuClosed,
    /// Whether the screen says the CLI runs tools without asking (reported when it changes).
    Unasked(bool),
    /// Before its first ready prompt, the CLI shows a screen only a person can answer (the
    /// `blocked` pattern; reported once per showing): what it asks, and the whole screen.
    Blocked {
        reason: String,
        screen: String,
    },
    /// The whole screen, when what it shows changed meaning (idle, a menu): `terminal.screen`.
    Screen(String),
}

/// "Bash(rm -rf build)" → tool "bash", command "rm -rf build"; "Read(src/a.rs)" → file_path "src/a.rs";
/// "Bash rm -rf build" → tool "bash", command "rm -rf build".
pub(crate) fn parse_permission(asked: &str) -> Option<Detected> {
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
pub(crate) fn is_file_tool(tool: &str) -> bool {
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
pub(crate) fn normalize_operation(operation: &str) -> String {
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

/// What `fake-agent` shows in each style: the same screens as the real CLIs (simplified), so
/// the builtin patterns are exercised by tests that cannot run a real CLI.
pub mod fake {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Style {
        Claude,
        Codex,
        Gemini,
        /// A line-oriented CLI (aider-like): `> ` prompt, `Allow X? (y/n)`, token lines.
        Generic,
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

    pub const GOODBYE: &str = "Goodbye";
    /// Claude Code's footer in its auto mode, where tools run without a permission menu.
    pub const AUTO_MODE: &str = "  ⏵⏵ auto mode on (shift+tab to cycle)";
    /// What it says when its work was interrupted (Escape or Ctrl-C).
    pub const INTERRUPTED: &str = "Interrupted by user";

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

    /// What a key pressed in a menu chose.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Choice {
        /// An option, 1-based.
        Option(usize),
        /// Esc: the menu's way out, never an approval.
        Cancel,
        /// A key the menu does not take.
        Other,
    }

    impl Style {
        pub const ALL: [Style; 4] = [Style::Claude, Style::Codex, Style::Gemini, Style::Generic];

        pub fn from_name(name: &str) -> Option<Style> {
            Style::ALL.into_iter().find(|s| s.name() == name)
        }

        /// The CLI name, which is also the name of its builtin [`super::PatternSet`].
        pub fn name(self) -> &'static str {
            match self {
                Style::Claude => "claude",
                Style::Codex => "codex",
                Style::Gemini => "gemini",
                Style::Generic => "generic",
            }
        }

        /// Full-screen styles take bracketed pastes and answer menus with single keys.
        pub fn is_tui(self) -> bool {
            self != Style::Generic
        }

        pub fn banner(self) -> Vec<String> {
            let name = match self {
                Style::Claude => " ▐▛███▜▌   Claude Code (fake-agent)",
                Style::Codex => ">_ OpenAI Codex (fake-agent)",
                Style::Gemini => " ▝▜▄     Gemini CLI (fake-agent)",
                Style::Generic => "fake-agent (generic style)",
            };
            vec![
                name.to_string(),
                "Commands: tool, edit, create, delete, run, ask-permission, ask, tokens, sleep, exit".into(),
            ]
        }

        /// The input prompt, before what is typed.
        pub fn prompt(self) -> &'static str {
            match self {
                Style::Claude => "❯\u{a0}",
                Style::Codex => "› ",
                Style::Gemini => " > ",
                Style::Generic => "> ",
            }
        }

        /// What an empty input shows (the real CLIs' placeholders).
        pub fn placeholder(self) -> &'static str {
            match self {
                Style::Codex => "Ask Codex to do anything",
                Style::Gemini => "  Type your message or @path/to/file",
                Style::Claude | Style::Generic => "",
            }
        }

        /// The row shown while busy; erased when done.
        pub fn working(self) -> &'static str {
            match self {
                Style::Claude => "✻ Working… (esc to interrupt)",
                Style::Codex => "• Working (0s • esc to interrupt)",
                Style::Gemini => "⠋ Working... (esc to cancel, 0s)",
                Style::Generic => "Working...",
            }
        }

        /// The row left after working, as the real CLIs sum up a turn ("✻ Brewed for 2s").
        pub fn worked(self, secs: u64) -> String {
            match self {
                Style::Claude => format!("✻ Worked for {secs}s"),
                Style::Codex => format!("  Worked for {secs}s"),
                Style::Gemini => format!("✦ Worked for {secs}s"),
                Style::Generic => format!("Worked for {secs}s"),
            }
        }

        /// A tool call: started, one line of output, done.
        pub fn tool_call(self, tool: &str, args: &str) -> Vec<String> {
            let output = format!("fake output from {tool}");
            match self {
                Style::Claude => vec![format!("● {tool}({args})"), format!("  ⎿  {output}")],
                Style::Codex => vec![
                    format!("• Running {tool} {args}"),
                    format!("• Ran {tool} {args}"),
                    format!("  └ {output}"),
                ],
                Style::Gemini => vec![format!("│ ✓  {tool} {args} │"), format!("│ {output} │")],
                Style::Generic => vec![format!("tool {tool}({args})"), output],
            }
        }

        /// A file edited, created or deleted.
        pub fn file_operation(self, op: FileOp, path: &str) -> Vec<String> {
            match self {
                Style::Claude => {
                    let (tool, done) = match op {
                        FileOp::Update => ("Update", "Updated"),
                        FileOp::Create => ("Write", "Wrote"),
                        FileOp::Delete => ("Delete", "Done"),
                    };
                    vec![format!("● {tool}({path})"), format!("  ⎿  {done} {path}")]
                }
                Style::Codex => {
                    let verb = match op {
                        FileOp::Update => "Edited",
                        FileOp::Create => "Added",
                        FileOp::Delete => "Deleted",
                    };
                    vec![format!("• {verb} {path} (+1 -0)")]
                }
                Style::Gemini => {
                    let tool = match op {
                        FileOp::Update => "Edit",
                        FileOp::Create => "WriteFile",
                        FileOp::Delete => "DeleteFile",
                    };
                    vec![format!("│ ✓  {tool} {path} │")]
                }
                Style::Generic => vec![format!("{} {path}", op.operation())],
            }
        }

        /// A shell command run, with one line of output.
        pub fn command(self, command: &str) -> Vec<String> {
            let output = format!("ran: {command}");
            match self {
                Style::Claude => vec![format!("● Bash({command})"), format!("  ⎿  {output}")],
                Style::Codex => vec![format!("• Ran {command}"), format!("  └ {output}")],
                Style::Gemini => vec![format!("│ ✓  Shell {command} │"), format!("│ {output} │")],
                Style::Generic => vec![format!("$ {command}"), output],
            }
        }

        /// The permission menu for `tool` running `args`.
        pub fn permission_menu(self, tool: &str, args: &str) -> Vec<String> {
            match self {
                Style::Claude => vec![
                    format!(" {tool} command"),
                    String::new(),
                    format!("   {args}"),
                    "   Run a shell command".into(),
                    String::new(),
                    " Do you want to proceed?".into(),
                    " ❯ 1. Yes".into(),
                    "   2. Yes, and don't ask again for this command".into(),
                    "   3. No".into(),
                    String::new(),
                    " Esc to cancel · Tab to amend".into(),
                ],
                Style::Codex => vec![
                    "  Would you like to run the following command?".into(),
                    String::new(),
                    format!("  $ {args}"),
                    String::new(),
                    "› 1. Yes, proceed (y)".into(),
                    "  2. Yes, and don't ask again for this command (p)".into(),
                    "  3. No, and tell Codex what to do differently (esc)".into(),
                    String::new(),
                    "  Press enter to confirm or esc to cancel".into(),
                ],
                Style::Gemini => vec![
                    format!("│ ? {tool}  {args} │"),
                    format!("│ Allow execution of [{tool}]? │"),
                    "│ ● 1. Allow once │".into(),
                    "│   2. Allow for this session │".into(),
                    "│   3. No, suggest changes (esc) │".into(),
                ],
                Style::Generic => {
                    let request = if args.is_empty() {
                        tool.to_string()
                    } else {
                        format!("{tool}({args})")
                    };
                    vec![format!("Allow {request}? (y/n)")]
                }
            }
        }

        /// The rows around a permission menu, as the real CLIs draw the call: before the menu
        /// (Claude's call row, Codex's "Running"), once granted (the call ran) and once denied.
        pub fn permission_call(self, tool: &str, args: &str) -> [Vec<String>; 3] {
            let shell = if tool.eq_ignore_ascii_case("bash") {
                "Shell"
            } else {
                tool
            };
            match self {
                Style::Claude => [
                    vec![format!("● {tool}({args})"), "  ⎿  Waiting…".into()],
                    vec![format!("  ⎿  ran: {args}")],
                    vec!["  ⎿  Interrupted · What should Claude do instead?".into()],
                ],
                Style::Codex => [
                    vec![format!("• Running {args}")],
                    vec![format!("• Ran {args}"), format!("  └ ran: {args}")],
                    vec![format!("✗ You canceled the request to run {args}")],
                ],
                // Gemini shows the call once it ran (or was cancelled).
                Style::Gemini => [
                    vec![],
                    vec![format!("│ ✓  {shell} {args} │"), format!("│ ran: {args} │")],
                    vec![format!("│ -  {shell} {args} │")],
                ],
                Style::Generic => [vec![], vec![], vec![]],
            }
        }

        /// What a key chooses in the permission menu: options 1 and 2 approve, 3 denies.
        pub fn permission_key(self, key: u8) -> Choice {
            match (self, key) {
                (_, 0x1b) => Choice::Cancel,
                (_, b'1') => Choice::Option(1),
                (_, b'2') => Choice::Option(2),
                (_, b'3') => Choice::Option(3),
                // Enter takes the highlighted option, the first.
                (_, b'\r') => Choice::Option(1),
                (Style::Codex, b'y') => Choice::Option(1),
                (Style::Codex, b'p') => Choice::Option(2),
                _ => Choice::Other,
            }
        }

        /// The question menu: the question, then its options numbered, as each CLI draws it.
        pub fn question_menu(self, question: &str, options: &[String]) -> Vec<String> {
            let question = format!("{}?", question.trim_end().trim_end_matches('?'));
            let mut rows = match self {
                Style::Claude => vec![" ☐ Question".to_string(), String::new(), question],
                Style::Codex => vec!["  Question 1/1 (1 unanswered)".to_string(), format!("  {question}")],
                Style::Gemini => vec!["│ Answer Questions │".to_string(), format!("│ {question} │")],
                Style::Generic => return vec![format!("{question} ({})", options.join("/"))],
            };
            rows.push(String::new());
            for (i, o) in options.iter().enumerate() {
                let n = i + 1;
                rows.push(match (self, i) {
                    (Style::Claude, 0) => format!("❯ {n}. {o}"),
                    (Style::Claude, _) => format!("  {n}. {o}"),
                    (Style::Codex, 0) => format!("  › {n}. {o}                {o}"),
                    (Style::Codex, _) => format!("    {n}. {o}                {o}"),
                    (Style::Gemini, 0) => format!("│ ● {n}.  {o} │"),
                    _ => format!("│   {n}.  {o} │"),
                });
            }
            rows
        }

        /// The input box: rules around the prompt row (claude), the footer under it (codex),
        /// or the prompt row alone. `unasked`: the footer says tools run without asking (Claude
        /// Code's auto mode).
        /// Returns what to print before the prompt row and how to come back up to it.
        pub fn input_box(self, unasked: bool) -> (String, String) {
            match self {
                Style::Claude => {
                    let rule = "─".repeat(40);
                    let footer = if unasked { AUTO_MODE } else { "  ? for shortcuts" };
                    (format!("{rule}\r\n\r\n{rule}\r\n{footer}"), "\x1b[2A\r".to_string())
                }
                Style::Codex => (
                    "\r\n\r\n  GPT-5.5 default · /fake-agent".into(),
                    "\x1b[2A\r".to_string(),
                ),
                _ => (String::new(), String::new()),
            }
        }

        pub fn tokens(self, input: u64, output: u64) -> String {
            format!("Tokens: {} sent, {} received.", thousands(input), thousands(output))
        }
    }
}
