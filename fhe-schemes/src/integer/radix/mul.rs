//! Multiplication modulo `2^width`: partial products in columns, a carry-save reduction,
//! one carry propagation ([`super::carry`]).
//!
//! - **Block products** (`mul`): for every pair `i + j < B`, the packed block
//!   `a_i M + b_j` (below `M^2 = p` for `M2C2`, so the carry space holds it) is
//!   key-switched once and blind-rotated twice, through the bivariate tables of the low
//!   digit `a_i b_j mod M` (into column `i + j`) and the high digit `a_i b_j / M` (into
//!   column `i + j + 1`, when that is below `B`), as TFHE-rs does for its 2_2 blocks: one
//!   level of `B^2` bootstraps. `scalar_mul` needs none: `d_j a_i` is a host multiple of
//!   a block (at most `3 (M - 1)`, squared 2-norm `d_j^2`).
//! - **Carry-save reduction**: every term's value bound and squared 2-norm are known.
//!   While a column's bounds sum to `2M` or more, its terms are packed (first fit,
//!   largest first) into groups whose sum stays below `p` and whose squared 2-norm stays
//!   within the noise model's 25 (2-norm 5, `docs/PARAMETERS.md`); each group's sum is
//!   bootstrapped twice in the same level, to its message (kept) and its carry (into the
//!   next column). A column of clean terms that needs reducing holds at least three, and
//!   a group takes at least three, so every level shrinks the terms (a Wallace tree over
//!   radix-`M` digits). Every level is one [`PbsKey::apply_indexed`] call.
//! - **Final add**: once every column's bounds sum below `2M`, the columns are summed on
//!   the host and one propagation cleans them, the top carry dropped.

use fhe_api::{ExtractedLwe, Lut, Result};

use super::carry::{propagate, Propagation};
use super::{check_pair, digits, RadixUint};
use crate::tfhe::pbs::{Encoding, PbsKey};

/// The noise model's bound on the squared 2-norm of a bootstrapped linear combination
/// (`docs/PARAMETERS.md`: `M2C2` fails below 2^-64 up to 2-norm 5).
const MAX_NORM2: u64 = 25;

/// What is known of a term without decrypting it: its value is at most `max`, its noise
/// that of `norm2` fresh bootstrap outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bound {
    pub max: u64,
    pub norm2: u64,
}

/// A bootstrap output: the noise of one.
const fn fresh(max: u64) -> Bound {
    Bound { max, norm2: 1 }
}

/// How one level treats a column: terms kept as they are, and groups each summed and
/// bootstrapped to a message (kept) and a carry (into the next column, when it has one).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ColumnPlan {
    pub keep: Vec<usize>,
    pub groups: Vec<Vec<usize>>,
}

fn needs_reducing(col: &[Bound], enc: Encoding) -> bool {
    // The final propagation takes sums below 2M and adds one carry to each.
    col.iter().map(|b| b.max).sum::<u64>() >= 2 * enc.message_modulus()
        || col.iter().map(|b| b.norm2).sum::<u64>() >= MAX_NORM2
}

/// The next level of the reduction, or `None` when every column is ready for the final
/// add.
pub(crate) fn plan_level(columns: &[Vec<Bound>], enc: Encoding) -> Option<Vec<ColumnPlan>> {
    if !columns.iter().any(|c| needs_reducing(c, enc)) {
        return None;
    }
    let cap = enc.modulus() - 1;
    let plans = columns
        .iter()
        .map(|col| {
            if !needs_reducing(col, enc) {
                return ColumnPlan { keep: (0..col.len()).collect(), groups: Vec::new() };
            }
            let mut order: Vec<usize> = (0..col.len()).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(col[i].max));
            let mut groups: Vec<(Vec<usize>, Bound)> = Vec::new();
            for i in order {
                let b = col[i];
                match groups.iter_mut().find(|(_, s)| s.max + b.max <= cap && s.norm2 + b.norm2 <= MAX_NORM2) {
                    Some((g, s)) => {
                        g.push(i);
                        s.max += b.max;
                        s.norm2 += b.norm2;
                    }
                    None => groups.push((vec![i], b)),
                }
            }
            // A lone clean term gains nothing from a bootstrap.
            let (keep, groups): (Vec<_>, Vec<_>) =
                groups.into_iter().partition(|(g, s)| g.len() == 1 && s.max < enc.message_modulus() && s.norm2 == 1);
            ColumnPlan {
                keep: keep.into_iter().flat_map(|(g, _)| g).collect(),
                groups: groups.into_iter().map(|(g, _)| g).collect(),
            }
        })
        .collect();
    Some(plans)
}

