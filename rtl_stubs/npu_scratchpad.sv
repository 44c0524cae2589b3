// Banked scratchpad stub with a run-time bank geometry: 2^cfg_bank_bits single-ported banks,
// interleaved every 2^cfg_width_bits bytes (word w lives in bank w % banks), one write port
// and one read port. The geometry is a configuration register, loaded from the cfg_* pins
// while rst_n is low (like a CSR written at boot) and held until the next reset, so one
// Verilated model serves every geometry the NPU config allows (isa/npu_config.cc: 1..64
// banks, 1..256-byte banks, up to 16 MiB). Why not one model per geometry: Verilating and
// compiling a model per geometry costs build time (CI builds everything three times on two
// cores) and could never cover the ~500 geometries the config accepts.
//
// Storage is sized for the maximum (MAX_BYTES) and the data ports for the widest bank word
// (MAX_BANK_BYTES); a narrower geometry uses the low bytes of the ports. The storage is one
// byte array: bank b, row r holds word r * banks + b at byte (r * banks + b) * width, so the
// bank split only decides which accesses collide, exactly as separate macros would.
//
// Addresses are word addresses (byte address / bank width). Writes take effect on the rising
// edge with per-byte enables (bytes at or above the bank width are ignored). Reads are
// registered: rd_valid and rd_data come one cycle after rd_en. Each bank has ONE port, so a
// read and a write to the same bank in the same cycle conflict: the write wins, the read is
// dropped (rd_valid stays low, rd_data keeps its last value; the requester retries) and
// conflict[bank] is high for that following cycle.
//
// STUCK_ADDR_BIT >= 0 plants a bug for the checkers' tests: that bit of both word addresses
// is stuck at 0 before the bank decode, so two address ranges alias. PLANT_CONFLICT_BUG != 0
// plants wrong bank-conflict arbitration: a read that loses its bank to a write is still
// reported served (rd_valid high) with the port's stale output register.
module npu_scratchpad #(
  parameter int unsigned MAX_BANKS = 64,         // power of two
  parameter int unsigned MAX_BANK_BYTES = 256,   // power of two: the widest bank word
  parameter int unsigned MAX_BYTES = 1 << 24,    // power of two: the largest sram_bytes
  parameter int STUCK_ADDR_BIT = -1,
  parameter int unsigned PLANT_CONFLICT_BUG = 0,
  localparam int unsigned W = MAX_BANK_BYTES * 8,
  localparam int unsigned BA = $clog2(MAX_BYTES),          // byte address bits
  localparam int unsigned AW = BA,                         // word address bits (1-byte banks)
  localparam int unsigned CB = $clog2($clog2(MAX_BANKS) + 1),
  localparam int unsigned CW = $clog2($clog2(MAX_BANK_BYTES) + 1)
) (
  input  logic                      clk,
  input  logic                      rst_n,
  input  logic [CB-1:0]             cfg_bank_bits,   // log2(banks), loaded in reset
  input  logic [CW-1:0]             cfg_width_bits,  // log2(bank width in bytes), loaded in reset
  input  logic                      wr_en,
  input  logic [AW-1:0]             wr_addr,
  input  logic [W-1:0]              wr_data,
  input  logic [MAX_BANK_BYTES-1:0] wr_be,
  input  logic                      rd_en,
  input  logic [AW-1:0]             rd_addr,
  output logic                      rd_valid,
  output logic [W-1:0]              rd_data,
  output logic [MAX_BANKS-1:0]      conflict
);
  function automatic logic [AW-1:0] fault(input logic [AW-1:0] a);
    if (STUCK_ADDR_BIT >= 0) return a & ~(AW'(1) << STUCK_ADDR_BIT);
    return a;
  endfunction

  // The geometry register.
  logic [CB-1:0] bank_bits_q;
  logic [CW-1:0] width_bits_q;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      bank_bits_q <= cfg_bank_bits;
      width_bits_q <= cfg_width_bits;
    end
  end

  logic [AW-1:0] wa;
  logic [AW-1:0] ra;
  logic [AW-1:0] bank_mask;
  logic [BA-1:0] wbase;
  logic [BA-1:0] rbase;
  logic [$clog2(MAX_BANKS)-1:0] rbank;
  logic clash;
  assign wa = fault(wr_addr);
  assign ra = fault(rd_addr);
  assign bank_mask = ~(~AW'(0) << bank_bits_q);
  assign wbase = BA'(wa << width_bits_q);
  assign rbase = BA'(ra << width_bits_q);
  assign rbank = $clog2(MAX_BANKS)'(ra & bank_mask);
  assign clash = wr_en && rd_en && (wa & bank_mask) == (ra & bank_mask);

  logic [7:0] mem [MAX_BYTES];
  int unsigned width;
  assign width = 1 << width_bits_q;

  logic rd_served;
  assign rd_served = rd_en && (PLANT_CONFLICT_BUG != 0 || !clash);

  // Both ports in one process, the read first: a served read never shares its word with the
  // write (same word, same bank: a clash), so the order only matters for determinism. The
  // memory is written with blocking assignments because Verilator (5.006) cannot delay an
  // array write inside a loop; nothing else in this process reads `mem` after the write.
  // Only the configured bank width is looped over (a loop over the maximum width would cost
  // the default 16-byte geometry 16x the work per cycle). A read that lost its bank leaves
  // rd_data as it was (the planted variant reports that stale value served).
  always_ff @(posedge clk) begin
    if (rd_en && !clash) begin
      for (int unsigned i = 0; i < width; i++) rd_data[8*i +: 8] <= mem[rbase + BA'(i)];
    end
    if (wr_en) begin
      for (int unsigned i = 0; i < width; i++) begin
        /* verilator lint_off BLKSEQ */
        if (wr_be[i]) mem[wbase + BA'(i)] = wr_data[8*i +: 8];
        /* verilator lint_on BLKSEQ */
      end
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      conflict <= '0;
      rd_valid <= 1'b0;
    end else begin
      conflict <= clash ? MAX_BANKS'(1) << rbank : '0;
      rd_valid <= rd_served;
    end
  end
endmodule
