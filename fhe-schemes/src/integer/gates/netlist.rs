//! A levelled netlist of two-input gates and MUXes: built once in the clear, evaluated
//! either in plain booleans (tests, gate counts) or on encrypted bits, one batched
//! bootstrap per level. A MUX node costs two blind rotations and one key switch
//! ([`gates::level_batch`], as `ServerKey::mux`), where AND/AND/OR would cost three
//! bootstraps over two levels.
//!
//! A wire ([`Bit`]) is a node with a polarity: NOT flips the polarity and costs nothing
//! (on ciphertexts it is `q/4 - c`, [`gates::not`]); the constants are the two polarities
//! of node 0. The [`Builder`] folds constants and repeated operands, shares identical
//! gates, and leaves only what the outputs need ([`Builder::finish`]); each gate sits at
//! the earliest level its inputs allow (one more than its latest input), so a level
//! holds every gate that can run at once.

use std::collections::HashMap;

use crate::tfhe::gates::{self, Gate};
use fhe_api::{Backend, Error, LweCiphertext, PreparedKey, Result};

/// One wire: node `self.0 >> 1`, negated when the low bit is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bit(u32);

impl Bit {
    pub const FALSE: Bit = Bit(0);
    pub const TRUE: Bit = Bit(1);

    fn new(node: usize, negated: bool) -> Bit {
        Bit(((node as u32) << 1) | negated as u32)
    }
    fn node(self) -> usize {
        (self.0 >> 1) as usize
    }
    fn negated(self) -> bool {
        self.0 & 1 == 1
    }
    /// The constant this wire carries, if it is one.
    pub fn constant(self) -> Option<bool> {
        (self.node() == 0).then_some(self.negated())
    }
    pub fn constant_of(value: bool) -> Bit {
        if value {
            Bit::TRUE
        } else {
            Bit::FALSE
        }
    }
}

impl std::ops::Not for Bit {
    type Output = Bit;
    fn not(self) -> Bit {
        Bit(self.0 ^ 1)
    }
}

#[derive(Clone, Copy, Debug)]
enum Node {
    /// Node 0: the constant false.
    Zero,
    Input(usize),
    Gate(Gate, Bit, Bit),
    /// `s ? t : f`, with `s` and `t` not negated (the builder normalises).
    Mux(Bit, Bit, Bit),
}

impl Node {
    /// The wires this node reads.
    fn operands(self) -> impl Iterator<Item = Bit> {
        let ops = match self {
            Node::Zero | Node::Input(_) => [None; 3],
            Node::Gate(_, a, b) => [Some(a), Some(b), None],
            Node::Mux(s, t, f) => [Some(s), Some(t), Some(f)],
        };
        ops.into_iter().flatten()
    }

    /// Blind rotations the node costs: one for a gate, two for a MUX.
    fn rotations(self) -> usize {
        match self {
            Node::Zero | Node::Input(_) => 0,
            Node::Gate(..) => 1,
            Node::Mux(..) => 2,
        }
    }
}

