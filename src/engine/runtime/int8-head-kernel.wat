;; The lm_head's 8-bit product, for one row of the hidden state (src/engine/runtime/int8-head-kernel.ts):
;;
;;   out[j] = f32(sum_k Q[j, k] * x[k]) * r * s[j]   for j < v
;;
;; Q: int8 [v, hp], a vocabulary row each, zero-padded to hp (a multiple of 16); s: float32 [v],
;; a scale per row; x: int16 [hp], the row rounded to 255 levels (zero-padded); r: its scale.
;; The product is exact in int32 (|Q|, |x| <= 127, hp * 127 * 127 < 2^31 for hp < 133,000), then
;; scaled in the order onnxruntime's MatMulInteger, Cast, Mul, Mul does it (int8-head.ts), so the
;; logits equal that graph's bit for bit. Four rows at a time share each load of x; WebAssembly
;; SIMD 128 only (i32x4.dot_i16x8_s), no relaxed SIMD, no threads.
;;
;; Built into int8-head-kernel.wasm.ts by `npm run kernels` (scripts/kernels/build.ts).
(module
  (memory (export "memory") 1)
  (func (export "head") (param $q i32) (param $s i32) (param $x i32) (param $hp i32) (param $v i32) (param $out i32) (param $r f32)
    (local $j i32) (local $k i32) (local $p i32) (local $xe i32) (local $xk i32)
    (local $a0 v128) (local $a1 v128) (local $w v128)
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local $hp2 i32) (local $hp3 i32)
    (local.set $hp2 (i32.shl (local.get $hp) (i32.const 1)))
    (local.set $hp3 (i32.add (local.get $hp2) (local.get $hp)))
    (local.set $xe (i32.add (local.get $x) (i32.shl (local.get $hp) (i32.const 1))))
    (block $done4
      (loop $rows4
        (br_if $done4 (i32.gt_u (i32.add (local.get $j) (i32.const 4)) (local.get $v)))
        (local.set $c0 (v128.const i32x4 0 0 0 0))
        (local.set $c1 (v128.const i32x4 0 0 0 0))
        (local.set $c2 (v128.const i32x4 0 0 0 0))
        (local.set $c3 (v128.const i32x4 0 0 0 0))
        (local.set $p (i32.add (local.get $q) (i32.mul (local.get $j) (local.get $hp))))
        (local.set $xk (local.get $x))
        (loop $k16
          (local.set $a0 (v128.load (local.get $xk)))
          (local.set $a1 (v128.load offset=16 (local.get $xk)))
          (local.set $w (v128.load (local.get $p)))
          (local.set $c0 (i32x4.add (local.get $c0) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (local.get $a0))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (local.get $a1)))))
          (local.set $w (v128.load (i32.add (local.get $p) (local.get $hp))))
          (local.set $c1 (i32x4.add (local.get $c1) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (local.get $a0))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (local.get $a1)))))
          (local.set $w (v128.load (i32.add (local.get $p) (local.get $hp2))))
          (local.set $c2 (i32x4.add (local.get $c2) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (local.get $a0))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (local.get $a1)))))
          (local.set $w (v128.load (i32.add (local.get $p) (local.get $hp3))))
          (local.set $c3 (i32x4.add (local.get $c3) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (local.get $a0))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (local.get $a1)))))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (local.set $xk (i32.add (local.get $xk) (i32.const 32)))
          (br_if $k16 (i32.lt_u (local.get $xk) (local.get $xe))))
        (call $store (local.get $out) (local.get $s) (local.get $j) (local.get $c0) (local.get $r))
        (call $store (local.get $out) (local.get $s) (i32.add (local.get $j) (i32.const 1)) (local.get $c1) (local.get $r))
        (call $store (local.get $out) (local.get $s) (i32.add (local.get $j) (i32.const 2)) (local.get $c2) (local.get $r))
        (call $store (local.get $out) (local.get $s) (i32.add (local.get $j) (i32.const 3)) (local.get $c3) (local.get $r))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $rows4)))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $j) (local.get $v)))
        (local.set $c0 (v128.const i32x4 0 0 0 0))
        (local.set $p (i32.add (local.get $q) (i32.mul (local.get $j) (local.get $hp))))
        (local.set $xk (local.get $x))
        (loop $k1
          (local.set $w (v128.load (local.get $p)))
          (local.set $c0 (i32x4.add (local.get $c0) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (v128.load (local.get $xk)))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (v128.load offset=16 (local.get $xk))))))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (local.set $xk (i32.add (local.get $xk) (i32.const 32)))
          (br_if $k1 (i32.lt_u (local.get $xk) (local.get $xe))))
        (call $store (local.get $out) (local.get $s) (local.get $j) (local.get $c0) (local.get $r))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $rows))))
  (func $store (param $out i32) (param $s i32) (param $j i32) (param $c v128) (param $r f32)
    (local $o i32)
    (local.set $o (i32.shl (local.get $j) (i32.const 2)))
    (f32.store (i32.add (local.get $out) (local.get $o))
      (f32.mul
        (f32.mul
          (f32.convert_i32_s (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $c)) (i32x4.extract_lane 1 (local.get $c)))
            (i32.add (i32x4.extract_lane 2 (local.get $c)) (i32x4.extract_lane 3 (local.get $c)))))
          (f32.load (i32.add (local.get $s) (local.get $o))))
        (local.get $r))))
)
