//! Stable content hashes for cache keys and trust records (not for security).

/// FNV-1a 64-bit, hex. Stable across runs, platforms and releases.
pub fn stable_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}
