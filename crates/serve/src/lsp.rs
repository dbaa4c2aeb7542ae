//! `graphctx lsp`: a language server (tower-lsp-server, stdio) over
//! [`super::nav`].
//!
//! Why tower-lsp-server rather than tower-lsp 0.20: the fork is maintained
//! and its transport stops reading at the `exit` notification, so the
//! process ends promptly even when a client keeps stdin open (tower-lsp
//! 0.20 keeps running until stdin closes).
//!
//! Lifecycle: `initialize` opens (or creates) the workspace root's index;
//! `initialized` starts a task that brings it current, reporting
//! `$/progress` work-done notifications when the client supports them,
//! then starts watching the workspace (the notification itself returns at
//! once, so `exit` ends the process even while that run waits for another
//! writer). Saves, debounced edits and file-system events trigger
//! incremental runs through a [`Refresher`]. Requests read the committed
//! state; before the first run has finished they wait for it. Every
//! answer about the code brings the index current first, so a request
//! sent right after a save sees it (hover and `graphctx/context` also
//! name the files they cannot reflect while another process holds the
//! write lock).
//!
//! The custom request `graphctx/context` returns a context document; see
//! docs/serving.md (`graphctx/context`) for its parameters and result.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use super::nav::{self, parse_format, CallSite, Span};
use super::watch::{self, Delays, OnRun, Refresher, Trigger, WorkspaceWatch};
use super::{ServeError, Workspace};
use crate::analyse::select::BaseSpec;
use crate::emit::{Format, DEFAULT_BUDGET};
use crate::graph::EntityRow;
use crate::index::CODE_GRAPH;
use crate::store::Location as DbLocation;

/// How long a request waits for the first index run.
const READY_WAIT: Duration = Duration::from_secs(600);
/// Most results of `workspace/symbol`.
const SYMBOL_LIMIT: usize = 200;

/// Options of `graphctx lsp`.
#[derive(Debug, Clone)]
pub struct LspOptions {
    /// Database (default: the workspace root's `.graphctx/graph.db`).
    pub db: Option<DbLocation>,
    pub graph: String,
    /// Watch the workspace for file changes.
    pub watch: bool,
    pub delays: Delays,
}

impl Default for LspOptions {
    fn default() -> Self {
        LspOptions {
            db: None,
            graph: CODE_GRAPH.to_string(),
            watch: true,
            delays: Delays::default(),
        }
    }
}

struct Served {
    ws: Arc<Workspace>,
    refresher: Refresher,
    progress: bool,
}

pub struct Backend {
    client: Client,
    opts: LspOptions,
    served: OnceLock<Served>,
    /// Texts of open documents by URI (full sync).
    docs: Mutex<HashMap<String, String>>,
    watch: Arc<Mutex<WatchSlot>>,
}

/// The workspace watcher: started once the first index run has landed,
/// stopped (and never started after) at `shutdown`.
#[derive(Default)]
struct WatchSlot {
    watcher: Option<WorkspaceWatch>,
    closed: bool,
}

fn err_of(e: ServeError) -> Error {
    match e {
        ServeError::OutsideWorkspace { .. } | ServeError::BadRequest(_) => {
            Error::invalid_params(e.to_string())
        }
        ServeError::Context(c) => {
            let data = c.to_json();
            Error {
                code: ErrorCode::ServerError(-32001),
                message: c.to_string().into(),
                data: Some(data),
            }
        }
        e => Error {
            code: ErrorCode::InternalError,
            message: e.to_string().into(),
            data: None,
        },
    }
}

/// The LSP symbol kind of a stored entity kind (`EntityKind::as_str`).
fn symbol_kind(kind: &str) -> SymbolKind {
    match kind {
        "function" | "macro" | "test" => SymbolKind::FUNCTION,
        "method" => SymbolKind::METHOD,
        "struct" | "union" => SymbolKind::STRUCT,
        "enum" => SymbolKind::ENUM,
        "trait" => SymbolKind::INTERFACE,
        "impl" => SymbolKind::OBJECT,
        "module" => SymbolKind::MODULE,
        "const" => SymbolKind::CONSTANT,
        "static" | "variable" => SymbolKind::VARIABLE,
        "type_alias" => SymbolKind::TYPE_PARAMETER,
        "class" => SymbolKind::CLASS,
        "attribute" => SymbolKind::FIELD,
        "property" => SymbolKind::PROPERTY,
        _ => SymbolKind::NULL,
    }
}

