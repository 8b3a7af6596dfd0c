//! Loading a graph file of any supported format: content-based format detection (the file
//! extension is never trusted: `.gr` means DIMACS to some tools and a binary graph to
//! others), an explicit override, transparent gzip (by magic bytes), memory-mapped input.

use super::formats::{self, GraphFormat, binary, dimacs, ldbc, matrix_market, metis, snap};
use super::{BuildOptions, Csr, GraphError};
use crate::graph::formats::ldbc::LdbcProperties;
use crate::graph::formats::metis::MetisVertexData;
use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

/// How to load a graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Read the file as this format instead of detecting it from the content. The binary
    /// format is read only when named here.
    pub format: Option<GraphFormat>,
    /// Override the directedness the file declares (or its format's default).
    pub directed: Option<bool>,
    /// Self-loop and duplicate-edge cleaning.
    pub build: BuildOptions,
}

/// A loaded graph and what its file said besides the CSR.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedGraph {
    /// The graph, with dense vertex ids `0..n`.
    pub csr: Csr,
    /// The format it was read as.
    pub format: GraphFormat,
    /// Dense id -> the file's own id, when they differ (SNAP and LDBC sparse ids). `None`
    /// means dense id = file id (for the 1-based formats: file id = dense id + 1).
    pub original_ids: Option<Vec<u64>>,
    /// The LDBC `.properties` content, for LDBC graphs that have one.
    pub ldbc: Option<LdbcProperties>,
    /// The path of that `.properties` file (for messages that name it).
    pub properties_path: Option<PathBuf>,
    /// METIS vertex sizes and weights, when the file has them.
    pub metis: Option<MetisVertexData>,
}

impl LoadedGraph {
    fn plain(csr: Csr, format: GraphFormat) -> Self {
        LoadedGraph {
            csr,
            format,
            original_ids: None,
            ldbc: None,
            properties_path: None,
            metis: None,
        }
    }

    /// Whether the format numbers vertices from 1 (Matrix Market, DIMACS, METIS).
    pub fn one_based(&self) -> bool {
        matches!(self.format, GraphFormat::MatrixMarket | GraphFormat::Dimacs | GraphFormat::Metis)
    }

    /// The id dense vertex `v` has in the file: its sparse id for SNAP and LDBC, `v + 1` for
    /// the 1-based formats, `v` otherwise.
    pub fn file_id(&self, v: u32) -> u64 {
        match &self.original_ids {
            Some(ids) => ids.get(v as usize).copied().unwrap_or(u64::from(v)),
            None => u64::from(v) + u64::from(self.one_based()),
        }
    }

    /// How the file names its vertices, detached from the graph (see [`VertexIds`]).
    pub fn vertex_ids(&self) -> VertexIds {
        VertexIds {
            original: self.original_ids.clone(),
            first: u64::from(self.one_based()),
            scheme: match (&self.original_ids, self.format) {
                (Some(_), GraphFormat::Ldbc) => "the ids listed in its .v file",
                (Some(_), GraphFormat::Snap) => "the ids its edge lines use",
                (Some(_), _) => "the ids stored with it",
                (None, GraphFormat::MatrixMarket) => "1-based Matrix Market row/column numbers",
                (None, GraphFormat::Dimacs) => "1-based DIMACS node numbers",
                (None, GraphFormat::Metis) => "1-based METIS vertex numbers (line order)",
                (None, _) => "0-based ids",
            },
        }
    }

    /// Every vertex's id in the file (see [`LoadedGraph::file_id`]), to pass to
    /// [`crate::graph::results::write_vertex_values`] so results come out in the file's ids.
    pub fn file_ids(&self) -> Vec<u64> {
        (0..self.csr.num_vertices()).map(|v| self.file_id(v)).collect()
    }
}

/// How a graph's input names its vertices, and the map between those ids and the dense
/// indices `0..n` the graph uses: the file's sparse ids (SNAP, LDBC, a binary CSR that
/// stores them), `index + 1` for the 1-based formats (Matrix Market, DIMACS, METIS), the
/// index itself otherwise (generated graphs, plain binary CSR).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexIds {
    original: Option<Vec<u64>>,
    first: u64,
    scheme: &'static str,
}

impl VertexIds {
    /// Dense ids `0..n` named as themselves (generated graphs).
    pub fn dense() -> Self {
        VertexIds { original: None, first: 0, scheme: "0-based ids" }
    }

