"""The tiny int8 CNN as an integer-only ONNX graph (used by export-torch-models.py).

torch exports quantized models as QDQ graphs, where every Conv/Gemm still runs in float between
DequantizeLinear and QuantizeLinear. This writes the same quantized network (the same int8
weights, int32 biases, scales and zero points, taken from the converted torch modules) with the
ONNX integer operators instead, and a uint8 output, so that npuforge and onnxruntime must agree
exactly:

  x -> QuantizeLinear -> QLinearConv(+ReLU by zero point 0) -> MaxPool (uint8)
    -> QLinearConv(+ReLU) -> c2
    -> ConvInteger(c2, uint8 weights with zero point 128) + int32 bias -> Cast -> Mul(scale)
       -> Relu -> QuantizeLinear -> c3
    -> DequantizeLinear(c3), DequantizeLinear(c2) -> Add -> QuantizeLinear (the residual)
    -> the 2x2 average as an integer sum: ConvInteger(depthwise, weights 1) -> Cast -> Mul(scale/4)
       -> QuantizeLinear -> Flatten (uint8)
    -> MatMulInteger + int32 bias -> Cast -> Mul(scale) -> QuantizeLinear -> y (uint8)

Every float step is one IEEE operation on exactly representable integers or a fixed scale, so
its result does not depend on summation order. (A float AveragePool between Dequantize and
Quantize would not do: averages of integers land exactly on rounding ties, and which side a
float sum falls on depends on the order of its additions.) Biases are quantized as torch's QDQ export does:
round(bias / (x_scale * w_scale)) in int32.
"""
import numpy as np


def _qparams(module):
    return float(module.scale), int(module.zero_point)


def _weight(module):
    """(int8 weights, scale) of a quantized Conv2d/Linear with per-tensor weights."""
    import torch
    w = module.weight()
    if w.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        raise ValueError(f"{module}: per-tensor weights expected, got {w.qscheme()}")
    if int(w.q_zero_point()) != 0:
        raise ValueError(f"{module}: symmetric int8 weights expected")
    # 7-bit weights (onnxruntime's "reduce_range"): on x86 without VNNI, onnxruntime's u8 x s8
    # kernels add pairs of products in saturating int16 (vpmaddubsw), so 255 * 127 * 2 overflows
    # and its QLinearConv/MatMulInteger results depend on the machine. With |w| <= 63 no pair can.
    q = w.int_repr().numpy().astype(np.int32)
    q7 = np.clip(np.round(q / 2.0), -63, 63).astype(np.int8)
    return q7, float(w.q_scale()) * 2.0


def _bias(module, x_scale, w_scale):
    b = module.bias()
    b = np.zeros(module.weight().shape[0], np.float32) if b is None else b.detach().numpy()
    return np.round(b.astype(np.float64) / (np.float64(np.float32(x_scale)) * np.float32(w_scale))).astype(np.int32)


class _Graph:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, name, value):
        from onnx import numpy_helper
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def scalar(self, name, value, dtype):
        return self.const(name, np.array(value, dtype=dtype))

    def node(self, op, inputs, name, domain="", **attrs):
        from onnx import helper
        self.nodes.append(helper.make_node(op, inputs, [name], name=name, domain=domain, **attrs))
        return name


