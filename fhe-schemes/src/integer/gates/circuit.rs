//! The integer circuits, built on a [`Builder`] over little-endian bit vectors, and
//! [`IntOp`], which turns one operation at one width into a finished [`Circuit`].
//!
//! Designed for wide levels rather than long chains (every level is one batched
//! bootstrap):
//! - addition: generate/propagate in one level, then a parallel-prefix carry network
//!   ([`PrefixNetwork`]: Brent-Kung by default, the fewest gates, see [`DEFAULT_PREFIX`];
//!   Sklansky for the fewest levels, `log2 w` combine steps like Kogge-Stone with half
//!   its combines: Kogge-Stone's bounded fan-out buys nothing here, a ciphertext can be
//!   read any number of times), then the sum XORs;
//! - subtraction: `a + NOT b + 1` (NOT is free, the carry-in folds into the first
//!   generate);
//! - multiplication: all partial products in one level, a Dadda carry-save tree of full
//!   and half adders (each on a column's earliest-ready bits), then the prefix adder on
//!   the last two rows;
//! - comparisons: a balanced tree of (less, equal) pairs, the carry-lookahead tree of
//!   `b - a`; equality an AND tree of XNORs;
//! - select: `(s AND t) OR (NOT s AND f)` per bit; min/max a comparison and a select;
//! - shifts by a plain amount: rewiring and constant zeros, no gates.

use super::netlist::{Bit, Builder, Circuit};

/// How the carries of an addition are computed from the generate/propagate pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrefixNetwork {
    /// `log2 w` steps, every position combines at every step (`w log2 w - w + 1` combines).
    KoggeStone,
    /// `log2 w` steps, half the positions combine at each step (`w/2 log2 w` combines).
    Sklansky,
    /// `2 log2 w - 1` steps, `2w - log2 w - 2` combines.
    BrentKung,
}

impl PrefixNetwork {
    pub const ALL: [PrefixNetwork; 3] = [PrefixNetwork::KoggeStone, PrefixNetwork::Sklansky, PrefixNetwork::BrentKung];

    pub fn name(self) -> &'static str {
        match self {
            PrefixNetwork::KoggeStone => "Kogge-Stone",
            PrefixNetwork::Sklansky => "Sklansky",
            PrefixNetwork::BrentKung => "Brent-Kung",
        }
    }

    /// The combine steps for `w` positions: in each step, `(i, j)` with `j < i` means
    /// position `i` absorbs the group ending at `j`. Within a step every pair reads the
    /// values of the previous step.
    fn steps(self, w: usize) -> Vec<Vec<(usize, usize)>> {
        let mut steps = Vec::new();
        match self {
            PrefixNetwork::KoggeStone => {
                let mut d = 1;
                while d < w {
                    steps.push((d..w).map(|i| (i, i - d)).collect());
                    d *= 2;
                }
            }
            PrefixNetwork::Sklansky => {
                let mut d = 1;
                while d < w {
                    // In blocks of 2d, the upper half absorbs the last of the lower half.
                    steps.push((0..w).filter(|i| i & d != 0).map(|i| (i, (i & !(2 * d - 1)) + d - 1)).collect());
                    d *= 2;
                }
            }
            PrefixNetwork::BrentKung => {
                let mut d = 1;
                while d < w {
                    steps.push((2 * d - 1..w).step_by(2 * d).map(|i| (i, i - d)).collect());
                    d *= 2;
                }
                d /= 2;
                while d >= 1 {
                    let step: Vec<_> = (3 * d - 1..w).step_by(2 * d).map(|i| (i, i - d)).collect();
                    if !step.is_empty() {
                        steps.push(step);
                    }
                    d /= 2;
                }
            }
        }
        steps
    }
}

/// The network [`IntOp::circuit`] uses. Brent-Kung has the fewest gates for about 1.7
/// times the levels of Sklansky; a level costs `max(latency, gates / throughput)`, and
/// at 256 bits the widest adder level is 511 gates, so the fewest gates win unless a
/// backend bootstraps more than `511 / latency` ciphertexts a second (3.4 million at
/// 150 us): true of the CPU and of the CUDA issue's floor (`docs/perf/2026-12-03.md`). A
/// latency-bound backend builds with [`IntOp::circuit_with`] and Sklansky.
pub const DEFAULT_PREFIX: PrefixNetwork = PrefixNetwork::BrentKung;

