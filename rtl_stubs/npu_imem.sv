// Instruction memory filled by $readmemh from the hex file that `npuforge asm --hex` and
// `npuforge gen` write (path from the +hex=FILE plusarg), so a test proves the format loads
// in RTL exactly as a team's testbench would load it. One registered read port.
module npu_imem
  import npu_isa_pkg::*;
#(
  parameter int unsigned DEPTH = 1024
) (
  input  logic                     clk,
  input  logic [$clog2(DEPTH)-1:0] addr,
  output logic [INSTR_WIDTH-1:0]   word
);
  logic [INSTR_WIDTH-1:0] mem [DEPTH];
  string path;

  initial begin
    for (int i = 0; i < DEPTH; i++) mem[i] = '0;
    if (!$value$plusargs("hex=%s", path)) path = "program.hex";
    $readmemh(path, mem);
  end

  always_ff @(posedge clk) word <= mem[addr];
endmodule
