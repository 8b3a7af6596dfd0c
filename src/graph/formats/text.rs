//! Byte-level helpers shared by the text parsers: line splitting, tokenizing, hand-written
//! integer parsing, and splitting a buffer at newlines into chunks parsed in parallel.
//!
//! Nothing here allocates per token, and nothing indexes with a user-controlled value.

use crate::graph::GraphError;
use rayon::prelude::*;

/// Smallest chunk handed to one rayon task.
const CHUNK_MIN_BYTES: usize = 1 << 20;

/// Iterator over the lines of `buf` (without the `\n`, and without a trailing `\r`), each
/// with its 1-based line number counted from `first_line`.
pub(crate) struct Lines<'a> {
    rest: &'a [u8],
    line: u64,
    done: bool,
}

impl<'a> Lines<'a> {
    /// Lines of `buf`, the first numbered `first_line`.
    pub(crate) fn new(buf: &'a [u8], first_line: u64) -> Self {
        Lines { rest: buf, line: first_line, done: buf.is_empty() }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u64, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let (line, rest) = match self.rest.iter().position(|&b| b == b'\n') {
            Some(p) => (&self.rest[..p], &self.rest[p + 1..]),
            None => {
                self.done = true;
                (self.rest, &self.rest[self.rest.len()..])
            }
        };
        if rest.is_empty() {
            self.done = true;
        }
        self.rest = rest;
        let number = self.line;
        self.line += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Some((number, line))
    }
}

/// Whether `b` separates tokens (space, tab, carriage return, vertical tab, form feed).
#[inline]
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Whitespace-separated tokens of one line.
pub(crate) struct Tokens<'a> {
    rest: &'a [u8],
}

impl<'a> Tokens<'a> {
    /// Tokens of `line`.
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Tokens { rest: line }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|&b| !is_space(b))?;
        let rest = &self.rest[start..];
        let end = rest.iter().position(|&b| is_space(b)).unwrap_or(rest.len());
        let (token, tail) = rest.split_at(end);
        self.rest = tail;
        Some(token)
    }
}

/// Vertices a header may declare whatever the file size.
pub(crate) const FREE_VERTICES: u64 = 1 << 24;
/// Beyond [`FREE_VERTICES`], vertices a header may declare per byte of file.
pub(crate) const VERTICES_PER_FILE_BYTE: u64 = 64;

/// Largest vertex count a header of a `file_bytes`-byte file may declare: a guard against a
/// corrupt count allocating gigabytes for vertices the file cannot describe.
pub(crate) fn max_declared_vertices(file_bytes: usize) -> u64 {
    FREE_VERTICES
        .max((file_bytes as u64).saturating_mul(VERTICES_PER_FILE_BYTE))
        .min(u64::from(u32::MAX))
}

/// Checks a vertex count declared on `line` of a `file_bytes`-byte file.
pub(crate) fn check_vertex_count(
    file: &str,
    line: u64,
    n: u64,
    file_bytes: usize,
) -> Result<(), GraphError> {
    if n > u64::from(u32::MAX) {
        return Err(parse_error(
            file,
            line,
            "at most 4294967295 vertices (u32 ids)",
            n.to_string(),
            "split the graph",
        ));
    }
    let cap = max_declared_vertices(file_bytes);
    if n > cap {
        return Err(parse_error(
            file,
            line,
            format!("at most {cap} vertices for a file of {file_bytes} bytes"),
            format!("{n} vertices"),
            "the count is probably corrupt; fix it (a file this small cannot describe that many vertices)",
        ));
    }
    Ok(())
}

/// Fast path for the commonest line, `digits<space>digits` with optional trailing blanks,
/// starting at `at`: returns both numbers and the start of the next line. `None` sends the
/// line to the general (error-reporting) parser; so do numbers of 20 or more digits.
#[inline]
pub(crate) fn fast_pair(buf: &[u8], at: usize) -> Option<(u64, u64, usize)> {
    let blank = |b: u8| b == b' ' || b == b'\t';
    let mut i = at;
    while buf.get(i).is_some_and(|&b| blank(b)) {
        i += 1;
    }
    let (u, j) = fast_digits(buf, i)?;
    let mut k = j;
    while buf.get(k).is_some_and(|&b| blank(b)) {
        k += 1;
    }
    if k == j {
        return None;
    }
    let (v, mut l) = fast_digits(buf, k)?;
    while buf.get(l).is_some_and(|&b| blank(b) || b == b'\r') {
        l += 1;
    }
    match buf.get(l) {
        None => Some((u, v, l)),
        Some(b'\n') => Some((u, v, l + 1)),
        Some(_) => None,
    }
}

