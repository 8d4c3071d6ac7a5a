//! Cost models (seed 003 §6.4): prices per million tokens, from a JSON file when present, else
//! built-in defaults, so a stale table is fixed by editing a file rather than the code.

use relay_contracts::cost::CostModel;
use serde::Deserialize;
use std::path::{Path, PathBuf};

fn m(model: &str, input: f64, output: f64, cache_read: f64, cache_write: Option<f64>, window: i64) -> CostModel {
    CostModel {
        model: model.into(),
        input_per1_m: input,
        output_per1_m: output,
        cache_read_per1_m: Some(cache_read),
        cache_write_per1_m: cache_write,
        context_window: Some(window),
    }
}

/// Built-in prices (USD per 1M tokens, the vendors' published list prices for standard
/// requests when this was written); override them with a cost-models.json.
pub fn defaults() -> Vec<CostModel> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    defaults_at(now)
}

/// 2027-01-01T00:00:00Z, when Gemini 3.8 Flash's launch price ends.
const GEMINI_3_8_FLASH_LAUNCH_PRICE_ENDS: u64 = 1_798_761_600;

/// The built-in prices on a day (Unix seconds): one vendor price is dated.
pub fn defaults_at(now: u64) -> Vec<CostModel> {
    // ai.google.dev/gemini-api/docs/pricing: "$0.75 through December 31, 2026", "$1.50 starting
    // January 1, 2027" (output $3.75, then $7.50; cache reads a tenth of input).
    let gemini_3_8_flash = if now < GEMINI_3_8_FLASH_LAUNCH_PRICE_ENDS {
        m("gemini-3.8-flash", 0.75, 3.75, 0.075, None, 1_048_576)
    } else {
        m("gemini-3.8-flash", 1.50, 7.50, 0.15, None, 1_048_576)
    };
    vec![
        // Anthropic: cache writes are the 5-minute TTL price. The newer models' prices are
        // Claude Code's own (its baked-in model catalog, 2.1.332), which is what it bills by.
        m("claude-fable-5-2", 8.0, 40.0, 0.20, Some(10.0), 1_000_000),
        m("claude-fable-5-1", 10.0, 50.0, 0.25, Some(12.5), 1_000_000),
        m("claude-fable-5", 10.0, 50.0, 1.0, Some(12.5), 1_000_000),
        m("claude-mythos-5-2", 8.0, 40.0, 0.20, Some(10.0), 1_000_000),
        m("claude-mythos-5-1", 10.0, 50.0, 0.25, Some(12.5), 1_000_000),
        m("claude-mythos-5", 10.0, 50.0, 1.0, Some(12.5), 1_000_000),
        // Claude Code 2.1.332's default model.
        m("claude-opus-5-5", 4.0, 20.0, 0.20, Some(5.0), 1_000_000),
        m("claude-opus-5", 5.0, 25.0, 0.50, Some(6.25), 1_000_000),
        // Claude Code 2.1.197's default model.
        m("claude-opus-4-8", 5.0, 25.0, 0.50, Some(6.25), 1_000_000),
        m("claude-opus-4-7", 5.0, 25.0, 0.50, Some(6.25), 1_000_000),
        m("claude-opus-4-6", 5.0, 25.0, 0.50, Some(6.25), 200_000),
        m("claude-opus-4-5", 5.0, 25.0, 0.50, Some(6.25), 200_000),
        m("claude-opus-4-1", 15.0, 75.0, 1.50, Some(18.75), 200_000),
        m("claude-opus-4", 15.0, 75.0, 1.50, Some(18.75), 200_000),
        m("claude-sonnet-5-5", 2.0, 10.0, 0.10, Some(2.5), 1_000_000),
        m("claude-sonnet-5", 2.0, 10.0, 0.20, Some(2.5), 1_000_000),
        m("claude-sonnet-4-6", 3.0, 15.0, 0.30, Some(3.75), 200_000),
        m("claude-sonnet-4-5", 3.0, 15.0, 0.30, Some(3.75), 200_000),
        m("claude-sonnet-4", 3.0, 15.0, 0.30, Some(3.75), 200_000),
        // Prompts above 100k tokens cost 5x (Claude Code's long-prompt tier; not modelled here).
        m("claude-haiku-5-5", 0.10, 0.50, 0.01, Some(0.125), 1_000_000),
        m("claude-haiku-4-5", 1.0, 5.0, 0.10, Some(1.25), 200_000),
        m("claude-3-5-haiku", 0.80, 4.0, 0.08, Some(1.0), 200_000),
        // OpenAI (developers.openai.com/api/docs/models/<model>): cached input is the read price.
        // Codex 0.171's default model; prompts over 272k tokens cost more (not modelled here).
        m("gpt-6.2-sol", 2.0, 10.0, 0.10, Some(2.5), 1_050_000),
        m("gpt-6.1-sol", 2.0, 10.0, 0.10, Some(2.5), 1_050_000),
        m("gpt-6-sol", 2.0, 10.0, 0.20, Some(2.5), 1_050_000),
        m("gpt-5.5", 5.0, 30.0, 0.50, None, 1_000_000),
        m("gpt-5.1", 1.25, 10.0, 0.125, None, 400_000),
        m("gpt-5", 1.25, 10.0, 0.125, None, 400_000),
        m("gpt-5-mini", 0.25, 2.0, 0.025, None, 400_000),
        m("gpt-5-nano", 0.05, 0.40, 0.005, None, 400_000),
        m("gpt-5-codex", 1.25, 10.0, 0.125, None, 400_000),
        m("gpt-4.1", 2.0, 8.0, 0.50, None, 1_047_576),
        m("gpt-4o", 2.50, 10.0, 1.25, None, 128_000),
        m("o3", 2.0, 8.0, 0.50, None, 200_000),
        // Google: prompts up to 200k tokens. Gemini CLI's `auto` routes to 3.8 Flash and 3.5
        // Flash-Lite (0.61).
        gemini_3_8_flash,
        m("gemini-3.5-flash", 1.50, 9.0, 0.15, None, 1_048_576),
        m("gemini-3.5-flash-lite", 0.30, 2.50, 0.03, None, 1_048_576),
        m("gemini-3-pro", 2.0, 12.0, 0.20, None, 1_048_576),
        m("gemini-2.5-pro", 1.25, 10.0, 0.125, None, 1_048_576),
        m("gemini-2.5-flash", 0.30, 2.50, 0.03, None, 1_048_576),
        m("gemini-2.5-flash-lite", 0.10, 0.40, 0.01, None, 1_048_576),
    ]
}