    /// The file's id of dense vertex `v`.
    pub fn file_id(&self, v: u32) -> u64 {
        match &self.original {
            Some(ids) => ids.get(v as usize).copied().unwrap_or(u64::from(v)),
            None => u64::from(v) + self.first,
        }
    }

    /// The dense index of the vertex the file calls `id`, if the graph of `num_vertices`
    /// vertices has it.
    pub fn dense_id(&self, id: u64, num_vertices: u32) -> Option<u32> {
        match &self.original {
            Some(ids) => {
                let found = if ids.is_sorted() {
                    ids.binary_search(&id).ok()
                } else {
                    ids.iter().position(|&x| x == id)
                };
                found.and_then(|i| u32::try_from(i).ok())
            }
            None => id
                .checked_sub(self.first)
                .and_then(|v| u32::try_from(v).ok())
                .filter(|&v| v < num_vertices),
        }
    }

    /// Whether the file's ids are the dense indices themselves.
    pub fn is_identity(&self) -> bool {
        self.original.is_none() && self.first == 0
    }

    /// How the ids are numbered, in words (for messages).
    pub fn scheme(&self) -> &'static str {
        self.scheme
    }

    /// Every vertex's file id, in dense order (for
    /// [`crate::graph::results::write_vertex_values`]).
    pub fn all(&self, num_vertices: u32) -> Vec<u64> {
        (0..num_vertices).map(|v| self.file_id(v)).collect()
    }

    /// A few of the file's ids, for messages: the first and the last, e.g. `1..=4039`, or
    /// `10, 20, 30, ..., 90`.
    pub fn sample(&self, num_vertices: u32) -> String {
        match (&self.original, num_vertices) {
            (_, 0) => "none".into(),
            (None, n) => format!("{}..={}", self.first, u64::from(n - 1) + self.first),
            (Some(ids), n) if n <= 5 => {
                ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
            }
            (Some(ids), n) => {
                format!("{}, {}, {}, ..., {}", ids[0], ids[1], ids[2], ids[n as usize - 1])
            }
        }
    }
}

/// Bytes of an input: a memory map of the file, or an owned buffer (decompressed gzip).
enum Input {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Input {
    fn bytes(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Owned(v) => v,
        }
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether bytes start with the gzip magic.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// Decompresses a gzip buffer (all members).
pub fn gunzip(name: &str, bytes: &[u8]) -> Result<Vec<u8>, GraphError> {
    // The trailer's ISIZE is the uncompressed size mod 2^32 of the last member: a hint only.
    let hint = bytes.len().checked_sub(4).and_then(|at| bytes.get(at..)).map_or(0, |t| {
        let mut a = [0u8; 4];
        a.copy_from_slice(t);
        u32::from_le_bytes(a) as usize
    });
    let mut out = Vec::with_capacity(hint.max(bytes.len()).min(bytes.len().saturating_mul(64)));
    flate2::bufread::MultiGzDecoder::new(bytes).read_to_end(&mut out).map_err(|e| {
        GraphError::Format {
            file: name.to_string(),
            problem: format!("starts like gzip but does not decompress ({e})"),
            fix: "the file is truncated or damaged; download or compress it again".into(),
        }
    })?;
    Ok(out)
}

/// What makes a path unusable as a graph input (see [`GraphError::UnusableInput`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputProblem {
    /// A directory.
    Directory,
    /// A named pipe (FIFO): graphs are memory-mapped, and opening a FIFO would wait for a
    /// writer.
    Fifo,
    /// A socket or a character or block device.
    Special,
    /// The file (or a directory on its path) may not be read by this process.
    PermissionDenied,
}

impl std::fmt::Display for InputProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InputProblem::Directory => "is a directory, not a graph file",
            InputProblem::Fifo => {
                "is a named pipe (FIFO); graphs are memory-mapped, so they are read from \
                 regular files only"
            }
            InputProblem::Special => "is a socket or a device, not a regular file",
            InputProblem::PermissionDenied => "cannot be read: permission denied",
        })
    }
}

impl InputProblem {
    /// How to fix the problem for `path`.
    pub fn fix(self, path: &str) -> String {
        match self {
            InputProblem::Directory => "name a graph file inside it (for an LDBC graph: its \
                 `.properties` file, or the base name of its `.v`/`.e` files)"
                .into(),
            InputProblem::Fifo => format!(
                "save the stream to a file first (`cat {path} > graph.txt`) and pass that file \
                 (gzipped files are read as they are)"
            ),
            InputProblem::Special => "pass a regular graph file".into(),
            InputProblem::PermissionDenied => format!(
                "give this user read permission (`chmod u+r {path}`, and `u+x` on its \
                 directories) or run as a user who may read it"
            ),
        }
    }

