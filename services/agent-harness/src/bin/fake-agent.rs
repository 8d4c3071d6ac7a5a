//! A scripted fake agent CLI for tests and demos: it behaves like an interactive claude, codex or gemini
//! on a terminal, so the harness and its output parser can be exercised without a real agent.
//! The text it prints comes from `agent_harness::parse::fake`, where a test checks that the builtin
//! patterns of each style recognise all of it.
//!
//! usage: fake-agent [--style claude|codex|gemini] [--log FILE] [--think-ms N]
//!
//! Input lines (trimmed) are commands; anything that is not one is a user message:
//!   tool <Name> <args...>       a tool call: started, one line of output, done
//!   edit|create|delete <path>   a file operation
//!   run <command...>            a shell command and one line of its output
//!   ask-permission <Tool> <args...>   a permission prompt; reads y/yes (granted) or anything else (denied)
//!   ask <question>? <a/b/...>   a question prompt; reads the answer
//!   tokens <in> <out>           a token usage line
//!   sleep <ms>                  prints "Working..." and stays busy
//!   exit                        prints "Goodbye" and exits 0 (so does EOF on stdin)
//!   <message>                   prints "Received: <message>" and appends it to the --log file

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, StdinLock, StdoutLock, Write};
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use agent_harness::parse::fake::{self, FileOp, Style};

const USAGE: &str = "usage: fake-agent [--style claude|codex|gemini] [--log FILE] [--think-ms N]";

fn main() -> ExitCode {
    let mut agent = match Agent::from_args(std::env::args().skip(1)) {
        Ok(agent) => agent,
        Err(e) => {
            eprintln!("fake-agent: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match agent.run() {
        Ok(()) => ExitCode::SUCCESS,
        // Typically the terminal went away; nothing left to tell.
        Err(_) => ExitCode::FAILURE,
    }
}

enum Command<'a> {
    Tool(&'a str, &'a str),
    File(FileOp, &'a str),
    Run(&'a str),
    AskPermission(&'a str, &'a str),
    Ask(&'a str),
    Tokens(u64, u64),
    Sleep(u64),
    Exit,
    Message(&'a str),
}

impl<'a> Command<'a> {
    /// A malformed command (`tokens x`, `tool` alone) is a user message like any other text.
    fn parse(line: &'a str) -> Command<'a> {
        let (word, rest) = split_word(line);
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
            "exit" if rest.is_empty() => Some(Command::Exit),
            _ => None,
        };
        command.unwrap_or(Command::Message(line))
    }
}

/// "Bash rm -rf build" → ("Bash", "rm -rf build").
fn split_word(s: &str) -> (&str, &str) {
    s.split_once(char::is_whitespace)
        .map_or((s, ""), |(word, rest)| (word, rest.trim()))
}

struct Agent {
    style: Style,
    think: Duration,
    log: Option<File>,
    input: StdinLock<'static>,
    output: StdoutLock<'static>,
}

impl Agent {
    fn from_args(mut args: impl Iterator<Item = String>) -> Result<Agent, String> {
        let (mut style, mut think, mut log) = (Style::Claude, Duration::ZERO, None);
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
            match arg.as_str() {
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
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(Agent {
            style,
            think,
            log,
            input: io::stdin().lock(),
            output: io::stdout().lock(),
        })
    }

    fn run(&mut self) -> io::Result<()> {
        self.say(&self.style.banner())?;
        loop {
            self.prompt(self.style.idle_prompt())?;
            let Some(line) = self.read_line()? else {
                return Ok(());
            };
            // An empty line does nothing, as in the real CLIs.
            if line.is_empty() {
                continue;
            }
            if !self.think.is_zero() {
                thread::sleep(self.think);
            }
            if !self.handle(&line)? {
                return Ok(());
            }
        }
    }

    /// Handles one command; false means exit.
    fn handle(&mut self, line: &str) -> io::Result<bool> {
        let style = self.style;
        match Command::parse(line) {
            Command::Tool(tool, args) => self.say_all(&style.tool_call(tool, args))?,
            Command::File(op, path) => self.say_all(&style.file_operation(op, path))?,
            Command::Run(command) => self.say_all(&style.command(command))?,
            Command::AskPermission(tool, args) => {
                self.prompt(&style.permission_prompt(tool, args))?;
                let answer = self.read_line()?.unwrap_or_default().to_ascii_lowercase();
                let granted = answer == "y" || answer == "yes";
                self.say(&style.permission_result(granted, tool, args))?;
            }
            Command::Ask(text) => {
                let (question, options) = fake::split_ask(text);
                self.prompt(&style.question_prompt(&question, &options))?;
                let answer = self.read_line()?.unwrap_or_default();
                self.say(&fake::answer_received(&answer))?;
            }
            Command::Tokens(input, output) => self.say(&style.tokens(input, output))?,
            Command::Sleep(ms) => {
                self.say(fake::WORKING)?;
                thread::sleep(Duration::from_millis(ms));
            }
            Command::Exit => {
                self.say(fake::GOODBYE)?;
                return Ok(false);
            }
            Command::Message(text) => {
                self.say(&fake::received(text))?;
                if let Some(log) = &mut self.log {
                    writeln!(log, "{text}")?;
                    log.flush()?;
                }
            }
        }
        Ok(true)
    }

    /// The next input line, trimmed; None at EOF. Invalid UTF-8 is replaced rather than fatal.
    fn read_line(&mut self) -> io::Result<Option<String>> {
        let mut buf = Vec::new();
        if self.input.read_until(b'\n', &mut buf)? == 0 {
            return Ok(None);
        }
        Ok(Some(String::from_utf8_lossy(&buf).trim().to_string()))
    }

    fn say(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.output, "{line}")?;
        self.output.flush()
    }

    fn say_all(&mut self, lines: &[String]) -> io::Result<()> {
        lines.iter().try_for_each(|line| self.say(line))
    }

    /// Prompts have no newline: flushed so the terminal shows them while we wait for input.
    fn prompt(&mut self, text: &str) -> io::Result<()> {
        write!(self.output, "{text}")?;
        self.output.flush()
    }
}