fn range_of(s: &Span) -> Range {
    Range::new(
        Position::new(s.start_line, s.start_col),
        Position::new(s.end_line, s.end_col),
    )
}

impl Backend {
    pub fn new(client: Client, opts: LspOptions) -> Backend {
        Backend {
            client,
            opts,
            served: OnceLock::new(),
            docs: Mutex::new(HashMap::new()),
            watch: Arc::new(Mutex::new(WatchSlot::default())),
        }
    }

    fn served(&self) -> Result<&Served> {
        self.served.get().ok_or_else(|| Error {
            code: ErrorCode::ServerError(-32002),
            message: "server not initialized".into(),
            data: None,
        })
    }

    /// Run `f` on a blocking thread once the index is usable.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Workspace) -> std::result::Result<T, ServeError> + Send + 'static,
    ) -> Result<T> {
        let ws = self.served()?.ws.clone();
        tokio::task::spawn_blocking(move || {
            ws.wait_ready(READY_WAIT);
            f(&ws)
        })
        .await
        .map_err(|e| Error {
            code: ErrorCode::InternalError,
            message: format!("request task failed: {e}").into(),
            data: None,
        })?
        .map_err(err_of)
    }

    /// Like [`Self::blocking`], but with the index brought current first
    /// ([`Workspace::ensure_current`]): an answer about the code reflects
    /// the files as they are when it is asked, a save made just before
    /// included. While another process holds the write lock it answers
    /// from the committed state.
    async fn current<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Workspace) -> std::result::Result<T, ServeError> + Send + 'static,
    ) -> Result<T> {
        self.blocking(move |ws| {
            ws.ensure_current()?;
            f(ws)
        })
        .await
    }

    /// The repository-relative path of a document URI (refused outside).
    fn rel(&self, uri: &Uri) -> Result<String> {
        let ws = &self.served()?.ws;
        let path = uri
            .to_file_path()
            .ok_or_else(|| Error::invalid_params(format!("not a file URI: {}", uri.as_str())))?;
        ws.relative(&path).map_err(err_of)
    }

    fn text_of(&self, uri: &Uri) -> Option<String> {
        self.docs.lock().ok()?.get(uri.as_str()).cloned()
    }

    fn uri_of(&self, rel: &str) -> Result<Uri> {
        let ws = &self.served()?.ws;
        let abs = ws.absolute(rel);
        Uri::from_file_path(&abs).ok_or_else(|| Error {
            code: ErrorCode::InternalError,
            message: format!("cannot make a URI of {}", abs.display()).into(),
            data: None,
        })
    }

    fn location(&self, s: &Span) -> Result<Location> {
        Ok(Location::new(self.uri_of(&s.file)?, range_of(s)))
    }

    fn call_item(&self, ws: &Workspace, e: &EntityRow) -> Result<CallHierarchyItem> {
        let decl = ws.declaration_span(e);
        let mut full = nav::full_span(e);
        if decl.start_line < full.start_line {
            full.start_line = decl.start_line;
        }
        Ok(CallHierarchyItem {
            name: e.name.clone(),
            kind: symbol_kind(&e.kind),
            tags: None,
            detail: Some(e.key.clone()),
            uri: self.uri_of(&e.file)?,
            range: range_of(&full),
            selection_range: range_of(&decl),
            data: Some(json!({ "key": e.key })),
        })
    }

    /// Where an entity's declaration is (for definition answers).
    fn entity_location(&self, ws: &Workspace, e: &EntityRow) -> Result<Location> {
        self.location(&ws.declaration_span(e))
    }

    fn ws_now(&self) -> Result<Arc<Workspace>> {
        Ok(self.served()?.ws.clone())
    }

    fn key_of_item(item: &CallHierarchyItem) -> Result<String> {
        item.data
            .as_ref()
            .and_then(|d| d.get("key"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                Error::invalid_params("call hierarchy item without graphctx key in data")
            })
    }

    /// `graphctx/context`: see docs/serving.md.
    pub async fn context_request(&self, params: ContextParams) -> Result<Value> {
        let format = parse_format(params.format.as_deref().unwrap_or("json")).map_err(err_of)?;
        let hops = params.hops.unwrap_or(2);
        let budget = params.budget.unwrap_or(DEFAULT_BUDGET);
        let located = match (&params.key, &params.text_document, params.position) {
            (Some(k), None, None) => Some(Err(k.clone())),
            (None, Some(doc), Some(pos)) => {
                let rel = self.rel(&doc.uri)?;
                Some(Ok((rel, pos, self.text_of(&doc.uri))))
            }
            _ => {
                return Err(Error::invalid_params(
                    "give either `key`, or `textDocument` and `position`",
                ))
            }
        };
        self.blocking(move |ws| {
            let key = match located {
                Some(Err(k)) => k,
                Some(Ok((rel, pos, text))) => {
                    let hit = ws.definition(&rel, pos.line, pos.character, text.as_deref())?;
                    match hit.into_iter().next() {
                        Some(e) => e.key,
                        None => match ws.entity_at(&rel, pos.line)? {
                            Some(e) => e.key,
                            None => {
                                return Err(ServeError::BadRequest(format!(
                                    "no entity at {rel}:{}:{}",
                                    pos.line + 1,
                                    pos.character + 1
                                )))
                            }
                        },
                    }
                }
                None => unreachable!("checked above"),
            };
            let out = ws.context(BaseSpec::Keys(vec![key.clone()]), hops, budget, format)?;
            let document = match format {
                Format::Json => serde_json::from_str::<Value>(&out.text)
                    .unwrap_or_else(|_| Value::String(out.text.clone())),
                Format::E => Value::String(out.text.clone()),
            };
            Ok(json!({
                "key": key,
                "format": match format { Format::Json => "json", Format::E => "e" },
                "token_count": out.token_count,
                "entities_included": out.entities_included,
                "entities_excluded": out.entities_excluded,
                "from_cache": out.from_cache,
                "document": document,
            }))
        })
        .await
    }
}