    /// The error for `path`.
    pub fn error(self, path: &str) -> GraphError {
        GraphError::UnusableInput { path: path.to_string(), problem: self, fix: self.fix(path) }
    }
}

/// The error for a failed read of `path`: [`InputProblem::PermissionDenied`] when that is
/// the cause, [`GraphError::Io`] otherwise.
pub(crate) fn read_error(path: &str, source: std::io::Error) -> GraphError {
    if source.kind() == std::io::ErrorKind::PermissionDenied {
        InputProblem::PermissionDenied.error(path)
    } else {
        GraphError::Io { path: path.to_string(), action: "reading", source }
    }
}

/// Refuses, before anything opens it, a path that exists but is not a regular file: a
/// directory (whose map would fail with "No such device"), a FIFO (whose open would wait
/// for a writer), a socket or a device. A path that does not exist passes: opening it says
/// so (and an LDBC base name need not exist).
fn check_input(path: &Path) -> Result<(), GraphError> {
    let name = path.display().to_string();
    let kind = match std::fs::metadata(path) {
        Ok(meta) => meta.file_type(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(read_error(&name, e)),
    };
    if kind.is_dir() {
        return Err(InputProblem::Directory.error(&name));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Err(InputProblem::Fifo.error(&name));
        }
    }
    if !kind.is_file() {
        return Err(InputProblem::Special.error(&name));
    }
    Ok(())
}

fn read_input(path: &Path) -> Result<Input, GraphError> {
    check_input(path)?;
    let name = path.display().to_string();
    let io = |source| read_error(&name, source);
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let input = if len == 0 {
        Input::Owned(Vec::new())
    } else {
        // SAFETY: the map is read-only and lives only while this load runs; graph files are
        // inputs nobody should rewrite during a load (a concurrent truncation could fault,
        // as with any mmap-based reader).
        Input::Mapped(unsafe { memmap2::Mmap::map(&file) }.map_err(io)?)
    };
    if is_gzip(input.bytes()) { Ok(Input::Owned(gunzip(&name, input.bytes())?)) } else { Ok(input) }
}

