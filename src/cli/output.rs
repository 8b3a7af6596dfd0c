//! Output files of the CLI, written safely.

use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `path` through a temporary file renamed into place, so a failed write leaves no
/// half-written output behind.
pub fn write_file(
    path: &Path,
    gz: bool,
    body: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    let file = std::fs::File::create(&tmp).with_context(|| {
        format!("cannot create {}; check that its directory exists and is writable", tmp.display())
    })?;
    let result = if gz {
        let mut enc = flate2::write::GzEncoder::new(file, flate2::Compression::default());
        body(&mut enc).and_then(|()| enc.finish().map(drop).map_err(anyhow::Error::from))
    } else {
        let mut file = std::io::BufWriter::new(file);
        body(&mut file).and_then(|()| file.flush().map_err(anyhow::Error::from))
    };
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.context(format!("writing {} failed", path.display())));
    }
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), path.display()))
}
