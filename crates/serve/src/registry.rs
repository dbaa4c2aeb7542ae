//! Every tool graphctx serves, assembled from the modules that define them
//! (the registry sits above them, so the tool framework in [`super::tools`]
//! never needs to know its tools).

use super::tools::ToolSpec;

/// Every tool graphctx serves, in listing order.
pub fn all() -> Vec<ToolSpec> {
    let mut tools = super::code_tools::specs();
    tools.extend(super::graph_tools::specs());
    tools.extend(super::ask_tool::specs());
    tools
}