/// The bounds of a group's message and carry (`None`: the carry is always 0).
fn group_outputs(sum: u64, enc: Encoding) -> (Bound, Option<Bound>) {
    let m = enc.message_modulus();
    (fresh(sum.min(m - 1)), (sum >= m).then(|| fresh(sum / m)))
}

/// Bootstraps and levels of the reduction of `columns`, planned on bounds alone.
pub(crate) fn reduction_cost(mut columns: Vec<Vec<Bound>>, enc: Encoding) -> (usize, usize) {
    let (mut bootstraps, mut levels) = (0, 0);
    while let Some(plans) = plan_level(&columns, enc) {
        levels += 1;
        let mut next: Vec<Vec<Bound>> = vec![Vec::new(); columns.len()];
        for (c, (col, plan)) in columns.iter().zip(plans).enumerate() {
            next[c].extend(plan.keep.iter().map(|&i| col[i]));
            for g in plan.groups {
                let (msg, carry) = group_outputs(g.iter().map(|&i| col[i].max).sum(), enc);
                next[c].push(msg);
                bootstraps += 1;
                if let (Some(carry), true) = (carry, c + 1 < columns.len()) {
                    next[c + 1].push(carry);
                    bootstraps += 1;
                }
            }
        }
        columns = next;
    }
    (bootstraps, levels)
}

/// The bounds of the partial products of a `blocks`-block `mul`: the low digits (at most
/// `M - 1`) and high digits (at most `(M - 1)^2 / M`).
pub(crate) fn product_bounds(blocks: usize, enc: Encoding) -> Vec<Vec<Bound>> {
    let m = enc.message_modulus();
    let mut columns = vec![Vec::new(); blocks];
    for i in 0..blocks {
        for j in 0..blocks - i {
            columns[i + j].push(fresh(m - 1));
            if i + j + 1 < blocks {
                columns[i + j + 1].push(fresh((m - 1) * (m - 1) / m));
            }
        }
    }
    columns
}

/// Bootstraps and levels of a `width`-bit [`mul`] of `set` before its final carry
/// propagation (the product level, then the reduction), planned on bounds alone; the
/// propagation adds an `add`'s carry cost (`docs/INTEGERS.md`).
pub fn mul_cost(set: fhe_api::ParamSet, width: usize) -> Result<(usize, usize)> {
    let (enc, blocks) = (Encoding::for_set(set)?, super::block_count(set, width)?);
    let (b, l) = reduction_cost(product_bounds(blocks, enc), enc);
    Ok((blocks * blocks + b, 1 + l))
}

/// `a * b mod 2^width`.
pub fn mul(key: &PbsKey, a: &RadixUint, b: &RadixUint, how: Propagation) -> Result<RadixUint> {
    check_pair(a, b)?;
    let enc = key.encoding();
    let (m, n) = (enc.message_modulus(), a.blocks().len());
    let (low, high) = (key.bivariate_lut(|x, y| (x * y) % m)?, key.bivariate_lut(|x, y| (x * y) / m)?);
    let mut packed = Vec::with_capacity(n * (n + 1) / 2);
    let mut jobs: Vec<(usize, &Lut)> = Vec::with_capacity(n * n);
    let mut places = Vec::with_capacity(n * n);
    // The same order as `product_bounds`, so each output lands with its bound.
    for i in 0..n {
        for j in 0..n - i {
            jobs.push((packed.len(), &low));
            places.push(i + j);
            if i + j + 1 < n {
                jobs.push((packed.len(), &high));
                places.push(i + j + 1);
            }
            packed.push(key.pack(&a.blocks()[i], &b.blocks()[j])?);
        }
    }
    let out = key.apply_indexed(&packed, &jobs)?;
    let mut columns: Vec<Vec<ExtractedLwe>> = vec![Vec::new(); n];
    for (ct, c) in out.into_iter().zip(places) {
        columns[c].push(ct);
    }
    let bounds = product_bounds(n, enc);
    let columns = columns.into_iter().zip(bounds).map(|(cts, bs)| cts.into_iter().zip(bs).collect()).collect();
    reduce(key, columns, how)
}

