; A 3x3 convolution block on an 8x8x8 int8 image, done as im2col + GEMM, then ReLU and
; 2x2 max pooling: the kind of directed program a hardware team writes by hand.
; Addresses are fixed with .equ here; generated programs get them from the allocator.
.equ %image,   0x0000      ; 8*8*8      =  512 B
.equ %weights, 0x0200      ; 72*16      = 1152 B
.equ %cols,    0x0700      ; 36*72      = 2592 B (6x6 output pixels, 3*3*8 per row)
.equ %conv,    0x1200      ; 36*16      =  576 B
.equ %pooled,  0x1480      ; 3*3*16     =  144 B

start:
  load    %image,   ddr:0x0000, rows=8, row_bytes=64, stride=64
  load    %weights, ddr:0x1000, rows=1, row_bytes=1152, signal=compute
  im2col  %cols, %image, h=8, w=8, c=8, kh=3, kw=3, wait=load
  gemm    %conv, %cols, %weights, m=36, n=16, k=72, scale=5, shift=9, relu
conv_done:
  pool    %pooled, %conv, h=6, w=6, c=16, window_h=2, window_w=2, stride_h=2, stride_w=2, mode=max, signal=store
  store   ddr:0x8000, %pooled, rows=1, row_bytes=144, wait=compute
  halt
