#!/usr/bin/python3
"""Exports the torch models of configs/models/models.txt (source `torch`) as ONNX, opset 13.

Run with Debian's /usr/bin/python3 after scripts/install-model-deps.sh (python3-torch 1.13,
python3-torchvision 0.14, python3-onnx). No pretrained weights can be downloaded here, so the
weights are random, fixed by torch.manual_seed; LSUV rescaling (each Conv/Linear scaled so that
its output has unit standard deviation on a calibration batch) keeps deep nets from fading to
~1e-10 logits. The int8 models are quantized by eager-mode post-training quantization with the
qnnpack engine (fbgemm does not export) and export as QDQ graphs.

    /usr/bin/python3 scripts/export-torch-models.py [--only NAME,...] [CACHE_DIR]

CACHE_DIR defaults to ${NPUFORGE_MODEL_CACHE:-$HOME/.cache/npuforge/models}. Idempotent: a
stamp (hash of this script, the list's torch lines and the torch version) skips the export when
nothing changed. The bytes may differ across torch versions, so they are not pinned: the model
tests compare npuforge with onnxruntime on the same file instead.
"""
import argparse
import hashlib
import os
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_LIST = os.environ.get("NPUFORGE_MODEL_LIST", os.path.join(ROOT, "configs", "models", "models.txt"))
SEED = 20261123


def torch_entries(path):
    """name -> (input name, shape) for every `torch` line of the model list."""
    entries = {}
    with open(path) as f:
        for line in f:
            cols = line.split()
            if not cols or cols[0].startswith("#") or cols[1] != "torch":
                continue
            first_input = cols[3].split(",")[0].split("|")
            entries[cols[0]] = (first_input[0], tuple(int(d) for d in first_input[2].split("x")))
    return entries


