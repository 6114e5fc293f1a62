//! CKKS encoding (being written).
