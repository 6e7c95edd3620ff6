//! goldfish: durable, team-shared memory for AI coding agents, kept in git.
//!
//! The core ([`memory`], [`recall`], [`timespec`], [`config`] and the
//! `goldfish-log` crate) is pure: no I/O, no environment, no printing.
//! Adapters ([`git`], [`log`], [`index`], [`home`], [`shell`]) touch the outside
//! world.
//! The application layer ([`app`]) holds the operations both front ends run
//! (the command line, [`cli`], and the MCP server, [`mcp`]); it never prints.
//! Other entry points ([`driver`], [`init`], [`doctor`]) stay thin. See
//! docs/ARCHITECTURE.md.

pub mod agent;
pub mod app;
pub mod capture;
pub mod cli;
pub mod config;
pub mod digest;
pub mod distill;
pub mod doctor;
pub mod driver;
pub mod embed;
pub mod env;
pub mod eval;
pub mod git;
pub mod heal;
pub mod home;
pub mod import;
pub mod index;
pub mod init;
pub mod log;
pub mod mcp;
pub mod memory;
pub mod recall;
pub mod shell;
pub mod timespec;