/// Parameters of `graphctx/context`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextParams {
    pub text_document: Option<TextDocumentIdentifier>,
    pub position: Option<Position>,
    pub key: Option<String>,
    pub hops: Option<u32>,
    pub budget: Option<usize>,
    pub format: Option<String>,
}

fn root_of(params: &InitializeParams) -> Option<PathBuf> {
    if let Some(f) = params.workspace_folders.as_ref().and_then(|f| f.first()) {
        if let Some(p) = f.uri.to_file_path() {
            return Some(p.into_owned());
        }
    }
    #[allow(deprecated)]
    if let Some(p) = params.root_uri.as_ref().and_then(|u| u.to_file_path()) {
        return Some(p.into_owned());
    }
    #[allow(deprecated)]
    if let Some(p) = &params.root_path {
        return Some(PathBuf::from(p));
    }
    std::env::current_dir().ok()
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let root = root_of(&params).ok_or_else(|| {
            Error::invalid_params("no workspace root (rootUri or workspaceFolders)")
        })?;
        let ws = Workspace::open(&root, self.opts.db.clone(), &self.opts.graph).map_err(err_of)?;
        let progress = params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
        let client = self.client.clone();
        let handle = tokio::runtime::Handle::current();
        let on_run: OnRun = Arc::new(move |r| {
            let client = client.clone();
            let msg = match r {
                Ok(s) => {
                    let phases: Vec<String> = s
                        .phases_ms
                        .iter()
                        .map(|(phase, ms)| format!("{phase} {ms:.0}"))
                        .collect();
                    format!(
                        "graphctx: re-indexed ({} parsed, {} entities, seq {}) in {:.0} ms ({})",
                        s.files_parsed,
                        s.entities,
                        s.seq,
                        s.elapsed_ms,
                        phases.join(", ")
                    )
                }
                Err(e) => format!("graphctx: re-index failed: {e}"),
            };
            let level = if r.is_ok() {
                MessageType::LOG
            } else {
                MessageType::ERROR
            };
            handle.spawn(async move { client.log_message(level, msg).await });
        });
        let refresher = Refresher::start(ws.clone(), self.opts.delays, Some(on_run));
        let _ = self.served.set(Served {
            ws,
            refresher,
            progress,
        });
        let sync = TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::FULL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..TextDocumentSyncOptions::default()
        };
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(sync)),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                workspace_symbol_provider: Some(OneOf::Left(true)),
                call_hierarchy_provider: Some(CallHierarchyServerCapability::Simple(true)),
                experimental: Some(json!({ "graphctxContext": true })),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "graphctx".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..InitializeResult::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let Ok(served) = self.served() else { return };
        let ws = served.ws.clone();
        let token = NumberOrString::String("graphctx/index".into());
        let ongoing = if served.progress
            && self
                .client
                .create_work_done_progress(token.clone())
                .await
                .is_ok()
        {
            Some(
                self.client
                    .progress(token, "graphctx: indexing")
                    .with_message(format!("{}", ws.root().display()))
                    .begin()
                    .await,
            )
        } else {
            None
        };
        // The first run goes on in its own task: this notification returns
        // at once, so an `exit` is not held up behind the run (which waits
        // as long as another process holds the write lock).
        let client = self.client.clone();
        let refresher = served.refresher.clone();
        let watching = self.opts.watch;
        let slot = self.watch.clone();
        tokio::spawn(async move {
            let run = {
                let ws = ws.clone();
                tokio::task::spawn_blocking(move || {
                    let run = ws.refresh_waiting(true, Duration::from_millis(200));
                    if run.is_ok() {
                        // Best effort: a failure leaves the first save to
                        // read what it needs itself.
                        let _ = ws.warm();
                    }
                    run
                })
                .await
            };
            let message = match run {
                Ok(Ok(s)) => format!(
                    "{} files, {} entities, {} edges ({:.0} ms)",
                    s.files_seen, s.entities, s.edges, s.elapsed_ms
                ),
                Ok(Err(e)) => {
                    ws.mark_ready();
                    format!("indexing failed: {e}")
                }
                Err(e) => {
                    ws.mark_ready();
                    format!("indexing failed: {e}")
                }
            };
            if let Some(p) = ongoing {
                p.finish_with_message(message.clone()).await;
            }
            client
                .log_message(MessageType::INFO, format!("graphctx: {message}"))
                .await;
            if !watching {
                return;
            }
            match watch::watch_workspace(&ws, refresher) {
                Ok(w) => {
                    if let Ok(mut slot) = slot.lock() {
                        if !slot.closed {
                            slot.watcher = Some(w);
                        }
                    }
                }
                Err(e) => {
                    client
                        .log_message(
                            MessageType::WARNING,
                            format!("graphctx: not watching files: {e}"),
                        )
                        .await
                }
            }
        });
    }

    async fn shutdown(&self) -> Result<()> {
        if let Ok(mut slot) = self.watch.lock() {
            slot.closed = true;
            slot.watcher.take();
        }
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let held = self.rel(&params.text_document.uri).ok();
        if let Ok(mut docs) = self.docs.lock() {
            docs.insert(
                params.text_document.uri.as_str().to_string(),
                params.text_document.text,
            );
        }
        // Its tree, parsed off the request path: its saves parse
        // incrementally.
        if let (Some(rel), Ok(s)) = (held, self.served()) {
            let ws = s.ws.clone();
            tokio::task::spawn_blocking(move || ws.hold_tree(&rel));
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        if let Some(change) = params.content_changes.into_iter().last() {
            if change.range.is_none() {
                if let Ok(mut docs) = self.docs.lock() {
                    docs.insert(params.text_document.uri.as_str().to_string(), change.text);
                }
            }
        }
        if let Ok(s) = self.served() {
            s.refresher.trigger(Trigger::Edit);
        }
    }

    async fn did_save(&self, _: DidSaveTextDocumentParams) {
        if let Ok(s) = self.served() {
            s.refresher.trigger(Trigger::Save);
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        if let Ok(mut docs) = self.docs.lock() {
            docs.remove(params.text_document.uri.as_str());
        }
        if let (Ok(rel), Ok(s)) = (self.rel(&params.text_document.uri), self.served()) {
            s.ws.release_tree(&rel);
        }
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        let rel = self.rel(&p.text_document.uri)?;
        let text = self.text_of(&p.text_document.uri);
        let pos = p.position;
        let ws = self.ws_now()?;
        let hits = self
            .current(move |ws| ws.definition(&rel, pos.line, pos.character, text.as_deref()))
            .await?;
        let locs: Vec<Location> = hits
            .iter()
            .map(|e| self.entity_location(&ws, e))
            .collect::<Result<_>>()?;
        Ok(match locs.len() {
            0 => None,
            1 => Some(GotoDefinitionResponse::Scalar(
                locs.into_iter().next().expect("one"),
            )),
            _ => Some(GotoDefinitionResponse::Array(locs)),
        })
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let p = params.text_document_position;
        let rel = self.rel(&p.text_document.uri)?;
        let text = self.text_of(&p.text_document.uri);
        let pos = p.position;
        let include = params.context.include_declaration;
        let spans = self
            .current(move |ws| {
                let targets = ws.definition(&rel, pos.line, pos.character, text.as_deref())?;
                let mut out = Vec::new();
                for t in targets {
                    out.extend(ws.references(&t.key, include)?);
                }
                out.sort();
                out.dedup();
                Ok(out)
            })
            .await?;
        if spans.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            spans
                .iter()
                .map(|s| self.location(s))
                .collect::<Result<_>>()?,
        ))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let rel = self.rel(&p.text_document.uri)?;
        let text = self.text_of(&p.text_document.uri);
        let pos = p.position;
        let info = self
            .blocking(move |ws| {
                let stale = ws.ensure_current()?;
                let targets = ws.definition(&rel, pos.line, pos.character, text.as_deref())?;
                match targets.first() {
                    Some(t) => Ok(ws.hover(&t.key)?.map(|mut h| {
                        h.stale_files = stale;
                        h
                    })),
                    None => Ok(None),
                }
            })
            .await?;
        Ok(info.map(|h| Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: h.markdown(),
            }),
            range: None,
        }))
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let rel = self.rel(&params.text_document.uri)?;
        let text = self.text_of(&params.text_document.uri);
        let (entities, spans) = self
            .current(move |ws| {
                let es = ws.entities_in_file(&rel)?;
                let text = text.or_else(|| std::fs::read_to_string(ws.absolute(&rel)).ok());
                let full: Vec<Span> = es.iter().map(nav::full_span).collect();
                let decl = match &text {
                    Some(_) => ws.declaration_spans(&rel, &es),
                    None => full.clone(),
                };
                let spans: Vec<(Span, Span)> = full.into_iter().zip(decl).collect();
                Ok((es, spans))
            })
            .await?;
        Ok(Some(DocumentSymbolResponse::Nested(nest(
            &entities, &spans,
        ))))
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let q = params.query;
        let found = self
            .current(move |ws| ws.workspace_symbols(&q, SYMBOL_LIMIT))
            .await?;
        let mut out = Vec::new();
        for e in &found {
            let loc = self.location(&nav::full_span(e))?;
            #[allow(deprecated)]
            out.push(SymbolInformation {
                name: e.name.clone(),
                kind: symbol_kind(&e.kind),
                tags: None,
                deprecated: None,
                location: loc,
                container_name: Some(e.key.clone()),
            });
        }
        Ok(Some(WorkspaceSymbolResponse::Flat(out)))
    }

    async fn prepare_call_hierarchy(
        &self,
        params: CallHierarchyPrepareParams,
    ) -> Result<Option<Vec<CallHierarchyItem>>> {
        let p = params.text_document_position_params;
        let rel = self.rel(&p.text_document.uri)?;
        let text = self.text_of(&p.text_document.uri);
        let pos = p.position;
        let ws = self.ws_now()?;
        let hits = self
            .current(move |ws| ws.definition(&rel, pos.line, pos.character, text.as_deref()))
            .await?;
        if hits.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            hits.iter()
                .map(|e| self.call_item(&ws, e))
                .collect::<Result<_>>()?,
        ))
    }

    async fn incoming_calls(
        &self,
        params: CallHierarchyIncomingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyIncomingCall>>> {
        let key = Self::key_of_item(&params.item)?;
        let ws = self.ws_now()?;
        let sites: Vec<CallSite> = self.current(move |ws| ws.incoming_calls(&key)).await?;
        let mut out = Vec::new();
        for s in &sites {
            out.push(CallHierarchyIncomingCall {
                from: self.call_item(&ws, &s.entity)?,
                from_ranges: s.ranges.iter().map(range_of).collect(),
            });
        }
        Ok(Some(out))
    }

    async fn outgoing_calls(
        &self,
        params: CallHierarchyOutgoingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyOutgoingCall>>> {
        let key = Self::key_of_item(&params.item)?;
        let ws = self.ws_now()?;
        let sites: Vec<CallSite> = self.current(move |ws| ws.outgoing_calls(&key)).await?;
        let mut out = Vec::new();
        for s in &sites {
            out.push(CallHierarchyOutgoingCall {
                to: self.call_item(&ws, &s.entity)?,
                from_ranges: s.ranges.iter().map(range_of).collect(),
            });
        }
        Ok(Some(out))
    }
}

/// Nest entities by line containment (a method inside its impl block, an
/// item inside its inline module).
fn nest(entities: &[EntityRow], spans: &[(Span, Span)]) -> Vec<DocumentSymbol> {
    // Indices sorted outermost first.
    let mut order: Vec<usize> = (0..entities.len()).collect();
    order.sort_by_key(|&i| (entities[i].start_line, -entities[i].end_line, i));
    #[allow(deprecated)]
    fn make(e: &EntityRow, s: &(Span, Span)) -> DocumentSymbol {
        let mut range = range_of(&s.0);
        let sel = range_of(&s.1);
        if sel.start < range.start {
            range.start = sel.start;
        }
        if sel.end > range.end {
            range.end = sel.end;
        }
        DocumentSymbol {
            name: e.name.clone(),
            detail: Some(e.key.clone()),
            kind: symbol_kind(&e.kind),
            tags: None,
            deprecated: None,
            range,
            selection_range: sel,
            children: None,
        }
    }
    // Stack of (entity index, symbol) — pop when the next one is outside.
    let mut roots: Vec<DocumentSymbol> = Vec::new();
    let mut stack: Vec<(usize, DocumentSymbol)> = Vec::new();
    fn close(stack: &mut Vec<(usize, DocumentSymbol)>, roots: &mut Vec<DocumentSymbol>) {
        if let Some((_, sym)) = stack.pop() {
            match stack.last_mut() {
                Some((_, parent)) => parent.children.get_or_insert_with(Vec::new).push(sym),
                None => roots.push(sym),
            }
        }
    }
    for i in order {
        let e = &entities[i];
        while let Some((top, _)) = stack.last() {
            let t = &entities[*top];
            let inside = t.start_line <= e.start_line
                && e.end_line <= t.end_line
                && (t.start_line, t.end_line) != (e.start_line, e.end_line);
            // A file's module entity spans the whole file: everything nests in it.
            if inside {
                break;
            }
            close(&mut stack, &mut roots);
        }
        stack.push((i, make(e, &spans[i])));
    }
    while !stack.is_empty() {
        close(&mut stack, &mut roots);
    }
    roots
}

/// Serve LSP on stdin/stdout until `exit` (or stdin closes).
///
/// The transport's framed reader ends the stream at the first message that
/// is not valid JSON-RPC, which would end the server. So messages pass a
/// guard first: well-formed ones go on to the server; a body that is not
/// JSON gets a `-32700` parse error, JSON that is not a JSON-RPC message a
/// `-32600` invalid request, and the server keeps serving. Output of the
/// server and of the guard goes to stdout one whole frame at a time.
pub async fn serve_stdio(opts: LspOptions) {
    serve_io(tokio::io::stdin(), tokio::io::stdout(), opts).await
}

/// [`serve_stdio`] over any pair of streams (tests, benchmarks).
pub async fn serve_io<I, O>(input: I, output: O, opts: LspOptions)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use tokio::io::AsyncWriteExt;
    let (service, socket) = LspService::build(|client| Backend::new(client, opts))
        .custom_method("graphctx/context", Backend::context_request)
        .finish();
    let (mut to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, from_server) = tokio::io::duplex(1 << 20);
    let output = Arc::new(tokio::sync::Mutex::new(output));

    let out = output.clone();
    let guard = tokio::spawn(async move {
        let mut input = tokio::io::BufReader::new(input);
        while let Some(frame) = read_frame(&mut input).await {
            let reply = match frame {
                Ok(body) => match check_message(&body) {
                    Ok(()) => {
                        if write_frame(&mut to_server, &body).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Err(reply) => reply,
                },
                Err(reply) => reply,
            };
            let mut o = out.lock().await;
            if write_frame(&mut *o, reply.to_string().as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
        // End of input: the server sees end of stream and stops.
        let _ = to_server.shutdown().await;
    });
    let out = output.clone();
    let forward = tokio::spawn(async move {
        let mut from_server = tokio::io::BufReader::new(from_server);
        while let Some(Ok(body)) = read_frame(&mut from_server).await {
            let mut o = out.lock().await;
            if write_frame(&mut *o, &body).await.is_err() {
                break;
            }
        }
    });
    Server::new(server_in, server_out, socket)
        .serve(service)
        .await;
    // The server's output end is dropped: forward what is left, then stop.
    let _ = tokio::time::timeout(Duration::from_secs(5), forward).await;
    guard.abort();
}

/// Read one `Content-Length` framed message. `None` at end of input;
/// `Err(reply)` for a frame that cannot be read (the error response).
async fn read_frame<R>(r: &mut R) -> Option<std::result::Result<Vec<u8>, Value>>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut length: Option<usize> = None;
    let mut saw_header = false;
    loop {
        let mut line = String::new();
        match r.read_line(&mut line).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            }
        }
    }
    let Some(n) = length else {
        return Some(Err(rpc_error(
            Value::Null,
            -32700,
            "Parse error: missing Content-Length header",
        )));
    };
    if n > 256 << 20 {
        return Some(Err(rpc_error(
            Value::Null,
            -32700,
            "Parse error: message too large",
        )));
    }
    let mut body = vec![0; n];
    if r.read_exact(&mut body).await.is_err() {
        return None;
    }
    Some(Ok(body))
}

