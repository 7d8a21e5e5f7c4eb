//! `exp`, `log`, `tanh` and `logistic` of `f32` vectors in compiled loops.
//!
//! Each is [`xla_math`](super::super::xla_math)'s scalar function written out instruction by
//! instruction: every IEEE operation of the scalar code (the same fused multiply-adds, the
//! same operand order where it decides which NaN comes out) and its selects as masked moves.
//! So a compiled loop gives the interpreted path's bits, which are JAX's. The functions' f64
//! forms call the C library and do not compile.
//!
//! Constants are read from a pool after the function's code, broadcast to all lanes by the
//! instruction that uses them (`{1to16}`), so that they take no register.

use iced_x86::code_asm::*;

use super::{Emitter, Stop, ZMM};
use crate::exec::cpu::xla_math::{
    EXP_HIGHEST, EXP_LOWEST, EXP_POLYNOMIAL, LN2_HIGH, LN2_LOW, LOG_POLYNOMIAL, TANH_CLAMP,
    TANH_DENOMINATOR, TANH_NUMERATOR, TANH_SATURATED, TANH_TINY,
};
use crate::primitives::unary::UnaryOp;

/// `vcmpps` predicates (the quiet forms: a NaN raises no exception, which is masked anyway).
const EQUAL: i32 = 0x00;
const LESS: i32 = 0x11;
const GREATER_OR_EQUAL: i32 = 0x1D;
/// True for NaN too: `!(a >= b)`.
const NOT_GREATER_OR_EQUAL: i32 = 0x19;

/// `vrndscaleps` immediate: round toward minus infinity, no precision exception.
const FLOOR: i32 = 0x09;

const SIGN_BIT: u32 = 0x8000_0000;
const ALL_BUT_SIGN: u32 = 0x7fff_ffff;

/// Whether `op` has a vector form here (for `f32` loops).
pub(super) fn compiles(op: UnaryOp) -> bool {
    matches!(op, UnaryOp::Exp | UnaryOp::Log | UnaryOp::Tanh | UnaryOp::Logistic)
}

