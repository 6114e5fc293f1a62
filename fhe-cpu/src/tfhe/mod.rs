//! The bit scheme (GINX bootstrapping of LWE ciphertexts) on the CPU: the ring of a
//! parameter set ([`ring`]), prepared keys and blind rotation ([`bootstrap`]), its inner
//! loops on 32-bit words ([`ginx32`], rings below `2^29`) and on 64-bit words
//! ([`ginx64`], the 54-bit ring), the NTT engines with the key's prefetches spread over
//! their loops ([`stream`]), key switching ([`keyswitch`]), and the multi-bit blind
//! rotation of the sets that group LWE coefficients ([`multi_bit`], a lone one on two
//! threads in [`multi_bit_duo`]).

pub mod bootstrap;
pub mod decompose;
pub mod ginx32;
pub mod ginx64;
pub mod keyswitch;
pub mod multi_bit;
pub mod multi_bit_duo;
pub mod ring;
pub mod stream;