/// Builds a netlist gate by gate.
#[derive(Debug)]
pub struct Builder {
    nodes: Vec<Node>,
    /// The level of every node (inputs and the constant at 0).
    level: Vec<usize>,
    inputs: usize,
    shared: HashMap<(Gate, Bit, Bit), Bit>,
    shared_mux: HashMap<(Bit, Bit, Bit), Bit>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            nodes: vec![Node::Zero],
            level: vec![0],
            inputs: 0,
            shared: HashMap::new(),
            shared_mux: HashMap::new(),
        }
    }

    /// The next input wire (inputs are numbered in the order they are asked for).
    pub fn input(&mut self) -> Bit {
        self.nodes.push(Node::Input(self.inputs));
        self.level.push(0);
        self.inputs += 1;
        Bit::new(self.nodes.len() - 1, false)
    }

    /// `n` fresh input wires, least significant first.
    pub fn inputs(&mut self, n: usize) -> Vec<Bit> {
        (0..n).map(|_| self.input()).collect()
    }

    /// `gate(a, b)`, folded when an operand is a constant or the operands are the same
    /// wire (or complementary), shared when the same gate was already built.
    pub fn gate(&mut self, gate: Gate, a: Bit, b: Bit) -> Bit {
        if let Some(c) = b.constant() {
            return fold_constant(gate, a, c);
        }
        if let Some(c) = a.constant() {
            return fold_constant(gate, b, c);
        }
        if a == b || a == !b {
            return fold_same(gate, a, a == b);
        }
        // Every gate here is symmetric: one key per unordered pair.
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        if let Some(&bit) = self.shared.get(&(gate, a, b)) {
            return bit;
        }
        self.nodes.push(Node::Gate(gate, a, b));
        self.level.push(1 + self.level[a.node()].max(self.level[b.node()]));
        let bit = Bit::new(self.nodes.len() - 1, false);
        self.shared.insert((gate, a, b), bit);
        bit
    }

    pub fn and(&mut self, a: Bit, b: Bit) -> Bit {
        self.gate(Gate::And, a, b)
    }
    pub fn or(&mut self, a: Bit, b: Bit) -> Bit {
        self.gate(Gate::Or, a, b)
    }
    pub fn xor(&mut self, a: Bit, b: Bit) -> Bit {
        self.gate(Gate::Xor, a, b)
    }
    pub fn xnor(&mut self, a: Bit, b: Bit) -> Bit {
        self.gate(Gate::Xnor, a, b)
    }

    /// The level at which `bit` is ready: 0 for inputs and constants, else one more than
    /// the latest operand of its gate.
    pub fn level(&self, bit: Bit) -> usize {
        self.level[bit.node()]
    }

    /// `s ? t : f`: one MUX node (two blind rotations, one key switch, one level), or a
    /// single gate or none where an operand is a constant or repeats another.
    pub fn mux(&mut self, s: Bit, t: Bit, f: Bit) -> Bit {
        if let Some(c) = s.constant() {
            return if c { t } else { f };
        }
        if t == f {
            return t;
        }
        // A NOT is free: one stored form per MUX (selector and `t` not negated).
        if s.negated() {
            return self.mux(!s, f, t);
        }
        if t.negated() {
            return !self.mux(s, !t, !f);
        }
        // One gate is cheaper than a MUX's two rotations whenever one suffices.
        match (t.constant(), f.constant()) {
            (Some(true), _) => return self.or(s, f),
            (Some(false), _) => return self.and(!s, f),
            (_, Some(true)) => return self.gate(Gate::Or, !s, t),
            (_, Some(false)) => return self.and(s, t),
            _ => {}
        }
        if t == !f {
            return self.xnor(s, t);
        }
        if s == t {
            return self.or(s, f);
        }
        if s == f || s == !f {
            // `s ? t : s` is `s AND t`; `s ? t : !s` is `!s OR t`.
            return if s == f { self.and(s, t) } else { self.gate(Gate::Or, !s, t) };
        }
        if let Some(&bit) = self.shared_mux.get(&(s, t, f)) {
            return bit;
        }
        self.nodes.push(Node::Mux(s, t, f));
        let level = [s, t, f].iter().map(|b| self.level[b.node()]).max().unwrap_or(0);
        self.level.push(1 + level);
        let bit = Bit::new(self.nodes.len() - 1, false);
        self.shared_mux.insert((s, t, f), bit);
        bit
    }

    /// The finished circuit computing `outputs`; gates the outputs do not need are dropped.
    pub fn finish(self, outputs: Vec<Bit>) -> Circuit {
        // Live nodes, found backwards from the outputs (nodes only point to earlier ones).
        let mut live = vec![false; self.nodes.len()];
        for o in &outputs {
            live[o.node()] = true;
        }
        for i in (0..self.nodes.len()).rev() {
            if live[i] {
                self.nodes[i].operands().for_each(|o| live[o.node()] = true);
            }
        }
        // Levels do not change when dead gates go: a gate's level depends on its inputs only.
        let mut levels: Vec<Vec<usize>> = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if live[i] && node.rotations() > 0 {
                let l = self.level[i];
                if levels.len() < l {
                    levels.resize(l, Vec::new());
                }
                levels[l - 1].push(i);
            }
        }
        // The last level reading each node, so the encrypted evaluator can drop it early.
        let mut last_use = vec![0usize; self.nodes.len()];
        for (l, gates) in levels.iter().enumerate() {
            for &g in gates {
                self.nodes[g].operands().for_each(|o| last_use[o.node()] = l + 1);
            }
        }
        for o in &outputs {
            last_use[o.node()] = usize::MAX;
        }
        Circuit { nodes: self.nodes, inputs: self.inputs, outputs, levels, last_use }
    }
}

