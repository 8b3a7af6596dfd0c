//! switchyard's binary CSR format, written only by `switchyard graph convert --to binary`
//! and read only when the caller names the format (`--format binary`): never a silent cache.
//!
//! Layout (all integers little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `89 53 57 59 43 53 52 0A` (`\x89SWYCSR\n`) |
//! | 8 | 4 | version (1) |
//! | 12 | 4 | flags: bit 0 directed; bits 1-2 weights (0 none, 1 `u32`, 2 `f32`); bit 3 original ids |
//! | 16 | 8 | vertices `n` |
//! | 24 | 8 | arcs `m` |
//! | 32 | 8 | payload bytes (everything after the 64-byte header) |
//! | 40 | 8 | payload checksum |
//! | 48 | 8 | header checksum (of bytes 0..48) |
//! | 56 | 8 | reserved, 0 |
//!
//! Payload sections, each padded to a multiple of 8 bytes: offsets (`n + 1` x `u64`), targets
//! (`m` x `u32`), weights (`m` x `u32` or `f32`, if flagged), original ids (`n` x `u64`, if
//! flagged). The checksum is a 64-bit multiply-xor hash of each section's bytes (hashed in
//! 1 MiB blocks in parallel, blocks combined in order); a truncated, padded or corrupted file
//! is refused with the section that disagrees.

use super::write_error;
use crate::graph::{Csr, EdgeWeights, GraphError};
use rayon::prelude::*;
use std::io::{Read, Write};

/// The 8 magic bytes at the start of every binary CSR file.
pub const MAGIC: [u8; 8] = *b"\x89SWYCSR\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Header length in bytes.
pub const HEADER_BYTES: usize = 64;

const FLAG_DIRECTED: u32 = 1;
const WEIGHT_SHIFT: u32 = 1;
const WEIGHT_MASK: u32 = 0b110;
const FLAG_ORIGINAL_IDS: u32 = 1 << 3;
const KNOWN_FLAGS: u32 = FLAG_DIRECTED | WEIGHT_MASK | FLAG_ORIGINAL_IDS;
const BLOCK_BYTES: usize = 1 << 20;
const HASH_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

fn hash_block(bytes: &[u8]) -> u64 {
    let mut lanes = [
        0x243F_6A88_85A3_08D3u64,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
        0x082E_FA98_EC4E_6C89,
    ];
    let mut words = bytes.chunks_exact(32);
    for group in &mut words {
        for (lane, word) in lanes.iter_mut().zip(group.chunks_exact(8)) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            *lane = (*lane ^ u64::from_le_bytes(w)).wrapping_mul(HASH_MUL).rotate_left(29);
        }
    }
    let mut h = bytes.len() as u64;
    for lane in lanes {
        h = (h ^ lane).wrapping_mul(HASH_MUL).rotate_left(31);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(HASH_MUL);
    }
    h
}

/// Checksum of one byte section (parallel over 1 MiB blocks, combined in order).
fn hash_section(bytes: &[u8]) -> u64 {
    let blocks: Vec<u64> = bytes.par_chunks(BLOCK_BYTES).map(hash_block).collect();
    blocks.into_iter().fold(0xCBF2_9CE4_8422_2325u64 ^ bytes.len() as u64, |h, b| {
        (h ^ b).wrapping_mul(HASH_MUL).rotate_left(27)
    })
}

fn combine(hashes: &[u64]) -> u64 {
    hashes.iter().fold(0u64, |h, &s| (h ^ s).wrapping_mul(HASH_MUL).rotate_left(23))
}

fn pad8(len: usize) -> usize {
    len.div_ceil(8) * 8
}

/// Little-endian bytes of a slice of plain numbers (borrowed on little-endian hosts).
trait LeBytes: Copy + Send + Sync {
    fn to_le_vec(values: &[Self]) -> Vec<u8>;
    fn from_le_slice(bytes: &[u8]) -> Vec<Self>;
}

macro_rules! le_bytes {
    ($t:ty, $n:expr) => {
        impl LeBytes for $t {
            fn to_le_vec(values: &[Self]) -> Vec<u8> {
                let mut out = Vec::with_capacity(values.len() * $n);
                for v in values {
                    out.extend_from_slice(&v.to_le_bytes());
                }
                out
            }
            fn from_le_slice(bytes: &[u8]) -> Vec<Self> {
                let mut out: Vec<$t> = Vec::with_capacity(bytes.len() / $n);
                out.par_extend(bytes.par_chunks_exact($n).map(|c| {
                    let mut a = [0u8; $n];
                    a.copy_from_slice(c);
                    <$t>::from_le_bytes(a)
                }));
                out
            }
        }
    };
}
le_bytes!(u64, 8);
le_bytes!(u32, 4);
le_bytes!(f32, 4);