impl Emitter<'_> {
    /// `d = op(x)` for an `op` that [`compiles`]; `d` and `x` are different registers, and
    /// `x` is left as it is.
    pub(super) fn math(
        &mut self,
        op: UnaryOp,
        d: AsmRegisterZmm,
        x: AsmRegisterZmm,
    ) -> Result<(), Stop> {
        match op {
            UnaryOp::Exp => self.exp(d, x),
            UnaryOp::Log => self.log(d, x),
            UnaryOp::Tanh => self.tanh(d, x),
            UnaryOp::Logistic => self.logistic(d, x),
            _ => unreachable!("{} has no vector form", op.op_name()),
        }
    }

    /// [`exp_f32`](super::super::xla_math::exp_f32).
    fn exp(&mut self, d: AsmRegisterZmm, x: AsmRegisterZmm) -> Result<(), Stop> {
        let scratch = self.scratch::<4>()?;
        let [n, r, p, t] = scratch.map(|i| ZMM[i]);
        self.clamp(d, x, EXP_LOWEST, EXP_HIGHEST, t)?;
        // n = floor(fma(x, log2(e), 0.5)), clamped to [-127, 127].
        let c = self.pooled(std::f32::consts::LOG2_E);
        self.asm.vbroadcastss(n, c)?;
        let c = self.pooled_bcst(0.5);
        self.asm.vfmadd213ps(n, d, c)?;
        self.asm.vrndscaleps(n, n, FLOOR)?;
        self.clamp(n, n, -127.0, 127.0, t)?;
        // r = fma(-LN2_LOW, n, fma(-LN2_HIGH, n, x)).
        self.asm.vmovaps(r, d)?;
        let c = self.pooled_bcst(LN2_HIGH);
        self.asm.vfnmadd231ps(r, n, c)?;
        let c = self.pooled_bcst(LN2_LOW);
        self.asm.vfnmadd231ps(r, n, c)?;
        self.horner(p, r, &EXP_POLYNOMIAL)?;
        // e_r = 1 + fma(p, r * r, r).
        self.asm.vmulps(t, r, r)?;
        self.asm.vfmadd213ps(p, t, r)?;
        let c = self.pooled_bcst(1.0);
        self.asm.vaddps(p, p, c)?;
        // 2^n: the bits of n + 127 + 2^23 shifted into the exponent.
        let c = self.pooled_bcst(127.0 + 8_388_608.0);
        self.asm.vaddps(n, n, c)?;
        self.asm.vpslld(n, n, 23)?;
        self.asm.vmulps(d, p, n)?;
        self.flush_to_zero(d)?;
        self.free.extend(scratch);
        Ok(())
    }

    /// [`log_f32`](super::super::xla_math::log_f32).
    fn log(&mut self, d: AsmRegisterZmm, x: AsmRegisterZmm) -> Result<(), Stop> {
        const P: [f32; 9] = LOG_POLYNOMIAL;
        let scratch = self.scratch::<8>()?;
        let [e, m, t, t2, t3, y, y1, y2] = scratch.map(|i| ZMM[i]);
        // max(x, smallest normal) (NaN gives the smallest normal), split into a mantissa m in
        // [0.5, 1) and an exponent e.
        let c = self.pooled_bcst(f32::MIN_POSITIVE);
        self.asm.vmaxps(e, x, c)?;
        let c = self.pooled_bits_bcst(!0x7F80_0000);
        self.asm.vpandd(m, e, c)?;
        let c = self.pooled_bits_bcst(0x3F00_0000);
        self.asm.vpord(m, m, c)?;
        self.asm.vpsrld(e, e, 23)?;
        let c = self.pooled_bits_bcst(0x7F);
        self.asm.vpsubd(e, e, c)?;
        self.asm.vcvtdq2ps(e, e)?;
        let c = self.pooled_bcst(1.0);
        self.asm.vaddps(e, e, c)?;
        // Below sqrt(1/2): t = (m - 1) + m and e - 1; else t = m - 1 and e. (The scalar code
        // adds and subtracts 0 there, which changes no bit: m - 1 lies in [-0.5, 0) and e is
        // a whole number.)
        let c = self.pooled_bcst(std::f32::consts::FRAC_1_SQRT_2);
        self.asm.vcmpps(k1, m, c, LESS)?;
        let c = self.pooled_bcst(1.0);
        self.asm.vsubps(t, m, c)?;
        self.asm.vaddps(t.k1(), t, m)?;
        self.asm.vsubps(e.k1(), e, c)?;
        self.asm.vmulps(t2, t, t)?;
        self.asm.vmulps(t3, t2, t)?;
        // Three interleaved polynomials in t, joined by powers of t^3.
        for (acc, [high, low]) in [(y, [P[0], P[1]]), (y1, [P[3], P[4]]), (y2, [P[6], P[7]])] {
            let c = self.pooled(high);
            self.asm.vbroadcastss(acc, c)?;
            let c = self.pooled_bcst(low);
            self.asm.vfmadd213ps(acc, t, c)?;
        }
        for (acc, k) in [(y, P[2]), (y1, P[5]), (y2, P[8])] {
            let c = self.pooled_bcst(k);
            self.asm.vfmadd213ps(acc, t, c)?;
        }
        self.asm.vfmadd213ps(y, t3, y1)?;
        self.asm.vfmadd213ps(y, t3, y2)?;
        let c = self.pooled_bcst(LN2_LOW);
        self.asm.vmulps(y1, e, c)?;
        self.asm.vfmadd213ps(y, t3, y1)?;
        // ((t - 0.5 * t^2) + y) + LN2_HIGH * e.
        let c = self.pooled_bcst(0.5);
        self.asm.vmulps(t2, t2, c)?;
        self.asm.vsubps(t, t, t2)?;
        self.asm.vaddps(t, t, y)?;
        let c = self.pooled_bcst(LN2_HIGH);
        self.asm.vmulps(e, e, c)?;
        self.asm.vaddps(d, t, e)?;
        // In order of precedence, last: NaN below zero (and for NaN), infinity for infinity,
        // minus infinity for zeros and subnormals.
        let c = self.pooled_bcst(0.0);
        self.asm.vcmpps(k1, x, c, NOT_GREATER_OR_EQUAL)?;
        let c = self.pooled(f32::NAN);
        self.asm.vbroadcastss(d.k1(), c)?;
        let c = self.pooled_bcst(f32::INFINITY);
        self.asm.vcmpps(k1, x, c, EQUAL)?;
        self.asm.vmovaps(d.k1(), x)?;
        let c = self.pooled_bits_bcst(ALL_BUT_SIGN);
        self.asm.vpandd(t, x, c)?;
        let c = self.pooled_bcst(f32::MIN_POSITIVE);
        self.asm.vcmpps(k1, t, c, LESS)?;
        let c = self.pooled(f32::NEG_INFINITY);
        self.asm.vbroadcastss(d.k1(), c)?;
        self.free.extend(scratch);
        Ok(())
    }

    /// [`tanh_f32`](super::super::xla_math::tanh_f32).
    fn tanh(&mut self, d: AsmRegisterZmm, x: AsmRegisterZmm) -> Result<(), Stop> {
        let scratch = self.scratch::<4>()?;
        let [c, x2, p, q] = scratch.map(|i| ZMM[i]);
        self.clamp(c, x, -TANH_CLAMP, TANH_CLAMP, p)?;
        self.asm.vmulps(x2, c, c)?;
        self.horner(p, x2, &TANH_NUMERATOR)?;
        self.horner(q, x2, &TANH_DENOMINATOR)?;
        self.asm.vmulps(d, c, p)?;
        self.asm.vdivps(d, d, q)?;
        // +-1 (x's sign) from |x| = TANH_SATURATED on, then x itself below TANH_TINY.
        let k = self.pooled_bits_bcst(ALL_BUT_SIGN);
        self.asm.vpandd(x2, x, k)?;
        let k = self.pooled_bcst(TANH_SATURATED);
        self.asm.vcmpps(k1, x2, k, GREATER_OR_EQUAL)?;
        let k = self.pooled_bits_bcst(SIGN_BIT);
        self.asm.vpandd(p, x, k)?;
        let k = self.pooled_bcst(1.0);
        self.asm.vpord(d.k1(), p, k)?;
        let k = self.pooled_bcst(TANH_TINY);
        self.asm.vcmpps(k1, x2, k, LESS)?;
        self.asm.vmovaps(d.k1(), x)?;
        self.free.extend(scratch);
        Ok(())
    }

    /// `logistic(x) = 1 / (1 + exp(-x))`, 0 below the smallest normal float, as XLA expands it
    /// and the unary primitive computes it.
    fn logistic(&mut self, d: AsmRegisterZmm, x: AsmRegisterZmm) -> Result<(), Stop> {
        let scratch = self.scratch::<2>()?;
        let [minus_x, one] = scratch.map(|i| ZMM[i]);
        let c = self.pooled_bits_bcst(SIGN_BIT);
        self.asm.vpxord(minus_x, x, c)?;
        self.exp(d, minus_x)?;
        let c = self.pooled_bcst(1.0);
        self.asm.vaddps(d, d, c)?;
        let c = self.pooled(1.0);
        self.asm.vbroadcastss(one, c)?;
        self.asm.vdivps(d, one, d)?;
        self.flush_to_zero(d)?;
        self.free.extend(scratch);
        Ok(())
    }

    /// `p = ` the polynomial in `x` with `coefficients` from the highest degree down, by
    /// Horner's rule: `p = c[0]`, then `p = fma(x, p, c[k])` for each further coefficient.
    fn horner(
        &mut self,
        p: AsmRegisterZmm,
        x: AsmRegisterZmm,
        coefficients: &[f32],
    ) -> Result<(), Stop> {
        let c = self.pooled(coefficients[0]);
        self.asm.vbroadcastss(p, c)?;
        for &k in &coefficients[1..] {
            let c = self.pooled_bcst(k);
            self.asm.vfmadd213ps(p, x, c)?;
        }
        Ok(())
    }

    /// `d = 0` where `d` is below the smallest normal float (`d` is not negative here).
    fn flush_to_zero(&mut self, d: AsmRegisterZmm) -> Result<(), Stop> {
        let c = self.pooled_bcst(f32::MIN_POSITIVE);
        self.asm.vcmpps(k1, d, c, LESS)?;
        self.asm.vpxord(d.k1(), d, d)?;
        Ok(())
    }

    /// `d = x.clamp(lo, hi)`: `lo` below `lo`, `hi` above `hi`, else `x` (NaN included);
    /// `d` may be `x`, `t` is scratch.
    fn clamp(
        &mut self,
        d: AsmRegisterZmm,
        x: AsmRegisterZmm,
        lo: f32,
        hi: f32,
        t: AsmRegisterZmm,
    ) -> Result<(), Stop> {
        // `vmaxps a, b, c` is `b > c ? b : c` and `c` where either is NaN, so the bound goes
        // first, in a register.
        let c = self.pooled(lo);
        self.asm.vbroadcastss(t, c)?;
        self.asm.vmaxps(d, t, x)?;
        let c = self.pooled(hi);
        self.asm.vbroadcastss(t, c)?;
        self.asm.vminps(d, t, d)?;
        Ok(())
    }

    /// `N` vector registers for a sequence's own use, until it hands them back to `free`.
    fn scratch<const N: usize>(&mut self) -> Result<[usize; N], Stop> {
        let mut registers = [0; N];
        for r in &mut registers {
            *r = self.take()?;
        }
        Ok(registers)
    }

    /// `value` in the constant pool, as a 4-byte memory operand.
    fn pooled(&mut self, value: f32) -> AsmMemoryOperand {
        dword_ptr(self.pool_label(value.to_bits()))
    }

    /// `value` in the constant pool, broadcast to all lanes.
    fn pooled_bcst(&mut self, value: f32) -> AsmMemoryOperand {
        self.pooled_bits_bcst(value.to_bits())
    }

    /// The 32-bit pattern `bits` in the constant pool, broadcast to all lanes.
    fn pooled_bits_bcst(&mut self, bits: u32) -> AsmMemoryOperand {
        dword_bcst(self.pool_label(bits))
    }

    fn pool_label(&mut self, bits: u32) -> CodeLabel {
        if let Some(&(_, label)) = self.pool.iter().find(|(b, _)| *b == bits) {
            return label;
        }
        let label = self.asm.create_label();
        self.pool.push((bits, label));
        label
    }

    /// Writes the constant pool (after the function's last instruction).
    pub(super) fn emit_pool(&mut self) -> Result<(), Stop> {
        for (bits, mut label) in std::mem::take(&mut self.pool) {
            self.asm.set_label(&mut label)?;
            self.asm.dd(&[bits])?;
        }
        Ok(())
    }
}
