//! The ONNX embedder: `ort` (ONNX Runtime loaded from a shared library at
//! run time) + `tokenizers`, the manifest's pooling (mean over the attention mask, or `[CLS]`), L2 norm.

use std::path::Path;
use std::sync::OnceLock;

use ort::session::builder::GraphOptimizationLevel;
use ort::session::{RunOptions, Session};
use ort::value::TensorRef;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::manifest::Pooling;
use super::{EmbedError, Embedder, InstalledModel, TextKind, normalize};

/// The ONNX Runtime environment; one per process, from the first library loaded.
static ENVIRONMENT: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();

fn environment(library: &Path) -> Result<&'static ort::environment::Environment, EmbedError> {
    ENVIRONMENT
        .get_or_init(|| {
            // ONNX Runtime 1.31 on Linux writes a telemetry device id and event
            // store under ~/.cache/Microsoft when an environment is created;
            // only this variable, set before that, prevents it
            // (`with_telemetry(false)` comes too late).
            // SAFETY: set once, before ONNX Runtime is loaded; goldfish's own
            // threads do not read the environment through libc meanwhile.
            unsafe { std::env::set_var("ORT_DISABLE_TELEMETRY", "1") };
            ort::init_from(library)
                .map_err(|err| err.to_string())?
                .with_name("goldfish")
                .with_telemetry(false)
                .build()
                .map_err(|err| err.to_string())
        })
        .as_ref()
        .map_err(|message| EmbedError::Runtime {
            path: library.to_owned(),
            message: message.clone(),
        })
}

/// A session on the model.
///
/// Measured here (`cargo bench --bench embed`): creating it takes ~105 ms with
/// two threads. Caching ONNX Runtime's optimised graph beside the model (as
/// protobuf or in the ORT format) did not make that shorter, and turning
/// weight prepacking off saved nothing at load but cost 30% of throughput,
/// so neither is done.
fn open_session(
    environment: &ort::environment::Environment,
    model: &InstalledModel,
    threads: usize,
) -> Result<Session, ort::Error> {
    Session::builder(environment)?
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .map_err(|err| -> ort::Error { err.into() })?
        .with_intra_threads(threads.max(1))
        .map_err(|err| -> ort::Error { err.into() })?
        .with_inter_threads(1)
        .map_err(|err| -> ort::Error { err.into() })?
        .commit_from_file(model.dir.join("model.onnx"))
}

pub struct OnnxEmbedder {
    session: Session,
    tokenizer: Tokenizer,
    model_id: String,
    dims: usize,
    query_prefix: String,
    document_prefix: String,
    /// Texts per model run (the manifest's `batch`).
    batch: usize,
    pooling: Pooling,
    /// Set by [`Embedder::keep_memory_low`]: each run shrinks ONNX
    /// Runtime's CPU arena back when it ends.
    shrinking: Option<RunOptions>,
}

impl OnnxEmbedder {
    /// Loads `model` with `threads` intra-op threads.
    pub fn load(model: &InstalledModel, threads: usize) -> Result<OnnxEmbedder, EmbedError> {
        let environment = environment(&model.runtime)?;
        let model_path = model.dir.join("model.onnx");
        let inference = |err: ort::Error| EmbedError::Runtime {
            path: model_path.clone(),
            message: err.to_string(),
        };
        let session = open_session(environment, model, threads).map_err(inference)?;

        let tokenizer_path = model.dir.join("tokenizer.json");
        let tokenizer_error = |message: String| EmbedError::Tokenizer {
            path: tokenizer_path.clone(),
            message,
        };
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|err| tokenizer_error(err.to_string()))?;
        // tokenizer.json pads and truncates to a fixed 128: pad to the longest
        // text of each batch instead, and truncate where the manifest says.
        let padding = tokenizer.get_padding().cloned().unwrap_or_default();
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_to_multiple_of: None,
            ..padding
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: model.manifest.max_length,
                ..TruncationParams::default()
            }))
            .map_err(|err| tokenizer_error(err.to_string()))?;
        Ok(OnnxEmbedder {
            session,
            tokenizer,
            model_id: model.model_id(),
            dims: model.manifest.dims,
            query_prefix: model.manifest.query_prefix.clone(),
            document_prefix: model.manifest.document_prefix.clone(),
            batch: model.manifest.batch,
            pooling: model.manifest.pooling(),
            shrinking: None,
        })
    }

    fn run_batch(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|err| EmbedError::Inference(format!("tokenizing: {err}")))?;
        let batch = encodings.len();
        let seq = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(batch * seq);
        let mut mask = Vec::with_capacity(batch * seq);
        let mut types = Vec::with_capacity(batch * seq);
        for encoding in &encodings {
            ids.extend(encoding.get_ids().iter().map(|&x| i64::from(x)));
            mask.extend(encoding.get_attention_mask().iter().map(|&x| i64::from(x)));
            types.extend(encoding.get_type_ids().iter().map(|&x| i64::from(x)));
        }
        let shape = [batch, seq];
        let inference = |err: ort::Error| EmbedError::Inference(err.to_string());
        let inputs = ort::inputs![
            "input_ids" => TensorRef::from_array_view((shape, ids.as_slice())).map_err(inference)?,
            "attention_mask" => TensorRef::from_array_view((shape, mask.as_slice())).map_err(inference)?,
            "token_type_ids" => TensorRef::from_array_view((shape, types.as_slice())).map_err(inference)?,
        ];
        let outputs = match &self.shrinking {
            Some(options) => self.session.run_with_options(inputs, options),
            None => self.session.run(inputs),
        }
        .map_err(inference)?;
        let (out_shape, hidden) = outputs["last_hidden_state"]
            .try_extract_tensor::<f32>()
            .map_err(inference)?;
        let dims = self.dims;
        if out_shape.len() != 3 || out_shape[2] as usize != dims {
            return Err(EmbedError::Inference(format!(
                "last_hidden_state has shape {out_shape:?}, expected [{batch}, {seq}, {dims}]"
            )));
        }
        Ok(pool(self.pooling, hidden, &mask, [batch, seq, dims]))
    }
}