/// Both operands at the longer one's width, the shorter padded with constant zeros (the
/// circuit functions below take operands of any widths, as unsigned numbers).
fn zero_extend(x: &[Bit], y: &[Bit]) -> (Vec<Bit>, Vec<Bit>) {
    let w = x.len().max(y.len());
    let pad = |v: &[Bit]| v.iter().copied().chain(std::iter::repeat(Bit::FALSE)).take(w).collect();
    (pad(x), pad(y))
}

/// `(G_hi OR (P_hi AND G_lo), P_hi AND P_lo)`: the group `hi` followed by the lower group `lo`.
fn combine(b: &mut Builder, (g_hi, p_hi): (Bit, Bit), (g_lo, p_lo): (Bit, Bit)) -> (Bit, Bit) {
    let through = b.and(p_hi, g_lo);
    (b.or(g_hi, through), b.and(p_hi, p_lo))
}

/// Carry out of every position: `G[i]` is the carry out of bit `i`.
fn prefix_carries(b: &mut Builder, g: &[Bit], p: &[Bit], network: PrefixNetwork) -> Vec<Bit> {
    let mut gp: Vec<(Bit, Bit)> = g.iter().copied().zip(p.iter().copied()).collect();
    for step in network.steps(g.len()) {
        let before = gp.clone();
        for (i, j) in step {
            gp[i] = combine(b, before[i], before[j]);
        }
    }
    gp.into_iter().map(|(g, _)| g).collect()
}

/// `a + b + carry_in` as `(sum mod 2^w, carry out)`.
pub fn add_with(b: &mut Builder, x: &[Bit], y: &[Bit], carry_in: Bit, network: PrefixNetwork) -> (Vec<Bit>, Bit) {
    let (x, y) = &zero_extend(x, y);
    let w = x.len();
    if w == 0 {
        return (Vec::new(), carry_in);
    }
    let p: Vec<Bit> = x.iter().zip(y).map(|(&a, &c)| b.xor(a, c)).collect();
    let mut g: Vec<Bit> = Vec::with_capacity(w);
    // The carry-in folds into the first generate; a constant one makes it an OR.
    g.push(match carry_in.constant() {
        Some(false) => b.and(x[0], y[0]),
        Some(true) => b.or(x[0], y[0]),
        None => {
            let g0 = b.and(x[0], y[0]);
            let t = b.and(p[0], carry_in);
            b.or(g0, t)
        }
    });
    g.extend(x.iter().zip(y).skip(1).map(|(&a, &c)| b.and(a, c)));
    let carries = prefix_carries(b, &g, &p, network);
    let mut sum = Vec::with_capacity(w);
    sum.push(b.xor(p[0], carry_in));
    for i in 1..w {
        sum.push(b.xor(p[i], carries[i - 1]));
    }
    (sum, carries[w - 1])
}

/// `a + b mod 2^w`.
pub fn add(b: &mut Builder, x: &[Bit], y: &[Bit], network: PrefixNetwork) -> Vec<Bit> {
    add_with(b, x, y, Bit::FALSE, network).0
}

/// `a - b mod 2^w` as `a + NOT b + 1`.
pub fn sub(b: &mut Builder, x: &[Bit], y: &[Bit], network: PrefixNetwork) -> Vec<Bit> {
    let (x, y) = &zero_extend(x, y);
    let not_y: Vec<Bit> = y.iter().map(|&c| !c).collect();
    add_with(b, x, &not_y, Bit::TRUE, network).0
}

/// A balanced tree over `(g, p)` pairs, least significant first: the group's `g`.
fn carry_tree(b: &mut Builder, pairs: &[(Bit, Bit)]) -> (Bit, Bit) {
    match pairs {
        [] => (Bit::FALSE, Bit::TRUE),
        [one] => *one,
        _ => {
            let (lo, hi) = pairs.split_at(pairs.len().div_ceil(2));
            let lo = carry_tree(b, lo);
            let hi = carry_tree(b, hi);
            combine(b, hi, lo)
        }
    }
}

/// `a < b` (unsigned): the most significant differing bit decides, found by a tree of
/// `(a_i < b_i, a_i == b_i)` pairs.
pub fn lt(b: &mut Builder, x: &[Bit], y: &[Bit]) -> Bit {
    let (x, y) = &zero_extend(x, y);
    let pairs: Vec<(Bit, Bit)> = x.iter().zip(y).map(|(&a, &c)| (b.and(!a, c), b.xnor(a, c))).collect();
    carry_tree(b, &pairs).0
}

