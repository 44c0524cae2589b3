#!/usr/bin/python3
"""Writes the seeded inputs of every model of configs/models/models.txt as .npy files.

    /usr/bin/python3 scripts/make-model-inputs.py [--only NAME,...] [--seeds 1,2] [CACHE_DIR]

For model NAME and seed K, input number I is CACHE_DIR/inputs/NAME/seedK_inI.npy: uniform values
in [LO, HI) of the list's dtype and shape, drawn by numpy's legacy RandomState (its stream is
fixed across numpy versions) seeded with (K, crc32(NAME), I). Real sample inputs, where the repo
has one, are written as sample_<what>_inI.npy (see REAL_SAMPLES). Only numpy (and Pillow for the
image samples) is needed, not torch. Rewriting is cheap, so the files are always rewritten.

Models with real samples also get a calibration set, calibration/calib<K>_inI.npy (a sub-directory,
so that nothing takes it for a test input), that is none of the inputs the tests judge on: CALIB_TEXTS drawn in the DejaVu fonts (Debian fonts-dejavu-core) with the
model's own preprocessing, and CALIB_RANDOM seeded random inputs of other seeds. Calibrating such a
model on random inputs alone misjudges the ranges real images produce (ppocr_rec_v4: cosine 0.47
on the text sample, 0.998 with this set; tests/compiler/model_accuracy_test.cc).
"""
import argparse
import os
import sys
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_LIST = os.environ.get("NPUFORGE_MODEL_LIST", os.path.join(ROOT, "configs", "models", "models.txt"))
DATA = os.path.join(ROOT, "tests", "models", "data")


def read_list(path):
    """name -> list of (input name, dtype, shape, lo, hi)."""
    models = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            cols = line.split()
            if not cols or cols[0].startswith("#"):
                continue
            if len(cols) != 5:
                sys.exit(f"{path}:{n}: expected 5 columns (name source sha256 inputs options), got {len(cols)}")
            inputs = []
            for spec in cols[3].split(","):
                parts = spec.split("|")
                if len(parts) != 5:
                    sys.exit(f"{path}:{n}: input '{spec}': expected NAME|DTYPE|SHAPE|LO|HI")
                name, dtype, shape, lo, hi = parts
                inputs.append((name, np.dtype(dtype), tuple(int(d) for d in shape.split("x")), float(lo), float(hi)))
            models[cols[0]] = inputs
    return models


def text_image():
    """tests/models/data/text_upright.png as HxWx3 float32 in [0, 255]: "npuforge 2026" drawn by
    this project in DejaVu Sans, 192x48 (our own image, no third-party licence)."""
    from PIL import Image
    return np.asarray(Image.open(os.path.join(DATA, "text_upright.png")).convert("RGB"), dtype=np.float32)


CALIB_TEXTS = ["Hello world 42", "calibrate me", "OCR line 2027", "the quick fox", "SRAM 512 KiB", "int8 scale"]
CALIB_FONTS = ["DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Bold.ttf",
               "DejaVuSerif-Bold.ttf", "DejaVuSansMono-Bold.ttf"]
CALIB_RANDOM = 4          # seeded random calibration inputs (seeds 1001, 1002, ...)
FONT_DIR = "/usr/share/fonts/truetype/dejavu"


def calib_text_image(k):
    """Calibration text line k as HxWx3 float32 in [0, 255], 192x48 like text_upright.png:
    another string, font, size, offset and paper shade than the test image."""
    from PIL import Image, ImageDraw, ImageFont
    font_path = os.path.join(FONT_DIR, CALIB_FONTS[k])
    if not os.path.exists(font_path):
        sys.exit(f"make-model-inputs: {font_path} is missing (Debian package fonts-dejavu-core; "
                 "scripts/install-model-deps.sh installs it)")
    img = Image.new("RGB", (192, 48), (255, 255, 255) if k % 2 == 0 else (235, 230, 220))
    font = ImageFont.truetype(font_path, [22, 20, 18, 24, 21, 19][k])
    ImageDraw.Draw(img).text((4 + k, 10 + k % 3), CALIB_TEXTS[k], fill=(0, 0, 0) if k % 3 else (40, 40, 90), font=font)
    return np.asarray(img, dtype=np.float32)


