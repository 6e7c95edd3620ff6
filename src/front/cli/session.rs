//! A command's workspace and session: its trace on stderr when it ends
//! (`GOLDFISH_TRACE=1`), and a progress bar for long embeddings.

use std::io::IsTerminal;

use super::CliError;
use crate::app::session::Progress;
use crate::app::sync::current_workspace;
use crate::app::{Session, Workspace};

pub(super) fn workspace() -> Result<Workspace, CliError> {
    Ok(current_workspace()?)
}

pub(super) fn session() -> Result<Traced, CliError> {
    Ok(Traced(Session::open()?))
}

/// A command's session; with `GOLDFISH_TRACE=1`, the command's trace (index
/// opens, syncs, embeddings) goes to stderr when it ends.
pub(super) struct Traced(Session);

impl std::ops::Deref for Traced {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.0
    }
}

impl std::ops::DerefMut for Traced {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.0
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        if crate::app::session::trace_wanted() {
            crate::front::stderr::line(&format!("goldfish trace: {}", self.0.trace()));
        }
    }
}

/// A progress bar on stderr when it is a terminal and the work is long
/// enough to watch; hidden otherwise (hooks, pipes, small jobs).
pub(super) struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    /// Progress for `session`'s long embeddings, when `wanted`.
    pub(super) fn install(session: &mut Session, wanted: bool) {
        session.progress = wanted.then(|| Box::new(Bar(None)) as Box<dyn Progress + Send>);
    }
}

impl Progress for Bar {
    fn start(&mut self, total: u64) {
        if total < 64 || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "embedding {bar:30} {pos}/{len} memories ({per_sec}, {eta} left)",
            )
            .expect("a valid progress template"),
        );
        self.0 = Some(bar);
    }

    fn set(&mut self, done: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(done);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}
