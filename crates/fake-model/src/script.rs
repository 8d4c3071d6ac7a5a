//! The script: which answer a request gets. Selection is stateless (a pure function of the
//! request body), so retries, side calls and parallel sessions never shift the script.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The answer when no rule matches or a rule has run out of steps.
pub const DEFAULT_FALLBACK: &str = "Hello from fake model! PONG";

/// Token usage reported for one model response. `input` is the prompt tokens not read from a
/// cache, `cached` those read from one: each API is told them its own way (Anthropic apart,
/// OpenAI and Gemini inside their input count).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub cached: u64,
}

fn is_zero_count(n: &u64) -> bool {
    *n == 0
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage {
            input: self.input + o.input,
            output: self.output + o.output,
            cached: self.cached + o.cached,
        }
    }
}

/// One model response: text, or a call of a tool the CLI offers.
/// Serde form: `{"text": ".."}`, `{"shell": "touch x"}`, `{"tool": {"name": .., "input": {..}}}`,
/// `{"question": {"question": .., "options": [..]}}`, each with an optional `"usage": {"input": N, "output": M}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "StepForm", into = "StepForm")]
pub enum Step {
    Text {
        text: String,
        usage: Usage,
    },
    /// The CLI's shell tool (Bash / exec_command / run_shell_command).
    Shell {
        command: String,
        usage: Usage,
    },
    /// Any tool by its name in the request, e.g. an MCP tool.
    Tool {
        name: String,
        input: Value,
        usage: Usage,
    },
    /// The CLI's ask-the-user tool (AskUserQuestion / request_user_input / ask_user).
    Question {
        question: String,
        options: Vec<String>,
        usage: Usage,
    },
}

impl Step {
    pub fn text(text: impl Into<String>) -> Step {
        Step::Text {
            text: text.into(),
            usage: Usage::default(),
        }
    }
    pub fn shell(command: impl Into<String>) -> Step {
        Step::Shell {
            command: command.into(),
            usage: Usage::default(),
        }
    }
    pub fn tool(name: impl Into<String>, input: Value) -> Step {
        Step::Tool {
            name: name.into(),
            input,
            usage: Usage::default(),
        }
    }
    pub fn question(question: impl Into<String>, options: impl IntoIterator<Item = impl Into<String>>) -> Step {
        let options = options.into_iter().map(Into::into).collect();
        Step::Question {
            question: question.into(),
            options,
            usage: Usage::default(),
        }
    }

    /// Builder: the usage this step reports.
    pub fn usage(mut self, input: u64, output: u64) -> Step {
        let cached = self.tokens().cached;
        *self.usage_mut() = Usage { input, output, cached };
        self
    }

    /// Builder: prompt tokens this step reports read from the cache (besides `usage`'s input).
    pub fn cached(mut self, cached: u64) -> Step {
        self.usage_mut().cached = cached;
        self
    }

    pub fn tokens(&self) -> Usage {
        match self {
            Step::Text { usage, .. } | Step::Shell { usage, .. } | Step::Tool { usage, .. } => *usage,
            Step::Question { usage, .. } => *usage,
        }
    }

    fn usage_mut(&mut self) -> &mut Usage {
        match self {
            Step::Text { usage, .. } | Step::Shell { usage, .. } | Step::Tool { usage, .. } => usage,
            Step::Question { usage, .. } => usage,
        }
    }