#[derive(Debug, thiserror::Error)]
pub enum ModelsError {
    #[error("cannot read cost models from {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cost models in {path} are not valid: {reason}")]
    Invalid { path: String, reason: String },
}

/// The file is either a list of models or `{"models": [...]}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum File {
    List(Vec<CostModel>),
    Wrapped { models: Vec<CostModel> },
}

fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The models and where they came from. A missing file means the built-in defaults; a file
/// that is present but unreadable or invalid is an error, never a silent fallback.
pub fn load(path: &str) -> Result<(Vec<CostModel>, String), ModelsError> {
    let file = expand(path);
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((defaults(), "built-in".into())),
        Err(source) => {
            return Err(ModelsError::Read {
                path: file.display().to_string(),
                source,
            });
        }
    };
    let invalid = |reason: String| ModelsError::Invalid {
        path: file.display().to_string(),
        reason,
    };
    let models = match serde_json::from_str::<File>(&text).map_err(|e| invalid(e.to_string()))? {
        File::List(m) | File::Wrapped { models: m } => m,
    };
    for m in &models {
        let prices = [
            Some(m.input_per1_m),
            Some(m.output_per1_m),
            m.cache_read_per1_m,
            m.cache_write_per1_m,
        ];
        if m.model.trim().is_empty() || prices.iter().flatten().any(|p| !p.is_finite() || *p < 0.0) {
            return Err(invalid(format!("model {:?} needs a name and prices >= 0", m.model)));
        }
    }
    Ok((models, file.display().to_string()))
}

/// Prices a model: an exact name first, else the longest configured prefix of it that ends
/// where a suffix starts (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929` and
/// `…@20250929`). A prefix followed by `.` or a digit names another version (`gpt-5` is not
/// `gpt-5.5`): that model is unpriced, and shown so, rather than priced as another.
pub fn find<'a>(models: &'a [CostModel], model: &str) -> Option<&'a CostModel> {
    let suffix_starts = |rest: &str| matches!(rest.chars().next(), Some('-' | '@' | ':' | '/'));
    models.iter().find(|m| m.model == model).or_else(|| {
        models
            .iter()
            .filter(|m| model.strip_prefix(m.model.as_str()).is_some_and(suffix_starts))
            .max_by_key(|m| m.model.len())
    })
}

/// Tokens of one usage event.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tokens {
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
}