/// `a <= b` as `NOT (b < a)`.
pub fn le(b: &mut Builder, x: &[Bit], y: &[Bit]) -> Bit {
    !lt(b, y, x)
}

/// `a == b`: an AND tree over the bitwise XNORs.
pub fn eq(b: &mut Builder, x: &[Bit], y: &[Bit]) -> Bit {
    let (x, y) = &zero_extend(x, y);
    let mut level: Vec<Bit> = x.iter().zip(y).map(|(&a, &c)| b.xnor(a, c)).collect();
    if level.is_empty() {
        return Bit::TRUE;
    }
    while level.len() > 1 {
        level = level.chunks(2).map(|c| if c.len() == 2 { b.and(c[0], c[1]) } else { c[0] }).collect();
    }
    level[0]
}

/// `s ? t : f` bitwise.
pub fn select(b: &mut Builder, s: Bit, t: &[Bit], f: &[Bit]) -> Vec<Bit> {
    let (t, f) = &zero_extend(t, f);
    t.iter().zip(f).map(|(&t, &f)| b.mux(s, t, f)).collect()
}

/// `a << k mod 2^w`: rewiring; `k >= w` gives zero.
pub fn shl(x: &[Bit], k: usize) -> Vec<Bit> {
    (0..x.len()).map(|i| if i >= k { x[i - k] } else { Bit::FALSE }).collect()
}

/// `a >> k` (logical): rewiring; `k >= w` gives zero.
pub fn shr(x: &[Bit], k: usize) -> Vec<Bit> {
    (0..x.len()).map(|i| x.get(i + k).copied().unwrap_or(Bit::FALSE)).collect()
}

/// `(sum, carry)` of three bits, the latest-ready one last so it enters late:
/// `t = a ^ b`, `sum = t ^ c`, `carry = (a & b) | (c & t)`: five gates.
fn full_adder(b: &mut Builder, mut three: [Bit; 3]) -> (Bit, Bit) {
    three.sort_by_key(|&x| b.level(x));
    let [x, y, c] = three;
    let t = b.xor(x, y);
    let sum = b.xor(t, c);
    let both = b.and(x, y);
    let through = b.and(c, t);
    (sum, b.or(both, through))
}

/// `a * b` on `out` bits (`w` for the low half, `2w` for the full product); `network`
/// is the final adder's.
pub fn mul(b: &mut Builder, x: &[Bit], y: &[Bit], out: usize, network: PrefixNetwork) -> Vec<Bit> {
    let mut columns: Vec<Vec<Bit>> = vec![Vec::new(); out];
    for (i, &a) in x.iter().enumerate() {
        for (j, &c) in y.iter().enumerate() {
            if i + j < out {
                let pp = b.and(a, c);
                if pp != Bit::FALSE {
                    columns[i + j].push(pp);
                }
            }
        }
    }
    // Carry-save reduction in Dadda stages: each stage brings every column down to the
    // next smaller Dadda height (2, 3, 4, 6, 9, 13, ...), counting the carries it
    // receives from the column below in the same stage, with as few full adders (3 bits
    // to 2) and half adders (2 to 2) as that takes, on its earliest-ready bits. Carries
    // out of the top column are dropped (the product is taken modulo 2^out).
    while let Some(target) = dadda_target(columns.iter().map(Vec::len).max().unwrap_or(0)) {
        let mut next: Vec<Vec<Bit>> = vec![Vec::new(); out];
        for c in 0..out {
            let mut col = std::mem::take(&mut columns[c]);
            col.sort_by_key(|&bit| std::cmp::Reverse(b.level(bit)));
            let mut height = col.len() + next[c].len();
            while height > target && col.len() >= 2 {
                let (sum, carry) = if height - target >= 2 && col.len() >= 3 {
                    height -= 2;
                    let three = [col.pop(), col.pop(), col.pop()].map(|x| x.expect("three bits"));
                    full_adder(b, three)
                } else {
                    height -= 1;
                    let (x, y) = (col.pop().expect("two bits"), col.pop().expect("two bits"));
                    (b.xor(x, y), b.and(x, y))
                };
                next[c].push(sum);
                if c + 1 < out {
                    next[c + 1].push(carry);
                }
            }
            next[c].append(&mut col);
        }
        columns = next;
    }
    let row = |k: usize| columns.iter().map(|col| col.get(k).copied().unwrap_or(Bit::FALSE)).collect::<Vec<_>>();
    let (r0, r1) = (row(0), row(1));
    add(b, &r0, &r1, network)
}

