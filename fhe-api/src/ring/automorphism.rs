//! Galois automorphisms (being written).