fn fold_constant(gate: Gate, x: Bit, c: bool) -> Bit {
    match (gate, c) {
        (Gate::And, true) | (Gate::Or, false) | (Gate::Xor, false) | (Gate::Xnor, true) => x,
        (Gate::Nand, true) | (Gate::Nor, false) | (Gate::Xor, true) | (Gate::Xnor, false) => !x,
        (Gate::And, false) | (Gate::Nor, true) => Bit::FALSE,
        (Gate::Or, true) | (Gate::Nand, false) => Bit::TRUE,
    }
}

/// `gate(x, x)` when `same`, else `gate(x, NOT x)`.
fn fold_same(gate: Gate, x: Bit, same: bool) -> Bit {
    match (gate, same) {
        (Gate::And | Gate::Or, true) => x,
        (Gate::Nand | Gate::Nor, true) => !x,
        (Gate::Xor, true) | (Gate::Xnor, false) | (Gate::And, false) | (Gate::Nor, false) => Bit::FALSE,
        (Gate::Xnor, true) | (Gate::Xor, false) | (Gate::Or, false) | (Gate::Nand, false) => Bit::TRUE,
    }
}

/// A finished netlist: inputs, levels of gates, outputs.
#[derive(Clone, Debug)]
pub struct Circuit {
    nodes: Vec<Node>,
    inputs: usize,
    outputs: Vec<Bit>,
    /// `levels[l]`: the gate and MUX nodes at level `l + 1`, all independent of each other.
    levels: Vec<Vec<usize>>,
    last_use: Vec<usize>,
}

/// The shape of a circuit: what a bootstrap-bound backend pays for it. Costs count blind
/// rotations (the bootstrap's dominant part): one per two-input gate, two per MUX.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitStats {
    /// Blind rotations: one per two-input gate, two per MUX node (whose two share one
    /// key switch).
    pub gates: usize,
    /// MUX nodes (each counted twice in `gates`).
    pub muxes: usize,
    /// Levels: sequential batched bootstraps.
    pub depth: usize,
    /// Blind rotations per level, first level first.
    pub level_widths: Vec<usize>,
}

impl CircuitStats {
    /// The widest level (the largest bootstrap batch).
    pub fn max_width(&self) -> usize {
        self.level_widths.iter().copied().max().unwrap_or(0)
    }

    /// Seconds on a backend whose batched bootstrap of `k` ciphertexts takes
    /// `max(latency_s, k / throughput_per_s)`: each level pays its batch or the latency of
    /// one call, whichever is larger (host work and transfers not counted).
    pub fn modelled_seconds(&self, latency_s: f64, throughput_per_s: f64) -> f64 {
        self.level_widths.iter().map(|&w| latency_s.max(w as f64 / throughput_per_s)).sum()
    }
}

impl Circuit {
    pub fn input_count(&self) -> usize {
        self.inputs
    }
    pub fn output_count(&self) -> usize {
        self.outputs.len()
    }

    pub fn stats(&self) -> CircuitStats {
        let level_widths: Vec<usize> =
            self.levels.iter().map(|l| l.iter().map(|&g| self.nodes[g].rotations()).sum()).collect();
        let muxes = self.levels.iter().flatten().filter(|&&g| matches!(self.nodes[g], Node::Mux(..))).count();
        CircuitStats { gates: level_widths.iter().sum(), muxes, depth: level_widths.len(), level_widths }
    }

    fn check_inputs(&self, given: usize) -> Result<()> {
        if given != self.inputs {
            return Err(Error::InvalidInput(format!("circuit takes {} input bits, got {given}", self.inputs)));
        }
        Ok(())
    }

