//! One shared-cache entry: the violations of one (gate, file) under one key, small and checked.
//!
//! ```text
//! "QGRC"  format magic
//! u8      format version (1)
//! u16 BE  length of the key, then the key (UTF-8): `gate \0 file \0 cache key`
//! [32]    SHA-256 of the payload
//! u32 BE  length of the payload, then the payload: LZ4 (block, size prepended) of the JSON
//!         list of violations
//! ```
//!
//! An entry is believed only when every part checks (each failure is a `Rejected` reason). The
//! hash is checked before the payload is decompressed, so damaged bytes never reach the
//! decompressor.

use sha2::{Digest, Sha256};

use crate::core::violation::Violation;

const MAGIC: &[u8; 4] = b"QGRC";
const VERSION: u8 = 1;
/// The largest JSON an entry may claim to hold: a file's findings are kilobytes; a claim of
/// gigabytes is damage or malice, not a result.
const MAX_JSON: usize = 16 << 20;

/// Why an entry was not believed (for the debug log).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejected {
    #[error("not a qgates entry (no format magic)")]
    Magic,
    #[error("written by another format version ({0}; this qgates reads {VERSION})")]
    Version(u8),
    #[error("kept under another key")]
    ForeignKey,
    #[error("truncated or padded ({0})")]
    Length(&'static str),
    #[error("the payload does not match its SHA-256")]
    Checksum,
    #[error("the payload does not decompress: {0}")]
    Compression(String),
    #[error("the payload is not a list of violations: {0}")]
    Json(String),
}

/// The key an entry is stored with and checked against.
pub fn full_key(gate: &str, file: &str, key: &str) -> String {
    format!("{gate}\0{file}\0{key}")
}

pub fn encode(full_key: &str, violations: &[Violation]) -> Vec<u8> {
    let json = serde_json::to_vec(violations).unwrap_or_else(|_| b"[]".to_vec());
    let payload = lz4_flex::compress_prepend_size(&json);
    let key = full_key.as_bytes();
    // A key longer than u16 cannot be written; such an entry is simply not shared.
    let key_len = u16::try_from(key.len()).unwrap_or(0);
    let mut out = Vec::with_capacity(4 + 1 + 2 + key.len() + 32 + 4 + payload.len());
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&key_len.to_be_bytes());
    out.extend_from_slice(&key[..usize::from(key_len)]);
    out.extend_from_slice(&Sha256::digest(&payload));
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(&payload);
    out
}