/// One normalised vector per text from the model's token vectors
/// (`hidden`, `[batch, seq, dims]` flattened) and the attention `mask`
/// (`[batch, seq]`).
fn pool(
    pooling: Pooling,
    hidden: &[f32],
    mask: &[i64],
    [batch, seq, dims]: [usize; 3],
) -> Vec<Vec<f32>> {
    let row = |b: usize, t: usize| &hidden[(b * seq + t) * dims..(b * seq + t + 1) * dims];
    let mut vectors = Vec::with_capacity(batch);
    for b in 0..batch {
        let mut pooled = vec![0f32; dims];
        match pooling {
            Pooling::Cls => {
                if seq > 0 {
                    pooled.copy_from_slice(row(b, 0));
                }
            }
            Pooling::Mean => {
                let mut count = 0f32;
                for t in (0..seq).filter(|&t| mask[b * seq + t] != 0) {
                    count += 1.0;
                    for (sum, x) in pooled.iter_mut().zip(row(b, t)) {
                        *sum += x;
                    }
                }
                if count > 0.0 {
                    for x in &mut pooled {
                        *x /= count;
                    }
                }
            }
        }
        normalize(&mut pooled);
        vectors.push(pooled);
    }
    vectors
}

impl Embedder for OnnxEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dims(&self) -> usize {
        self.dims
    }

    /// ONNX Runtime's arena keeps what the largest batch needed for the
    /// session's life (0.5–0.7 GB in the warm process after a long log,
    /// issue 59); shrinking it after each run gives that back. Not the
    /// default: a sync's runs would allocate it again each time.
    fn keep_memory_low(&mut self) {
        if self.shrinking.is_none()
            && let Ok(mut options) = RunOptions::new()
            && options
                .set("memory.enable_memory_arena_shrinkage", "cpu:0")
                .is_ok()
        {
            self.shrinking = Some(options);
        }
    }

    fn embed(&mut self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefix = match kind {
            TextKind::Query => self.query_prefix.clone(),
            TextKind::Document => self.document_prefix.clone(),
        };
        // Batches of similar length waste less work on padding.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut vectors = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(self.batch) {
            let batch: Vec<String> = chunk
                .iter()
                .map(|&i| format!("{prefix}{}", texts[i]))
                .collect();
            for (&i, vector) in chunk.iter().zip(self.run_batch(&batch)?) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }
}

/// Counts tokens with a model's tokenizer (no padding, no truncation): how
/// digests measure their budget.
#[derive(Clone)]
pub struct ModelTokenizer(Counting);

#[derive(Clone)]
enum Counting {
    Tokenizer(Box<Tokenizer>),
    /// The fake model's tokens are its words.
    Words,
}

impl ModelTokenizer {
    pub fn load(model: &InstalledModel) -> Result<ModelTokenizer, EmbedError> {
        if model.manifest.is_fake() {
            return Ok(ModelTokenizer(Counting::Words));
        }
        let path = model.dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&path).map_err(|err| EmbedError::Tokenizer {
            path: path.clone(),
            message: err.to_string(),
        })?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|err| EmbedError::Tokenizer {
                path,
                message: err.to_string(),
            })?;
        Ok(ModelTokenizer(Counting::Tokenizer(Box::new(tokenizer))))
    }

    /// The tokens of `text` (about four characters a token if it cannot be
    /// encoded).
    pub fn count_tokens(&self, text: &str) -> usize {
        match &self.0 {
            Counting::Tokenizer(tokenizer) => tokenizer.encode(text, false).map_or_else(
                |_| text.chars().count().div_ceil(4),
                |encoding| encoding.get_ids().len(),
            ),
            Counting::Words => super::fake::words(text).count(),
        }
    }
}

/// The model's own tokenizer counts a digest's tokens exactly.
impl crate::domain::digest::TokenCounter for ModelTokenizer {
    fn count(&mut self, text: &str) -> usize {
        self.count_tokens(text)
    }
}

/// Gives the memory the allocator keeps free back to the system (glibc's
/// `malloc_trim`): for a process that stays, after a batch.
pub fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free memory; it has no
    // preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two texts of three tokens, 2 dimensions; the second text's last
    /// token is padding.
    const HIDDEN: [f32; 12] = [3.0, 4.0, 1.0, 0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 4.0, 9.0, 9.0];
    const MASK: [i64; 6] = [1, 1, 1, 1, 1, 0];

    #[test]
    fn mean_pooling_averages_the_tokens_the_mask_keeps() {
        let vectors = pool(Pooling::Mean, &HIDDEN, &MASK, [2, 3, 2]);
        // (3+1+2, 4+0+0)/3 = (2, 4/3), normalised.
        let norm = (4.0f32 + 16.0 / 9.0).sqrt();
        assert!((vectors[0][0] - 2.0 / norm).abs() < 1e-6);
        assert!((vectors[0][1] - 4.0 / 3.0 / norm).abs() < 1e-6);
        // The padding (9, 9) is left out: (0+0, 2+4)/2 = (0, 3).
        assert!(close(&vectors[1], &[0.0, 1.0]));
    }

    #[test]
    fn cls_pooling_takes_the_first_token() {
        let vectors = pool(Pooling::Cls, &HIDDEN, &MASK, [2, 3, 2]);
        assert!(close(&vectors[0], &[0.6, 0.8]));
        assert!(close(&vectors[1], &[0.0, 1.0]));
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }
}
