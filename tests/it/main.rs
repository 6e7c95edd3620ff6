//! The one integration test binary: real git repositories in tempdirs, the real
//! `goldfish` binary, hermetic environment (no global git config, fixed dates).

mod common;

mod adversarial;
mod agent;
mod capture;
mod capture_trust;
mod cli;
mod clone;
mod concurrency;
mod digest;
mod discard;
mod doctor;
mod driver;
mod embed;
mod eval;
mod faults;
mod first_hour;
mod git_flow;
mod heal;
mod import;
mod index;
mod init;
mod injection;
mod journal;
mod keyword_index;
mod labelled;
mod layers;
mod mcp;
mod newer;
mod provenance;
mod relevance;
mod review;
mod secrets;
mod semantic;
mod similarity;
mod stale;
mod supersede;
mod supersede_found;
mod sync_history;
mod tidy;
mod trace;
mod trust;
mod vectors;
mod warm;
mod worth_reading;