/// The largest Dadda height (`d_1 = 2`, `d_{j+1} = floor(3 d_j / 2)`) below `height`,
/// or `None` when the columns are already down to two rows.
fn dadda_target(height: usize) -> Option<usize> {
    if height <= 2 {
        return None;
    }
    let mut d = 2;
    while d * 3 / 2 < height {
        d = d * 3 / 2;
    }
    Some(d)
}

/// The integer operations, as circuits over `width`-bit operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntOp {
    Add,
    Sub,
    MulLow,
    MulFull,
    Eq,
    Lt,
    Le,
    Min,
    Max,
    /// Inputs: the selector bit, then `t`, then `f`.
    Select,
    Shl(usize),
    Shr(usize),
}

impl IntOp {
    /// The operations with gates (shifts are rewiring only).
    pub const GATED: [IntOp; 10] = [
        IntOp::Add,
        IntOp::Sub,
        IntOp::MulLow,
        IntOp::MulFull,
        IntOp::Eq,
        IntOp::Lt,
        IntOp::Le,
        IntOp::Min,
        IntOp::Max,
        IntOp::Select,
    ];

    pub fn name(self) -> &'static str {
        match self {
            IntOp::Add => "add",
            IntOp::Sub => "sub",
            IntOp::MulLow => "mul_low",
            IntOp::MulFull => "mul_full",
            IntOp::Eq => "eq",
            IntOp::Lt => "lt",
            IntOp::Le => "le",
            IntOp::Min => "min",
            IntOp::Max => "max",
            IntOp::Select => "select",
            IntOp::Shl(_) => "shl",
            IntOp::Shr(_) => "shr",
        }
    }

    /// Parses a name of [`IntOp::GATED`].
    pub fn from_name(name: &str) -> Option<IntOp> {
        IntOp::GATED.into_iter().find(|op| op.name().eq_ignore_ascii_case(name))
    }

    /// Output bits for `width`-bit operands.
    pub fn output_width(self, width: usize) -> usize {
        match self {
            IntOp::MulFull => 2 * width,
            IntOp::Eq | IntOp::Lt | IntOp::Le => 1,
            _ => width,
        }
    }

    /// The circuit at `width` bits: inputs `a` then `b` (each least significant first;
    /// for [`IntOp::Select`] the selector, then `t`, then `f`; shifts take `a` only).
    pub fn circuit(self, width: usize) -> Circuit {
        self.circuit_with(width, DEFAULT_PREFIX)
    }

    /// [`IntOp::circuit`] with the adders (of add, sub and the multipliers) on `network`.
    pub fn circuit_with(self, width: usize, network: PrefixNetwork) -> Circuit {
        let mut b = Builder::new();
        let out = match self {
            IntOp::Shl(k) | IntOp::Shr(k) => {
                let x = b.inputs(width);
                if let IntOp::Shl(_) = self {
                    shl(&x, k)
                } else {
                    shr(&x, k)
                }
            }
            IntOp::Select => {
                let s = b.input();
                let t = b.inputs(width);
                let f = b.inputs(width);
                select(&mut b, s, &t, &f)
            }
            _ => {
                let x = b.inputs(width);
                let y = b.inputs(width);
                match self {
                    IntOp::Add => add(&mut b, &x, &y, network),
                    IntOp::Sub => sub(&mut b, &x, &y, network),
                    IntOp::MulLow => mul(&mut b, &x, &y, width, network),
                    IntOp::MulFull => mul(&mut b, &x, &y, 2 * width, network),
                    IntOp::Eq => vec![eq(&mut b, &x, &y)],
                    IntOp::Lt => vec![lt(&mut b, &x, &y)],
                    IntOp::Le => vec![le(&mut b, &x, &y)],
                    IntOp::Min | IntOp::Max => {
                        let less = lt(&mut b, &x, &y);
                        let (t, f) = if self == IntOp::Min { (&x, &y) } else { (&y, &x) };
                        select(&mut b, less, t, f)
                    }
                    IntOp::Shl(_) | IntOp::Shr(_) | IntOp::Select => unreachable!("handled above"),
                }
            }
        };
        b.finish(out)
    }
}