/// Section byte lengths (unpadded) for a graph shape.
fn section_lengths(n: u64, m: u64, weighted: bool, has_ids: bool) -> Option<[usize; 4]> {
    let n = usize::try_from(n).ok()?;
    let m = usize::try_from(m).ok()?;
    Some([
        n.checked_add(1)?.checked_mul(8)?,
        m.checked_mul(4)?,
        if weighted { m.checked_mul(4)? } else { 0 },
        if has_ids { n.checked_mul(8)? } else { 0 },
    ])
}

/// Writes `csr` (and the dense -> file id map, if any) in the binary CSR format.
pub fn write<W: Write>(
    writer: W,
    csr: &Csr,
    original_ids: Option<&[u64]>,
    name: &str,
) -> Result<(), GraphError> {
    let n = u64::from(csr.num_vertices());
    let m = csr.num_arcs();
    if let Some(ids) = original_ids
        && ids.len() as u64 != n
    {
        return Err(GraphError::InvalidCsr(format!("{} original ids for {n} vertices", ids.len())));
    }
    let sections: [Vec<u8>; 4] = [
        u64::to_le_vec(csr.offsets()),
        u32::to_le_vec(csr.targets()),
        match csr.weights() {
            None => Vec::new(),
            Some(EdgeWeights::Int(w)) => u32::to_le_vec(w),
            Some(EdgeWeights::Float(w)) => f32::to_le_vec(w),
        },
        original_ids.map(u64::to_le_vec).unwrap_or_default(),
    ];
    let hashes: Vec<u64> = sections.iter().map(|s| hash_section(s)).collect();
    let payload_bytes: usize = sections.iter().map(|s| pad8(s.len())).sum();
    let weight_code = match csr.weights() {
        None => 0,
        Some(EdgeWeights::Int(_)) => 1,
        Some(EdgeWeights::Float(_)) => 2,
    };
    let flags = u32::from(csr.is_directed())
        | (weight_code << WEIGHT_SHIFT)
        | if original_ids.is_some() { FLAG_ORIGINAL_IDS } else { 0 };
    let mut header = [0u8; HEADER_BYTES];
    header[0..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&flags.to_le_bytes());
    header[16..24].copy_from_slice(&n.to_le_bytes());
    header[24..32].copy_from_slice(&m.to_le_bytes());
    header[32..40].copy_from_slice(&(payload_bytes as u64).to_le_bytes());
    header[40..48].copy_from_slice(&combine(&hashes).to_le_bytes());
    let header_hash = hash_block(&header[..48]);
    header[48..56].copy_from_slice(&header_hash.to_le_bytes());
    let mut w = std::io::BufWriter::with_capacity(1 << 20, writer);
    let result = (|| -> std::io::Result<()> {
        w.write_all(&header)?;
        for s in &sections {
            w.write_all(s)?;
            w.write_all(&[0u8; 8][..pad8(s.len()) - s.len()])?;
        }
        w.flush()
    })();
    result.map_err(|e| write_error(name, e))
}

/// The validated header of a binary CSR file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryHeader {
    /// Directed graph.
    pub directed: bool,
    /// 0 none, 1 `u32`, 2 `f32`.
    pub weight_code: u32,
    /// Original ids stored.
    pub has_original_ids: bool,
    /// Vertices.
    pub num_vertices: u64,
    /// Arcs.
    pub num_arcs: u64,
    /// Payload bytes after the header.
    pub payload_bytes: u64,
    /// Payload checksum.
    pub checksum: u64,
}

fn corrupt(file: &str, problem: String) -> GraphError {
    GraphError::Format {
        file: file.to_string(),
        problem,
        fix: "the binary file is damaged or from another tool; write it again with `switchyard graph convert --to binary`".into(),
    }
}

fn u64_at(h: &[u8; HEADER_BYTES], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&h[at..at + 8]);
    u64::from_le_bytes(a)
}

fn u32_at(h: &[u8; HEADER_BYTES], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&h[at..at + 4]);
    u32::from_le_bytes(a)
}

