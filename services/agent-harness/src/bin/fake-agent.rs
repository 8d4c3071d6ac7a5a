//! A scripted fake agent CLI for tests and demos. In the claude, codex and gemini styles it
//! behaves like those TUIs on a terminal (raw mode, bracketed paste, their prompts and
//! numbered menus answered with single keys, Esc as the way out); the generic style is a
//! line-oriented CLI. What it draws comes from `agent_harness::parse::fake`, where a test
//! checks that the builtin patterns of each style recognise all of it.
//!
//! usage: fake-agent [resume ID] [--style claude|codex|gemini|generic] [--log FILE] [--think-ms N]
//!                   [--session-id ID] [--resume ID] [--permission-mode default|auto|…]
//!
//! The session arguments are those the real CLIs take (claude and gemini `--session-id` and
//! `--resume`, codex `resume ID`); a resumed fake says so on its first row. A permission mode
//! other than `default` (or `plan`) runs tools without asking, as Claude Code's auto mode does:
//! its footer says so and `ask-permission` runs the tool with no menu.
//!
//! As the real TUIs read their keyboard, an Esc with another escape sequence right behind it is
//! the terminal's Meta prefix, not the Esc key: an Esc that denies a menu, followed at once by
//! a paste and Enter, is an Enter (the menu's highlighted "allow").
//!
//! A submitted message (first line) is a command; anything that is not one is a user message:
//!   tool <Name> <args...>       a tool call and one line of its output
//!   edit|create|delete <path>   a file operation
//!   run <command...>            a shell command and one line of its output
//!   exec <program> <args...>    really runs the program (no shell), prints its output and
//!                               appends it to the --log file: what a model's shell command does
//!   spawn <program> <args...>   starts the program in the background (no shell) and prints
//!                               "spawned <pid>": what a CLI leaves running (MCP servers, tools)
//!   ask-permission <Tool> <args...>   a permission menu; option 1 or 2 grants, 3 or Esc denies
//!                               (in a mode that does not ask: the tool runs at once)
//!   ask <question>? <a/b/...>   a question menu; the option's number (or typed text) answers
//!   tokens <in> <out>           a token usage line
//!   sleep <ms>                  shows it is working, then how long it worked (Escape or
//!                               Ctrl-C interrupts it: "Interrupted by user")
//!   say <text>                  prints the text as it is (e.g. a relay line `->relay:@bob hi`)
//!   exit                        prints "Goodbye" and exits 0 (so does EOF on stdin)
//! A last line `[relay …]` (who sent a relay message; on the same line when typed on one) is not
//! part of the command.
//!   <message>                   prints "Received: <message>" and appends it to the --log
//!                               file, one line per message (newlines written as `\n`)

use nix::sys::termios;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use agent_harness::parse::fake::{self, Choice, FileOp, Style};

const USAGE: &str = "usage: fake-agent [resume ID] [--style claude|codex|gemini|generic] [--log FILE] [--think-ms N] [--session-id ID] [--resume ID] [--permission-mode MODE]";
/// How long the gemini style takes to cancel a denied call (see `drop_input_for`).
const GEMINI_CANCEL: Duration = Duration::from_millis(1000);