    /// What the model says instead when the request does not offer the step's tool.
    pub fn as_text(&self) -> String {
        match self {
            Step::Text { text, .. } => text.clone(),
            Step::Shell { command, .. } => format!("(fake model: no shell tool offered) I would run: {command}"),
            Step::Tool { name, .. } => format!("(fake model: tool {name} not offered)"),
            Step::Question { question, options, .. } => format!("{question} ({})", options.join(" / ")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Substring of the last user-typed text.
    pub when: String,
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Script {
    #[serde(default)]
    pub rules: Vec<Rule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// What every side call (a request offering no tools: titles, Gemini's router) reports;
    /// none: zero, so a test's totals are the scripted sums of the turns.
    #[serde(default, rename = "sideUsage", skip_serializing_if = "Option::is_none")]
    pub side_usage: Option<Usage>,
}

impl Script {
    pub fn new() -> Script {
        Script::default()
    }

    /// Builder: when the user's last text contains `when`, answer with `steps`, one per model call.
    pub fn on(mut self, when: impl Into<String>, steps: impl IntoIterator<Item = Step>) -> Script {
        self.rules.push(Rule {
            when: when.into(),
            steps: steps.into_iter().collect(),
        });
        self
    }

    /// Builder: the usage every side call reports (to prove they are counted).
    pub fn side_usage(mut self, input: u64, output: u64, cached: u64) -> Script {
        self.side_usage = Some(Usage { input, output, cached });
        self
    }

    /// The usage a request reports: the step's for a main request, else the side usage.
    pub fn usage_for(&self, step: &Step, main: bool) -> Usage {
        if main {
            step.tokens()
        } else {
            self.side_usage.unwrap_or_default()
        }
    }

    /// Builder: the answer when nothing matches or the steps ran out.
    pub fn fallback(mut self, text: impl Into<String>) -> Script {
        self.fallback = Some(text.into());
        self
    }

    /// The step for a request whose last user text is `user_text`, followed by `tool_results` tool results.
    /// Past the last step, or without a matching rule, the fallback text with zero usage.
    pub fn choose(&self, user_text: Option<&str>, tool_results: usize) -> Step {
        let rule = user_text.and_then(|text| self.rules.iter().find(|rule| text.contains(&rule.when)));
        match rule.and_then(|rule| rule.steps.get(tool_results)) {
            Some(step) => step.clone(),
            None => Step::text(self.fallback.as_deref().unwrap_or(DEFAULT_FALLBACK)),
        }
    }
}

/// What a request's conversation is made of, in order, as far as the script cares.
#[derive(Debug, PartialEq)]
pub(crate) enum Piece {
    UserText(String),
    ToolResult,
}

/// The last real user text and how many tool results came after it.
pub(crate) fn last_user_turn(pieces: impl IntoIterator<Item = Piece>) -> (Option<String>, usize) {
    let mut text = None;
    let mut results = 0;
    for piece in pieces {
        match piece {
            Piece::UserText(t) if !is_injected(&t) => {
                text = Some(t);
                results = 0;
            }
            Piece::UserText(_) => {}
            Piece::ToolResult => results += 1,
        }
    }
    (text, results)
}

/// Context the CLIs put into user messages themselves, not typed by the user:
/// Claude's `<system-reminder>..`, Codex's `<environment_context>..` and `# AGENTS.md instructions ..`,
/// Gemini's `<session_context>..`. Recognised as one element wrapping the whole text.
pub(crate) fn is_injected(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.starts_with("# AGENTS.md instructions") {
        return true;
    }
    let Some(rest) = t.strip_prefix('<') else { return false };
    let Some(name) = rest.split(['>', ' ', '\n']).next().filter(|n| !n.is_empty()) else {
        return false;
    };
    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') && t.ends_with(&format!("</{name}>"))
}

/// Serde shape of a step: exactly one of the four kinds, plus optional usage.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepForm {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shell: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool: Option<ToolForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    question: Option<QuestionForm>,
    #[serde(default, skip_serializing_if = "is_zero")]
    usage: Usage,
}

#[derive(Serialize, Deserialize)]
struct ToolForm {
    name: String,
    #[serde(default)]
    input: Value,
}

#[derive(Serialize, Deserialize)]
struct QuestionForm {
    question: String,
    #[serde(default)]
    options: Vec<String>,
}

fn is_zero(usage: &Usage) -> bool {
    *usage == Usage::default()
}

impl TryFrom<StepForm> for Step {
    type Error = String;
    fn try_from(form: StepForm) -> Result<Step, String> {
        let usage = form.usage;
        let step = match (form.text, form.shell, form.tool, form.question) {
            (Some(text), None, None, None) => Step::Text { text, usage },
            (None, Some(command), None, None) => Step::Shell { command, usage },
            (None, None, Some(t), None) => Step::Tool {
                name: t.name,
                input: t.input,
                usage,
            },
            (None, None, None, Some(q)) => Step::Question {
                question: q.question,
                options: q.options,
                usage,
            },
            _ => return Err("a step needs exactly one of text, shell, tool, question".into()),
        };
        Ok(step)
    }
}

impl From<Step> for StepForm {
    fn from(step: Step) -> StepForm {
        let usage = step.tokens();
        let mut form = StepForm {
            text: None,
            shell: None,
            tool: None,
            question: None,
            usage,
        };
        match step {
            Step::Text { text, .. } => form.text = Some(text),
            Step::Shell { command, .. } => form.shell = Some(command),
            Step::Tool { name, input, .. } => form.tool = Some(ToolForm { name, input }),
            Step::Question { question, options, .. } => form.question = Some(QuestionForm { question, options }),
        }
        form
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn script() -> Script {
        Script::new()
            .on(
                "RUNTOOL",
                [
                    Step::shell("touch ran.txt").usage(1500, 800),
                    Step::text("done").usage(100, 20),
                ],
            )
            .on("HI", [Step::text("hello")])
    }

    #[test]
    fn first_matching_rule_and_tool_result_count_pick_the_step() {
        let s = script();
        assert_eq!(
            s.choose(Some("please RUNTOOL now"), 0),
            Step::shell("touch ran.txt").usage(1500, 800)
        );
        assert_eq!(
            s.choose(Some("please RUNTOOL now"), 1),
            Step::text("done").usage(100, 20)
        );
        assert_eq!(s.choose(Some("please RUNTOOL now"), 2), Step::text(DEFAULT_FALLBACK));
        assert_eq!(s.choose(Some("say HI"), 0), Step::text("hello"));
        assert_eq!(s.choose(Some("nothing"), 0), Step::text(DEFAULT_FALLBACK));
        assert_eq!(s.choose(None, 0), Step::text(DEFAULT_FALLBACK));
        assert_eq!(s.fallback("bye").choose(Some("x"), 0), Step::text("bye"));
    }

    #[test]
    fn injected_context_is_not_user_text() {
        assert!(is_injected("<system-reminder>\nfoo\n</system-reminder>"));
        assert!(is_injected(
            "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"
        ));
        assert!(is_injected(
            "# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>..</INSTRUCTIONS>"
        ));
        assert!(!is_injected("RUNTOOL please"));
        assert!(!is_injected("<b>bold</b> and more text"));
        let pieces = [
            Piece::UserText("old".into()),
            Piece::ToolResult,
            Piece::UserText("new".into()),
            Piece::UserText("<system-reminder>x</system-reminder>".into()),
            Piece::ToolResult,
            Piece::ToolResult,
        ];
        assert_eq!(last_user_turn(pieces), (Some("new".into()), 2));
    }

    #[test]
    fn script_json_round_trips_and_rejects_ambiguous_steps() {
        let text = json!({"rules": [{"when": "X", "steps": [
            {"shell": "touch a", "usage": {"input": 1500, "output": 800}},
            {"tool": {"name": "mcp__fake__echo", "input": {"text": "hi"}}},
            {"question": {"question": "Which?", "options": ["A", "B"]}},
            {"text": "done"}
        ]}], "fallback": "fb"});
        let parsed: Script = serde_json::from_value(text.clone()).expect("script parses");
        let expected = Script::new()
            .on(
                "X",
                [
                    Step::shell("touch a").usage(1500, 800),
                    Step::tool("mcp__fake__echo", json!({"text": "hi"})),
                    Step::question("Which?", ["A", "B"]),
                    Step::text("done"),
                ],
            )
            .fallback("fb");
        assert_eq!(parsed, expected);
        assert_eq!(serde_json::to_value(&parsed).expect("serializes"), text);
        let bad = serde_json::from_value::<Step>(json!({"text": "a", "shell": "b"}));
        assert!(bad.is_err());
    }
}
