//! graphctx-base

pub mod model;
pub mod support;