def lsuv(model, batch):
    """Scales every Conv2d/Linear so that its output has unit std on `batch`.

    One forward pass: each layer's hook rescales its weights and returns the rescaled output,
    so the layers after it see exactly what they would after a pass per layer (classic LSUV).
    """
    import torch

    def rescale(layer, _inputs, out):
        std = float(out.std())
        if std <= 0:
            return out
        layer.weight.div_(std)
        if layer.bias is not None:
            layer.bias.div_(std)
        return out / std

    layers = [m for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    hooks = [layer.register_forward_hook(rescale) for layer in layers]
    with torch.no_grad():
        model(batch)
    for h in hooks:
        h.remove()


def tiny_int8_cnn(shape):
    """1x1x28x28 -> 3 Conv+Relu, MaxPool, AveragePool, a residual Add, Gemm; int8 QDQ."""
    import torch
    from torch import nn
    from torch.ao import quantization as tq

    class TinyNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = tq.QuantStub()
            self.conv1 = nn.Conv2d(shape[1], 8, 3, padding=1)
            self.relu1 = nn.ReLU()
            self.pool = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
            self.relu2 = nn.ReLU()
            self.conv3 = nn.Conv2d(16, 16, 3, padding=1)
            self.relu3 = nn.ReLU()
            self.skip = nn.quantized.FloatFunctional()
            self.avg = nn.AvgPool2d(2)
            self.fc = nn.Linear(16 * (shape[2] // 4) * (shape[3] // 4), 10)
            self.dequant = tq.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            x = self.pool(self.relu1(self.conv1(x)))
            y = self.relu2(self.conv2(x))
            y = self.skip.add(self.relu3(self.conv3(y)), y)
            y = torch.flatten(self.avg(y), 1)
            return self.dequant(self.fc(y))

    model = TinyNet().eval()
    calib = torch.rand(16, *shape[1:])
    lsuv(model, calib)
    tq.fuse_modules(model, [["conv1", "relu1"], ["conv2", "relu2"], ["conv3", "relu3"]], inplace=True)
    return quantize(model, calib)


def quantize(model, calib):
    """Eager post-training quantization with the qnnpack engine, calibrated on `calib`."""
    import torch
    from torch.ao import quantization as tq
    torch.backends.quantized.engine = "qnnpack"
    model.qconfig = tq.get_default_qconfig("qnnpack")
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        model(calib)
    with warnings.catch_warnings():
        # mobilenet_v2's unused skip-add observers (blocks without a residual) warn here.
        warnings.filterwarnings("ignore", message="must run observer")
        tq.convert(model, inplace=True)
    return model


def tiny_int8_qop(shape):
    """The same quantized network as tiny_int8_cnn, written with ONNX integer ops (tiny_qop.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tiny_qop
    return tiny_qop.build(tiny_int8_cnn(shape), shape)


def mobilenet_v2_int8(shape):
    import torch
    from torchvision.models.quantization import mobilenet_v2
    model = mobilenet_v2(weights=None, quantize=False).eval()
    calib = torch.randn(8, *shape[1:])
    lsuv(model, calib)
    model.fuse_model()
    return quantize(model, calib)


def squeezenet1_1(shape):
    import torch
    from torchvision.models import squeezenet1_1 as make
    model = make(weights=None).eval()
    lsuv(model, torch.randn(8, *shape[1:]))
    return model


BUILDERS = {"tiny_int8_cnn": tiny_int8_cnn, "tiny_int8_qop": tiny_int8_qop, "mobilenet_v2_int8": mobilenet_v2_int8,
            "squeezenet1_1": squeezenet1_1}


def export(name, input_name, shape, dest):
    import torch
    import onnx
    torch.manual_seed(SEED)
    model = BUILDERS[name](shape)
    part = dest + ".part"
    if isinstance(model, onnx.ModelProto):  # written directly as ONNX (tiny_int8_qop)
        onnx.save(model, part)
        os.replace(part, dest)
        return
    example = torch.randn(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch 1.13 warns about QDQ export details
        torch.onnx.export(model, example, part, opset_version=13, input_names=[input_name],
                          output_names=["output"], do_constant_folding=True)
    onnx.checker.check_model(onnx.load(part))
    os.replace(part, dest)


def stamp_for(script_hash, entries, torch_version):
    h = hashlib.sha256()
    h.update(script_hash.encode())
    h.update(repr(sorted(entries.items())).encode())
    h.update(torch_version.encode())
    return h.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cache", nargs="?", default=os.environ.get(
        "NPUFORGE_MODEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "npuforge", "models")))
    parser.add_argument("--only", default="", help="comma-separated model names")
    args = parser.parse_args()
    try:
        import torch
        import torchvision  # noqa: F401 (checked here for a clear message)
        import onnx  # noqa: F401
    except ImportError as e:
        sys.exit(f"export-torch-models: {e}: run scripts/install-model-deps.sh "
                 f"(python3-torch python3-torchvision python3-onnx) and use /usr/bin/python3")
    torch.set_num_threads(1)  # reductions in LSUV and calibration in one fixed order
    entries = torch_entries(MODEL_LIST)
    names = [n for n in args.only.split(",") if n] or list(entries)
    for n in names:
        if n not in entries or n not in BUILDERS:
            sys.exit(f"export-torch-models: no torch model '{n}' in {MODEL_LIST} or in this script")
    os.makedirs(args.cache, exist_ok=True)
    h = hashlib.sha256()
    for script in (os.path.abspath(__file__), os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_qop.py")):
        with open(script, "rb") as f:
            h.update(f.read())
    script_hash = h.hexdigest()
    for name in names:
        dest = os.path.join(args.cache, name + ".onnx")
        stamp_file = dest + ".stamp"
        stamp = stamp_for(script_hash, {name: entries[name]}, torch.__version__)
        if os.path.exists(dest) and os.path.exists(stamp_file) and open(stamp_file).read().strip() == stamp:
            print(f"export-torch-models: {name}.onnx up to date")
            continue
        start = time.time()
        export(name, entries[name][0], entries[name][1], dest)
        with open(stamp_file, "w") as f:
            f.write(stamp + "\n")
        print(f"export-torch-models: {name}.onnx exported in {time.time() - start:.1f} s "
              f"(torch {torch.__version__}, seed {SEED})")


if __name__ == "__main__":
    main()