pub fn decode(expected_key: &str, bytes: &[u8]) -> Result<Vec<Violation>, Rejected> {
    let mut rest = bytes;
    let mut take = |n: usize, what: &'static str| -> Result<&[u8], Rejected> {
        if rest.len() < n {
            return Err(Rejected::Length(what));
        }
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Ok(head)
    };
    if take(4, "magic").map_err(|_| Rejected::Magic)? != MAGIC {
        return Err(Rejected::Magic);
    }
    let version = take(1, "version")?[0];
    if version != VERSION {
        return Err(Rejected::Version(version));
    }
    let key_len = u16::from_be_bytes(take(2, "key length")?.try_into().unwrap_or_default());
    if take(usize::from(key_len), "key")? != expected_key.as_bytes() {
        return Err(Rejected::ForeignKey);
    }
    let checksum = take(32, "checksum")?.to_vec();
    let payload_len = u32::from_be_bytes(take(4, "payload length")?.try_into().unwrap_or_default());
    let payload = take(payload_len as usize, "payload")?;
    if !rest.is_empty() {
        return Err(Rejected::Length("bytes after the payload"));
    }
    if Sha256::digest(payload).as_slice() != checksum.as_slice() {
        return Err(Rejected::Checksum);
    }
    let claimed = payload
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or(Rejected::Length("payload size"))?;
    if claimed > MAX_JSON {
        return Err(Rejected::Compression(format!(
            "it claims {claimed} bytes, more than {MAX_JSON}"
        )));
    }
    let json = lz4_flex::decompress_size_prepended(payload)
        .map_err(|e| Rejected::Compression(e.to_string()))?;
    serde_json::from_slice(&json).map_err(|e| Rejected::Json(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violations() -> Vec<Violation> {
        let json = serde_json::json!([
            {"file": "src/a.py", "line": 3, "column": 1, "code": "F401",
             "message": "`os` imported but unused", "severity": "error", "fixable": true},
            {"file": "src/a.py", "line": 9, "code": "E501", "message": "line too long",
             "severity": "warning"}
        ]);
        serde_json::from_value(json).unwrap()
    }

    /// The offset of the payload in an entry for `key` (after magic, version, key, checksum
    /// and payload length).
    fn payload_at(key: &str) -> usize {
        4 + 1 + 2 + key.len() + 32 + 4
    }

    #[test]
    fn an_entry_reads_back_and_is_small() {
        let key = full_key("ruff_lint", "src/a.py", "0123abcd");
        let v = violations();
        let bytes = encode(&key, &v);
        assert_eq!(decode(&key, &bytes), Ok(v.clone()));
        assert_eq!(decode(&key, &encode(&key, &[])), Ok(vec![]));
        let many: Vec<Violation> = v.iter().cycle().take(200).cloned().collect();
        let json = serde_json::to_vec(&many).unwrap().len();
        assert!(encode(&key, &many).len() * 4 < json, "compressed");
    }

    #[test]
    fn every_kind_of_damage_is_rejected() {
        let key = full_key("ruff_lint", "src/a.py", "0123abcd");
        let good = encode(&key, &violations());
        let at = payload_at(&key);
        let damaged = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            f(&mut b);
            decode(&key, &b)
        };
        assert_eq!(damaged(&|b| b[0] = b'X'), Err(Rejected::Magic));
        assert_eq!(decode(&key, b"QG"), Err(Rejected::Magic));
        assert_eq!(decode(&key, b""), Err(Rejected::Magic));
        assert_eq!(damaged(&|b| b[4] = 2), Err(Rejected::Version(2)));
        assert_eq!(
            decode(&full_key("ruff_lint", "src/b.py", "0123abcd"), &good),
            Err(Rejected::ForeignKey)
        );
        assert_eq!(damaged(&|b| b[8] ^= 1), Err(Rejected::ForeignKey));
        // Cut anywhere: a short read of the store.
        for cut in [5, 7, 20, at - 2, at, good.len() - 1] {
            assert!(
                matches!(
                    decode(&key, &good[..cut]),
                    Err(Rejected::Length(_) | Rejected::ForeignKey)
                ),
                "cut at {cut}"
            );
        }
        assert!(matches!(damaged(&|b| b.push(0)), Err(Rejected::Length(_))));
        // A flipped bit in the payload or its hash.
        assert_eq!(damaged(&|b| b[at + 6] ^= 0x10), Err(Rejected::Checksum));
        assert_eq!(damaged(&|b| b[at - 10] ^= 0x10), Err(Rejected::Checksum));
        // A payload whose hash matches but that is not what qgates writes (a store's own
        // rewrite, or a writer that means harm): each is caught by what follows the hash.
        let forged = |payload: Vec<u8>| {
            let mut b = good[..at - 36].to_vec();
            b.extend_from_slice(&Sha256::digest(&payload));
            b.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            b.extend_from_slice(&payload);
            decode(&key, &b)
        };
        assert!(matches!(
            forged(vec![0xff, 0xff, 0xff, 0x7f, 1]),
            Err(Rejected::Compression(_))
        ));
        assert!(matches!(
            forged(vec![10, 0, 0, 0, 0xff]),
            Err(Rejected::Compression(_))
        ));
        assert!(matches!(forged(vec![1]), Err(Rejected::Length(_))));
        let not_violations = lz4_flex::compress_prepend_size(br#"{"rm":"-rf"}"#);
        assert!(matches!(forged(not_violations), Err(Rejected::Json(_))));
        assert_eq!(forged(lz4_flex::compress_prepend_size(b"[]")), Ok(vec![]));
    }
}