    /// Evaluates in the clear.
    pub fn eval_plain(&self, inputs: &[bool]) -> Result<Vec<bool>> {
        self.check_inputs(inputs.len())?;
        let mut value = vec![false; self.nodes.len()];
        let read = |value: &[bool], b: Bit| value[b.node()] ^ b.negated();
        for (i, node) in self.nodes.iter().enumerate() {
            if let Node::Input(k) = node {
                value[i] = inputs[*k];
            }
        }
        for level in &self.levels {
            for &g in level {
                value[g] = match self.nodes[g] {
                    Node::Gate(gate, a, b) => gate.eval_plain(read(&value, a), read(&value, b)),
                    Node::Mux(s, t, f) => read(&value, if read(&value, s) { t } else { f }),
                    Node::Zero | Node::Input(_) => unreachable!("levels hold gate and MUX nodes only"),
                };
            }
        }
        Ok(self.outputs.iter().map(|&o| read(&value, o)).collect())
    }

    /// Evaluates on encrypted bits: every level is one [`gates::level_batch`] (one
    /// `bootstrap_batch` call on the backend for a level of gates only; one blind-rotation
    /// and one key-switch batch for a level with MUXes); NOTs and constants cost no
    /// bootstrap.
    pub fn eval_encrypted(
        &self,
        backend: &dyn Backend,
        key: &PreparedKey,
        inputs: &[&LweCiphertext],
    ) -> Result<Vec<LweCiphertext>> {
        self.check_inputs(inputs.len())?;
        let params = key.params();
        if let Some(bad) = inputs.iter().find(|c| c.params() != params) {
            return Err(Error::ParamMismatch { expected: params.name().into(), found: bad.params().name().into() });
        }
        let mut value: Vec<Option<LweCiphertext>> = vec![None; self.nodes.len()];
        value[0] = Some(gates::constant(params, false));
        for (i, node) in self.nodes.iter().enumerate() {
            if let Node::Input(k) = node {
                value[i] = Some(inputs[*k].clone());
            }
        }
        let read = |value: &[Option<LweCiphertext>], b: Bit| -> LweCiphertext {
            let ct = value[b.node()].as_ref().expect("levels run in order, so every operand is computed");
            if b.negated() {
                gates::not(ct)
            } else {
                ct.clone()
            }
        };
        for (l, level) in self.levels.iter().enumerate() {
            let (mut gate_nodes, mut mux_nodes) = (Vec::new(), Vec::new());
            let (mut gate_ops, mut mux_ops) = (Vec::new(), Vec::new());
            for &g in level {
                match self.nodes[g] {
                    Node::Gate(gate, a, b) => {
                        gate_nodes.push(g);
                        gate_ops.push((gate, read(&value, a), read(&value, b)));
                    }
                    Node::Mux(s, t, f) => {
                        mux_nodes.push(g);
                        mux_ops.push([read(&value, s), read(&value, t), read(&value, f)]);
                    }
                    Node::Zero | Node::Input(_) => unreachable!("levels hold gate and MUX nodes only"),
                }
            }
            let gate_batch: Vec<_> = gate_ops.iter().map(|(g, a, b)| (*g, a, b)).collect();
            let mux_batch: Vec<_> = mux_ops.iter().map(|[s, t, f]| (s, t, f)).collect();
            let (gate_out, mux_out) = gates::level_batch(backend, key, &gate_batch, &mux_batch)?;
            tracing::trace!(level = l + 1, gates = gate_out.len(), muxes = mux_out.len(), "circuit level bootstrapped");
            for (g, ct) in gate_nodes.into_iter().zip(gate_out).chain(mux_nodes.into_iter().zip(mux_out)) {
                value[g] = Some(ct);
            }
            // Free the operands no later level reads (their last reader was this level).
            for &g in level {
                for n in self.nodes[g].operands().map(Bit::node) {
                    if n != 0 && self.last_use[n] == l + 1 {
                        value[n] = None;
                    }
                }
            }
        }
        Ok(self.outputs.iter().map(|&o| read(&value, o)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_and_repeated_operands_fold_to_no_gates() {
        let mut b = Builder::new();
        let x = b.input();
        for g in Gate::ALL {
            for c in [false, true] {
                let folded = b.gate(g, x, Bit::constant_of(c));
                let same = b.gate(g, x, x);
                let opposite = b.gate(g, x, !x);
                for v in [false, true] {
                    let eval = |bit: Bit| bit.constant().unwrap_or(v ^ bit.negated());
                    assert_eq!(eval(folded), g.eval_plain(v, c), "{g:?} with {c}");
                    assert_eq!(eval(same), g.eval_plain(v, v), "{g:?}(x, x)");
                    assert_eq!(eval(opposite), g.eval_plain(v, !v), "{g:?}(x, !x)");
                }
            }
        }
        assert_eq!(b.finish(vec![x, !x, Bit::TRUE]).stats().gates, 0);
    }

    #[test]
    fn levels_are_asap_dead_gates_dropped_and_shared_gates_built_once() {
        let mut b = Builder::new();
        let i = b.inputs(4);
        let x = b.xor(i[0], i[1]);
        let y = b.and(i[1], i[0]); // the same AND twice, operands swapped: one gate
        let y2 = b.and(i[0], i[1]);
        assert_eq!(y, y2);
        let _dead = b.or(i[2], i[3]);
        let z = b.gate(Gate::Nand, x, !y);
        let w = b.and(z, i[2]);
        let c = b.finish(vec![w, !x]);
        let s = c.stats();
        assert_eq!((s.gates, s.depth, s.level_widths.clone()), (4, 3, vec![2, 1, 1]));
        for v in 0..16u32 {
            let bits: Vec<bool> = (0..4).map(|k| v >> k & 1 == 1).collect();
            let x = bits[0] ^ bits[1];
            let y = bits[0] & bits[1];
            let want = vec![!(x & !y) & bits[2], !x];
            assert_eq!(c.eval_plain(&bits).unwrap(), want);
        }
        assert!(matches!(c.eval_plain(&[true]), Err(Error::InvalidInput(_))));
        // Levels of 2, 1, 1 gates at 1 ms latency and 1000 gates/s: 2 + 1 + 1 ms; at
        // 10 ms latency the three levels cost 10 ms each.
        assert!((s.modelled_seconds(1e-3, 1000.0) - 4e-3).abs() < 1e-12);
        assert!((s.modelled_seconds(10e-3, 1000.0) - 30e-3).abs() < 1e-12);
    }

    /// Every MUX over constants, three inputs and their negations, folded or not, against
    /// its truth table on all eight assignments.
    #[test]
    fn mux_folds_and_normalises_correctly() {
        for choice in 0..8usize.pow(3) {
            let mut b = Builder::new();
            let i = b.inputs(3);
            let wires = [Bit::FALSE, Bit::TRUE, i[0], !i[0], i[1], !i[1], i[2], !i[2]];
            let (s, t, f) = (wires[choice % 8], wires[choice / 8 % 8], wires[choice / 64]);
            let m = b.mux(s, t, f);
            let c = b.finish(vec![m, s, t, f]);
            assert!(c.stats().gates <= 2, "{s:?} {t:?} {f:?}");
            for v in 0..8u32 {
                let bits: Vec<bool> = (0..3).map(|k| v >> k & 1 == 1).collect();
                let out = c.eval_plain(&bits).unwrap();
                assert_eq!(out[0], if out[1] { out[2] } else { out[3] }, "{s:?} {t:?} {f:?} at {bits:?}");
            }
        }
    }

    #[test]
    fn mux_selects() {
        let mut b = Builder::new();
        let i = b.inputs(3);
        let m = b.mux(i[0], i[1], i[2]);
        let c = b.finish(vec![m]);
        let s = c.stats();
        assert_eq!((s.gates, s.muxes, s.depth, s.level_widths.clone()), (2, 1, 1, vec![2]));
        for v in 0..8u32 {
            let bits: Vec<bool> = (0..3).map(|k| v >> k & 1 == 1).collect();
            assert_eq!(c.eval_plain(&bits).unwrap()[0], if bits[0] { bits[1] } else { bits[2] });
        }
    }
}