/// Parses and checks the 64-byte header; `total_bytes` is the file length.
pub fn parse_header(
    file: &str,
    bytes: &[u8],
    total_bytes: u64,
) -> Result<BinaryHeader, GraphError> {
    let Some(h) = bytes.get(..HEADER_BYTES) else {
        return Err(corrupt(
            file,
            format!(
                "is {} bytes long, shorter than the {HEADER_BYTES}-byte binary CSR header",
                bytes.len()
            ),
        ));
    };
    let mut header = [0u8; HEADER_BYTES];
    header.copy_from_slice(h);
    if header[..8] != MAGIC {
        return Err(corrupt(
            file,
            "does not start with the binary CSR magic `\\x89SWYCSR\\n`".into(),
        ));
    }
    let version = u32_at(&header, 8);
    if version != VERSION {
        return Err(corrupt(
            file,
            format!("has binary CSR version {version}, this build reads version {VERSION}"),
        ));
    }
    if hash_block(&header[..48]) != u64_at(&header, 48) {
        return Err(corrupt(file, "has a header whose checksum does not match".into()));
    }
    let flags = u32_at(&header, 12);
    let weight_code = (flags & WEIGHT_MASK) >> WEIGHT_SHIFT;
    if flags & !KNOWN_FLAGS != 0 || weight_code == 3 {
        return Err(corrupt(file, format!("has unknown flags {flags:#x}")));
    }
    let parsed = BinaryHeader {
        directed: flags & FLAG_DIRECTED != 0,
        weight_code,
        has_original_ids: flags & FLAG_ORIGINAL_IDS != 0,
        num_vertices: u64_at(&header, 16),
        num_arcs: u64_at(&header, 24),
        payload_bytes: u64_at(&header, 32),
        checksum: u64_at(&header, 40),
    };
    if parsed.num_vertices > u64::from(u32::MAX) {
        return Err(corrupt(
            file,
            format!("claims {} vertices, more than the u32 id space", parsed.num_vertices),
        ));
    }
    let lengths = section_lengths(
        parsed.num_vertices,
        parsed.num_arcs,
        weight_code != 0,
        parsed.has_original_ids,
    )
    .ok_or_else(|| corrupt(file, "has section sizes that overflow".into()))?;
    let expected: u64 = lengths.iter().map(|&l| pad8(l) as u64).sum();
    if expected != parsed.payload_bytes || total_bytes != HEADER_BYTES as u64 + expected {
        return Err(corrupt(
            file,
            format!(
                "is {total_bytes} bytes long, but a graph of {} vertices and {} arcs needs {} bytes (header says payload {})",
                parsed.num_vertices,
                parsed.num_arcs,
                HEADER_BYTES as u64 + expected,
                parsed.payload_bytes
            ),
        ));
    }
    Ok(parsed)
}

/// Decoded sections.
pub(crate) struct Decoded {
    pub(crate) csr: Csr,
    pub(crate) original_ids: Option<Vec<u64>>,
}

fn decode_sections(
    file: &str,
    h: &BinaryHeader,
    sections: [Vec<u8>; 4],
) -> Result<Decoded, GraphError> {
    let hashes: Vec<u64> = sections.par_iter().map(|s| hash_section(s)).collect();
    if combine(&hashes) != h.checksum {
        return Err(corrupt(
            file,
            "has a payload whose checksum does not match the header (corrupted or truncated copy)"
                .into(),
        ));
    }
    let [offsets, targets, weights, ids] = sections;
    let offsets = u64::from_le_slice(&offsets);
    let targets = u32::from_le_slice(&targets);
    let weights = match h.weight_code {
        1 => Some(EdgeWeights::Int(u32::from_le_slice(&weights))),
        2 => Some(EdgeWeights::Float(f32::from_le_slice(&weights))),
        _ => None,
    };
    let original_ids = h.has_original_ids.then(|| u64::from_le_slice(&ids));
    let csr = Csr::from_parts(offsets, targets, weights, h.directed)
        .map_err(|e| corrupt(file, format!("holds an inconsistent CSR ({e})")))?;
    Ok(Decoded { csr, original_ids })
}

fn split_sections(h: &BinaryHeader, payload: &[u8]) -> [Vec<u8>; 4] {
    let lengths =
        section_lengths(h.num_vertices, h.num_arcs, h.weight_code != 0, h.has_original_ids)
            .unwrap_or_default();
    let mut at = 0;
    lengths.map(|len| {
        let s = payload.get(at..at + len).map(<[u8]>::to_vec).unwrap_or_default();
        at += pad8(len);
        s
    })
}

/// Reads a binary CSR from bytes in memory.
pub(crate) fn read_bytes(file: &str, bytes: &[u8]) -> Result<Decoded, GraphError> {
    let h = parse_header(file, bytes, bytes.len() as u64)?;
    decode_sections(file, &h, split_sections(&h, &bytes[HEADER_BYTES..]))
}

