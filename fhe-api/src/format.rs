//! The versioned binary format (`docs/FORMAT.md`). Placeholder until the format lands.
