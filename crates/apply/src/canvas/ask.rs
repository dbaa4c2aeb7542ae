//! `graphctx canvas ask`: a JSON Canvas conversation answered by the model.
//!
//! The canvas walk (seed 002, [`crate::canvas::walk`]) turns the target
//! node's thread into chat messages — system prompts first, the parent
//! chain with its horizontal context, the target last — those go to the
//! providers as they are, and the answer is written back below the target
//! as an assistant node ([`crate::canvas::respond_file`], an atomic
//! rewrite of the file as it is *then*, so edits made while the model was
//! thinking are kept). No tools: the canvas conversation is plain chat.

use std::path::Path;

use serde::Serialize;

use crate::canvas::{self, Canvas, CanvasError, Response};
use crate::llm::{strip_think, ChatClient, ChatMessage, LlmError, ProviderFailure};
use crate::support::tokens::{Encoding, TokenCounter};

#[derive(Debug, thiserror::Error)]
pub enum CanvasAskError {
    #[error(transparent)]
    Canvas(#[from] CanvasError),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("the model's answer has no text to write (provider {0})")]
    NoText(String),
}

/// What `canvas ask` did.
#[derive(Debug, Clone, Serialize)]
pub struct CanvasAnswer {
    pub provider: String,
    pub model: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failovers: Vec<ProviderFailure>,
    /// Messages sent (the walk's).
    pub messages: usize,
    /// Tokens of the messages' contents (o200k).
    pub context_tokens: usize,
    pub warnings: Vec<String>,
    pub answer: String,
    /// The node and edge written into the canvas.
    pub response: Response,
}

/// Walk the canvas at `path` from `node`, ask the model, write the answer.
/// `vault` is the root for file nodes (default: as `canvas walk`).
pub fn ask_canvas(
    client: &ChatClient,
    path: &Path,
    node: &str,
    vault: Option<&Path>,
) -> Result<CanvasAnswer, CanvasAskError> {
    let loaded = Canvas::load(path)?;
    let vault = vault
        .map(Path::to_path_buf)
        .unwrap_or_else(|| canvas::default_vault_root(path));
    let walk = canvas::walk(&loaded, node, Some(&vault))?;
    let messages: Vec<ChatMessage> = walk
        .messages
        .iter()
        .map(|m| ChatMessage {
            role: m.role.as_str().to_string(),
            content: m.content.clone(),
        })
        .collect();
    let counter = TokenCounter::new(Encoding::default());
    let context_tokens = messages
        .iter()
        .map(|m| counter.count_exact(&m.content))
        .sum();
    let reply = client.chat(&messages, None)?;
    let answer = strip_think(&reply.content).trim().to_string();
    if answer.is_empty() {
        return Err(CanvasAskError::NoText(reply.provider));
    }
    let response = canvas::respond_file(path, node, &answer)?;
    Ok(CanvasAnswer {
        provider: reply.provider,
        model: reply.model,
        failovers: reply.failures,
        messages: messages.len(),
        context_tokens,
        warnings: walk.warnings,
        answer,
        response,
    })
}
