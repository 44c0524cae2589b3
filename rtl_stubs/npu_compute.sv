// Compute unit: an int8 GEMM datapath (an output-stationary ROWS x COLS MAC array with int32
// accumulation, bias, per-column requant and ReLU) and an element-wise unit of LANES lanes.
// Written from the ISA's text (isa/npu_isa.yaml, gemm and eltwise docs), not from the C++
// simulator, so the golden compare checks an independent implementation.
//
// GEMM, one ROWS x COLS output tile: on each cycle with mac_en, a_col holds a[m0+r][kk] for
// the tile's rows and b_row holds b[kk][n0+c] for its columns; every cell does
// acc[r][c] = (mac_first ? bias[c] : acc[r][c]) + a * b (int8 x int8, int32 wrap-around).
// A cycle with gemm_out_req registers requant_c(acc[r][c]) into gemm_out (cell r*COLS+c at
// bits [8*(r*COLS+c) +: 8]) and raises gemm_valid for the next cycle. It reads the
// accumulators before the edge, so it may share its cycle with the next tile's mac_first.
//
// ELTWISE: a cycle with elt_en registers LANES results into elt_out and raises elt_valid:
// add requant(a + b), mul requant(a * b) (elt_scale/elt_shift, no relu), relu max(a, 0),
// clip clamp(a, lo, max(lo, hi)). elt_op carries the ISA's code of the op: the package
// generated from isa/npu_isa.yaml (npu_isa_pkg) names each one (ELTWISE_OP_ADD, ...).
//
// requant(x) = clamp((x * scale + round) >> shift, -128, 127), computed exactly in 66 bits,
// round = 1 << (shift - 1) when shift > 0 else 0, >> arithmetic; then max(0, .) with relu.
//
// PLANT_* parameters plant one bug each for the checkers' own tests (0 = correct RTL):
//   PLANT_MAC_SIGN      the MAC zero-extends b instead of sign-extending it
//   PLANT_NO_SATURATION requant keeps the low 8 bits instead of clamping
//   PLANT_REQUANT_ROUND requant truncates (round = 0)
module npu_compute
  import npu_isa_pkg::*;
#(
  parameter int unsigned ROWS = 16,
  parameter int unsigned COLS = 16,
  parameter int unsigned LANES = 32,
  parameter int unsigned PLANT_MAC_SIGN = 0,
  parameter int unsigned PLANT_NO_SATURATION = 0,
  parameter int unsigned PLANT_REQUANT_ROUND = 0
) (
  input  logic                       clk,
  input  logic                       rst_n,
  // GEMM
  input  logic                       mac_en,
  input  logic                       mac_first,
  input  logic [8*ROWS-1:0]          a_col,
  input  logic [8*COLS-1:0]          b_row,
  input  logic [32*COLS-1:0]         bias,
  input  logic [32*COLS-1:0]         scale,   // per column, unsigned
  input  logic [6*COLS-1:0]          shift,   // per column, 0..63
  input  logic                       relu,
  input  logic                       gemm_out_req,
  output logic                       gemm_valid,
  output logic [8*ROWS*COLS-1:0]     gemm_out,
  // ELTWISE
  input  logic                       elt_en,
  input  logic [ELTWISE_OP_WIDTH-1:0] elt_op,  // an ELTWISE_OP_* code
  input  logic [8*LANES-1:0]         elt_a,
  input  logic [8*LANES-1:0]         elt_b,
  input  logic [31:0]                elt_scale,
  input  logic [5:0]                 elt_shift,
  input  logic [7:0]                 elt_lo,
  input  logic [7:0]                 elt_hi,
  output logic                       elt_valid,
  output logic [8*LANES-1:0]         elt_out
);
  function automatic logic [7:0] requant(input logic signed [31:0] x, input logic [31:0] sc,
                                         input logic [5:0] sh, input logic do_relu);
    logic signed [65:0] prod;
    logic signed [65:0] rnd;
    logic signed [65:0] y;
    logic signed [7:0] q;
    prod = 66'(x) * $signed({34'b0, sc});
    rnd = (sh == 6'd0 || PLANT_REQUANT_ROUND != 0) ? 66'sd0 : 66'sd1 <<< (sh - 6'd1);
    y = (prod + rnd) >>> sh;
    if (PLANT_NO_SATURATION != 0) q = y[7:0];
    else if (y > 66'sd127) q = 8'sd127;
    else if (y < -66'sd128) q = -8'sd128;
    else q = y[7:0];
    if (do_relu && q < 8'sd0) q = 8'sd0;
    return q;
  endfunction

  function automatic logic signed [31:0] mul8(input logic [7:0] a, input logic [7:0] b);
    logic signed [31:0] sa;
    logic signed [31:0] sb;
    sa = 32'(signed'(a));
    sb = PLANT_MAC_SIGN != 0 ? $signed({24'b0, b}) : 32'(signed'(b));
    return sa * sb;
  endfunction

  logic [31:0] acc [ROWS][COLS];

  always_ff @(posedge clk) begin
    if (mac_en) begin
      for (int r = 0; r < int'(ROWS); r++) begin
        for (int c = 0; c < int'(COLS); c++) begin
          acc[r][c] <= (mac_first ? bias[32*c +: 32] : acc[r][c]) + mul8(a_col[8*r +: 8], b_row[8*c +: 8]);
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      gemm_valid <= 1'b0;
      gemm_out <= '0;
    end else begin
      gemm_valid <= gemm_out_req;
      if (gemm_out_req) begin
        for (int r = 0; r < int'(ROWS); r++) begin
          for (int c = 0; c < int'(COLS); c++) begin
            gemm_out[8*(r*int'(COLS)+c) +: 8] <= requant(acc[r][c], scale[32*c +: 32], shift[6*c +: 6], relu);
          end
        end
      end
    end
  end

  function automatic logic [7:0] eltwise(input logic [7:0] a, input logic [7:0] b);
    logic signed [7:0] sa;
    logic signed [7:0] sb;
    sa = signed'(a);
    sb = signed'(b);
    case (elt_op)
      ELTWISE_OP_ADD: return requant(32'(sa) + 32'(sb), elt_scale, elt_shift, 1'b0);
      ELTWISE_OP_MUL: return requant(32'(sa) * 32'(sb), elt_scale, elt_shift, 1'b0);
      ELTWISE_OP_RELU: return sa < 8'sd0 ? 8'd0 : a;
      ELTWISE_OP_CLIP: begin
        if (sa < signed'(elt_lo)) return elt_lo;
        // hi below lo clamps to lo (the ISA's clamp with hi raised to lo).
        if (sa > signed'(elt_hi)) return signed'(elt_hi) < signed'(elt_lo) ? elt_lo : elt_hi;
        return a;
      end
      // A code the ISA does not name (the decoder refuses it): 0, which the golden compare flags.
      default: return 8'd0;
    endcase
  endfunction

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      elt_valid <= 1'b0;
      elt_out <= '0;
    end else begin
      elt_valid <= elt_en;
      if (elt_en) begin
        for (int l = 0; l < int'(LANES); l++) elt_out[8*l +: 8] <= eltwise(elt_a[8*l +: 8], elt_b[8*l +: 8]);
      end
    end
  end
endmodule
