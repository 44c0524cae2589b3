// Instruction decoder stub: splits one fetched instruction word into its fields.
//
// Opcodes, field offsets and widths come from the generated package npu_isa_pkg (made from
// isa/npu_isa.yaml by isa_gen), so an ISA edit reaches the RTL without touching this file
// unless an instruction or field is added. The outputs are ISA-generic on purpose: field
// slot s holds the zero-extended raw bits of the s-th field of the decoded instruction in
// npu_isa.yaml order (slot 0 opcode, 1 wait, 2 signal, then the instruction's own fields),
// which is exactly npuforge::isa::Instruction::raw, so a testbench compares slot by slot.
//
// Timing: one register stage. in_valid/instr are sampled on the rising clock edge and
// out_* hold the decode of that word from then on.
module npu_decoder
  import npu_isa_pkg::*;
#(
  parameter int unsigned MAX_FIELDS = 16,
  // Planted bug for the checkers' own test: 1 inverts bit 0 of field slot 3 (the first field
  // of the instruction's own) so the rtl-mismatch finding can be shown to fire.
  parameter int unsigned PLANT_FIELD_BUG = 0
) (
  input  logic                        clk,
  input  logic                        rst_n,
  input  logic                        in_valid,
  input  logic [INSTR_WIDTH-1:0]      instr,
  output logic                        out_valid,
  output logic                        illegal,      // opcode not in the ISA
  output logic [1:0]                  queue_id,     // 0 load, 1 compute, 2 store, 3 control
  output logic [4:0]                  field_count,  // slots used (3 common + own fields)
  output logic [MAX_FIELDS*32-1:0]    fields        // slot s at bits [32*s +: 32]
);
  localparam logic [1:0] Q_CONTROL = 2'(QUEUE_CONTROL);

  // Extracts instr[lsb +: width] zero-extended to 32 bits (width <= 32).
  function automatic logic [31:0] fld(input logic [INSTR_WIDTH-1:0] w, input int lsb,
                                       input int width);
    logic [INSTR_WIDTH-1:0] shifted;
    logic [INSTR_WIDTH-1:0] mask;
    shifted = w >> lsb;
    mask = (INSTR_WIDTH'(1) << width) - INSTR_WIDTH'(1);
    return 32'(shifted & mask);
  endfunction

  logic [7:0] opcode;
  logic illegal_d;
  logic [1:0] queue_d;
  logic [4:0] count_d;
  logic [MAX_FIELDS*32-1:0] fields_d;

  assign opcode = 8'(fld(instr, OPCODE_LSB, OPCODE_WIDTH));

  // Sets slot `s` of fields_d; a macro keeps the per-instruction tables one line per field.
`define NPU_SLOT(s, name) fields_d[32*(s) +: 32] = fld(instr, name``_LSB, name``_WIDTH)

  always_comb begin
    fields_d = '0;
    illegal_d = 1'b0;
    queue_d = Q_CONTROL;
    count_d = 5'd3;
    `NPU_SLOT(0, OPCODE);
    fields_d[32 +: 32] = fld(instr, WAIT_LSB, WAIT_WIDTH);
    fields_d[64 +: 32] = fld(instr, SIGNAL_LSB, SIGNAL_WIDTH);
    case (opcode)
      OP_NOP, OP_SYNC, OP_HALT: ;
      OP_LOAD: begin
        queue_d = 2'(LOAD_QUEUE);
        count_d = 5'd8;
        `NPU_SLOT(3, LOAD_DST);
        `NPU_SLOT(4, LOAD_SRC);
        `NPU_SLOT(5, LOAD_ROWS);
        `NPU_SLOT(6, LOAD_ROW_BYTES);
        `NPU_SLOT(7, LOAD_STRIDE);
      end
      OP_STORE: begin
        queue_d = 2'(STORE_QUEUE);
        count_d = 5'd8;
        `NPU_SLOT(3, STORE_DST);
        `NPU_SLOT(4, STORE_SRC);
        `NPU_SLOT(5, STORE_ROWS);
        `NPU_SLOT(6, STORE_ROW_BYTES);
        `NPU_SLOT(7, STORE_STRIDE);
      end
      OP_GEMM: begin
        queue_d = 2'(GEMM_QUEUE);
        count_d = 5'd14;
        `NPU_SLOT(3, GEMM_DST);
        `NPU_SLOT(4, GEMM_A);
        `NPU_SLOT(5, GEMM_B);
        `NPU_SLOT(6, GEMM_BIAS);
        `NPU_SLOT(7, GEMM_M);
        `NPU_SLOT(8, GEMM_N);
        `NPU_SLOT(9, GEMM_K);
        `NPU_SLOT(10, GEMM_SCALE);
        `NPU_SLOT(11, GEMM_SHIFT);
        `NPU_SLOT(12, GEMM_RELU);
        `NPU_SLOT(13, GEMM_HAS_BIAS);
      end
      OP_IM2COL: begin
        queue_d = 2'(IM2COL_QUEUE);
        count_d = 5'd12;
        `NPU_SLOT(3, IM2COL_DST);
        `NPU_SLOT(4, IM2COL_SRC);
        `NPU_SLOT(5, IM2COL_H);
        `NPU_SLOT(6, IM2COL_W);
        `NPU_SLOT(7, IM2COL_C);
        `NPU_SLOT(8, IM2COL_KH);
        `NPU_SLOT(9, IM2COL_KW);
        `NPU_SLOT(10, IM2COL_STRIDE);
        `NPU_SLOT(11, IM2COL_PAD);
      end
      OP_ELTWISE: begin
        queue_d = 2'(ELTWISE_QUEUE);
        count_d = 5'd12;
        `NPU_SLOT(3, ELTWISE_DST);
        `NPU_SLOT(4, ELTWISE_A);
        `NPU_SLOT(5, ELTWISE_B);
        `NPU_SLOT(6, ELTWISE_LEN);
        `NPU_SLOT(7, ELTWISE_OP);
        `NPU_SLOT(8, ELTWISE_SCALE);
        `NPU_SLOT(9, ELTWISE_SHIFT);
        `NPU_SLOT(10, ELTWISE_LO);
        `NPU_SLOT(11, ELTWISE_HI);
      end
      OP_POOL: begin
        queue_d = 2'(POOL_QUEUE);
        count_d = 5'd11;
        `NPU_SLOT(3, POOL_DST);
        `NPU_SLOT(4, POOL_SRC);
        `NPU_SLOT(5, POOL_H);
        `NPU_SLOT(6, POOL_W);
        `NPU_SLOT(7, POOL_C);
        `NPU_SLOT(8, POOL_WINDOW);
        `NPU_SLOT(9, POOL_STRIDE);
        `NPU_SLOT(10, POOL_MODE);
      end
      OP_MOVE: begin
        queue_d = 2'(MOVE_QUEUE);
        count_d = 5'd6;
        `NPU_SLOT(3, MOVE_DST);
        `NPU_SLOT(4, MOVE_SRC);
        `NPU_SLOT(5, MOVE_LEN);
      end
      default: begin
        illegal_d = 1'b1;
        count_d = 5'd1;
        fields_d[32 +: 64] = '0;  // no wait/signal for an unknown word
      end
    endcase
  end
`undef NPU_SLOT

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      out_valid <= 1'b0;
      illegal <= 1'b0;
      queue_id <= Q_CONTROL;
      field_count <= 5'd0;
      fields <= '0;
    end else begin
      out_valid <= in_valid;
      if (in_valid) begin
        illegal <= illegal_d;
        queue_id <= queue_d;
        field_count <= count_d;
        fields <= PLANT_FIELD_BUG != 0 ? fields_d ^ (MAX_FIELDS*32)'(1) << 96 : fields_d;
      end
    end
  end
endmodule