/// Loads a graph file. The format comes from `options.format` or from the content; gzip is
/// decompressed transparently. For LDBC, `path` may name the `.properties`, `.v` or `.e` file
/// (or their common base name): the other files are found beside it.
pub fn load_graph(path: &Path, options: &LoadOptions) -> Result<LoadedGraph, GraphError> {
    let name = path.display().to_string();
    check_input(path)?;
    if options.format == Some(GraphFormat::Binary) && !is_gzip_file(path) {
        let decoded = binary::read_file(&name, path)?;
        return finish_binary(decoded, options);
    }
    if options.format == Some(GraphFormat::Ldbc) {
        return load_ldbc(path, None, options);
    }
    let input = match read_input(path) {
        Err(GraphError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound && ldbc_base(path).is_some() =>
        {
            return load_ldbc(path, None, options);
        }
        other => other?,
    };
    let bytes = input.bytes();
    if options.format.is_none() && formats::detect_format(bytes) == Some(GraphFormat::Ldbc) {
        return load_ldbc(path, Some(bytes), options);
    }
    let named_properties = path.extension().is_some_and(|e| e == "properties");
    match load_graph_from_bytes(&name, bytes, options) {
        // Formats come from the content; a broken `.properties` read as an edge list would
        // otherwise fail with an edge-list message only.
        Err(e) if options.format.is_none() && named_properties => Err(GraphError::Format {
            file: name,
            problem: format!(
                "its content is no LDBC properties file (whose lines are `graph.NAME.key = \
                 value`), so it was read as another format, which failed: {e}"
            ),
            fix: "fix the file's `graph.NAME.*` lines (comments start with `#`), or pass \
                  --format to say what it is"
                .into(),
        }),
        loaded => loaded,
    }
}

fn is_gzip_file(path: &Path) -> bool {
    let mut head = [0u8; 2];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && is_gzip(&head)
}

/// Loads a graph from bytes in memory (embedded graphs, tests). `name` appears in errors.
/// LDBC graphs span three files: use [`load_graph`] or [`ldbc::parse_parts`] for them.
pub fn load_graph_from_bytes(
    name: &str,
    bytes: &[u8],
    options: &LoadOptions,
) -> Result<LoadedGraph, GraphError> {
    let bytes: Cow<[u8]> =
        if is_gzip(bytes) { Cow::Owned(gunzip(name, bytes)?) } else { Cow::Borrowed(bytes) };
    let bytes = bytes.as_ref();
    let format = match options.format {
        Some(f) => f,
        None => {
            match formats::detect_format(bytes) {
                Some(GraphFormat::Binary) => {
                    return Err(GraphError::Format {
                    file: name.to_string(),
                    problem: "is a switchyard binary CSR file, which is read only when asked for".into(),
                    fix: "pass `--format binary` (LoadOptions::format = Some(GraphFormat::Binary))".into(),
                });
                }
                // Text formats never hold NUL bytes: binary data of another kind.
                Some(_) if bytes[..bytes.len().min(4096)].contains(&0) => {
                    return Err(GraphError::Format {
                        file: name.to_string(),
                        problem: "holds binary data (NUL bytes) but is neither a switchyard \
                                  binary CSR nor gzip"
                            .into(),
                        fix: "give a text graph (Matrix Market, SNAP, DIMACS, METIS, LDBC), a \
                              gzipped one, or a binary CSR written by `switchyard graph convert \
                              --to binary` (with --format binary)"
                            .into(),
                    });
                }
                Some(f) => f,
                None => {
                    return Err(GraphError::Parse {
                        file: name.to_string(),
                        line: 1,
                        expected: "a graph (Matrix Market, SNAP, DIMACS, METIS, LDBC)".into(),
                        found: if bytes.is_empty() {
                            "an empty file".into()
                        } else {
                            "only blank lines".into()
                        },
                        fix: "check that the file is complete".into(),
                    });
                }
            }
        }
    };
    let build = options.build;
    let loaded = match format {
        GraphFormat::MatrixMarket => {
            let p = matrix_market::parse(name, bytes)?;
            let directed = options.directed.unwrap_or(!p.header.symmetric);
            let csr = formats::edges::build_csr(
                p.header.num_vertices,
                &p.edges,
                p.weights,
                directed,
                build,
            )?;
            LoadedGraph::plain(csr, format)
        }
        GraphFormat::Snap => {
            let (dense, header_directed) = snap::parse(name, bytes)?;
            let directed = options.directed.or(header_directed).unwrap_or(true);
            let csr = formats::edges::build_csr(
                dense.num_vertices,
                &dense.edges,
                dense.weights,
                directed,
                build,
            )?;
            LoadedGraph { original_ids: dense.original_ids, ..LoadedGraph::plain(csr, format) }
        }
        GraphFormat::Dimacs => {
            let p = dimacs::parse(name, bytes)?;
            let directed = options.directed.unwrap_or(true);
            let csr = formats::edges::build_csr(
                p.num_vertices,
                &p.edges,
                Some(p.weights),
                directed,
                build,
            )?;
            LoadedGraph::plain(csr, format)
        }
        GraphFormat::Metis => {
            let p = metis::parse(name, bytes)?;
            let directed = options.directed.unwrap_or(false);
            let csr = Csr::from_parts(p.offsets, p.targets, p.weights, directed)?;
            let csr = if build.drop_duplicates { csr.without_duplicate_arcs() } else { csr };
            LoadedGraph { metis: p.vertex_data, ..LoadedGraph::plain(csr, format) }
        }
        GraphFormat::Binary => finish_binary(binary::read_bytes(name, bytes)?, options)?,
        GraphFormat::Ldbc => {
            return Err(GraphError::Format {
                file: name.to_string(),
                problem: "is read as LDBC, which spans a .v, a .e and a .properties file".into(),
                fix: "load the LDBC graph from its path (load_graph), or call formats::ldbc::parse_parts".into(),
            });
        }
    };
    Ok(loaded)
}

fn finish_binary(
    decoded: binary::Decoded,
    options: &LoadOptions,
) -> Result<LoadedGraph, GraphError> {
    let mut csr = decoded.csr;
    let directed = options.directed.unwrap_or(csr.is_directed());
    if options.build.drop_self_loops || options.build.drop_duplicates {
        // Both arcs of an undirected edge are stored, so clean arc by arc as if directed.
        let n = csr.num_vertices();
        let mut edges = Vec::with_capacity(csr.num_arcs() as usize);
        for u in 0..n {
            edges.extend(csr.neighbors(u).iter().map(|&v| (u, v)));
        }
        csr = Csr::from_edges(n, &edges, csr.weights().cloned(), true, options.build)?;
    }
    if directed != csr.is_directed() {
        let (offsets, targets, weights, _) = csr.into_parts();
        csr = Csr::from_parts(offsets, targets, weights, directed)?;
    }
    Ok(LoadedGraph {
        csr,
        format: GraphFormat::Binary,
        original_ids: decoded.original_ids,
        ldbc: None,
        properties_path: None,
        metis: None,
    })
}

/// The base path (without `.v`, `.e` or `.properties`) of an LDBC file name, if it has one
/// of those extensions.
fn ldbc_base(path: &Path) -> Option<PathBuf> {
    let ext = path.extension()?.to_str()?;
    matches!(ext, "v" | "e" | "properties").then(|| path.with_extension(""))
}

fn load_ldbc(
    path: &Path,
    properties_bytes: Option<&[u8]>,
    options: &LoadOptions,
) -> Result<LoadedGraph, GraphError> {
    let base = ldbc_base(path).unwrap_or_else(|| path.to_path_buf());
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let with_ext = |ext: &str| {
        let mut s = base.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    let properties_path =
        if properties_bytes.is_some() { path.to_path_buf() } else { with_ext(".properties") };
    let properties = match properties_bytes {
        Some(b) => Some(ldbc::parse_properties(&properties_path.display().to_string(), b)?),
        None if properties_path.is_file() => {
            let input = read_input(&properties_path)?;
            Some(ldbc::parse_properties(&properties_path.display().to_string(), input.bytes())?)
        }
        None => None,
    };
    let named = |file: Option<&String>, ext: &str| match file {
        Some(f) => dir.join(f),
        None => with_ext(ext),
    };
    let v_path = named(properties.as_ref().and_then(|p| p.vertex_file.as_ref()), ".v");
    let e_path = named(properties.as_ref().and_then(|p| p.edge_file.as_ref()), ".e");
    // A missing vertex or edge file says which .properties key named it (or that none did).
    let part = |file: &Path, key: &str, ext: &str| -> Result<Input, GraphError> {
        if file.exists() || properties.is_none() {
            return read_input(file);
        }
        let props = properties_path.display();
        let name = properties.as_ref().map(|p| p.name.as_str()).unwrap_or_default();
        let given = properties.as_ref().and_then(|p| match key {
            "vertex-file" => p.vertex_file.as_ref(),
            _ => p.edge_file.as_ref(),
        });
        let (problem, fix) = match given {
            Some(f) => (
                format!("does not exist; `graph.{name}.{key} = {f}` in {props} names it"),
                format!("put the file beside {props}, or fix `graph.{name}.{key}`"),
            ),
            None => (
                format!(
                    "does not exist; {props} sets no `graph.{name}.{key}`, so the file is \
                     looked for as the base name plus `{ext}`"
                ),
                format!("add `graph.{name}.{key} = FILE` to {props}, or put the file there"),
            ),
        };
        Err(GraphError::Format { file: file.display().to_string(), problem, fix })
    };
    let v_input = part(&v_path, "vertex-file", ".v")?;
    let e_input = part(&e_path, "edge-file", ".e")?;
    let (v_name, e_name) = (v_path.display().to_string(), e_path.display().to_string());
    let parsed = ldbc::parse_graph(
        (&v_name, &e_name),
        v_input.bytes(),
        e_input.bytes(),
        properties.as_ref(),
        options.directed,
        options.build,
    )?;
    Ok(LoadedGraph {
        csr: parsed.csr,
        format: GraphFormat::Ldbc,
        original_ids: parsed.original_ids,
        properties_path: properties.is_some().then_some(properties_path),
        ldbc: properties,
        metis: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The permission check cannot be reached through the file system as root (a mode-000
    /// file reads fine, so `tests/graph_io_errors.rs` skips it there): the mapping from the
    /// OS error to the message is checked here on every machine.
    #[test]
    fn a_permission_error_names_the_path_and_the_fix() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = read_error("data/secret.mtx", denied);
        assert!(
            matches!(e, GraphError::UnusableInput { problem: InputProblem::PermissionDenied, .. }),
            "{e:?}"
        );
        let text = e.to_string();
        for says in
            ["data/secret.mtx", "cannot be read: permission denied", "chmod u+r data/secret.mtx"]
        {
            assert!(text.contains(says), "`{text}` does not say `{says}`");
        }
        // Any other failure stays an I/O error naming the path and what was done.
        let other = read_error("data/g.mtx", std::io::Error::other("disk on fire"));
        assert!(matches!(other, GraphError::Io { action: "reading", .. }), "{other:?}");
        assert!(other.to_string().contains("data/g.mtx"), "{other}");
    }
}
