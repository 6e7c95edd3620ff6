#!/usr/bin/env python3
"""Write the int8 variant of the embedding model.

Usage: quantize_int8.py IN_FILE OUT_FILE

IN_FILE is the fp32 `model.onnx` of build_minilm_onnx.py. OUT_FILE receives
the same graph with its weights quantised to int8 per output channel and its
activations quantised at run time (ONNX Runtime's dynamic quantisation:
MatMulInteger / DynamicQuantizeLinear), after ONNX Runtime's pre-processing
(shape inference and graph clean-up, without symbolic shapes, which would
need sympy). Inputs and output keep their names, types and shapes.

Measured on a 2-core AVX-512 VNNI machine (docs/BENCHMARKS.md, "int8
model"): about twice the texts per second and a fifth of the session start of
the fp32 model, a quarter of its size, cosine to the fp32 vectors 0.994 on
average over LongMemEval turns.

The output is deterministic for a given input and onnxruntime version (both
pinned), so install.sh pins its sha256, which is printed on stdout.
"""

import hashlib
import sys
import tempfile
from pathlib import Path

from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.shape_inference import quant_pre_process


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as scratch:
        prepared = Path(scratch) / "prepared.onnx"
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        quantize_dynamic(str(prepared), str(out), weight_type=QuantType.QInt8, per_channel=True)
    print(hashlib.sha256(out.read_bytes()).hexdigest())


if __name__ == "__main__":
    main()