async fn write_frame<W>(w: &mut W, body: &[u8]) -> std::io::Result<()>
where
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt;
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    w.write_all(&frame).await?;
    w.flush().await
}

fn rpc_error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})
}

/// Whether a body is a JSON-RPC 2.0 request, notification or response the
/// transport accepts; otherwise the error response to send instead.
fn check_message(body: &[u8]) -> std::result::Result<(), Value> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| rpc_error(Value::Null, -32700, &format!("Parse error: {e}")))?;
    let id = v.get("id").cloned();
    let id_ok = matches!(
        &id,
        None | Some(Value::Null | Value::Number(_) | Value::String(_))
    );
    let reply_id = if id_ok {
        id.clone().unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let invalid =
        |why: &str| rpc_error(reply_id.clone(), -32600, &format!("Invalid Request: {why}"));
    let Some(obj) = v.as_object() else {
        return Err(invalid("not a JSON object"));
    };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(invalid("jsonrpc must be \"2.0\""));
    }
    if !id_ok {
        return Err(invalid("id must be a number, a string or null"));
    }
    match obj.get("method") {
        Some(Value::String(_)) => {
            if !matches!(
                obj.get("params"),
                None | Some(Value::Null | Value::Object(_) | Value::Array(_))
            ) {
                return Err(invalid("params must be an object or an array"));
            }
            Ok(())
        }
        Some(_) => Err(invalid("method must be a string")),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => Ok(()),
        None => Err(invalid("neither a request nor a response")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EntityKind;

    /// Workspace symbols, document symbols and the call hierarchy show
    /// every kind the index stores as a kind of its own, not as "null".
    #[test]
    fn every_stored_kind_has_a_symbol_kind() {
        for kind in EntityKind::ALL {
            assert_ne!(symbol_kind(kind.as_str()), SymbolKind::NULL, "{kind:?}");
        }
        assert_eq!(symbol_kind("function"), SymbolKind::FUNCTION);
        assert_eq!(symbol_kind("module"), SymbolKind::MODULE);
        assert_eq!(symbol_kind("class"), SymbolKind::CLASS);
    }
}