#[inline]
fn fast_digits(buf: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    let mut j = at;
    while let Some(&b) = buf.get(j) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if j - at >= 19 {
            return None;
        }
        value = value * 10 + u64::from(d);
        j += 1;
    }
    (j > at).then_some((value, j))
}

/// Whether a line holds only whitespace.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_space(b))
}

/// Parses an unsigned decimal integer (an optional leading `+` allowed); `None` on anything
/// else, including overflow.
#[inline]
pub(crate) fn parse_u64(token: &[u8]) -> Option<u64> {
    let digits = token.strip_prefix(b"+").unwrap_or(token);
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    let mut value: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(value)
}

/// Parses a signed decimal integer.
pub(crate) fn parse_i64(token: &[u8]) -> Option<i64> {
    match token.strip_prefix(b"-") {
        Some(digits) => {
            let v = parse_u64(digits)?;
            if v <= i64::MAX as u64 + 1 { Some((v as i128).wrapping_neg() as i64) } else { None }
        }
        None => i64::try_from(parse_u64(token)?).ok(),
    }
}

/// Parses a floating-point number (Rust syntax, which accepts `1`, `1.5`, `1e-3`, `inf`,
/// `NaN`); no allocation.
pub(crate) fn parse_f32(token: &[u8]) -> Option<f32> {
    std::str::from_utf8(token).ok()?.parse::<f32>().ok()
}

/// Whether a numeric token is written as an integer (digits with an optional sign).
pub(crate) fn looks_integral(token: &[u8]) -> bool {
    let digits = token.strip_prefix(b"-").or_else(|| token.strip_prefix(b"+")).unwrap_or(token);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// A token as it should appear in an error message: quoted, lossy UTF-8, at most 40 chars.
pub(crate) fn show(token: &[u8]) -> String {
    let text = String::from_utf8_lossy(token);
    let mut shown: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        shown.push_str("...");
    }
    format!("'{shown}'")
}

/// Builds a line-level parse error.
pub(crate) fn parse_error(
    file: &str,
    line: u64,
    expected: impl Into<String>,
    found: impl Into<String>,
    fix: impl Into<String>,
) -> GraphError {
    GraphError::Parse {
        file: file.to_string(),
        line,
        expected: expected.into(),
        found: found.into(),
        fix: fix.into(),
    }
}

/// Parses a 1-based vertex number in `1..=n` (DIMACS, Matrix Market) into a 0-based id.
/// `noun` names it in errors (`"from vertex"`, `"row index"`); `range_fix` and `syntax_fix`
/// say how to repair an out-of-range or non-numeric token.
pub(crate) fn one_based_id(
    token: &[u8],
    n: u64,
    (file, line): (&str, u64),
    noun: &str,
    range_fix: impl FnOnce() -> String,
    syntax_fix: &str,
) -> Result<u32, GraphError> {
    match parse_u64(token) {
        Some(i) if i >= 1 && i <= n => Ok((i - 1) as u32),
        Some(i) => {
            Err(parse_error(file, line, format!("a {noun} in 1..={n}"), i.to_string(), range_fix()))
        }
        None => Err(parse_error(
            file,
            line,
            format!("a {noun} (positive integer)"),
            show(token),
            syntax_fix,
        )),
    }
}

