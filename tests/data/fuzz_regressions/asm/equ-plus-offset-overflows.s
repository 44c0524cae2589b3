.equ %a, 0xffffffff
load %a+0x7fffffffffffffff, ddr:0, rows=1, row_bytes=1
halt
