//! Comparisons. Each is one level of bivariate tables over the packed block pairs
//! `a_i M + b_i`, then a reduction:
//!
//! - **equality**: per-block `a_i == b_i` bits, summed in groups of up to `p - 1`
//!   (`p` the block modulus, 15 for `M2C2`) and each group's sum compared with its size,
//!   until one bit is left: `1 + ceil(log_(p-1) B)` levels;
//! - **order**, in one of two forms, the one with fewer rounds of `threads` bootstraps
//!   ([`order_rounds`]):
//!   - *sign tree*: per-block signs (less, equal, greater), combined pairwise from the
//!     most significant (`hi` equal: take `lo`, else `hi`), the last level mapping the
//!     sign to the answer: `2B - 1` bootstraps in `1 + ceil(log2 B)` levels;
//!   - *borrow chain*: `x + (M^B - 1 - y) + 1 = x - y + M^B` carries out of its top block
//!     exactly when `x >= y`, so the carries of [`super::add::sub`]'s blocks, one lone
//!     bootstrap a block (the CPU backend gives each both cores), answer `x >= y`: `B`
//!     bootstraps in `B` levels. `a < b` is `!(a >= b)`, `a > b` is `!(b >= a)`, `a <= b`
//!     is `b >= a`. On one or two threads it takes as many rounds as the tree or fewer.

use fhe_api::{ExtractedLwe, Lut, Result};

use super::{check_pair, RadixBool, RadixUint};
use crate::tfhe::pbs::PbsKey;

const LESS: u64 = 0;
const EQUAL: u64 = 1;
const GREATER: u64 = 2;

/// `a == b`.
pub fn eq(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    equality(key, a, b, true)
}

/// `a != b`.
pub fn ne(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    equality(key, a, b, false)
}

fn equality(key: &PbsKey, a: &RadixUint, b: &RadixUint, want_equal: bool) -> Result<RadixBool> {
    check_pair(a, b)?;
    // A group's sum must stay below the block modulus (and its 2-norm^2, its size,
    // within the noise model's 25).
    let group = (key.encoding().modulus() - 1) as usize;
    let packed = packed_pairs(key, a, b)?;
    let mut bits = key.apply_batch(&packed, &key.bivariate_lut(|x, y| (x == y) as u64)?)?;
    loop {
        let last = bits.len() <= group;
        let sums: Vec<(ExtractedLwe, usize)> = bits
            .chunks(group)
            .map(|c| {
                let terms: Vec<(i64, &ExtractedLwe)> = c.iter().map(|b| (1, b)).collect();
                Ok((ExtractedLwe::linear_combination(&terms, 0)?, c.len()))
            })
            .collect::<Result<_>>()?;
        // One table per group size: at most two distinct sizes per level.
        let luts: Vec<(usize, Lut)> = {
            let mut sizes: Vec<usize> = sums.iter().map(|(_, n)| *n).collect();
            sizes.dedup();
            sizes
                .into_iter()
                .map(|n| {
                    let flip = last && !want_equal;
                    Ok((n, key.lut(move |s| ((s == n as u64) != flip) as u64)?))
                })
                .collect::<Result<_>>()?
        };
        let lut_of = |n: usize| &luts.iter().find(|(m, _)| *m == n).expect("a table per size").1;
        let jobs: Vec<(&ExtractedLwe, &Lut)> = sums.iter().map(|(s, n)| (s, lut_of(*n))).collect();
        bits = key.apply_mixed(&jobs)?;
        if last {
            return Ok(RadixBool(bits.pop().expect("one bit")));
        }
    }
}

/// `a < b`.
pub fn lt(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    order(key, a, b, Order::Lt, Form::Auto)
}

/// `a <= b`.
pub fn le(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    order(key, a, b, Order::Le, Form::Auto)
}

/// `a > b`.
pub fn gt(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    order(key, a, b, Order::Gt, Form::Auto)
}

