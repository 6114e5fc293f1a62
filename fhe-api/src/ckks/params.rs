//! CKKS parameters (being written).