/// `a * k mod 2^width` for a known `k` (little-endian limbs; it must fit the width).
pub fn scalar_mul(key: &PbsKey, a: &RadixUint, k: &[u64], how: Propagation) -> Result<RadixUint> {
    let enc = key.encoding();
    let n = a.blocks().len();
    let ds = digits(k, enc.message_bits, n)?;
    let mut columns: Vec<Vec<(ExtractedLwe, Bound)>> = vec![Vec::new(); n];
    for (j, &d) in ds.iter().enumerate().filter(|(_, &d)| d != 0) {
        for (i, x) in a.blocks()[..n - j].iter().enumerate() {
            let bound = Bound { max: d * (enc.message_modulus() - 1), norm2: d * d };
            columns[i + j].push((ExtractedLwe::linear_combination(&[(d as i64, x)], 0)?, bound));
        }
    }
    reduce(key, columns, how)
}

/// The carry-save reduction of `columns` (terms with their bounds), then the final add.
fn reduce(key: &PbsKey, mut columns: Vec<Vec<(ExtractedLwe, Bound)>>, how: Propagation) -> Result<RadixUint> {
    let enc = key.encoding();
    let m = enc.message_modulus();
    let (msg, carry) = (key.lut(|x| x % m)?, key.lut(|x| x / m)?);
    let mut levels = 0;
    loop {
        let bounds: Vec<Vec<Bound>> = columns.iter().map(|c| c.iter().map(|(_, b)| *b).collect()).collect();
        let Some(plans) = plan_level(&bounds, enc) else { break };
        levels += 1;
        // Each level removes terms from a column that needs it (module docs).
        assert!(levels <= 2 * columns.len() + 8, "the carry-save reduction stopped shrinking");
        let mut sums = Vec::new();
        let mut jobs: Vec<(usize, &Lut)> = Vec::new();
        let mut dest: Vec<(usize, Bound)> = Vec::new();
        let mut next: Vec<Vec<(ExtractedLwe, Bound)>> = vec![Vec::new(); columns.len()];
        for (c, (col, plan)) in columns.iter().zip(plans).enumerate() {
            next[c].extend(plan.keep.iter().map(|&i| col[i].clone()));
            for g in plan.groups {
                let terms: Vec<(i64, &ExtractedLwe)> = g.iter().map(|&i| (1, &col[i].0)).collect();
                let (m_bound, c_bound) = group_outputs(g.iter().map(|&i| col[i].1.max).sum(), enc);
                jobs.push((sums.len(), &msg));
                dest.push((c, m_bound));
                if let (Some(b), true) = (c_bound, c + 1 < columns.len()) {
                    jobs.push((sums.len(), &carry));
                    dest.push((c + 1, b));
                }
                sums.push(ExtractedLwe::linear_combination(&terms, 0)?);
            }
        }
        for (ct, (c, b)) in key.apply_indexed(&sums, &jobs)?.into_iter().zip(dest) {
            next[c].push((ct, b));
        }
        columns = next;
    }
    // The largest column sum above column 0 decides whether the carry chain reads message
    // and carry from one rotation (`carry::propagate`).
    let max_sum = columns.iter().skip(1).map(|col| col.iter().map(|(_, b)| b.max).sum::<u64>()).max().unwrap_or(0);
    let sums = columns
        .iter()
        .map(|col| match col.len() {
            0 => Ok(key.trivial(0)),
            _ => ExtractedLwe::linear_combination(&col.iter().map(|(ct, _)| (1, ct)).collect::<Vec<_>>(), 0),
        })
        .collect::<Result<_>>()?;
    propagate(key, sums, max_sum, how)
}

#[cfg(test)]
#[path = "mul_tests.rs"]
mod tests;
