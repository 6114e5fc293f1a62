//! Integers as boolean-gate circuits: one encrypted bit per binary digit, every
//! operation a levelled circuit ([`circuit::IntOp`] over a [`netlist`]) run with one
//! batched bootstrap per level. Gate counts and depths are in `docs/INTEGERS.md`.

pub mod circuit;
pub mod netlist;