/// Splits `buf` into chunks that end just after a newline (the last one at the end of the
/// buffer), each at least [`CHUNK_MIN_BYTES`] long unless the buffer is shorter.
pub(crate) fn split_chunks(buf: &[u8]) -> Vec<std::ops::Range<usize>> {
    let threads = rayon::current_num_threads().max(1);
    let target = (buf.len() / (threads * 8)).max(CHUNK_MIN_BYTES);
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < buf.len() {
        let mut end = (start + target).min(buf.len());
        if end < buf.len() {
            end = match buf[end..].iter().position(|&b| b == b'\n') {
                Some(p) => end + p + 1,
                None => buf.len(),
            };
        }
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// Runs `parse_chunk(chunk, first_line_number)` over newline-aligned chunks of `buf` in
/// parallel, the first line of `buf` being `first_line`. Results come back in file order;
/// when several chunks fail, the error of the earliest one is returned.
pub(crate) fn parse_chunks<T, F>(
    buf: &[u8],
    first_line: u64,
    parse_chunk: F,
) -> Result<Vec<T>, GraphError>
where
    T: Send,
    F: Fn(&[u8], u64) -> Result<T, GraphError> + Sync,
{
    let ranges = split_chunks(buf);
    let newlines: Vec<u64> = ranges
        .par_iter()
        .map(|r| buf[r.clone()].iter().filter(|&&b| b == b'\n').count() as u64)
        .collect();
    let mut first_lines = Vec::with_capacity(ranges.len());
    let mut line = first_line;
    for n in &newlines {
        first_lines.push(line);
        line += n;
    }
    let results: Vec<Result<T, GraphError>> = ranges
        .par_iter()
        .zip(first_lines.par_iter())
        .map(|(r, &first)| parse_chunk(&buf[r.clone()], first))
        .collect();
    results.into_iter().collect()
}

/// Splits off the header: returns the byte offset and 1-based line number just after the
/// first line for which `is_last_header_line` returns true, or `None` if there is none.
pub(crate) fn find_header_end(
    buf: &[u8],
    mut is_last_header_line: impl FnMut(u64, &[u8]) -> Result<bool, GraphError>,
) -> Result<Option<(usize, u64)>, GraphError> {
    let mut offset = 0;
    let mut line_number = 1;
    while offset < buf.len() {
        let rest = &buf[offset..];
        let len = rest.iter().position(|&b| b == b'\n').map_or(rest.len(), |p| p + 1);
        let raw = &rest[..len];
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        offset += len;
        if is_last_header_line(line_number, line)? {
            return Ok(Some((offset, line_number + 1)));
        }
        line_number += 1;
    }
    Ok(None)
}

/// Number of the last line of `buf` (for "file ends at line N" messages), counting from 1.
pub(crate) fn last_line_number(buf: &[u8]) -> u64 {
    let newlines = buf.iter().filter(|&&b| b == b'\n').count() as u64;
    if buf.last() == Some(&b'\n') { newlines.max(1) } else { newlines + 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_and_reject_garbage() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"12a"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"-5"), Some(-5));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
    }

    #[test]
    fn fast_pair_takes_only_plain_pairs() {
        assert_eq!(fast_pair(b"12 34\n5 6", 0), Some((12, 34, 6)));
        assert_eq!(fast_pair(b"12 34\n5 6", 6), Some((5, 6, 9)));
        assert_eq!(fast_pair(b" 1\t2 \r\n", 0), Some((1, 2, 7)));
        assert_eq!(fast_pair(b"1 2 3\n", 0), None);
        assert_eq!(fast_pair(b"12\n", 0), None);
        assert_eq!(fast_pair(b"1 x\n", 0), None);
        assert_eq!(fast_pair(b"# 1 2\n", 0), None);
        assert_eq!(fast_pair(b"1 99999999999999999999\n", 0), None);
        assert_eq!(
            fast_pair(b"1 9999999999999999999\n", 0),
            Some((1, 9_999_999_999_999_999_999, 22))
        );
    }

    #[test]
    fn lines_strip_carriage_returns_and_number_from_one() {
        let lines: Vec<_> = Lines::new(b"a\r\nb\n\nc", 1).collect();
        assert_eq!(lines, vec![(1, &b"a"[..]), (2, &b"b"[..]), (3, &b""[..]), (4, &b"c"[..])]);
        assert_eq!(Lines::new(b"x\n", 1).count(), 1);
    }

    #[test]
    fn tokens_split_on_any_whitespace() {
        let t: Vec<_> = Tokens::new(b"  1\t2 \r 3").collect();
        assert_eq!(t, vec![&b"1"[..], &b"2"[..], &b"3"[..]]);
    }

    #[test]
    fn chunks_cover_the_buffer_and_end_at_newlines() {
        let mut buf = Vec::new();
        for i in 0..400_000u32 {
            buf.extend_from_slice(format!("{i} {i}\n").as_bytes());
        }
        let ranges = split_chunks(&buf);
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(buf.len()));
        for w in ranges.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert_eq!(buf[w[0].end - 1], b'\n');
        }
        let firsts = parse_chunks(&buf, 1, |_, first| Ok(first)).unwrap();
        assert_eq!(firsts[0], 1);
    }
}