/// `a >= b`.
pub fn ge(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<RadixBool> {
    order(key, a, b, Order::Ge, Form::Auto)
}

/// Rounds of `threads` parallel bootstraps for the borrow chain and the sign tree at
/// `blocks` blocks (module docs). The chain's bootstraps are lone, each on two cores
/// where the backend can, so a tie goes to the chain.
pub fn order_rounds(blocks: usize, threads: usize) -> (usize, usize) {
    let t = threads.max(1);
    let mut tree = blocks.div_ceil(t);
    let mut k = blocks;
    while k > 1 {
        tree += (k / 2).div_ceil(t);
        k = k.div_ceil(2);
    }
    (blocks, tree)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Order {
    fn answer(self, sign: u64) -> bool {
        match self {
            Order::Lt => sign == LESS,
            Order::Le => sign != GREATER,
            Order::Gt => sign == GREATER,
            Order::Ge => sign != LESS,
        }
    }

    /// The chain's `x >= y` form: whether `(x, y)` is `(b, a)`, and whether the answer
    /// is `x >= y` itself (else its negation).
    fn chain(self) -> (bool, bool) {
        match self {
            Order::Lt => (false, false),
            Order::Le => (true, true),
            Order::Gt => (true, false),
            Order::Ge => (false, true),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Auto,
    Chain,
    Tree,
}

fn packed_pairs(key: &PbsKey, a: &RadixUint, b: &RadixUint) -> Result<Vec<ExtractedLwe>> {
    a.blocks().iter().zip(b.blocks()).map(|(x, y)| key.pack(x, y)).collect()
}

fn order(key: &PbsKey, a: &RadixUint, b: &RadixUint, order: Order, form: Form) -> Result<RadixBool> {
    check_pair(a, b)?;
    let blocks = a.blocks().len();
    let form = match form {
        Form::Auto => {
            let (chain, tree) = order_rounds(blocks, rayon::current_num_threads());
            if blocks > 1 && chain <= tree {
                Form::Chain
            } else {
                Form::Tree
            }
        }
        f => f,
    };
    if form == Form::Chain {
        let (swap, ge) = order.chain();
        let (x, y) = if swap { (b, a) } else { (a, b) };
        return borrow_chain(key, x, y, ge);
    }
    sign_tree(key, a, b, order)
}

/// `x >= y` (or its negation, `ge` false) from the carries of `x + !y + 1`.
fn borrow_chain(key: &PbsKey, x: &RadixUint, y: &RadixUint, ge: bool) -> Result<RadixBool> {
    let m = key.encoding().message_modulus();
    let sums = super::add::sub_sums(key, x, y)?;
    let last = sums.len() - 1;
    // Block sums are at most `2M - 1` with the carry in: below the block modulus.
    let (carry, answer) = (key.lut(|v| v / m)?, key.lut(|v| ((v >= m) == ge) as u64)?);
    let mut c: Option<ExtractedLwe> = None;
    for (i, s) in sums.into_iter().enumerate() {
        let t = match &c {
            Some(c) => ExtractedLwe::linear_combination(&[(1, &s), (1, c)], 0)?,
            None => s,
        };
        let lut = if i == last { &answer } else { &carry };
        c = Some(key.apply_batch(std::slice::from_ref(&t), lut)?.remove(0));
    }
    Ok(RadixBool(c.expect("a radix integer has a block")))
}

fn sign_tree(key: &PbsKey, a: &RadixUint, b: &RadixUint, order: Order) -> Result<RadixBool> {
    let sign = |x: u64, y: u64| match x.cmp(&y) {
        std::cmp::Ordering::Less => LESS,
        std::cmp::Ordering::Equal => EQUAL,
        std::cmp::Ordering::Greater => GREATER,
    };
    let combine = |hi: u64, lo: u64| if hi == EQUAL { lo } else { hi };
    let packed = packed_pairs(key, a, b)?;
    if packed.len() == 1 {
        let lut = key.bivariate_lut(|x, y| order.answer(sign(x, y)) as u64)?;
        return Ok(RadixBool(key.apply_batch(&packed, &lut)?.remove(0)));
    }
    let mut signs = key.apply_batch(&packed, &key.bivariate_lut(sign)?)?;
    let step = key.bivariate_lut(combine)?;
    let step_last = key.bivariate_lut(|hi, lo| order.answer(combine(hi, lo)) as u64)?;
    while signs.len() > 1 {
        let last = signs.len() <= 2;
        // Pairs (2j + 1, 2j): the higher block is `hi`; an odd one out passes through.
        let pairs: Vec<ExtractedLwe> = signs.chunks_exact(2).map(|c| key.pack(&c[1], &c[0])).collect::<Result<_>>()?;
        let lut = if last { &step_last } else { &step };
        let mut next = key.apply_batch(&pairs, lut)?;
        if signs.len() % 2 == 1 {
            next.push(signs.pop().expect("the odd one out"));
        }
        signs = next;
    }
    Ok(RadixBool(signs.remove(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integer::radix::tests::{encrypt, fixture, operands, pbs_key};

    fn check(width: usize, cases: usize) {
        let sk = &fixture().0.sk;
        let key = pbs_key();
        for (t, (x, y)) in operands(width, cases, 0xc0de).into_iter().enumerate() {
            let (a, b) = (encrypt(width, x, 2 * t as u64 + 100), encrypt(width, y, 2 * t as u64 + 101));
            let got = |r: Result<RadixBool>| r.unwrap().decrypt(sk).unwrap();
            assert_eq!(got(eq(key, &a, &b)), x == y, "{x} == {y}");
            assert_eq!(got(ne(key, &a, &b)), x != y, "{x} != {y}");
            // Both forms of every order, whatever `Auto` picks on this machine.
            for form in [Form::Chain, Form::Tree] {
                let o = |which| got(order(key, &a, &b, which, form));
                assert_eq!(o(Order::Lt), x < y, "{x} < {y}, {form:?}");
                assert_eq!(o(Order::Le), x <= y, "{x} <= {y}, {form:?}");
                assert_eq!(o(Order::Gt), x > y, "{x} > {y}, {form:?}");
                assert_eq!(o(Order::Ge), x >= y, "{x} >= {y}, {form:?}");
            }
            assert_eq!(got(lt(key, &a, &b)), x < y, "{x} < {y}");
        }
    }

    #[test]
    fn order_round_counts() {
        // One thread: the chain's B against the tree's 2B - 1.
        assert_eq!(order_rounds(32, 1), (32, 63));
        // Two threads: a tie, which the chain takes (its lone bootstraps use both cores).
        assert_eq!(order_rounds(32, 2), (32, 32));
        assert_eq!(order_rounds(5, 2), (5, 3 + 1 + 1 + 1));
        // Many threads: the tree is shallower.
        let (c, t) = order_rounds(128, 16);
        assert!(t < c, "{t} {c}");
    }

    #[test]
    fn comparisons_8_bits() {
        check(8, 1);
    }

    #[test]
    fn comparisons_2_bits_one_block() {
        check(2, 2);
    }

    #[test]
    #[ignore = "about a minute on two cores: cargo test --release -- --ignored"]
    fn comparisons_32_and_64_bits() {
        check(32, 2);
        check(64, 2);
    }
}