def nchw(a):
    return a.transpose(2, 0, 1)[None].astype(np.float32).copy()


def ocr_line(a):
    # PaddleOCR classifier and recogniser preprocessing: x/255, (x-0.5)/0.5.
    return nchw((a / 255.0 - 0.5) / 0.5)


def det_page(line):
    # The line on a white 64x192 page, ImageNet mean/std (the detector's preprocessing).
    page = np.full((64, 192, 3), 255.0, dtype=np.float32)
    page[8:56] = line
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32)
    return nchw((page / 255.0 - mean) / std)


def ppocr_cls_samples():
    # Class 0 = 0 degrees, 1 = 180.
    upright = ocr_line(text_image())
    return {"text0": [upright], "text180": [upright[:, :, ::-1, ::-1].copy()]}


def ppocr_rec_samples():
    # Same preprocessing as the classifier; onnxruntime decodes it as "npuforge 2026" (CTC, with
    # ppocr_keys_v1.txt of the same package).
    return {"text": [ocr_line(text_image())]}


def ppocr_det_samples():
    # One text box in the probability map.
    return {"text": [det_page(text_image())]}


REAL_SAMPLES = {"ppocr_cls": ppocr_cls_samples, "ppocr_rec_v4": ppocr_rec_samples, "ppocr_det_v4": ppocr_det_samples}
# The calibration text images of a model with real samples, preprocessed as its samples are.
CALIB_IMAGES = {"ppocr_cls": ocr_line, "ppocr_rec_v4": ocr_line, "ppocr_det_v4": det_page}


def seeded_input(model, seed, index, dtype, shape, lo, hi):
    rng = np.random.RandomState([seed, zlib.crc32(model.encode()), index])
    if np.issubdtype(dtype, np.integer):
        return rng.randint(int(lo), int(hi), size=shape).astype(dtype)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cache", nargs="?", default=os.environ.get(
        "NPUFORGE_MODEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "npuforge", "models")))
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--seeds", default="1,2", help="comma-separated seeds")
    args = parser.parse_args()
    models = read_list(MODEL_LIST)
    names = [n for n in args.only.split(",") if n] or list(models)
    seeds = [int(s) for s in args.seeds.split(",") if s]
    for name in names:
        if name not in models:
            sys.exit(f"make-model-inputs: no model '{name}' in {MODEL_LIST}")
        out = os.path.join(args.cache, "inputs", name)
        os.makedirs(out, exist_ok=True)
        written = 0
        for seed in seeds:
            for i, (_, dtype, shape, lo, hi) in enumerate(models[name]):
                np.save(os.path.join(out, f"seed{seed}_in{i}.npy"), seeded_input(name, seed, i, dtype, shape, lo, hi))
                written += 1
        for what, arrays in REAL_SAMPLES.get(name, lambda: {})().items():
            for i, a in enumerate(arrays):
                np.save(os.path.join(out, f"sample_{what}_in{i}.npy"), a)
                written += 1
        if name in CALIB_IMAGES:
            calib = os.path.join(out, "calibration")
            os.makedirs(calib, exist_ok=True)
            k = 0
            for t in range(len(CALIB_TEXTS)):
                np.save(os.path.join(calib, f"calib{k}_in0.npy"), CALIB_IMAGES[name](calib_text_image(t)))
                k += 1
                written += 1
            for seed in range(1001, 1001 + CALIB_RANDOM):
                for i, (_, dtype, shape, lo, hi) in enumerate(models[name]):
                    np.save(os.path.join(calib, f"calib{k}_in{i}.npy"), seeded_input(name, seed, i, dtype, shape, lo, hi))
                    written += 1
                k += 1
        print(f"make-model-inputs: {name}: {written} file(s) in {out}")


if __name__ == "__main__":
    main()
