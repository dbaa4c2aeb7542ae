//! Which LLM providers to call, in which order.
//!
//! Sources, strongest first:
//!
//! 1. environment: `GRAPHCTX_LLM_BASE_URL` adds a provider named `env`
//!    that is tried before all others (its model from `GRAPHCTX_LLM_MODEL`,
//!    its key from `GRAPHCTX_LLM_API_KEY`); without a base URL,
//!    `GRAPHCTX_LLM_MODEL` and `GRAPHCTX_LLM_API_KEY` replace the model and
//!    key of the first configured provider. `GRAPHCTX_LLM_KIND`
//!    (`openai`, the default, or `anthropic`) says which API the `env`
//!    provider speaks. `GRAPHCTX_LLM_TIMEOUT`
//!    (seconds) replaces every provider's timeout.
//! 2. the config file: `$GRAPHCTX_LLM_CONFIG`, else `.graphctx/llm.toml` in
//!    the current directory or the nearest parent that has one, else
//!    `$XDG_CONFIG_HOME/graphctx/llm.toml` (`~/.config/graphctx/llm.toml`).
//!
//! Keys are read from the environment variable a provider names
//! (`api_key_env`) or, less safely, from `api_key` in the file. A key is a
//! [`Secret`]: it has no `Display`, its `Debug` prints `***`, and error
//! texts are scrubbed of it, so it never reaches a log.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::LlmError;

/// Seconds a provider gets for one request unless configured otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// An API key. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }

    /// The key itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "***")
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// Where a provider's key comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum KeySource {
    /// No key (a local server).
    None,
    Literal(Secret),
    /// An environment variable, read when the provider is called.
    Env(String),
}

/// Which API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions: `POST {base_url}/chat/completions`,
    /// key as `Authorization: Bearer`.
    #[default]
    OpenAi,
    /// Anthropic Messages: `POST {base_url}/messages`, key as `x-api-key`,
    /// system blocks with `cache_control` (prompt caching).
    Anthropic,
}

impl ProviderKind {
    pub fn parse(s: &str) -> Option<ProviderKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }
}

/// One chat endpoint: OpenAI-compatible or Anthropic Messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Provider {
    pub name: String,
    /// The API it speaks.
    pub kind: ProviderKind,
    /// e.g. `https://api.groq.com/openai/v1`, `http://127.0.0.1:8080/v1`
    /// or `https://api.anthropic.com/v1`; requests go to
    /// `{base_url}/chat/completions` (OpenAI) or `{base_url}/messages`
    /// (Anthropic).
    pub base_url: String,
    pub model: String,
    pub key: KeySource,
    pub timeout: Duration,
    /// Send the tool definitions in the request's `tools` field (function
    /// calling). Off by default: the text form works with every server.
    pub native_tools: bool,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
}

impl Provider {
    /// A provider without key, with the default timeout.
    pub fn new(name: &str, base_url: &str, model: &str) -> Provider {
        Provider {
            name: name.into(),
            kind: ProviderKind::OpenAi,
            base_url: base_url.into(),
            model: model.into(),
            key: KeySource::None,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            native_tools: false,
            temperature: None,
            max_tokens: None,
        }
    }
}

/// The ordered provider list.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LlmConfig {
    pub providers: Vec<Provider>,
    /// The file it was read from, if any.
    pub source: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    timeout_secs: Option<u64>,
    #[serde(default)]
    provider: Vec<FileProvider>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileProvider {
    name: String,
    /// `openai` (default) or `anthropic`.
    #[serde(default)]
    kind: Option<String>,
    base_url: String,
    model: String,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    api_key_env: Option<String>,
    #[serde(default)]
    timeout_secs: Option<u64>,
    #[serde(default)]
    native_tools: bool,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    max_tokens: Option<u32>,
}

