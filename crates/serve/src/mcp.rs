//! `graphctx mcp`: the MCP server (rmcp, stdio) over [`super::tools`].
//!
//! The adapter lists the registry's tools with their JSON schemas and
//! routes calls to [`tools::call`] on a blocking thread (queries are
//! synchronous CozoDB calls). A tool failure is a tool result with
//! `isError: true` and an error object; only an unknown tool name is a
//! protocol error (`invalid_params`), as the MCP specification asks.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};

use super::registry;
use super::tools::{self, ToolSpec};
use super::watch::{self, Delays, Refresher};
use super::Workspace;

/// How long a tool call waits for the first index run of a fresh server.
const READY_WAIT: Duration = Duration::from_secs(600);

#[derive(Clone)]
pub struct GraphctxMcp {
    ws: Arc<Workspace>,
    tools: Arc<Vec<ToolSpec>>,
}

impl GraphctxMcp {
    pub fn new(ws: Arc<Workspace>) -> GraphctxMcp {
        GraphctxMcp {
            ws,
            tools: Arc::new(registry::all()),
        }
    }

    /// The tools as MCP lists them.
    pub fn tool_list(&self) -> Vec<Tool> {
        self.tools
            .iter()
            .map(|t| Tool::new(t.name, t.description, t.input_schema()))
            .collect()
    }
}

impl ServerHandler for GraphctxMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("graphctx", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "graphctx answers from a live code graph of this repository. Entities are named by \
                 ISGL1 keys `{file}-{module}-{item}`; find keys with search_entities, then ask for \
                 context, blast_radius, callers, callees or cycles. Every answer stays within \
                 max_tokens (default 8000).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !self.tools.iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool '{name}'; tools: {}",
                    self.tools
                        .iter()
                        .map(|t| t.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let ws = self.ws.clone();
        let tools = self.tools.clone();
        let reply = tokio::task::spawn_blocking(move || {
            ws.wait_ready(READY_WAIT);
            tools::call(&ws, &tools, &name, &args)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        let Some(reply) = reply else {
            return Err(ErrorData::invalid_params("unknown tool", None));
        };
        let content = vec![ContentBlock::text(reply.text)];
        Ok(if reply.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}

/// Serve MCP on stdin/stdout until the client disconnects. The index is
/// brought current in the background (tool calls wait for that first run)
/// and kept current from file-system events.
pub async fn serve_stdio(ws: Arc<Workspace>, watch_files: bool) -> anyhow::Result<()> {
    let first = ws.clone();
    std::thread::spawn(move || {
        match first.refresh_waiting(true, Duration::from_millis(200)) {
            // Best effort: a failure leaves the first save to read what
            // it needs itself.
            Ok(_) => {
                let _ = first.warm();
            }
            Err(e) => {
                eprintln!("graphctx mcp: indexing failed: {e}");
                first.mark_ready();
            }
        }
    });
    let refresher = Refresher::start(ws.clone(), Delays::default(), None);
    let _watch = if watch_files {
        match watch::watch_workspace(&ws, refresher.clone()) {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!("graphctx mcp: not watching files: {e}");
                None
            }
        }
    } else {
        None
    };
    let service = GraphctxMcp::new(ws)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("MCP initialisation failed: {e}"))?;
    service.waiting().await?;
    Ok(())
}
