// Banked scratchpad stub: NBANKS single-ported banks, interleaved every BANK_BYTES bytes
// (word w lives in bank w % NBANKS, row w / NBANKS), one write port and one read port.
//
// Addresses are word addresses (byte address / BANK_BYTES). Writes take effect on the rising
// edge with per-byte enables. Reads are registered: rd_valid and rd_data come one cycle after
// rd_en. Each bank has ONE port, so a read and a write to the same bank in the same cycle
// conflict: the write wins, the read is dropped (rd_valid stays low; the requester retries)
// and conflict[bank] is high for that following cycle.
//
// STUCK_ADDR_BIT >= 0 plants a bug for the checkers' tests: that bit of both word addresses
// is stuck at 0 before the bank decode, so two address ranges alias. PLANT_CONFLICT_BUG != 0
// plants wrong bank-conflict arbitration: a read that loses its bank to a write is still
// reported served (rd_valid high) with the bank's stale output register.
module npu_scratchpad #(
  parameter int unsigned NBANKS = 8,       // power of two
  parameter int unsigned BANK_BYTES = 16,  // bytes per bank word = port width
  parameter int unsigned BANK_DEPTH = 4096,
  parameter int STUCK_ADDR_BIT = -1,
  parameter int unsigned PLANT_CONFLICT_BUG = 0,
  localparam int unsigned W = BANK_BYTES * 8,
  localparam int unsigned BANK_BITS = $clog2(NBANKS),
  localparam int unsigned ROW_BITS = $clog2(BANK_DEPTH),
  localparam int unsigned AW = BANK_BITS + ROW_BITS
) (
  input  logic                  clk,
  input  logic                  rst_n,
  input  logic                  wr_en,
  input  logic [AW-1:0]         wr_addr,
  input  logic [W-1:0]          wr_data,
  input  logic [BANK_BYTES-1:0] wr_be,
  input  logic                  rd_en,
  input  logic [AW-1:0]         rd_addr,
  output logic                  rd_valid,
  output logic [W-1:0]          rd_data,
  output logic [NBANKS-1:0]     conflict
);
  function automatic logic [AW-1:0] fault(input logic [AW-1:0] a);
    if (STUCK_ADDR_BIT >= 0) return a & ~(AW'(1) << STUCK_ADDR_BIT);
    return a;
  endfunction

  logic [AW-1:0] wa;
  logic [AW-1:0] ra;
  logic [BANK_BITS-1:0] wbank;
  logic [BANK_BITS-1:0] rbank;
  logic [ROW_BITS-1:0] wrow;
  logic [ROW_BITS-1:0] rrow;
  assign wa = fault(wr_addr);
  assign ra = fault(rd_addr);
  assign wbank = wa[BANK_BITS-1:0];
  assign rbank = ra[BANK_BITS-1:0];
  assign wrow = wa[AW-1:BANK_BITS];
  assign rrow = ra[AW-1:BANK_BITS];

  logic [W-1:0] bank_q [NBANKS];
  logic [NBANKS-1:0] hit_q;
  logic [NBANKS-1:0] clash;

  for (genvar b = 0; b < NBANKS; b++) begin : g_bank
    logic [W-1:0] mem [BANK_DEPTH];
    logic wsel;
    logic rsel;
    assign wsel = wr_en && wbank == BANK_BITS'(b);
    assign rsel = rd_en && rbank == BANK_BITS'(b);
    assign clash[b] = wsel && rsel;

    always_ff @(posedge clk) begin
      if (wsel) begin
        for (int i = 0; i < int'(BANK_BYTES); i++) begin
          if (wr_be[i]) mem[wrow][8*i +: 8] <= wr_data[8*i +: 8];
        end
      end
      if (rsel && !wsel) bank_q[b] <= mem[rrow];
    end
  end

  logic rd_served;
  assign rd_served = rd_en && (PLANT_CONFLICT_BUG != 0 || !clash[rbank]);

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      hit_q <= '0;
      conflict <= '0;
      rd_valid <= 1'b0;
    end else begin
      hit_q <= '0;
      if (rd_served) hit_q[rbank] <= 1'b1;
      conflict <= clash;
      rd_valid <= rd_served;
    end
  end

  always_comb begin
    rd_data = '0;
    for (int b = 0; b < int'(NBANKS); b++) begin
      if (hit_q[b]) rd_data = bank_q[b];
    end
  end
endmodule