impl LlmConfig {
    /// Parse a config file's text (`path` for error messages).
    pub fn parse(text: &str, path: &Path) -> Result<LlmConfig, LlmError> {
        let file: FileConfig = toml::from_str(text)
            .map_err(|e| LlmError::Config(format!("{}: {e}", path.display())))?;
        let default_timeout = file.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        let mut providers = Vec::new();
        for p in file.provider {
            if p.api_key.is_some() && p.api_key_env.is_some() {
                return Err(LlmError::Config(format!(
                    "{}: provider {} has both api_key and api_key_env; keep one",
                    path.display(),
                    p.name
                )));
            }
            check_url(&p.base_url, &p.name)?;
            let kind = match p.kind.as_deref() {
                None => ProviderKind::OpenAi,
                Some(k) => ProviderKind::parse(k).ok_or_else(|| {
                    LlmError::Config(format!(
                        "{}: provider {}: kind must be openai or anthropic, not {k}",
                        path.display(),
                        p.name
                    ))
                })?,
            };
            let key = match (p.api_key, p.api_key_env) {
                (Some(k), _) => KeySource::Literal(Secret::new(k)),
                (None, Some(var)) => KeySource::Env(var),
                (None, None) => KeySource::None,
            };
            providers.push(Provider {
                name: p.name,
                kind,
                base_url: p.base_url,
                model: p.model,
                key,
                timeout: Duration::from_secs(p.timeout_secs.unwrap_or(default_timeout).max(1)),
                native_tools: p.native_tools,
                temperature: p.temperature,
                max_tokens: p.max_tokens,
            });
        }
        Ok(LlmConfig {
            providers,
            source: Some(path.to_path_buf()),
        })
    }

    /// The configuration for a process started in `cwd`, with environment
    /// lookups through `env` (tests pass their own).
    pub fn load(cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<LlmConfig, LlmError> {
        let file = match env("GRAPHCTX_LLM_CONFIG").filter(|s| !s.is_empty()) {
            Some(p) => {
                let p = PathBuf::from(p);
                if !p.is_file() {
                    return Err(LlmError::Config(format!(
                        "GRAPHCTX_LLM_CONFIG names {}, which is not a file",
                        p.display()
                    )));
                }
                Some(p)
            }
            None => cwd
                .ancestors()
                .map(|d| d.join(".graphctx").join("llm.toml"))
                .find(|p| p.is_file())
                .or_else(|| {
                    env("XDG_CONFIG_HOME")
                        .map(PathBuf::from)
                        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")))
                        .map(|d| d.join("graphctx").join("llm.toml"))
                        .filter(|p| p.is_file())
                }),
        };
        let mut config = match &file {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| LlmError::Config(format!("cannot read {}: {e}", p.display())))?;
                LlmConfig::parse(&text, p)?
            }
            None => LlmConfig::default(),
        };
        config.apply_env(env)?;
        if config.providers.is_empty() {
            return Err(LlmError::Config(
                "no LLM provider configured: write .graphctx/llm.toml (see docs/flow.md) or set \
                 GRAPHCTX_LLM_BASE_URL and GRAPHCTX_LLM_MODEL"
                    .into(),
            ));
        }
        Ok(config)
    }

    fn apply_env(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<(), LlmError> {
        let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let model = get("GRAPHCTX_LLM_MODEL");
        let key = get("GRAPHCTX_LLM_API_KEY").map(Secret::new);
        if let Some(url) = get("GRAPHCTX_LLM_BASE_URL") {
            check_url(&url, "env")?;
            let model = model.ok_or_else(|| {
                LlmError::Config(
                    "GRAPHCTX_LLM_BASE_URL is set but GRAPHCTX_LLM_MODEL is not".into(),
                )
            })?;
            let mut p = Provider::new("env", &url, &model);
            if let Some(k) = key {
                p.key = KeySource::Literal(k);
            }
            if let Some(kind) = get("GRAPHCTX_LLM_KIND") {
                p.kind = ProviderKind::parse(&kind).ok_or_else(|| {
                    LlmError::Config(format!(
                        "GRAPHCTX_LLM_KIND must be openai or anthropic, not {kind}"
                    ))
                })?;
            }
            self.providers.insert(0, p);
        } else if let Some(first) = self.providers.first_mut() {
            if let Some(m) = model {
                first.model = m;
            }
            if let Some(k) = key {
                first.key = KeySource::Literal(k);
            }
        }
        if let Some(t) = get("GRAPHCTX_LLM_TIMEOUT") {
            let secs: f64 = t
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| *s > 0.0)
                .ok_or_else(|| {
                    LlmError::Config(format!(
                        "GRAPHCTX_LLM_TIMEOUT must be a positive number of seconds, not {t}"
                    ))
                })?;
            for p in &mut self.providers {
                p.timeout = Duration::from_secs_f64(secs);
            }
        }
        Ok(())
    }
}

fn check_url(url: &str, provider: &str) -> Result<(), LlmError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(LlmError::Config(format!(
            "provider {provider}: base_url must start with http:// or https://, not {url}"
        )))
    }
}