fn main() -> ExitCode {
    let mut agent = match Agent::from_args(std::env::args().skip(1)) {
        Ok(agent) => agent,
        Err(e) => {
            eprintln!("fake-agent: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let _raw = agent.style.is_tui().then(RawMode::enable).flatten();
    let result = agent.run();
    if agent.style.is_tui() {
        let _ = agent.out(b"\x1b[?2004l");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Typically the terminal went away; nothing left to tell.
        Err(_) => ExitCode::FAILURE,
    }
}

/// The terminal in raw mode while the agent runs (as a TUI keeps it), restored on drop.
struct RawMode(termios::Termios);

impl RawMode {
    /// None when stdin is no terminal.
    fn enable() -> Option<RawMode> {
        let saved = termios::tcgetattr(io::stdin()).ok()?;
        let mut t = saved.clone();
        termios::cfmakeraw(&mut t);
        // Keep output post-processing: "\n" still starts a new row at column 0.
        t.output_flags |= termios::OutputFlags::OPOST | termios::OutputFlags::ONLCR;
        let _ = termios::tcsetattr(io::stdin(), termios::SetArg::TCSANOW, &t);
        Some(RawMode(saved))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(io::stdin(), termios::SetArg::TCSANOW, &self.0);
    }
}

/// A relay message ends with a line saying who sent it (and notes on its priority): the message
/// is before it, above it or, typed on one line (the generic style), to its left.
fn body(text: &str) -> &str {
    match text.rfind("[relay ") {
        Some(at) if text[..at].ends_with(['\n', ' ']) => text[..at].trim_end(),
        _ => text,
    }
}

enum Command<'a> {
    Tool(&'a str, &'a str),
    File(FileOp, &'a str),
    Run(&'a str),
    Exec(&'a str),
    Spawn(&'a str),
    AskPermission(&'a str, &'a str),
    Ask(&'a str),
    Tokens(u64, u64),
    Sleep(u64),
    Say(&'a str),
    Exit,
    Message,
}

impl<'a> Command<'a> {
    /// A malformed command (`tokens x`, `tool` alone) is a user message like any other text.
    fn parse(text: &'a str) -> Command<'a> {
        let text = body(text);
        if text.contains('\n') {
            return Command::Message;
        }
        let (word, rest) = split_word(text);
        let some = |s: &'a str| (!s.is_empty()).then_some(s);
        let command = match word {
            "tool" => some(rest).map(|r| {
                let (tool, args) = split_word(r);
                Command::Tool(tool, args)
            }),
            "edit" => some(rest).map(|path| Command::File(FileOp::Update, path)),
            "create" => some(rest).map(|path| Command::File(FileOp::Create, path)),
            "delete" => some(rest).map(|path| Command::File(FileOp::Delete, path)),
            "run" => some(rest).map(Command::Run),
            "exec" => some(rest).map(Command::Exec),
            "spawn" => some(rest).map(Command::Spawn),
            "ask-permission" => some(rest).map(|r| {
                let (tool, args) = split_word(r);
                Command::AskPermission(tool, args)
            }),
            "ask" => some(rest).map(Command::Ask),
            "tokens" => match rest.split_whitespace().collect::<Vec<_>>()[..] {
                [input, output] => input
                    .parse()
                    .ok()
                    .zip(output.parse().ok())
                    .map(|(i, o)| Command::Tokens(i, o)),
                _ => None,
            },
            "sleep" => rest.parse().ok().map(Command::Sleep),
            "say" => some(rest).map(Command::Say),
            "exit" if rest.is_empty() => Some(Command::Exit),
            _ => None,
        };
        command.unwrap_or(Command::Message)
    }
}

/// `{"mcpServers": {name: {"command", "args"}}}`: each server's command line.
fn mcp_servers(config: &str) -> Result<Vec<Vec<String>>, String> {
    let config: serde_json::Value = serde_json::from_str(config).map_err(|e| format!("MCP config: {e}"))?;
    let servers = config["mcpServers"].as_object().cloned().unwrap_or_default();
    servers.values().map(mcp_command).collect()
}

fn mcp_command(server: &serde_json::Value) -> Result<Vec<String>, String> {
    let command = server["command"].as_str().ok_or("an MCP server without a command")?;
    let args = server["args"].as_array().cloned().unwrap_or_default();
    let args = args.iter().map(|a| {
        a.as_str()
            .map(String::from)
            .ok_or_else(|| "MCP args are strings".to_string())
    });
    std::iter::once(Ok(command.to_string())).chain(args).collect()
}

/// Starts an MCP server over stdio and lists its tools, as the real CLIs do at start-up; the
/// server runs until the agent exits (its stdin closes then).
fn list_mcp_tools(command: &[String]) -> io::Result<(std::process::Child, std::process::ChildStdin)> {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut to = child.stdin.take().expect("piped");
    let mut from = io::BufReader::new(child.stdout.take().expect("piped"));
    let mut answer = String::new();
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fake-agent","version":"0"}}}"#;
    writeln!(to, "{initialize}")?;
    from.read_line(&mut answer)?;
    writeln!(to, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#)?;
    writeln!(to, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#)?;
    from.read_line(&mut answer)?;
    Ok((child, to))
}

/// Runs `command` (split on whitespace, no shell); its stdout and stderr, or why it did not run.
fn exec(command: &str) -> String {
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or_default();
    match std::process::Command::new(program).args(words).output() {
        Ok(out) => format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => format!("exec {program}: {e}"),
    }
}

/// "Bash rm -rf build" → ("Bash", "rm -rf build").
fn split_word(s: &str) -> (&str, &str) {
    s.split_once(char::is_whitespace)
        .map_or((s, ""), |(word, rest)| (word, rest.trim()))
}

/// What the keyboard sent.
enum Key {
    Char(char),
    Enter,
    Esc,
    Backspace,
    /// A bracketed paste, whole.
    Paste(String),
    Eof,
}

struct Agent {
    style: Style,
    /// The MCP servers it was configured with (command and arguments), as the real CLIs take
    /// them; started and listed before the prompt shows.
    mcp: Vec<Vec<String>>,
    /// Those servers, running while the agent does (each exits when its stdin closes).
    _mcp_running: Vec<(std::process::Child, std::process::ChildStdin)>,
    /// The session it continues, if started to resume one.
    resumed: Option<String>,
    /// Its permission mode runs tools without asking (`--permission-mode auto`).
    unasked: bool,
    think: Duration,
    log: Option<File>,
    /// Bytes read and not yet turned into keys.
    pending: Vec<u8>,
}

impl Agent {
    fn from_args(mut args: impl Iterator<Item = String>) -> Result<Agent, String> {
        let (mut style, mut think, mut log, mut resumed) = (Style::Claude, Duration::ZERO, None, None);
        let mut mcp = Vec::new();
        let mut unasked = false;
        let (mut codex_command, mut codex_args) = (None, None);
        // Gemini CLI reads its MCP servers from a settings file.
        if let Ok(path) = std::env::var("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
            mcp.extend(mcp_servers(&text)?);
        }
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
            match arg.as_str() {
                "--session-id" => {
                    value()?;
                }
                "--resume" | "resume" => resumed = Some(value()?),
                "--permission-mode" => unasked = !matches!(value()?.as_str(), "default" | "plan"),
                "--style" => {
                    let name = value()?;
                    style = Style::from_name(&name).ok_or_else(|| format!("unknown style {name:?}"))?;
                }
                "--think-ms" => {
                    let ms = value()?;
                    think = Duration::from_millis(ms.parse().map_err(|_| format!("--think-ms: not a number: {ms:?}"))?);
                }
                "--log" => {
                    let path = value()?;
                    // Append: a test may restart the agent and count every message that ever surfaced.
                    let file = OpenOptions::new().create(true).append(true).open(&path);
                    log = Some(file.map_err(|e| format!("--log {path}: {e}"))?);
                }
                other if other.starts_with("--mcp-config=") => {
                    mcp.extend(mcp_servers(&other["--mcp-config=".len()..])?);
                }
                other if other.starts_with("--allowedTools=") => {}
                // Codex's config overrides; values are TOML, here JSON-compatible.
                "-c" => {
                    let set = value()?;
                    let (key, v) = set.split_once('=').ok_or_else(|| format!("-c {set}: no ="))?;
                    let v: serde_json::Value = serde_json::from_str(v).map_err(|e| format!("-c {set}: {e}"))?;
                    match key {
                        k if k.starts_with("mcp_servers.") && k.ends_with(".command") => codex_command = Some(v),
                        k if k.starts_with("mcp_servers.") && k.ends_with(".args") => codex_args = Some(v),
                        _ => {}
                    }
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if let Some(command) = codex_command {
            let server = serde_json::json!({"command": command, "args": codex_args.unwrap_or_default()});
            mcp.push(mcp_command(&server)?);
        }
        Ok(Agent {
            style,
            mcp,
            _mcp_running: Vec::new(),
            resumed,
            unasked,
            think,
            log,
            pending: Vec::new(),
        })
    }

    fn run(&mut self) -> io::Result<()> {
        // As with the real CLIs, a server that does not start leaves the agent without its tools.
        for server in std::mem::take(&mut self.mcp) {
            if let Ok(running) = list_mcp_tools(&server) {
                self._mcp_running.push(running);
            }
        }
        if self.style.is_tui() {
            // Ask for bracketed paste, as the real TUIs do.
            self.out(b"\x1b[?2004h")?;
        }
        for row in self.style.banner() {
            self.say(&row)?;
        }
        if let Some(id) = self.resumed.clone() {
            self.say(&format!("Resumed session {id}"))?;
        }
        loop {
            let Some(text) = self.read_input()? else {
                return Ok(());
            };
            let text = text.trim().to_string();
            // An empty message does nothing, as in the real CLIs.
            if text.is_empty() {
                continue;
            }
            if !self.think.is_zero() {
                thread::sleep(self.think);
            }
            if !self.handle(&text)? {
                return Ok(());
            }
        }
    }

    /// Shows the prompt and edits the input until Enter; None at EOF.
    fn read_input(&mut self) -> io::Result<Option<String>> {
        let style = self.style;
        let mut input = String::new();
        let show = |agent: &mut Agent, input: &str| {
            if !style.is_tui() {
                // A line-oriented CLI: the terminal echoes what is typed.
                return if input.is_empty() {
                    agent.out(style.prompt().as_bytes())
                } else {
                    Ok(())
                };
            }
            let shown = if input.is_empty() {
                style.placeholder().to_string()
            } else {
                // A multi-line input shows on one row, its line breaks marked.
                input.replace('\n', "⏎")
            };
            agent.out(format!("\r\x1b[2K{}{shown}", style.prompt()).as_bytes())
        };
        let (around, back) = style.input_box(self.unasked);
        if !around.is_empty() {
            self.out(around.as_bytes())?;
            self.out(back.as_bytes())?;
        }
        show(self, &input)?;
        loop {
            match self.key()? {
                Key::Eof => return Ok(None),
                Key::Enter if !input.is_empty() || !style.is_tui() => {
                    // Below the input box, which stays in the history with what was sent.
                    let below = if around.is_empty() { "\r\n" } else { "\r\n\r\n\r\n" };
                    self.out(below.as_bytes())?;
                    return Ok(Some(input));
                }
                Key::Enter | Key::Esc => {}
                Key::Backspace => {
                    input.pop();
                }
                Key::Char(c) => input.push(c),
                Key::Paste(text) => input.push_str(&text.replace("\r\n", "\n").replace('\r', "\n")),
            }
            show(self, &input)?;
        }
    }

    /// Handles one command; false means exit.
    fn handle(&mut self, text: &str) -> io::Result<bool> {
        let style = self.style;
        match Command::parse(text) {
            Command::Tool(tool, args) => self.say_all(&style.tool_call(tool, args))?,
            Command::File(op, path) => self.say_all(&style.file_operation(op, path))?,
            Command::Run(command) => self.say_all(&style.command(command))?,
            Command::Spawn(command) => {
                // Left running in the background, as a CLI leaves its MCP servers and tools.
                let mut words = command.split_whitespace();
                let program = words.next().unwrap_or_default();
                let child = std::process::Command::new(program)
                    .args(words)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn();
                match child {
                    Ok(child) => self.say(&format!("spawned {}", child.id()))?,
                    Err(e) => self.say(&format!("spawn {program}: {e}"))?,
                }
            }
            Command::Exec(command) => {
                let output = exec(command);
                for line in output.lines() {
                    self.say(line)?;
                }
                if let Some(log) = &mut self.log {
                    writeln!(log, "{}", output.trim_end().replace('\n', "\\n"))?;
                    log.flush()?;
                }
            }
            Command::Say(line) => self.say(line)?,
            Command::AskPermission(tool, args) if self.unasked => {
                // No menu: the tool runs, as in Claude Code's auto mode.
                if tool.eq_ignore_ascii_case("bash") {
                    self.say_all(&style.command(args))?
                } else {
                    self.say_all(&style.tool_call(tool, args))?
                }
            }
            Command::AskPermission(tool, args) => {
                let [before, ran, cancelled] = style.permission_call(tool, args);
                self.say_all(&before)?;
                let granted = match self.menu(&style.permission_menu(tool, args), 3)? {
                    Some(Answer::Option(n)) => n <= 2,
                    Some(Answer::Text(t)) => matches!(t.to_ascii_lowercase().as_str(), "y" | "yes"),
                    None => false,
                };
                self.say_all(if granted { &ran } else { &cancelled })?;
                if !granted && style == Style::Gemini {
                    // Gemini CLI cancels the denied call for a while with no prompt showing, and
                    // a prompt typed meanwhile is queued and never run: dropped here.
                    self.drop_input_for(GEMINI_CANCEL)?;
                }
                let verdict = if granted { "granted" } else { "denied" };
                self.say(&format!("Permission {verdict}: {tool} {args}"))?;
            }
            Command::Ask(text) => {
                let (question, options) = fake::split_ask(text);
                let answer = match self.menu(&style.question_menu(&question, &options), options.len())? {
                    Some(Answer::Option(n)) => options[n - 1].clone(),
                    Some(Answer::Text(t)) => t,
                    None => String::new(),
                };
                self.say(&fake::answer_received(&answer))?;
            }
            Command::Tokens(input, output) => self.say(&style.tokens(input, output))?,
            Command::Sleep(ms) => {
                self.out(style.working().as_bytes())?;
                let interrupted = self.work(Duration::from_millis(ms))?;
                // Done working: the busy row goes, as a TUI's spinner does, for a summary.
                self.out(b"\r\x1b[2K")?;
                if interrupted {
                    self.say(fake::INTERRUPTED)?;
                } else {
                    self.say(&style.worked(ms / 1000))?;
                }
            }
            Command::Exit => {
                self.say(fake::GOODBYE)?;
                return Ok(false);
            }
            Command::Message => {
                self.say(&fake::received(&body(text).replace('\n', " ")))?;
                if let Some(log) = &mut self.log {
                    writeln!(log, "{}", text.replace('\n', "\\n"))?;
                    log.flush()?;
                }
            }
        }
        Ok(true)
    }

    /// Shows a menu and waits for its answer; the menu is erased afterwards. TUI styles take one
    /// key (an option's digit, Enter for the first, Esc to cancel); the generic style a line.
    fn menu(&mut self, rows: &[String], options: usize) -> io::Result<Option<Answer>> {
        let (last, above) = rows.split_last().expect("menus have rows");
        for row in above {
            self.say(row)?;
        }
        self.out(last.as_bytes())?;
        let answer = if self.style.is_tui() {
            loop {
                let key = match self.key()? {
                    Key::Eof => return Ok(None),
                    Key::Esc => 0x1b,
                    Key::Enter => b'\r',
                    Key::Char(c) if c.is_ascii() => c as u8,
                    _ => continue,
                };
                match self.style.permission_key(key) {
                    Choice::Option(n) if n <= options => break Some(Answer::Option(n)),
                    Choice::Cancel => break None,
                    _ => {}
                }
            }
        } else {
            let mut line = String::new();
            loop {
                match self.key()? {
                    Key::Eof => return Ok(None),
                    Key::Enter => break,
                    Key::Char(c) => line.push(c),
                    Key::Paste(t) => line.push_str(&t),
                    _ => {}
                }
            }
            Some(Answer::Text(line.trim().to_string()))
        };
        // Erase the menu: up to its first row, then clear to the end of the screen.
        let up = above.len();
        let erase = if up > 0 {
            format!("\r\x1b[{up}A\x1b[J")
        } else {
            "\r\x1b[J".to_string()
        };
        self.out(erase.as_bytes())?;
        Ok(answer)
    }

    /// Reads and drops whatever is typed for `d`.
    fn drop_input_for(&mut self, d: Duration) -> io::Result<()> {
        let end = std::time::Instant::now() + d;
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || !input_within(left) {
                self.pending.clear();
                return Ok(());
            }
            let mut buf = [0u8; 4096];
            if io::stdin().read(&mut buf)? == 0 {
                return Ok(());
            }
        }
    }

    /// Works for `d`, or until Escape or Ctrl-C comes, as the TUIs take an interrupt; other
    /// input waits for afterwards. Whether it was interrupted.
    fn work(&mut self, d: Duration) -> io::Result<bool> {
        let end = std::time::Instant::now() + d;
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || !input_within(left) {
                return Ok(false);
            }
            let mut buf = [0u8; 4096];
            let n = io::stdin().read(&mut buf)?;
            if n == 0 {
                return Ok(false);
            }
            self.pending.extend_from_slice(&buf[..n]);
            // Ctrl-C, or an Escape that starts no sequence (a paste marker is `ESC [`): one
            // last in the input counts once nothing follows it soon.
            let p = &self.pending;
            let key = p
                .iter()
                .enumerate()
                .position(|(i, b)| *b == 0x03 || (*b == 0x1b && p.get(i + 1).is_some_and(|next| *next != b'[')))
                .or_else(|| (p.ends_with(b"\x1b") && !input_within(Duration::from_millis(50))).then(|| p.len() - 1));
            if let Some(i) = key {
                self.pending.remove(i);
                return Ok(true);
            }
        }
    }

    /// The next key; pastes arrive whole.
    fn key(&mut self) -> io::Result<Key> {
        loop {
            if let Some(key) = self.parse_key() {
                return Ok(key);
            }
            // A lone Esc: the start of a paste marker, or the key itself if nothing follows
            // soon (the escape timeout of the real TUIs).
            if self.pending == b"\x1b" && !input_within(Duration::from_millis(50)) {
                self.pending.clear();
                return Ok(Key::Esc);
            }
            let mut buf = [0u8; 4096];
            let n = io::stdin().read(&mut buf)?;
            if n == 0 {
                return Ok(Key::Eof);
            }
            self.pending.extend_from_slice(&buf[..n]);
        }
    }

    fn parse_key(&mut self) -> Option<Key> {
        const START: &[u8] = b"\x1b[200~";
        const END: &[u8] = b"\x1b[201~";
        let p = &self.pending;
        let first = *p.first()?;
        if p.starts_with(START) {
            let end = p.windows(END.len()).position(|w| w == END)?;
            let text = String::from_utf8_lossy(&p[START.len()..end]).into_owned();
            self.pending.drain(..end + END.len());
            return Some(Key::Paste(text));
        }
        if first == 0x1b {
            // A prefix of the paste marker may still be arriving.
            if START.starts_with(p) && p.len() < START.len() {
                return None;
            }
            // Esc right before another escape sequence: the Meta prefix, not a key of its own.
            if p.get(1) == Some(&0x1b) {
                self.pending.remove(0);
                return self.parse_key();
            }
            self.pending.remove(0);
            return Some(Key::Esc);
        }
        let key = match first {
            b'\r' | b'\n' => Key::Enter,
            0x7f | 0x08 => Key::Backspace,
            0x03 | 0x04 => Key::Eof,
            _ => {
                // One UTF-8 character.
                let len = match first {
                    0xF0.. => 4,
                    0xE0.. => 3,
                    0xC0.. => 2,
                    _ => 1,
                };
                if p.len() < len {
                    return None;
                }
                let c = String::from_utf8_lossy(&p[..len]).chars().next().unwrap_or('?');
                self.pending.drain(..len);
                return Some(Key::Char(c));
            }
        };
        self.pending.remove(0);
        Some(key)
    }

    fn out(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()
    }

    fn say(&mut self, line: &str) -> io::Result<()> {
        self.out(format!("{line}\r\n").as_bytes())
    }

    fn say_all(&mut self, lines: &[String]) -> io::Result<()> {
        lines.iter().try_for_each(|line| self.say(line))
    }
}

/// Whether stdin has input within `wait`.
fn input_within(wait: Duration) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX);
    poll(&mut fds, timeout).is_ok_and(|n| n > 0)
}

enum Answer {
    Option(usize),
    Text(String),
}
