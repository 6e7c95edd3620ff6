//! The capture model run in process: a GGUF model with candle (llama,
//! qwen2 and qwen3 architectures; the tokenizer is built from the GGUF's
//! own vocabulary). Only in a build with the `capture-model` feature: candle
//! and its kernels are 35 crates the default build does without.

use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use candle_transformers::models::{quantized_llama, quantized_qwen2, quantized_qwen3};
use tokenizers::models::bpe::{BPE, Vocab};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::{AddedToken, Tokenizer};

use crate::domain::capture::{Generator, RuntimeError};

/// Tokens a model may write per event.
pub const MAX_NEW_TOKENS: usize = 96;

/// Tokens of a prompt at most (the event is clipped before).
pub const MAX_PROMPT_TOKENS: usize = 1536;

enum Weights {
    Llama(quantized_llama::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
    Qwen3(quantized_qwen3::ModelWeights),
}

/// A GGUF model in process, on the CPU, greedy decoding.
pub struct GgufModel {
    id: String,
    path: PathBuf,
    weights: Weights,
    tokenizer: Tokenizer,
    end: Vec<u32>,
}

fn inference(err: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::Inference(err.to_string())
}

impl GgufModel {
    /// Loads `path`. Small models are dequantized to f32 at load (candle's
    /// quantized kernels are several times slower on a long prompt): set
    /// `CANDLE_DEQUANTIZE_ALL=1` in the process that loads them.
    pub fn load(path: &Path) -> Result<GgufModel, RuntimeError> {
        let model_error = |message: String| RuntimeError::Model {
            path: path.to_owned(),
            message,
        };
        let mut file = std::fs::File::open(path).map_err(|e| model_error(e.to_string()))?;
        let content =
            gguf_file::Content::read(&mut file).map_err(|e| model_error(e.to_string()))?;
        let text = |key: &str| -> Option<String> {
            content
                .metadata
                .get(key)
                .and_then(|v| v.to_string().ok())
                .cloned()
        };
        let architecture = text("general.architecture").unwrap_or_default();
        let name = text("general.name")
            .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let tokenizer = tokenizer_from_gguf(&content).map_err(model_error)?;
        let end: Vec<u32> = ["<|im_end|>", "<|endoftext|>"]
            .iter()
            .filter_map(|t| tokenizer.token_to_id(t))
            .collect();
        let device = Device::Cpu;
        let weights = match architecture.as_str() {
            "llama" => Weights::Llama(
                quantized_llama::ModelWeights::from_gguf(content, &mut file, &device)
                    .map_err(|e| model_error(e.to_string()))?,
            ),
            "qwen2" => Weights::Qwen2(
                quantized_qwen2::ModelWeights::from_gguf(content, &mut file, &device)
                    .map_err(|e| model_error(e.to_string()))?,
            ),
            "qwen3" => Weights::Qwen3(
                quantized_qwen3::ModelWeights::from_gguf(content, &mut file, &device)
                    .map_err(|e| model_error(e.to_string()))?,
            ),
            other => {
                return Err(model_error(format!(
                    "architecture `{other}` is not supported (llama, qwen2 and qwen3 are)"
                )));
            }
        };
        let id = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect::<String>()
            .to_lowercase();
        Ok(GgufModel {
            id,
            path: path.to_owned(),
            weights,
            tokenizer,
            end,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn forward(&mut self, input: &Tensor, at: usize) -> candle_core::Result<Tensor> {
        match &mut self.weights {
            Weights::Llama(m) => m.forward(input, at),
            Weights::Qwen2(m) => m.forward(input, at),
            Weights::Qwen3(m) => m.forward(input, at),
        }
    }

    fn reset(&mut self) {
        if let Weights::Qwen3(m) = &mut self.weights {
            m.clear_kv_cache();
        }
    }
}

impl Generator for GgufModel {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn generate(&mut self, prompt: &str) -> Result<String, RuntimeError> {
        self.reset();
        let encoding = self.tokenizer.encode(prompt, false).map_err(inference)?;
        let mut ids = encoding.get_ids().to_vec();
        if ids.len() > MAX_PROMPT_TOKENS {
            return Err(RuntimeError::Inference(format!(
                "the prompt has {} tokens (at most {MAX_PROMPT_TOKENS})",
                ids.len()
            )));
        }
        let prompt_len = ids.len();
        let mut sampler = LogitsProcessor::from_sampling(0, Sampling::ArgMax);
        let mut input = Tensor::new(ids.as_slice(), &Device::Cpu).map_err(inference)?;
        let mut at = 0;
        for _ in 0..MAX_NEW_TOKENS {
            let logits = self
                .forward(&input.unsqueeze(0).map_err(inference)?, at)
                .and_then(|l| l.squeeze(0))
                .and_then(|l| l.to_dtype(candle_core::DType::F32))
                .map_err(inference)?;
            let logits = if logits.rank() == 2 {
                logits
                    .get(logits.dim(0).map_err(inference)? - 1)
                    .map_err(inference)?
            } else {
                logits
            };
            // A light repeat penalty keeps a small model out of loops.
            let recent = &ids[ids.len().saturating_sub(64)..];
            let logits = candle_transformers::utils::apply_repeat_penalty(&logits, 1.1, recent)
                .map_err(inference)?;
            let next = sampler.sample(&logits).map_err(inference)?;
            at = ids.len();
            if self.end.contains(&next) {
                break;
            }
            ids.push(next);
            let answer = self
                .tokenizer
                .decode(&ids[prompt_len..], false)
                .map_err(inference)?;
            if crate::domain::capture::prompt::past_any_call(&answer) {
                break;
            }
            input = Tensor::new(&[next], &Device::Cpu).map_err(inference)?;
        }
        self.tokenizer
            .decode(&ids[prompt_len..], false)
            .map_err(inference)
    }
}

/// The tokenizer a GGUF describes (`tokenizer.ggml.model = gpt2`: byte-level
/// BPE with its vocabulary and merges; control tokens kept whole).
fn tokenizer_from_gguf(content: &gguf_file::Content) -> Result<Tokenizer, String> {
    let strings = |key: &str| -> Result<Vec<String>, String> {
        let value = content
            .metadata
            .get(key)
            .ok_or_else(|| format!("no `{key}` in the GGUF"))?;
        let items = value.to_vec().map_err(|e| format!("{key}: {e}"))?;
        items
            .iter()
            .map(|v| v.to_string().cloned().map_err(|e| format!("{key}: {e}")))
            .collect()
    };
    let model = content
        .metadata
        .get("tokenizer.ggml.model")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_default();
    if model != "gpt2" {
        return Err(format!(
            "tokenizer `{model}` is not supported (byte-level BPE, `gpt2`, is)"
        ));
    }
    let tokens = strings("tokenizer.ggml.tokens")?;
    let merges = strings("tokenizer.ggml.merges")?;
    let types: Vec<i32> = match content.metadata.get("tokenizer.ggml.token_type") {
        Some(value) => value
            .to_vec()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|v| v.to_i32().unwrap_or(1))
            .collect(),
        None => Vec::new(),
    };
    let vocab: Vocab = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let merges: Vec<(String, String)> = merges
        .iter()
        .filter_map(|m| m.split_once(' '))
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| e.to_string())?;
    let mut tokenizer = Tokenizer::new(bpe);
    tokenizer.with_pre_tokenizer(Some(Sequence::new(vec![
        Digits::new(true).into(),
        ByteLevel::new(false, true, true).into(),
    ])));
    tokenizer.with_decoder(Some(ByteLevel::default()));
    // Control (3) and user-defined (4) tokens: `<|im_start|>` and friends.
    let specials: Vec<AddedToken> = tokens
        .iter()
        .zip(&types)
        .filter(|(_, kind)| matches!(**kind, 3 | 4))
        .map(|(token, _)| AddedToken::from(token.clone(), true))
        .collect();
    tokenizer
        .add_special_tokens(specials)
        .map_err(|e| e.to_string())?;
    Ok(tokenizer)
}
