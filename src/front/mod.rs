//! The front ends: the command line ([`cli`]), the MCP server ([`mcp`]),
//! the viewer ([`ui`]) and the merge driver git runs ([`driver`]). They parse, call the application
//! layer (`crate::app`) and render (the JSON shapes in [`wire`], every
//! stderr line through [`stderr`]); they hold no logic of their own.

pub mod cli;
pub mod driver;
pub mod mcp;
pub mod stderr;
pub mod ui;
pub mod wire;
