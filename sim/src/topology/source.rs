//! The text of a topology file: its name for messages, byte-offset to line conversion, and a
//! stable hash of its bytes.

use crate::error::SimError;

/// A topology file's text and the name errors use for it.
pub(crate) struct Source<'a> {
    /// Path, or `bundled:NAME`.
    pub file: String,
    /// The file's text.
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
    }

    /// An error at a byte span of this file.
    pub fn error(
        &self,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> SimError {
        SimError::Topology {
            file: self.file.clone(),
            line: self.line_of(span.start),
            message: message.into(),
            fix: fix.into(),
        }
    }

    /// Turns a TOML parse or schema error into a `SimError` with its line.
    pub fn toml_error(&self, err: &toml::de::Error) -> SimError {
        let line = err.span().map(|s| self.line_of(s.start)).unwrap_or(1);
        let message = err.message().trim().to_string();
        let fix = if message.contains("unknown field") {
            "check the key's spelling against topologies/SCHEMA.md (unknown keys are rejected)"
        } else if message.contains("missing field") {
            "add the missing key; topologies/SCHEMA.md lists the required keys of every table"
        } else {
            "correct the TOML at that line; topologies/SCHEMA.md documents the schema"
        };
        SimError::Topology { file: self.file.clone(), line, message, fix: fix.to_string() }
    }
}

/// 64-bit FNV-1a of `bytes`: a small, stable (platform- and version-independent) hash used to
/// identify the exact topology file a run used.
pub fn fnv1a_64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_vectors() {
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn lines_are_one_based() {
        let s = Source { file: "f".into(), text: "a\nb\nc" };
        assert_eq!(s.line_of(0), 1);
        assert_eq!(s.line_of(2), 2);
        assert_eq!(s.line_of(4), 3);
        assert_eq!(s.line_of(100), 3);
    }
}