/// Reads a binary CSR file straight into its arrays: on little-endian hosts each section is
/// read into its final typed vector with no intermediate copy; the checksum is then computed
/// over those vectors' bytes.
pub(crate) fn read_file(file: &str, path: &std::path::Path) -> Result<Decoded, GraphError> {
    let io = |source| crate::graph::load::read_error(file, source);
    let mut f = std::fs::File::open(path).map_err(io)?;
    let total = f.metadata().map_err(io)?.len();
    let mut head = [0u8; HEADER_BYTES];
    let got = read_up_to(&mut f, &mut head).map_err(io)?;
    let h = parse_header(file, &head[..got], total)?;
    if cfg!(target_endian = "big") {
        let lengths =
            section_lengths(h.num_vertices, h.num_arcs, h.weight_code != 0, h.has_original_ids)
                .unwrap_or_default();
        let mut sections: [Vec<u8>; 4] = Default::default();
        for (section, len) in sections.iter_mut().zip(lengths) {
            let mut buf = vec![0u8; pad8(len)];
            f.read_exact(&mut buf).map_err(io)?;
            buf.truncate(len);
            *section = buf;
        }
        return decode_sections(file, &h, sections);
    }
    let n = h.num_vertices as usize;
    let m = h.num_arcs as usize;
    let mut offsets = vec![0u64; n + 1];
    let mut targets = vec![0u32; m];
    let mut weights_u32 = vec![0u32; if h.weight_code == 1 { m } else { 0 }];
    let mut weights_f32 = vec![0f32; if h.weight_code == 2 { m } else { 0 }];
    let mut ids = vec![0u64; if h.has_original_ids { n } else { 0 }];
    let mut pad = [0u8; 8];
    {
        let sections: [&mut [u8]; 4] = [
            plain_bytes_mut(&mut offsets),
            plain_bytes_mut(&mut targets),
            if h.weight_code == 2 {
                plain_bytes_mut(&mut weights_f32)
            } else {
                plain_bytes_mut(&mut weights_u32)
            },
            plain_bytes_mut(&mut ids),
        ];
        for section in sections {
            f.read_exact(section).map_err(io)?;
            f.read_exact(&mut pad[..pad8(section.len()) - section.len()]).map_err(io)?;
        }
    }
    let hashes: Vec<u64> = [
        plain_bytes(&offsets),
        plain_bytes(&targets),
        if h.weight_code == 2 { plain_bytes(&weights_f32) } else { plain_bytes(&weights_u32) },
        plain_bytes(&ids),
    ]
    .par_iter()
    .map(|s| hash_section(s))
    .collect();
    if combine(&hashes) != h.checksum {
        return Err(corrupt(
            file,
            "has a payload whose checksum does not match the header (corrupted or truncated copy)"
                .into(),
        ));
    }
    let weights = match h.weight_code {
        1 => Some(EdgeWeights::Int(weights_u32)),
        2 => Some(EdgeWeights::Float(weights_f32)),
        _ => None,
    };
    let original_ids = h.has_original_ids.then_some(ids);
    let csr = Csr::from_parts(offsets, targets, weights, h.directed)
        .map_err(|e| corrupt(file, format!("holds an inconsistent CSR ({e})")))?;
    Ok(Decoded { csr, original_ids })
}

/// Numbers without padding or invalid bit patterns, viewable as bytes.
trait Plain: Copy {}
impl Plain for u64 {}
impl Plain for u32 {}
impl Plain for f32 {}

fn plain_bytes<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `T` is u64, u32 or f32: no padding, any alignment is valid for u8, and the
    // byte length is exactly the slice's size.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

fn plain_bytes_mut<T: Plain>(values: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `plain_bytes`; moreover every byte pattern is a valid u64, u32 or f32,
    // so writing arbitrary bytes through the view cannot create an invalid value.
    unsafe {
        std::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(values),
        )
    }
}

fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..])? {
            0 => break,
            k => got += k,
        }
    }
    Ok(got)
}

/// Recomputes the header checksum of a buffer that starts with a binary CSR header, so that
/// fuzzers and tests can reach the payload checks with arbitrary header fields. Returns
/// false (and changes nothing) for a buffer shorter than the header.
pub fn repair_header_checksum(bytes: &mut [u8]) -> bool {
    let Some(header) = bytes.get_mut(..HEADER_BYTES) else { return false };
    let hash = hash_block(&header[..48]);
    header[48..56].copy_from_slice(&hash.to_le_bytes());
    true
}