def build(qmodel, shape):
    """The onnx.ModelProto of the converted torch TinyNet `qmodel` for input `shape`."""
    import onnx
    from onnx import TensorProto, helper
    g = _Graph()
    s_in, z_in = _qparams(qmodel.quant)
    x = g.node("QuantizeLinear", ["input", g.scalar("s_in", s_in, np.float32), g.scalar("z_in", z_in, np.uint8)], "xq")

    def qlinear_conv(prefix, xq, xs, xz, conv):
        w, ws = _weight(conv)
        ys, yz = _qparams(conv)
        if yz != 0:
            raise ValueError(f"{prefix}: ReLU folded into QLinearConv needs output zero point 0, got {yz}")
        inputs = [xq, g.scalar(prefix + "_xs", xs, np.float32), g.scalar(prefix + "_xz", xz, np.uint8),
                  g.const(prefix + "_w", w), g.scalar(prefix + "_ws", ws, np.float32),
                  g.scalar(prefix + "_wz", 0, np.int8), g.scalar(prefix + "_ys", ys, np.float32),
                  g.scalar(prefix + "_yz", yz, np.uint8), g.const(prefix + "_b", _bias(conv, xs, ws))]
        return g.node("QLinearConv", inputs, prefix, pads=[1, 1, 1, 1], kernel_shape=list(w.shape[2:])), ys, yz

    c1, s1, z1 = qlinear_conv("conv1", x, s_in, z_in, qmodel.conv1)
    p = g.node("MaxPool", [c1], "pool", kernel_shape=[2, 2], strides=[2, 2])
    c2, s2, z2 = qlinear_conv("conv2", p, s1, z1, qmodel.conv2)

    # conv3 through ConvInteger with uint8 weights (zero point 128): the integer path onnxruntime has.
    w3, ws3 = _weight(qmodel.conv3)
    s3, z3 = _qparams(qmodel.conv3)
    acc3 = g.node("ConvInteger", [c2, g.const("conv3_w", (w3.astype(np.int16) + 128).astype(np.uint8)),
                                  g.scalar("conv3_xz", z2, np.uint8), g.scalar("conv3_wz", 128, np.uint8)],
                  "conv3_acc", pads=[1, 1, 1, 1], kernel_shape=list(w3.shape[2:]))
    acc3 = g.node("Add", [acc3, g.const("conv3_b", _bias(qmodel.conv3, s2, ws3).reshape(1, -1, 1, 1))], "conv3_acc_b")
    y3 = g.node("Mul", [g.node("Cast", [acc3], "conv3_f", to=TensorProto.FLOAT),
                        g.scalar("conv3_scale", np.float32(s2) * np.float32(ws3), np.float32)], "conv3_y")
    c3 = g.node("QuantizeLinear", [g.node("Relu", [y3], "conv3_relu"), g.scalar("conv3_ys", s3, np.float32),
                                   g.scalar("conv3_yz", z3, np.uint8)], "conv3")

    def dq(name, xq, s, z):
        return g.node("DequantizeLinear", [xq, g.scalar(name + "_s", s, np.float32), g.scalar(name + "_z", z, np.uint8)], name)

    s_add, z_add = _qparams(qmodel.skip)
    added = g.node("Add", [dq("c3_f", c3, s3, z3), dq("c2_f", c2, s2, z2)], "add_f")
    a = g.node("QuantizeLinear", [added, g.scalar("add_s", s_add, np.float32), g.scalar("add_z", z_add, np.uint8)], "add")
    channels = w3.shape[0]
    total = g.node("ConvInteger", [a, g.const("avg_ones", np.ones((channels, 1, 2, 2), np.uint8)),
                                   g.scalar("avg_xz", z_add, np.uint8)],
                   "avg_sum", kernel_shape=[2, 2], strides=[2, 2], group=channels)
    avg = g.node("Mul", [g.node("Cast", [total], "avg_sum_f", to=TensorProto.FLOAT),
                         g.scalar("avg_scale", np.float32(s_add) * np.float32(0.25), np.float32)], "avg_f")
    v = g.node("QuantizeLinear", [avg, g.scalar("avg_s", s_add, np.float32), g.scalar("avg_z", z_add, np.uint8)], "avg")
    f = g.node("Flatten", [v], "flat", axis=1)

    wfc, wsfc = _weight(qmodel.fc)
    sfc, zfc = _qparams(qmodel.fc)
    acc = g.node("MatMulInteger", [f, g.const("fc_w", np.ascontiguousarray(wfc.T)),
                                   g.scalar("fc_xz", z_add, np.uint8), g.scalar("fc_wz", 0, np.int8)], "fc_acc")
    acc = g.node("Add", [acc, g.const("fc_b", _bias(qmodel.fc, s_add, wsfc))], "fc_acc_b")
    y = g.node("Mul", [g.node("Cast", [acc], "fc_f", to=TensorProto.FLOAT),
                       g.scalar("fc_scale", np.float32(s_add) * np.float32(wsfc), np.float32)], "fc_y")
    g.node("QuantizeLinear", [y, g.scalar("fc_ys", sfc, np.float32), g.scalar("fc_yz", zfc, np.uint8)], "output")

    graph = helper.make_graph(g.nodes, "tiny_int8_qop",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("output", TensorProto.UINT8, [shape[0], 10])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="npuforge")
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    return model