/// Seed 003 §6.4 `computeCost`. Cache reads and writes without their own price cost as input.
pub fn cost(model: &CostModel, t: Tokens) -> f64 {
    let per = |n: i64, price: f64| n as f64 * price / 1_000_000.0;
    per(t.input, model.input_per1_m)
        + per(t.output, model.output_per1_m)
        + per(t.cache_read, model.cache_read_per1_m.unwrap_or(model.input_per1_m))
        + per(t.cache_write, model.cache_write_per1_m.unwrap_or(model.input_per1_m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_model_names_are_priced_by_the_longest_prefix() {
        let models = defaults();
        assert_eq!(
            find(&models, "claude-sonnet-4-5-20250929").unwrap().model,
            "claude-sonnet-4-5"
        );
        assert_eq!(
            find(&models, "claude-sonnet-4-20250514").unwrap().model,
            "claude-sonnet-4"
        );
        assert_eq!(find(&models, "gpt-5-mini-2025-08-07").unwrap().model, "gpt-5-mini");
        assert_eq!(
            find(&models, "gemini-2.5-flash-lite").unwrap().model,
            "gemini-2.5-flash-lite"
        );
        assert!(find(&models, "llama-3").is_none());
    }

    /// The models the agent CLIs run when nothing is configured, pinned and latest (observed
    /// against the fake model: the `model` of their requests): each must have a price, else its
    /// usage costs $0. Update with the versions in scripts/install-agent-clis.sh.
    const CLI_DEFAULT_MODELS: &[(&str, &str)] = &[
        ("Claude Code 2.1.197 (pinned)", "claude-opus-4-8"),
        ("Claude Code 2.1.332 (latest)", "claude-opus-5-5"),
        ("Claude Code's side calls", "claude-haiku-4-5-20251001"),
        ("Codex 0.171 (pinned)", "gpt-6.2-sol"),
        ("Codex with the tests' config", "gpt-5.5"),
        ("Gemini CLI 0.61 (pinned), auto", "gemini-3.8-flash"),
        ("Gemini CLI 0.61 (pinned), auto's router", "gemini-3.5-flash-lite"),
    ];

    #[test]
    fn no_model_a_pinned_or_latest_cli_defaults_to_is_unpriced() {
        let models = defaults();
        for (cli, model) in CLI_DEFAULT_MODELS {
            assert!(find(&models, model).is_some(), "{cli} runs {model}, which has no price");
        }
        // Priced as itself, not as an older model that shares a prefix (Opus 4 costs 3x).
        assert_eq!(find(&models, "claude-opus-4-8").unwrap().input_per1_m, 5.0);
        assert_eq!(find(&models, "claude-opus-5-5").unwrap().output_per1_m, 20.0);
        assert_eq!(find(&models, "gpt-6.2-sol").unwrap().cache_read_per1_m, Some(0.10));
    }

    #[test]
    fn another_version_is_not_priced_as_its_prefix() {
        let models = vec![
            m("gpt-5", 1.25, 10.0, 0.125, None, 1),
            m("claude-sonnet-4", 3.0, 15.0, 0.3, None, 1),
        ];
        assert!(find(&models, "gpt-5.5").is_none(), "gpt-5.5 is not gpt-5");
        assert!(find(&models, "gpt-50").is_none());
        assert_eq!(find(&models, "gpt-5-2025-08-07").unwrap().model, "gpt-5");
        assert_eq!(
            find(&models, "claude-sonnet-4@20250514").unwrap().model,
            "claude-sonnet-4"
        );
    }

    #[test]
    fn gemini_3_8_flash_costs_its_launch_price_through_2026_and_double_after() {
        let price = |now| find(&defaults_at(now), "gemini-3.8-flash").unwrap().input_per1_m;
        assert_eq!(price(GEMINI_3_8_FLASH_LAUNCH_PRICE_ENDS - 1), 0.75);
        assert_eq!(price(GEMINI_3_8_FLASH_LAUNCH_PRICE_ENDS), 1.50);
    }

    #[test]
    fn cost_is_tokens_times_price_per_million() {
        let sonnet = find(&defaults(), "claude-sonnet-4-5").unwrap().clone();
        let t = Tokens {
            input: 1_500,
            output: 800,
            cache_read: 10_000,
            cache_write: 2_000,
        };
        // 1500*3 + 800*15 + 10000*0.30 + 2000*3.75 = 4500 + 12000 + 3000 + 7500 = 27000 per 1M
        assert!((cost(&sonnet, t) - 0.027).abs() < 1e-12);
    }

    #[test]
    fn missing_file_means_defaults_and_a_bad_file_is_an_error() {
        let (models, source) = load("/nonexistent/cost-models.json").unwrap();
        assert_eq!(source, "built-in");
        assert!(!models.is_empty());
        let dir = std::env::temp_dir().join(format!("relay-cost-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"[{"model":"x","inputPer1M":-1,"outputPer1M":1}]"#).unwrap();
        assert!(load(bad.to_str().unwrap()).is_err());
        let good = dir.join("good.json");
        std::fs::write(&good, r#"{"models":[{"model":"x","inputPer1M":1,"outputPer1M":2}]}"#).unwrap();
        let (models, source) = load(good.to_str().unwrap()).unwrap();
        assert_eq!((models.len(), source.ends_with("good.json")), (1, true));
    }
}
